// Tests of the calendar arithmetic. Expected day numbers and dates are constants worked out
// outside this code (Python's datetime), so a shared mistake cannot make a test agree with itself.
#include "core/civil_date.h"

#include <gtest/gtest.h>

namespace rota {
namespace civil_date_test {
namespace {

TEST(CivilDateTest, DaysThereAndBack) {
  EXPECT_EQ(DaysFromCivil(1970, 1, 1), 0);
  EXPECT_EQ(DaysFromCivil(1970, 1, 2), 1);
  EXPECT_EQ(DaysFromCivil(1969, 12, 31), -1);
  EXPECT_EQ(DaysFromCivil(2000, 1, 1), 10957);
  EXPECT_EQ(DaysFromCivil(1600, 3, 1), -135080);
  EXPECT_EQ(DaysFromCivil(2000, 3, 1), 11017);
  EXPECT_EQ(DaysFromCivil(1900, 3, 1), -25508);
  EXPECT_EQ(DaysFromCivil(2026, 12, 1), 20788);
  EXPECT_EQ(DaysFromCivil(2028, 2, 29), 21243);
  // Every day from 1800 to 2200 goes there and back, and consecutive days are consecutive dates.
  CivilDate prev = CivilFromDays(DaysFromCivil(1800, 1, 1) - 1);
  for (std::int64_t d = DaysFromCivil(1800, 1, 1); d < DaysFromCivil(2200, 1, 1); ++d) {
    const CivilDate c = CivilFromDays(d);
    ASSERT_EQ(DaysFromCivil(c.year, c.month, c.day), d);
    const bool next_day = c.year == prev.year && c.month == prev.month && c.day == prev.day + 1;
    const bool next_month = c.day == 1 && prev.day == DaysInMonth(prev.year, prev.month) &&
                            ((c.year == prev.year && c.month == prev.month + 1) ||
                             (c.year == prev.year + 1 && c.month == 1 && prev.month == 12));
    ASSERT_TRUE(next_day || next_month) << d;
    prev = c;
  }
  EXPECT_EQ(DaysInMonth(2026, 2), 28);
  EXPECT_EQ(DaysInMonth(2024, 2), 29);
  EXPECT_EQ(DaysInMonth(1900, 2), 28);
  EXPECT_EQ(DaysInMonth(2000, 2), 29);
  EXPECT_EQ(DaysInMonth(2026, 4), 30);
}

TEST(CivilDateTest, FormatLocalDropsSecondsInTheServersZone) {
  constexpr Time kDec1 = 1796083200;  // 2026-12-01 00:00 UTC
  constexpr int kCst = 8 * 3600;
  EXPECT_EQ(FormatLocal(kDec1 + 6 * kHour, kCst), "2026-12-01 14:00");
  EXPECT_EQ(FormatLocal(kDec1 + 6 * kHour + 59, kCst), "2026-12-01 14:00");
  EXPECT_EQ(FormatLocal(kDec1 + 6 * kHour, 0), "2026-12-01 06:00");
  EXPECT_EQ(FormatLocal(kDec1 + 2 * kHour, -5 * 3600), "2026-11-30 21:00");
  EXPECT_EQ(FormatLocal(kDec1 + 20 * kHour, 19800), "2026-12-02 01:30");
  EXPECT_EQ(FormatLocal(0, 0), "1970-01-01 00:00");
  EXPECT_EQ(FormatLocal(-kMinute, 0), "1969-12-31 23:59");
  EXPECT_EQ(FormatLocal(1835395200 + 23 * kHour + 59 * kMinute, 0), "2028-02-29 23:59");
  EXPECT_EQ(FormatLocalDate(kDec1 + 20 * kHour, 19800), "2026-12-02");
  EXPECT_EQ(FormatLocalDate(-kMinute, 0), "1969-12-31");
}

}  // namespace
}  // namespace civil_date_test
}  // namespace rota
