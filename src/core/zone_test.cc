// Tests of the zone as data: offsets over time, wall time to instants across the hour skipped
// in spring and the hour repeated in autumn, local days, labels.
#include "core/zone.h"

#include <gtest/gtest.h>

#include "core/civil_date.h"
#include "testing/zones.h"

namespace rota {
namespace zone_test {
namespace {

constexpr int kHourS = 3600;

using testing::Berlin;
using testing::Utc;

// Wall time, counted as Unix time is (the local calendar's seconds since 1970-01-01).
std::int64_t Wall(std::int64_t y, int mo, int d, int h, int mi = 0) { return Utc(y, mo, d, h, mi); }

TEST(ZoneTest, FixedOffset) {
  Zone cst(8 * kHourS);
  EXPECT_TRUE(cst.fixed());
  EXPECT_EQ(cst.OffsetAt(0), 8 * kHourS);
  EXPECT_EQ(cst.ToLocal(Utc(2026, 12, 1, 16)), Wall(2026, 12, 2, 0));
  EXPECT_EQ(cst.FromLocal(Wall(2026, 12, 2, 0)), Utc(2026, 12, 1, 16));
  EXPECT_EQ(cst.DayStart(Utc(2026, 12, 1, 17)), Utc(2026, 12, 1, 16));
  EXPECT_EQ(cst.Label(0), "+08:00");
  EXPECT_EQ(Zone().Label(0), "UTC");
  EXPECT_EQ(Zone(-(3 * kHourS + 1800)).Label(0), "-03:30");
}

TEST(ZoneTest, OffsetsChangeAtTheTransitions) {
  Zone z = Berlin();
  EXPECT_FALSE(z.fixed());
  EXPECT_EQ(z.OffsetAt(Utc(2026, 1, 1, 0)), kHourS);
  EXPECT_EQ(z.OffsetAt(Utc(2026, 3, 29, 1) - 1), kHourS);
  EXPECT_EQ(z.OffsetAt(Utc(2026, 3, 29, 1)), 2 * kHourS);
  EXPECT_EQ(z.OffsetAt(Utc(2026, 7, 1, 12)), 2 * kHourS);
  EXPECT_EQ(z.OffsetAt(Utc(2026, 10, 25, 1)), kHourS);
  EXPECT_EQ(z.Label(Utc(2026, 7, 1, 12)), "Europe/Berlin, +02:00");
  EXPECT_EQ(z.Label(Utc(2026, 12, 1, 12)), "Europe/Berlin, +01:00");
  EXPECT_EQ(z.TransitionsIn(Utc(2026, 1, 1, 0), Utc(2027, 1, 1, 0)).size(), 2u);
  EXPECT_EQ(z.NextChange(Utc(2026, 1, 1, 0)), Utc(2026, 3, 29, 1));
  EXPECT_EQ(z.NextChange(Utc(2026, 3, 29, 1)), Utc(2026, 10, 25, 1));  // after, not at
  EXPECT_EQ(z.LastChange(Utc(2026, 3, 29, 1)), Utc(2026, 3, 29, 1));   // at or before
  EXPECT_EQ(z.LastChange(Utc(2026, 3, 29, 1) - 1), Utc(2025, 10, 26, 1));
  EXPECT_EQ(z.LastChange(Utc(2000, 1, 1, 0)), -kNever);
  EXPECT_EQ(Zone(3600).NextChange(0), kNever);
  EXPECT_EQ(Zone(3600).LastChange(0), -kNever);
}

TEST(ZoneTest, NextWallTime) {
  Zone z = Berlin();
  const std::int64_t k1430 = 14 * kHourS + 30 * 60, k0230 = 2 * kHourS + 30 * 60;
  // Summer and winter: 14:30 local is 12:30 and 13:30 UTC.
  EXPECT_EQ(z.NextWallTime(Utc(2026, 7, 1, 0), k1430), Utc(2026, 7, 1, 12, 30));
  EXPECT_EQ(z.NextWallTime(Utc(2026, 12, 1, 0), k1430), Utc(2026, 12, 1, 13, 30));
  // Strictly after: at 14:30 itself, the next is tomorrow's.
  EXPECT_EQ(z.NextWallTime(Utc(2026, 7, 1, 12, 30), k1430), Utc(2026, 7, 2, 12, 30));
  // Across the spring change: 02:30 is not shown on 29 March; the next is on the 30th.
  EXPECT_EQ(z.NextWallTime(Utc(2026, 3, 28, 23), k0230), Utc(2026, 3, 30, 0, 30));
  // Across the autumn change: 02:30 is shown twice, at 00:30 and 01:30 UTC.
  EXPECT_EQ(z.NextWallTime(Utc(2026, 10, 24, 23), k0230), Utc(2026, 10, 25, 0, 30));
  EXPECT_EQ(z.NextWallTime(Utc(2026, 10, 25, 0, 30), k0230), Utc(2026, 10, 25, 1, 30));
  EXPECT_EQ(z.NextWallTime(Utc(2026, 10, 25, 1, 30), k0230), Utc(2026, 10, 26, 1, 30));
  // Midnight after a 23-hour day.
  EXPECT_EQ(z.NextWallTime(Utc(2026, 3, 28, 23, 30), 0), Utc(2026, 3, 29, 22));
}

TEST(ZoneTest, WallTimesRoundTripAwayFromTheChanges) {
  Zone z = Berlin();
  for (Time t : {Utc(2026, 1, 15, 9), Utc(2026, 6, 15, 9), Utc(2026, 3, 29, 0), Utc(2026, 10, 25, 3)}) {
    EXPECT_EQ(z.FromLocal(z.ToLocal(t)), t) << t;
  }
  EXPECT_EQ(z.FromLocal(Wall(2026, 6, 15, 14)), Utc(2026, 6, 15, 12));
  EXPECT_EQ(z.FromLocal(Wall(2026, 12, 15, 14)), Utc(2026, 12, 15, 13));
}

TEST(ZoneTest, TheSkippedHourMovesForward) {
  Zone z = Berlin();
  // 29 March: clocks go from 02:00 to 03:00. 01:59 and 03:00 exist, 02:30 does not.
  EXPECT_EQ(z.FromLocal(Wall(2026, 3, 29, 1, 59)), Utc(2026, 3, 29, 0, 59));
  EXPECT_EQ(z.FromLocal(Wall(2026, 3, 29, 3)), Utc(2026, 3, 29, 1));
  const Time skipped = z.FromLocal(Wall(2026, 3, 29, 2, 30));
  EXPECT_EQ(skipped, Utc(2026, 3, 29, 1, 30));
  EXPECT_EQ(z.ToLocal(skipped), Wall(2026, 3, 29, 3, 30));  // as the wall clock shows it
  // The day is 23 hours long.
  EXPECT_EQ(z.FromLocal(Wall(2026, 3, 30, 0)) - z.FromLocal(Wall(2026, 3, 29, 0)), 23 * kHourS);
}

TEST(ZoneTest, TheRepeatedHourIsReadAsItsFirstInstant) {
  Zone z = Berlin();
  // 25 October: clocks go from 03:00 back to 02:00. 02:30 happens twice: 00:30 and 01:30 UTC.
  EXPECT_EQ(z.FromLocal(Wall(2026, 10, 25, 2, 30)), Utc(2026, 10, 25, 0, 30));
  EXPECT_EQ(z.ToLocal(Utc(2026, 10, 25, 1, 30)), Wall(2026, 10, 25, 2, 30));
  EXPECT_EQ(z.FromLocal(Wall(2026, 10, 25, 3)), Utc(2026, 10, 25, 2));
  // The day is 25 hours long.
  EXPECT_EQ(z.FromLocal(Wall(2026, 10, 26, 0)) - z.FromLocal(Wall(2026, 10, 25, 0)), 25 * kHourS);
}

TEST(ZoneTest, LocalDaysFollowTheOffsetInForce) {
  Zone z = Berlin();
  // 22:30 UTC is 23:30 local in winter and 00:30 of the next day in summer.
  EXPECT_EQ(z.Day(Utc(2026, 1, 10, 22, 30)), DaysFromCivil(2026, 1, 10));
  EXPECT_EQ(z.Day(Utc(2026, 7, 10, 22, 30)), DaysFromCivil(2026, 7, 11));
  EXPECT_EQ(z.DayStart(Utc(2026, 7, 10, 22, 30)), Utc(2026, 7, 10, 22));
  EXPECT_EQ(z.DayStart(Utc(2026, 1, 10, 22, 30)), Utc(2026, 1, 9, 23));
}

TEST(ZoneTest, EqualityComparesTheRules) {
  EXPECT_EQ(Berlin(), Berlin());
  EXPECT_EQ(Zone(3600), Zone(3600));
  EXPECT_FALSE(Zone(3600) == Zone(7200));
  EXPECT_FALSE(Berlin() == Zone(3600));
}

}  // namespace
}  // namespace zone_test
}  // namespace rota
