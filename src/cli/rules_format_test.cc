// Tests of what `rota rules` prints: text wrapped by display width (Chinese too) with commands
// never cut, the admin's lines kept, hostile control characters neutralised; Markdown for a wiki.
#include "cli/rules_format.h"

#include <gtest/gtest.h>

#include <sstream>

#include "cli/text.h"

namespace rota::cli {
namespace rules_format_test {
namespace {

using nlohmann::json;

json Reply() {
  return {{"ok", true},
          {"lang", "zh"},
          {"title", "实验室 GPU 使用规则"},
          {"sections",
           {{{"id", "quota"},
             {"heading", "配额"},
             {"items",
              {{{"text", "配额按人计算：每人每周可用的 GPU 小时数。角色 phd：每周 40 GPU 小时，超出后降为 explore 级别。"}},
               {{"text", "查看自己和实验室的用量"}, {"code", "rota usage"}}}}},
            {{"id", "account"},
             {"heading", "如何获得账号"},
             {"items", {{{"text", "Mail the admin.\nBring your \x1b[31mstudent id."}}}}},
            {{"id", "commands"},
             {"heading", "Five commands"},
             {"items",
              {{{"text", "book GPU time on the calendar"},
                {"code", "rota book --gpus 1 --from \"tomorrow 09:00\" --for 4h --note a-very-long-note"}}}}}}}};
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST(RulesFormat, TextIsWrappedByColumnsAndCommandsAreWhole) {
  UseUtf8Locale();
  const std::string text = FormatRulesText(Reply(), 40);
  const std::vector<std::string> lines = Lines(text);
  ASSERT_GE(lines.size(), 8u) << text;
  EXPECT_EQ(lines[0], "实验室 GPU 使用规则");
  EXPECT_EQ(lines[1], std::string(DisplayWidth(lines[0]), '='));  // underlined by columns, not bytes
  for (const std::string& line : lines) {
    if (line.find("$ rota") != std::string::npos) continue;  // commands are copied whole
    EXPECT_LE(DisplayWidth(line), 40) << line;
  }
  EXPECT_NE(text.find("- 配额按人计算"), std::string::npos) << text;
  EXPECT_NE(text.find("\n  "), std::string::npos) << text;  // the long sentence goes on, indented
  EXPECT_NE(text.find("- 查看自己和实验室的用量：\n    $ rota usage\n"), std::string::npos) << text;
  EXPECT_NE(text.find("    $ rota book --gpus 1 --from \"tomorrow 09:00\" --for 4h --note a-very-long-note\n"),
            std::string::npos)
      << text;
  // The admin's newline starts a new line; the escape sequence does not reach the terminal.
  EXPECT_NE(text.find("- Mail the admin.\n  Bring your ?[31mstudent id.\n"), std::string::npos) << text;
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
}

TEST(RulesFormat, MarkdownForTheWiki) {
  const std::string md = FormatRulesMarkdown(Reply());
  EXPECT_EQ(md.rfind("# 实验室 GPU 使用规则\n\n## 配额\n\n- 配额按人计算", 0), 0u) << md;
  EXPECT_NE(md.find("- 查看自己和实验室的用量：`rota usage`\n"), std::string::npos) << md;
  EXPECT_NE(md.find("- Mail the admin.\n  Bring your ?[31mstudent id.\n"), std::string::npos) << md;
  EXPECT_NE(md.find("\n## Five commands\n\n- book GPU time on the calendar：`rota book"), std::string::npos) << md;
}

TEST(RulesFormat, EnglishTakesAnAsciiColon) {
  nlohmann::json reply = Reply();
  reply["lang"] = "en";
  EXPECT_NE(FormatRulesText(reply, 80).find("- 查看自己和实验室的用量:\n"), std::string::npos);
  EXPECT_NE(FormatRulesMarkdown(reply).find("- 查看自己和实验室的用量: `rota usage`\n"), std::string::npos);
}

TEST(RulesFormat, AReplyWithoutTheExpectedFieldsPrintsWhatThereIs) {
  EXPECT_EQ(FormatRulesText(json{{"ok", true}}, 80), "\n\n");
  EXPECT_EQ(FormatRulesText(json{{"title", 3}, {"sections", {{{"heading", "H"}, {"items", "x"}}}}}, 80),
            "\n\n\nH\n-\n");
  EXPECT_EQ(FormatRulesMarkdown(json::array()), "# \n");
}

}  // namespace
}  // namespace rules_format_test
}  // namespace rota::cli
