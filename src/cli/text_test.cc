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
