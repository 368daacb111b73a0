#include "config/toml_guard.h"

#include <gtest/gtest.h>

#include "config/config.h"

namespace rota::config {
namespace toml_guard_test {
namespace {

TEST(TomlGuardTest, FindsHeadersThatDoNotStartLikeAKey) {
  // The inputs of the upstream fix (toml++ pull request 301) and what fuzz/config_toml.cc found.
  for (const char* text : {"[[[1]]]", "[[[a]]]", "[[[]]", "[[=", "[!]", "[\n", "a = 1\n  [[ .x]]\n", "[[\t#x]]"}) {
    EXPECT_TRUE(FindTomlHeaderTrap(text).has_value()) << text;
  }
  const std::optional<TomlTrap> trap = FindTomlHeaderTrap("a = 1\n\n  [[[x]]]\n");
  ASSERT_TRUE(trap.has_value());
  EXPECT_EQ(trap->line, 3);
  EXPECT_EQ(trap->column, 5);  // the third '['
  EXPECT_TRUE(FindTomlHeaderTrap("a = [1,\n 2]\n[!]\n").has_value()) << "after an array value ends";
}

TEST(TomlGuardTest, LeavesValidHeadersAndWhatIsNotAHeader) {
  for (const char* text :
       {"[users.alice]\n[[gpus.card]]\n", "[ users ]\n[[ gpus.card ]]\n", "[\"a b\".c]\n['x']\n", "[]\n",
        "[ [a]]\n",  // toml++'s own error: the brackets must touch
        "a = [\n  [1, 2],\n  [ +3 ],\n  [{x = 1}],\n]\n",  // lines of an array value are no headers
        "t = {a = [\n[!]]}\n",
        "t = \"\"\"\n[!] not a header\n\"\"\"\n", "t = '''\n[[[ also not\n'''\n",
        "t = \"\"\"a \\\"\"\" still inside\n[!]\"\"\"\n", "a = \"[!]\" # [!]\n", "# [!]\n", "["}) {
    EXPECT_FALSE(FindTomlHeaderTrap(text).has_value()) << text;
  }
}

TEST(TomlGuardTest, ParseConfigRefusesTheTrapWithALine) {
  StatusOr<Config> c = ParseConfig("[policy]\nalgorithm = \"rota\"\n[[[gpus.card]]]\n", "rota.toml");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("rota.toml:3:3: a table header's name must start with"), std::string::npos)
      << c.status().message();
}

}  // namespace
}  // namespace toml_guard_test
}  // namespace rota::config
