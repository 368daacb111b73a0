#include "web/credentials.h"

#include <gtest/gtest.h>

namespace rota::web {
namespace credentials_test {
namespace {

TEST(Credentials, HashIsSha256Hex) {
  EXPECT_EQ(HashToken(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(HashToken("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Credentials, RandomTokensDiffer) {
  std::string a = RandomToken();
  std::string b = RandomToken();
  EXPECT_EQ(a.size(), 64u);
  EXPECT_EQ(RandomToken(16).size(), 32u);
  EXPECT_NE(a, b);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos);
}

}  // namespace
}  // namespace credentials_test
}  // namespace rota::web
