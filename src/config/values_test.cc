#include "config/values.h"

#include <gtest/gtest.h>

namespace rota::config {
namespace values_test {
namespace {

TEST(ConfigValues, Clock) {
  EXPECT_EQ(ParseClock("14:00"), 840);
  EXPECT_EQ(ParseClock("8:05"), 485);
  EXPECT_EQ(ParseClock("00:00"), 0);
  EXPECT_EQ(ParseClock("23:59"), 1439);
  for (const char* bad : {"25:00", "24:00", "12:60", "12", "12:5", "ab:cd", "", ":30"}) {
    EXPECT_FALSE(ParseClock(bad)) << bad;
  }
}

TEST(ConfigValues, Weekdays) {
  EXPECT_EQ(ParseWeekday("Mon"), 0);
  EXPECT_EQ(ParseWeekday("sunday"), 6);
  EXPECT_FALSE(ParseWeekday("fry"));
  EXPECT_EQ(ParseWeekdays("mon-fri"), 0x1f);
  EXPECT_EQ(ParseWeekdays("sat,sun"), 0x60);
  EXPECT_EQ(ParseWeekdays("mon, wed-fri"), 0x1d);
  EXPECT_EQ(ParseWeekdays("fri-mon"), 0x71);  // wraps over the weekend
  EXPECT_EQ(ParseWeekdays("all"), 0x7f);
  for (const char* bad : {"", "mon-fry", "mon,", "weekdays"}) EXPECT_FALSE(ParseWeekdays(bad)) << bad;
}

TEST(ConfigValues, UtcOffset) {
  EXPECT_EQ(ParseUtcOffset("UTC"), 0);
  EXPECT_EQ(ParseUtcOffset("+08:00"), 8 * 3600);
  EXPECT_EQ(ParseUtcOffset("-03:30"), -(3 * 3600 + 30 * 60));
  EXPECT_EQ(ParseUtcOffset("UTC+8"), 8 * 3600);
  for (const char* bad : {"Asia/Shanghai", "+15:00", "8", "+08:0", "CST"}) EXPECT_FALSE(ParseUtcOffset(bad)) << bad;
  EXPECT_EQ(FormatUtcOffset(8 * 3600), "+08:00");
  EXPECT_EQ(FormatUtcOffset(-(3 * 3600 + 1800)), "-03:30");
  EXPECT_EQ(FormatUtcOffset(0), "UTC");
}

TEST(ConfigValues, MigProfile) {
  auto p = ParseMigProfile("3g.40gb");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->compute, 3);
  EXPECT_EQ(p->memory, 40 * 1024);
  ASSERT_TRUE(ParseMigProfile("1g.10gb+me"));
  EXPECT_EQ(ParseMigProfile("7g.141gb")->memory, 141 * 1024);
  for (const char* bad : {"3g.40", "8g.80gb", "0g.5gb", "3g.gb", "3g.40gb+xx", "40gb"}) {
    EXPECT_FALSE(ParseMigProfile(bad)) << bad;
  }
}

}  // namespace
}  // namespace values_test
}  // namespace rota::config
