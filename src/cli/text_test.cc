// Tests of display-width text handling: Chinese names must line up in tables.
#include "cli/text.h"

#include <gtest/gtest.h>

namespace rota::cli {
namespace text_test {
namespace {

class TextTest : public ::testing::Test {
 protected:
  void SetUp() override { UseUtf8Locale(); }
};

TEST_F(TextTest, WidthCountsWideCharactersTwice) {
  EXPECT_EQ(DisplayWidth("alice"), 5);
  EXPECT_EQ(DisplayWidth("张三"), 4);          // two CJK characters, 6 bytes
  EXPECT_EQ(DisplayWidth("李四-nlp"), 8);
  EXPECT_EQ(DisplayWidth(""), 0);
  EXPECT_EQ(DisplayWidth("e\u0301"), 1);       // combining accent takes no column
}

TEST_F(TextTest, InvalidBytesCountOneColumnEach) {
  EXPECT_EQ(DisplayWidth(std::string("a\xff" "b")), 3);
}

TEST_F(TextTest, CutNeverSplitsACharacter) {
  EXPECT_EQ(CutToWidth("alice", 10), "alice");
  EXPECT_EQ(CutToWidth("abcdef", 4), "abc\u2026");
  // 5 columns: two CJK characters (4) and the ellipsis (1); a third would not fit.
  EXPECT_EQ(CutToWidth("张三丰先生", 5), "张三\u2026");
  // 4 columns: one CJK character (2), ellipsis (1); the second CJK would make 5.
  EXPECT_EQ(CutToWidth("张三丰先生", 4), "张\u2026");
  EXPECT_LE(DisplayWidth(CutToWidth("张三丰先生", 4)), 4);
  EXPECT_EQ(CutToWidth("abc", 0), "");
}

TEST_F(TextTest, WrapBreaksAtSpacesAndInsideChineseByColumns) {
  using V = std::vector<std::string>;
  EXPECT_EQ(WrapToWidth("one two three four", 9), (V{"one two", "three", "four"}));
  EXPECT_EQ(WrapToWidth("one two", 7), (V{"one two"}));  // exactly the width fits
  // A word wider than the line is cut between characters; no line starts with a space.
  EXPECT_EQ(WrapToWidth("abcdefghij x", 4), (V{"abcd", "efgh", "ij x"}));
  // Chinese: two columns a character, broken anywhere, never inside a character.
  EXPECT_EQ(WrapToWidth("配额按人计算：每人每周", 8), (V{"配额按人", "计算：每", "人每周"}));
  // Mixed: a Latin word stays whole, Chinese breaks next to it.
  EXPECT_EQ(WrapToWidth("角色 phd：每周 40 GPU 小时", 12), (V{"角色 phd：每", "周 40 GPU 小", "时"}));
  EXPECT_EQ(WrapToWidth("本周已用 12.5 GPU-hours", 10), (V{"本周已用", "12.5", "GPU-hours"}));
  const std::string mixed = "配额 abc 按人计算每人 every week 每周 x";
  std::string joined;
  for (const std::string& line : WrapToWidth(mixed, 7)) {
    EXPECT_LE(DisplayWidth(line), 7) << line;
    joined += line;
  }
  std::string no_spaces = mixed;
  std::erase(no_spaces, ' ');
  std::erase(joined, ' ');
  EXPECT_EQ(joined, no_spaces);  // nothing lost but the spaces at breaks
  // No line starts with a closing mark or ends with an opening one.
  EXPECT_EQ(WrapToWidth("停止，先收到信号", 5), (V{"停", "止，", "先收", "到信", "号"}));
  EXPECT_EQ(WrapToWidth("变化（上海）", 6), (V{"变化", "（上", "海）"}));
  EXPECT_EQ(WrapToWidth("用量:", 4), (V{"用", "量:"}));
  EXPECT_EQ(WrapToWidth("first\nsecond line", 6), (V{"first", "second", "line"}));
  EXPECT_EQ(WrapToWidth("", 10), (V{""}));
  EXPECT_EQ(WrapToWidth("abc", 0), (V{"a", "b", "c"}));  // a width under 1 is 1
}

TEST_F(TextTest, PadByColumnsNotBytes) {
  EXPECT_EQ(PadToWidth("张三", 6), "张三  ");
  EXPECT_EQ(PadToWidth("ab", 4, /*right=*/true), "  ab");
  EXPECT_EQ(PadToWidth("toolong", 3), "toolong");
}

TEST_F(TextTest, TableAlignsChineseNames) {
  Table t({"USER", "JOBS"});
  t.AddRow({"张三", "12"});
  t.AddRow({"alice", "3"});
  std::string out = t.Render();
  // USER column is 5 wide (alice); numbers align right under JOBS.
  EXPECT_EQ(out, "USER   JOBS\n张三     12\nalice     3\n");
}

TEST_F(TextTest, Thousands) {
  EXPECT_EQ(WithThousands(0), "0");
  EXPECT_EQ(WithThousands(999), "999");
  EXPECT_EQ(WithThousands(1000), "1,000");
  EXPECT_EQ(WithThousands(1234567), "1,234,567");
  EXPECT_EQ(WithThousands(-45678), "-45,678");
}

}  // namespace
}  // namespace text_test
}  // namespace rota::cli
