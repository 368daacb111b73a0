#include "core/usage.h"

#include <gtest/gtest.h>

#include <cmath>

#include "testing/zones.h"

namespace rota {
namespace usage_test {
namespace {

// 2024-01-01 00:00:00 UTC, a Monday. 1704067200 / 86400 = 19723 days; 19723 % 7 = 4 days after
// a Thursday (1970-01-01) = Monday.
constexpr Time kMon = 1704067200;

TEST(LocalTimeTest, WeekdayAndMinuteUtc) {
  EXPECT_EQ(LocalWeekday(kMon, 0), 0);                 // Monday
  EXPECT_EQ(LocalWeekday(kMon + 3 * kDay, 0), 3);      // Thursday
  EXPECT_EQ(LocalWeekday(kMon + 6 * kDay, 0), 6);      // Sunday
  EXPECT_EQ(LocalWeekday(kMon + 7 * kDay, 0), 0);      // next Monday
  EXPECT_EQ(LocalWeekday(kMon - 1, 0), 6);             // Sunday 23:59:59
  EXPECT_EQ(LocalWeekday(0, 0), 3);                    // 1970-01-01 was a Thursday
  EXPECT_EQ(LocalMinuteOfDay(kMon, 0), 0);
  EXPECT_EQ(LocalMinuteOfDay(kMon + 14 * kHour + 30 * kMinute + 59, 0), 14 * 60 + 30);
  EXPECT_EQ(LocalMinuteOfDay(kMon - 1, 0), 1439);
}

TEST(LocalTimeTest, BeforeTheEpoch) {
  // t = -1 is 1969-12-31 23:59:59, a Wednesday: floor division, not truncation.
  EXPECT_EQ(LocalWeekday(-1, 0), 2);
  EXPECT_EQ(LocalMinuteOfDay(-1, 0), 1439);
  EXPECT_EQ(LocalMidnight(-1, 0), -kDay);
}

TEST(LocalTimeTest, UtcOffsetShiftsTheLocalDay) {
  // UTC+1: Sunday 23:00 UTC is Monday 00:00 local.
  EXPECT_EQ(LocalWeekday(kMon - kHour, 3600), 0);
  EXPECT_EQ(LocalMinuteOfDay(kMon - kHour, 3600), 0);
  // UTC-1: Monday 00:00 UTC is Sunday 23:00 local.
  EXPECT_EQ(LocalWeekday(kMon, -3600), 6);
  EXPECT_EQ(LocalMinuteOfDay(kMon, -3600), 23 * 60);
  // UTC+5:30 (India): Monday 00:00 UTC is 05:30 local.
  EXPECT_EQ(LocalMinuteOfDay(kMon, 19800), 330);
}

TEST(LocalTimeTest, LocalMidnight) {
  EXPECT_EQ(LocalMidnight(kMon + 5 * kHour, 0), kMon);
  EXPECT_EQ(LocalMidnight(kMon, 0), kMon);
  // UTC+2: 05:00 UTC is 07:00 local Monday; local midnight was 22:00 UTC Sunday.
  EXPECT_EQ(LocalMidnight(kMon + 5 * kHour, 2 * 3600), kMon - 2 * kHour);
  // UTC-8: 05:00 UTC Monday is 21:00 local Sunday; local Sunday midnight = 08:00 UTC Sunday.
  EXPECT_EQ(LocalMidnight(kMon + 5 * kHour, -8 * 3600), kMon - kDay + 8 * kHour);
}

TEST(WeekStartTest, MondayDefault) {
  Policy p;
  EXPECT_EQ(WeekStart(kMon, p), kMon);
  EXPECT_EQ(WeekStart(kMon + 3 * kDay + 5 * kHour, p), kMon);  // Thursday
  EXPECT_EQ(WeekStart(kMon + 7 * kDay - 1, p), kMon);          // Sunday 23:59:59
  EXPECT_EQ(WeekStart(kMon - 1, p), kMon - kWeek);
  EXPECT_EQ(WeekStart(kMon + 7 * kDay, p), kMon + kWeek);
}

TEST(WeekStartTest, WeeksStartAtLocalMidnightAcrossDaylightSaving) {
  using testing::Utc;
  Policy p;
  p.zone = testing::Berlin();
  // Monday 23 March 2026 00:00 CET is 22 March 23:00 UTC; Monday 30 March 00:00 CEST is 29 March
  // 22:00 UTC: the week between is 167 hours long.
  EXPECT_EQ(WeekStart(Utc(2026, 3, 26, 12), p), Utc(2026, 3, 22, 23));
  EXPECT_EQ(WeekStart(Utc(2026, 3, 29, 21, 59), p), Utc(2026, 3, 22, 23));  // Sunday 23:59 CEST
  EXPECT_EQ(WeekStart(Utc(2026, 3, 29, 22), p), Utc(2026, 3, 29, 22));
  // Autumn: Monday 26 October 00:00 CET is 25 October 23:00 UTC (a week of 169 hours before it).
  EXPECT_EQ(WeekStart(Utc(2026, 10, 25, 22, 59), p), Utc(2026, 10, 18, 22));
  EXPECT_EQ(WeekStart(Utc(2026, 10, 25, 23), p), Utc(2026, 10, 25, 23));
  // New York, a Sunday start: Sunday 1 November 00:00 EDT is 04:00 UTC.
  p.zone = testing::NewYork();
  p.quota.week_start_day = 6;
  EXPECT_EQ(WeekStart(Utc(2026, 11, 7, 12), p), Utc(2026, 11, 1, 4));
  EXPECT_EQ(WeekStart(Utc(2026, 11, 8, 5), p), Utc(2026, 11, 8, 5));  // Sunday 8th 00:00 EST
  // Local days, minutes and weekdays on the day of the change.
  p.zone = testing::Berlin();
  EXPECT_EQ(LocalMidnight(Utc(2026, 3, 29, 12), p.zone), Utc(2026, 3, 28, 23));
  EXPECT_EQ(LocalMinuteOfDay(Utc(2026, 3, 29, 1), p.zone), 3 * 60);  // 03:00 CEST
  EXPECT_EQ(LocalWeekday(Utc(2026, 3, 29, 22), p.zone), 0);         // Monday 00:00 CEST
}

TEST(WeekStartTest, WeekStartDay) {
  Policy p;
  p.quota.week_start_day = 6;  // Sunday
  // Thursday: back (3 - 6 + 7) % 7 = 4 days to Sunday 2023-12-31.
  EXPECT_EQ(WeekStart(kMon + 3 * kDay, p), kMon - kDay);
  EXPECT_EQ(WeekStart(kMon - kDay + kHour, p), kMon - kDay);      // Sunday 01:00
  EXPECT_EQ(WeekStart(kMon - kDay - 1, p), kMon - kDay - kWeek);  // Saturday 23:59:59
  p.quota.week_start_day = 2;  // Wednesday
  EXPECT_EQ(WeekStart(kMon + kDay, p), kMon + 2 * kDay - kWeek);  // Tuesday: previous Wednesday
  EXPECT_EQ(WeekStart(kMon + 2 * kDay, p), kMon + 2 * kDay);
}

TEST(WeekStartTest, UtcOffset) {
  Policy p;
  p.zone = 3600;  // UTC+1: the week starts at local Monday 00:00 = Sunday 23:00 UTC
  EXPECT_EQ(WeekStart(kMon - 30 * kMinute, p), kMon - kHour);
  EXPECT_EQ(WeekStart(kMon - 90 * kMinute, p), kMon - kHour - kWeek);  // still Sunday locally
  p.zone = -5 * 3600;  // UTC-5: the week starts at Monday 05:00 UTC
  EXPECT_EQ(WeekStart(kMon + 4 * kHour, p), kMon + 5 * kHour - kWeek);
  EXPECT_EQ(WeekStart(kMon + 6 * kHour, p), kMon + 5 * kHour);
  // Offset and a Sunday start together: UTC+1, week from local Sunday 00:00 = Saturday 23:00 UTC.
  p.zone = 3600;
  p.quota.week_start_day = 6;
  EXPECT_EQ(WeekStart(kMon + kDay, p), kMon - kDay - kHour);
}

TEST(DecayTest, HalfLifeArithmetic) {
  Usage u;
  u.decayed_gpu_seconds = 1000;
  u.as_of = kMon;
  EXPECT_DOUBLE_EQ(DecayedUsage(u, kMon, kWeek), 1000);
  EXPECT_DOUBLE_EQ(DecayedUsage(u, kMon + kWeek, kWeek), 500);       // one half-life
  EXPECT_DOUBLE_EQ(DecayedUsage(u, kMon + 2 * kWeek, kWeek), 250);   // two
  EXPECT_DOUBLE_EQ(DecayedUsage(u, kMon + 3 * kDay, kDay), 125);     // three one-day half-lives
  // Half a half-life: 1000 * 2^-0.5 = 707.1067811865...
  EXPECT_NEAR(DecayedUsage(u, kMon + kDay / 2, kDay), 707.1067811865476, 1e-9);
}

TEST(DecayTest, NeverGrowsAndEdgeCases) {
  Usage u;
  u.decayed_gpu_seconds = 1000;
  u.as_of = kMon;
  EXPECT_DOUBLE_EQ(DecayedUsage(u, kMon - kWeek, kWeek), 1000);  // now < as_of: unchanged
  EXPECT_DOUBLE_EQ(DecayedUsage(u, kMon + kWeek, 0), 1000);      // no half-life: no decay
  u.decayed_gpu_seconds = 0;
  EXPECT_DOUBLE_EQ(DecayedUsage(u, kMon + kWeek, kWeek), 0);
  u.decayed_gpu_seconds = -5;  // never negative usage
  EXPECT_DOUBLE_EQ(DecayedUsage(u, kMon + kWeek, kWeek), 0);
}

TEST(WeekCountersTest, OnlyTheMatchingWeekCounts) {
  Usage u;
  u.week_start = kMon;
  u.week_gpu_seconds = 7200;
  u.pool_gpu_seconds = 3600;
  EXPECT_DOUBLE_EQ(WeekUsage(u, kMon), 7200);
  EXPECT_DOUBLE_EQ(PoolWeekUsage(u, kMon), 3600);
  EXPECT_DOUBLE_EQ(WeekUsage(u, kMon + kWeek), 0);
  EXPECT_DOUBLE_EQ(PoolWeekUsage(u, kMon + kWeek), 0);
}

TEST(ChargeRunTest, FirstChargeStartsTheWeek) {
  Policy p;
  Usage u;
  // 2 GPUs for one hour on Tuesday: 7200 GPU-seconds.
  ChargeRun(u, 2, kMon + kDay, kMon + kDay + kHour, /*from_pool=*/false, p);
  EXPECT_DOUBLE_EQ(u.decayed_gpu_seconds, 7200);
  EXPECT_EQ(u.as_of, kMon + kDay + kHour);
  EXPECT_EQ(u.week_start, kMon);
  EXPECT_DOUBLE_EQ(u.week_gpu_seconds, 7200);
  EXPECT_DOUBLE_EQ(u.pool_gpu_seconds, 0);
}

TEST(ChargeRunTest, SameWeekAccumulatesAndDecays) {
  Policy p;
  p.fairshare_half_life = kDay;
  Usage u;
  ChargeRun(u, 1, kMon, kMon + kHour, false, p);  // 3600
  // One half-life later, 0.5 GPU (a share) for 2 h = 3600 more.
  ChargeRun(u, 0.5, kMon + kDay + kHour - 2 * kHour, kMon + kDay + kHour, false, p);
  // Decayed: 3600 * 2^-1 + 3600 = 5400. Week counter: no decay, 3600 + 3600.
  EXPECT_DOUBLE_EQ(u.decayed_gpu_seconds, 5400);
  EXPECT_EQ(u.as_of, kMon + kDay + kHour);
  EXPECT_DOUBLE_EQ(u.week_gpu_seconds, 7200);
}

TEST(ChargeRunTest, NewWeekResetsCounters) {
  Policy p;  // half-life one week
  Usage u;
  ChargeRun(u, 1, kMon + kDay, kMon + kDay + kHour, /*from_pool=*/true, p);
  EXPECT_DOUBLE_EQ(u.pool_gpu_seconds, 3600);
  // Exactly one week later (one half-life): decayed 3600/2 + 3600 = 5400; counters restart.
  ChargeRun(u, 1, kMon + kWeek + kDay, kMon + kWeek + kDay + kHour, /*from_pool=*/false, p);
  EXPECT_DOUBLE_EQ(u.decayed_gpu_seconds, 5400);
  EXPECT_EQ(u.week_start, kMon + kWeek);
  EXPECT_DOUBLE_EQ(u.week_gpu_seconds, 3600);
  EXPECT_DOUBLE_EQ(u.pool_gpu_seconds, 0);
}

TEST(ChargeRunTest, RunAcrossWeekBoundaryChargesOnlyTheNewWeekPart) {
  Policy p;
  Usage u;
  u.week_start = kMon;
  u.week_gpu_seconds = 50000;  // last week's counter
  // 2 GPUs from Sunday 22:00 to Monday 03:00: 5 h in all, 3 h in the new week.
  Time start = kMon + kWeek - 2 * kHour;
  Time end = kMon + kWeek + 3 * kHour;
  ChargeRun(u, 2, start, end, /*from_pool=*/true, p);
  EXPECT_EQ(u.week_start, kMon + kWeek);
  EXPECT_DOUBLE_EQ(u.week_gpu_seconds, 2 * 3 * 3600);   // 21600
  EXPECT_DOUBLE_EQ(u.pool_gpu_seconds, 2 * 3 * 3600);   // the pool counter too
  EXPECT_DOUBLE_EQ(u.decayed_gpu_seconds, 2 * 5 * 3600);  // fair share counts the whole run
}

TEST(ChargeRunTest, WeekBoundaryFollowsUtcOffsetAndStartDay) {
  Policy p;
  p.zone = 3600;  // local Monday 00:00 = Sunday 23:00 UTC = kMon - 1h
  Usage u;
  // 1 GPU from 22:00 UTC to 00:00 UTC: local 23:00-01:00, one local hour in the new week.
  ChargeRun(u, 1, kMon - 2 * kHour, kMon, false, p);
  EXPECT_EQ(u.week_start, kMon - kHour);
  EXPECT_DOUBLE_EQ(u.week_gpu_seconds, 3600);

  Policy w;
  w.quota.week_start_day = 2;  // Wednesday
  Usage v;
  // 1 GPU from Tuesday 23:00 to Wednesday 01:00 UTC: one hour in the week starting Wednesday.
  ChargeRun(v, 1, kMon + 2 * kDay - kHour, kMon + 2 * kDay + kHour, false, w);
  EXPECT_EQ(v.week_start, kMon + 2 * kDay);
  EXPECT_DOUBLE_EQ(v.week_gpu_seconds, 3600);
}

TEST(ChargeRunTest, PoolCounterOnlyForPoolRuns) {
  Policy p;
  Usage u;
  ChargeRun(u, 1, kMon, kMon + kHour, /*from_pool=*/false, p);
  ChargeRun(u, 2, kMon + kHour, kMon + 2 * kHour, /*from_pool=*/true, p);
  ChargeRun(u, 1, kMon + 2 * kHour, kMon + 3 * kHour, /*from_pool=*/false, p);
  EXPECT_DOUBLE_EQ(u.week_gpu_seconds, 3600 + 7200 + 3600);  // 14400
  EXPECT_DOUBLE_EQ(u.pool_gpu_seconds, 7200);                // of which from the pool
  EXPECT_DOUBLE_EQ(PoolWeekUsage(u, kMon), 7200);
}

TEST(ChargeRunTest, LateChargeForAnEarlierWeekLeavesTheCurrentWeekAlone) {
  Policy p;
  Usage u;
  ChargeRun(u, 1, kMon + kWeek, kMon + kWeek + kHour, false, p);
  ASSERT_EQ(u.week_start, kMon + kWeek);
  // A run that ended last week is reported late.
  ChargeRun(u, 1, kMon + kDay, kMon + kDay + kHour, /*from_pool=*/true, p);
  EXPECT_EQ(u.week_start, kMon + kWeek);
  EXPECT_DOUBLE_EQ(u.week_gpu_seconds, 3600);
  EXPECT_DOUBLE_EQ(u.pool_gpu_seconds, 0);
  EXPECT_EQ(u.as_of, kMon + kWeek + kHour);  // as_of never moves back
  EXPECT_GT(u.decayed_gpu_seconds, 3600);     // but fair share does see it
}

TEST(ChargeRunTest, ZeroLengthRunChargesNothing) {
  Policy p;
  Usage u;
  ChargeRun(u, 4, kMon + kHour, kMon + kHour, false, p);
  EXPECT_DOUBLE_EQ(u.decayed_gpu_seconds, 0);
  EXPECT_DOUBLE_EQ(u.week_gpu_seconds, 0);
  EXPECT_EQ(u.week_start, kMon);
}

TEST(ChargeOwnersTest, TheOwnerAndTheProjectAreCharged) {
  Policy p;
  std::unordered_map<std::string, Usage> users, projects;
  Job j;
  j.user = "ana";
  j.project = "nlp";
  ChargeOwners(users, projects, j, 2, kMon, kMon + kHour, false, p);
  EXPECT_DOUBLE_EQ(users.at("ana").week_gpu_seconds, 2.0 * kHour);
  EXPECT_DOUBLE_EQ(projects.at("nlp").week_gpu_seconds, 2.0 * kHour);
  j.project.clear();  // no project: the owner alone
  ChargeOwners(users, projects, j, 1, kMon + kHour, kMon + 2 * kHour, false, p);
  EXPECT_DOUBLE_EQ(users.at("ana").week_gpu_seconds, 3.0 * kHour);
  EXPECT_EQ(projects.size(), 1u);
  EXPECT_DOUBLE_EQ(projects.at("nlp").week_gpu_seconds, 2.0 * kHour);
}

}  // namespace
}  // namespace usage_test
}  // namespace rota
