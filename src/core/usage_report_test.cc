#include "core/usage_report.h"

#include <gtest/gtest.h>

#include "core/usage.h"
#include "testing/zones.h"

namespace rota {
namespace usage_report_test {
namespace {

// 2024-01-01 00:00:00 UTC, a Monday (see usage_test.cc).
constexpr Time kMon = 1704067200;

UsageRun MakeRun(const std::string& user, Time submit, Time start, Time end, double gpus) {
  UsageRun r;
  r.user = user;
  r.submit = submit;
  r.start = start;
  r.end = end;
  r.gpus = gpus;
  return r;
}

const UserUsage* Find(const UsageReport& report, const std::string& name) {
  for (const UserUsage& u : report.users) {
    if (u.name == name) return &u;
  }
  return nullptr;
}

TEST(UsageReportTest, SplitsRunsOverLocalDaysAndCountsRunningJobsUpToNow) {
  Policy policy;
  UsageInput in;
  in.now = kMon + 2 * kDay + 12 * kHour;  // Wednesday 12:00
  in.days = 3;                            // Monday, Tuesday, Wednesday
  // 2 GPUs from Monday 22:00 to Tuesday 02:00: 2 h on Monday, 2 h on Tuesday, times 2 GPUs.
  in.runs.push_back(MakeRun("alice", kMon + 21 * kHour, kMon + 22 * kHour, kMon + kDay + 2 * kHour, 2));
  // Running since Wednesday 10:00 on one GPU: 2 h so far.
  in.runs.push_back(MakeRun("bob", kMon + 2 * kDay + 9 * kHour, kMon + 2 * kDay + 10 * kHour, kNever, 1));
  // Never started: no hours, no wait.
  in.runs.push_back(MakeRun("carol", kMon + 2 * kDay, 0, kNever, 1));

  const UsageReport r = BuildUsageReport(in, policy);
  ASSERT_EQ(r.days.size(), 3u);
  EXPECT_EQ(r.days[0].start, kMon);
  EXPECT_EQ(r.days[2].start, kMon + 2 * kDay);
  EXPECT_DOUBLE_EQ(r.days[0].gpu_hours.at("alice"), 4.0);
  EXPECT_DOUBLE_EQ(r.days[1].gpu_hours.at("alice"), 4.0);
  EXPECT_EQ(r.days[2].gpu_hours.count("alice"), 0u);
  EXPECT_DOUBLE_EQ(r.days[2].gpu_hours.at("bob"), 2.0);
  // Waits: alice 1 h (Monday), bob 1 h (Wednesday); carol has not started.
  EXPECT_DOUBLE_EQ(r.days[0].avg_wait_seconds, 3600);
  EXPECT_DOUBLE_EQ(r.days[1].avg_wait_seconds, 0);
  EXPECT_DOUBLE_EQ(r.totals.avg_wait_seconds, 3600);
  // The week's hours: nothing charged yet in the store, so only bob's running part counts.
  EXPECT_EQ(r.week_start, kMon);
  ASSERT_NE(Find(r, "bob"), nullptr);
  EXPECT_DOUBLE_EQ(Find(r, "bob")->week_gpu_hours, 2.0);
  EXPECT_EQ(Find(r, "bob")->jobs, 1);
  EXPECT_EQ(Find(r, "carol"), nullptr);
}

// Jobs outside Rota (a cluster's plain sbatch) add their GPU-hours to the days and to their
// owner's row, but no job, wait or measure: Rota neither queued nor sampled them.
TEST(UsageReportTest, RunsOutsideRotaCountTheirHoursOnly) {
  Policy policy;
  UsageInput in;
  in.now = kMon + 2 * kDay + 12 * kHour;  // Wednesday 12:00
  in.days = 2;                            // Tuesday, Wednesday
  in.runs.push_back(MakeRun("alice", kMon + kDay + 9 * kHour, kMon + kDay + 10 * kHour, kMon + kDay + 11 * kHour, 1));
  // 4 GPUs from Monday 23:00 to Tuesday 01:00: only Tuesday's hour is in the period.
  in.outside.push_back({"alice", 4, kMon + 23 * kHour, kMon + kDay + kHour});
  in.outside.push_back({"dan", 2, kMon + 2 * kDay + 9 * kHour, kMon + 2 * kDay + 10 * kHour + 1800});
  const UsageReport r = BuildUsageReport(in, policy);
  ASSERT_EQ(r.days.size(), 2u);
  EXPECT_DOUBLE_EQ(r.days[0].gpu_hours.at("alice"), 4.0 + 1.0);
  EXPECT_DOUBLE_EQ(r.days[1].gpu_hours.at("dan"), 3.0);
  ASSERT_NE(Find(r, "alice"), nullptr);
  EXPECT_DOUBLE_EQ(Find(r, "alice")->outside_gpu_hours, 4.0);
  EXPECT_EQ(Find(r, "alice")->jobs, 1);  // her Rota job only
  ASSERT_NE(Find(r, "dan"), nullptr);
  EXPECT_DOUBLE_EQ(Find(r, "dan")->outside_gpu_hours, 3.0);
  EXPECT_EQ(Find(r, "dan")->jobs, 0);
  EXPECT_DOUBLE_EQ(r.totals.avg_wait_seconds, 3600);  // alice's wait alone
}

// A run outside Rota still running is not charged yet: its part of the week so far counts in its
// owner's week hours, as a running job's; an ended one's is in the charged usage already.
TEST(UsageReportTest, ARunOutsideRotaStillRunningCountsItsPartOfTheWeekSoFar) {
  Policy policy;
  UsageInput in;
  in.now = kMon + 2 * kDay + 12 * kHour;  // Wednesday 12:00
  in.days = 1;
  // Since Sunday 22:00 on 2 GPUs, last seen running at 11:00: Monday 00:00 to 11:00 Wednesday.
  in.outside.push_back({"erin", 2, kMon - 2 * kHour, kMon + 2 * kDay + 11 * kHour, true});
  in.outside.push_back({"dan", 2, kMon + 2 * kDay + 9 * kHour, kMon + 2 * kDay + 10 * kHour, false});
  const UsageReport r = BuildUsageReport(in, policy);
  ASSERT_NE(Find(r, "erin"), nullptr);
  EXPECT_DOUBLE_EQ(Find(r, "erin")->week_gpu_hours, 2.0 * 59);
  EXPECT_DOUBLE_EQ(Find(r, "erin")->outside_gpu_hours, 2.0 * 11);  // today's, to when it was seen
  ASSERT_NE(Find(r, "dan"), nullptr);
  EXPECT_DOUBLE_EQ(Find(r, "dan")->week_gpu_hours, 0.0);  // ended: its charge is in the usage
  EXPECT_DOUBLE_EQ(Find(r, "dan")->outside_gpu_hours, 2.0);
}

TEST(UsageReportTest, WeekHoursAddChargedCountersToRunningPartsAndCompareWithQuota) {
  Policy policy;
  policy.quota.user_hours["alice"] = 10;
  policy.quota.project_hours["nlp"] = 100;
  UsageInput in;
  in.now = kMon + 3 * kDay;  // Thursday 00:00
  Usage charged;
  ChargeRun(charged, 1, kMon + kDay, kMon + kDay + 5 * kHour, /*from_pool=*/false, policy);
  in.users["alice"] = charged;
  in.projects["nlp"] = charged;
  // Running since Sunday 22:00 of the previous week from the explore pool: only its 3 days x
  // 24 h of this week count, on half a card.
  UsageRun running = MakeRun("alice", kMon - 3 * kHour, kMon - 2 * kHour, kNever, 0.5);
  running.project = "nlp";
  running.from_pool = true;
  in.runs.push_back(running);
  policy.quota.default_hours = -1;  // users without an override: unlimited
  in.users["dave"] = Usage{};

  const UsageReport r = BuildUsageReport(in, policy);
  const UserUsage* alice = Find(r, "alice");
  ASSERT_NE(alice, nullptr);
  EXPECT_DOUBLE_EQ(alice->week_gpu_hours, 5.0 + 0.5 * 72);
  EXPECT_DOUBLE_EQ(alice->pool_gpu_hours, 0.5 * 72);
  ASSERT_TRUE(alice->quota_gpu_hours.has_value());
  EXPECT_DOUBLE_EQ(*alice->quota_gpu_hours, 10);
  ASSERT_NE(Find(r, "dave"), nullptr);
  EXPECT_FALSE(Find(r, "dave")->quota_gpu_hours.has_value());
  ASSERT_EQ(r.projects.size(), 1u);
  EXPECT_EQ(r.projects[0].name, "nlp");
  EXPECT_DOUBLE_EQ(r.projects[0].week_gpu_hours, 5.0 + 0.5 * 72);
  EXPECT_DOUBLE_EQ(*r.projects[0].quota_gpu_hours, 100);
}

TEST(UsageReportTest, UtilisationIdleHoursAndBookingOutcomesPerUserAndDay) {
  Policy policy;
  UsageInput in;
  in.now = kMon + kDay + 12 * kHour;  // Tuesday 12:00
  in.days = 2;
  UsageRun a = MakeRun("alice", kMon, kMon + kHour, kMon + 3 * kHour, 1);
  a.measured_gpu_seconds = 7200;
  a.busy_gpu_seconds = 5400;  // 75%
  a.idle_gpu_seconds = 1800;
  UsageRun b = MakeRun("bob", kMon + kDay, kMon + kDay + kHour, kNever, 1);
  b.measured_gpu_seconds = 3600;
  b.busy_gpu_seconds = 900;  // 25%
  in.runs = {a, b};
  in.bookings.push_back({"bob", kMon + kDay + 8 * kHour, /*no_show=*/true, false});
  in.bookings.push_back({"alice", kMon + 9 * kHour, false, /*overrun=*/true});
  in.bookings.push_back({"alice", kMon - 5 * kDay, true, false});  // before the period

  const UsageReport r = BuildUsageReport(in, policy);
  ASSERT_TRUE(r.days[0].allocated_util.has_value());
  EXPECT_DOUBLE_EQ(*r.days[0].allocated_util, 75);
  EXPECT_DOUBLE_EQ(*r.days[1].allocated_util, 25);
  EXPECT_DOUBLE_EQ(*r.totals.allocated_util, 100.0 * 6300 / 10800);
  EXPECT_DOUBLE_EQ(r.totals.idle_gpu_hours, 0.5);
  EXPECT_EQ(r.totals.no_shows, 1);
  EXPECT_EQ(r.totals.overruns, 1);
  EXPECT_EQ(Find(r, "alice")->totals.overruns, 1);
  EXPECT_EQ(Find(r, "alice")->totals.no_shows, 0);
  EXPECT_EQ(Find(r, "bob")->totals.no_shows, 1);
  EXPECT_DOUBLE_EQ(Find(r, "alice")->totals.idle_gpu_hours, 0.5);
}

TEST(UsageReportTest, LocalDaysFollowTheUtcOffset) {
  Policy policy;
  policy.zone = 8 * 3600;  // Beijing
  UsageInput in;
  in.now = kMon + 20 * kHour;  // Monday 20:00 UTC = Tuesday 04:00 in Beijing
  in.days = 2;
  // 15:00-17:00 UTC Monday = 23:00-01:00 Beijing: one hour on each local day.
  in.runs.push_back(MakeRun("alice", kMon + 15 * kHour, kMon + 15 * kHour, kMon + 17 * kHour, 1));
  const UsageReport r = BuildUsageReport(in, policy);
  EXPECT_EQ(r.days[1].start, kMon + 16 * kHour);  // Tuesday 00:00 Beijing
  EXPECT_DOUBLE_EQ(r.days[0].gpu_hours.at("alice"), 1.0);
  EXPECT_DOUBLE_EQ(r.days[1].gpu_hours.at("alice"), 1.0);
}

TEST(UsageReportTest, LocalDaysOf23And25Hours) {
  using testing::Utc;
  Policy policy;
  policy.zone = testing::Berlin();
  UsageInput in;
  in.now = Utc(2026, 3, 30, 12);  // Monday 14:00 CEST
  in.days = 3;                    // Saturday 28th, Sunday 29th (23 hours), Monday 30th
  // One GPU all of Sunday and on to Monday 02:00 CEST.
  in.runs.push_back(MakeRun("alice", Utc(2026, 3, 28, 20), Utc(2026, 3, 28, 23), Utc(2026, 3, 30, 0), 1));
  UsageReport r = BuildUsageReport(in, policy);
  ASSERT_EQ(r.days.size(), 3u);
  EXPECT_EQ(r.days[0].start, Utc(2026, 3, 27, 23));
  EXPECT_EQ(r.days[1].start, Utc(2026, 3, 28, 23));
  EXPECT_EQ(r.days[2].start, Utc(2026, 3, 29, 22));
  EXPECT_EQ(r.days[0].gpu_hours.count("alice"), 0u);
  EXPECT_DOUBLE_EQ(r.days[1].gpu_hours.at("alice"), 23.0);
  EXPECT_DOUBLE_EQ(r.days[2].gpu_hours.at("alice"), 2.0);

  in.now = Utc(2026, 10, 26, 12);  // autumn: Sunday 25th has 25 hours
  in.days = 2;
  in.runs = {MakeRun("alice", Utc(2026, 10, 24, 20), Utc(2026, 10, 24, 22), Utc(2026, 10, 25, 23), 1)};
  r = BuildUsageReport(in, policy);
  ASSERT_EQ(r.days.size(), 2u);
  EXPECT_EQ(r.days[0].start, Utc(2026, 10, 24, 22));
  EXPECT_DOUBLE_EQ(r.days[0].gpu_hours.at("alice"), 25.0);
}

}  // namespace
}  // namespace usage_report_test
}  // namespace rota
