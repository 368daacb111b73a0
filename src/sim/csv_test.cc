#include "sim/csv.h"

#include <gtest/gtest.h>

#include <string>

namespace rota::sim {
namespace csv_test {
namespace {

TEST(CsvTest, PlainRowsAndHeader) {
  auto t = ParseCsv("a,b,c\n1,2,3\n4,5,6\n");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->header, (std::vector<std::string>{"a", "b", "c"}));
  ASSERT_EQ(t->rows.size(), 2u);
  EXPECT_EQ(t->rows[1], (std::vector<std::string>{"4", "5", "6"}));
  EXPECT_EQ(t->lines, (std::vector<std::int64_t>{2, 3}));
}

TEST(CsvTest, QuotedFieldsWithCommasEscapesAndNewlines) {
  auto t =
      ParseCsv("name,note\n\"x,y\",\"he said \"\"hi\"\"\"\n\"multi\nline\",\"\"\nlast,\"a\"\n");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->rows.size(), 3u);
  EXPECT_EQ(t->rows[0][0], "x,y");
  EXPECT_EQ(t->rows[0][1], "he said \"hi\"");
  EXPECT_EQ(t->rows[1][0], "multi\nline");
  EXPECT_EQ(t->rows[1][1], "");
  EXPECT_EQ(t->rows[2][1], "a");
  // The record with an embedded line feed starts on line 3; the next one on line 5.
  EXPECT_EQ(t->lines, (std::vector<std::int64_t>{2, 3, 5}));
}

TEST(CsvTest, CrlfAndNoFinalNewline) {
  auto t = ParseCsv("a,b\r\n1,2\r\n\"3\",4");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->header, (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(t->rows.size(), 2u);
  EXPECT_EQ(t->rows[0], (std::vector<std::string>{"1", "2"}));
  EXPECT_EQ(t->rows[1], (std::vector<std::string>{"3", "4"}));
}

TEST(CsvTest, EmptyFieldsAndBlankLines) {
  auto t = ParseCsv("a,b,c\n,,\n\n1,,\r\n\r\n,2,\n\n");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->rows.size(), 3u);
  EXPECT_EQ(t->rows[0], (std::vector<std::string>{"", "", ""}));
  EXPECT_EQ(t->rows[1], (std::vector<std::string>{"1", "", ""}));
  EXPECT_EQ(t->rows[2], (std::vector<std::string>{"", "2", ""}));
  EXPECT_EQ(t->lines, (std::vector<std::int64_t>{2, 4, 6}));
}

TEST(CsvTest, ByteOrderMarkIsIgnored) {
  auto t = ParseCsv("\xEF\xBB\xBFtimestamp,x\n1,2\n");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->header[0], "timestamp");
}

TEST(CsvTest, FieldCountMismatchNamesTheLine) {
  auto t = ParseCsv("a,b\n1,2\n1,2,3\n", "f.csv");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(t.status().message(), "f.csv:3: expected 2 fields as in the header, found 3");
}

TEST(CsvTest, UnterminatedQuoteNamesTheLineItOpensOn) {
  auto t = ParseCsv("a,b\n1,2\n3,\"open\n\n", "f.csv");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(), "f.csv:3: quoted field never closed");
}

TEST(CsvTest, TextAfterClosingQuoteIsAnError) {
  auto t = ParseCsv("a,b\n\"x\"y,2\n", "f.csv");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("f.csv:2: unexpected text after a closing quote"),
            std::string::npos)
      << t.status().message();
}

TEST(CsvTest, EmptyInputAndDuplicateColumns) {
  EXPECT_FALSE(ParseCsv("").ok());
  EXPECT_FALSE(ParseCsv("\n\n").ok());
  auto dup = ParseCsv("a,b,a\n1,2,3\n", "f.csv");
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.status().message(), "f.csv:1: column \"a\" appears twice in the header");
}

TEST(CsvTest, StreamingReaderGivesViewsAndColumnIndexes) {
  const std::string text = "x,\"y\"\n\"a\"\"b\",c\n";
  CsvReader reader(text, "s.csv");
  ASSERT_TRUE(reader.ReadHeader().ok());
  EXPECT_EQ(reader.ColumnIndex("y"), 1u);
  EXPECT_FALSE(reader.ColumnIndex("z").has_value());
  EXPECT_EQ(reader.ColumnList(), "x, y");
  auto more = reader.Next();
  ASSERT_TRUE(more.ok());
  ASSERT_TRUE(*more);
  EXPECT_EQ(reader.line(), 2);
  EXPECT_EQ(reader.fields()[0], "a\"b");
  EXPECT_EQ(reader.fields()[1], "c");
  more = reader.Next();
  ASSERT_TRUE(more.ok());
  EXPECT_FALSE(*more);
}

TEST(CsvTest, ReadFileToStringReportsMissingFile) {
  auto text = ReadFileToString("/nonexistent/rota/trace.csv");
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace csv_test
}  // namespace rota::sim
