#include "core/quota.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace rota {
namespace quota_test {
namespace {

constexpr Time kMon = 1704067200;  // 2024-01-01 00:00 UTC, a Monday
constexpr Time kWed = kMon + 2 * kDay;
constexpr MiB k80G = 81920;
constexpr MiB k40G = 40960;

Gpu Card(MiB memory) {
  Gpu g;
  g.memory = memory;
  return g;
}

Gpu MigCard(MiB memory, std::vector<std::pair<std::string, MiB>> slices) {
  Gpu g = Card(memory);
  for (auto& [profile, mem] : slices) g.mig.push_back(MigSlice{"", profile, mem});
  return g;
}

Job MakeJob(std::string user, std::string project, int gpus, Duration limit) {
  Job j;
  j.user = std::move(user);
  j.project = std::move(project);
  j.request.gpus = gpus;
  j.time_limit = limit;
  return j;
}

RunningJob Running(std::string user, std::string project, std::vector<int> cards, Time start, Duration limit) {
  RunningJob r;
  r.job = MakeJob(std::move(user), std::move(project), static_cast<int>(cards.size()), limit);
  r.alloc.gpus = std::move(cards);
  r.start_time = start;
  return r;
}

Usage WeekUsed(Time week_start, double gpu_hours, double pool_hours = 0) {
  Usage u;
  u.week_start = week_start;
  u.week_gpu_seconds = gpu_hours * kHour;
  u.pool_gpu_seconds = pool_hours * kHour;
  return u;
}

ClusterState FourCards() {
  ClusterState s;
  for (int i = 0; i < 4; ++i) s.gpus.push_back(Card(k80G));
  return s;
}

TEST(QuotaHoursTest, RoleOverrideDefault) {
  QuotaPolicy q;
  q.role_hours = {{"student", 10}, {"staff", 50}};
  q.user_role = {{"alice", "student"}, {"bob", "staff"}, {"carol", "student"}, {"dave", "visitor"}};
  q.user_hours = {{"carol", 25}};
  EXPECT_DOUBLE_EQ(UserQuotaHours(q, "alice"), 10);
  EXPECT_DOUBLE_EQ(UserQuotaHours(q, "bob"), 50);
  EXPECT_DOUBLE_EQ(UserQuotaHours(q, "carol"), 25);  // the override beats the role
  EXPECT_DOUBLE_EQ(UserQuotaHours(q, "dave"), -1);   // role without hours: the default
  EXPECT_DOUBLE_EQ(UserQuotaHours(q, "erin"), -1);   // unknown: the default (unlimited)
  q.default_hours = 5;
  EXPECT_DOUBLE_EQ(UserQuotaHours(q, "erin"), 5);
  EXPECT_DOUBLE_EQ(UserQuotaHours(q, "dave"), 5);
  EXPECT_DOUBLE_EQ(UserQuotaHours(q, "alice"), 10);

  q.project_hours = {{"nlp", 100}};
  EXPECT_DOUBLE_EQ(ProjectQuotaHours(q, "nlp"), 100);
  EXPECT_DOUBLE_EQ(ProjectQuotaHours(q, "vision"), -1);
}

TEST(RequestGpusTest, WholeCards) {
  ClusterState s = FourCards();
  Request r;
  r.gpus = 3;
  EXPECT_DOUBLE_EQ(RequestGpus(s, r), 3);
}

TEST(RequestGpusTest, ShareIsFractionOfTheLargestWholeCard) {
  ClusterState s;
  s.gpus = {Card(k40G), Card(k80G)};
  Request r;
  r.kind = RequestKind::kMemShare;
  r.memory = 20480;
  EXPECT_DOUBLE_EQ(RequestGpus(s, r), 0.25);  // 20G / 80G
  r.memory = 100000;
  EXPECT_DOUBLE_EQ(RequestGpus(s, r), 1.0);  // capped at one card
  // A MIG card does not count as the largest card: 20G / 40G.
  s.gpus = {MigCard(k80G, {{"7g.80gb", k80G}}), Card(k40G)};
  r.memory = 20480;
  EXPECT_DOUBLE_EQ(RequestGpus(s, r), 0.5);
  // No whole card at all: one GPU-equivalent.
  s.gpus = {MigCard(k80G, {{"7g.80gb", k80G}})};
  EXPECT_DOUBLE_EQ(RequestGpus(s, r), 1.0);
}

TEST(RequestGpusTest, MigIsSliceOverCardMemory) {
  ClusterState s;
  s.gpus = {Card(k40G), MigCard(k80G, {{"3g.40gb", k40G}, {"1g.10gb", 10240}, {"1g.10gb", 10240}})};
  Request r;
  r.kind = RequestKind::kMig;
  r.mig_profile = "3g.40gb";
  EXPECT_DOUBLE_EQ(RequestGpus(s, r), 0.5);
  r.mig_profile = "1g.10gb";
  EXPECT_DOUBLE_EQ(RequestGpus(s, r), 0.125);
  r.mig_profile = "7g.80gb";  // not on this cluster
  EXPECT_DOUBLE_EQ(RequestGpus(s, r), 1.0);
}

TEST(AllocationGpusTest, Kinds) {
  ClusterState s;
  s.gpus = {Card(k40G), Card(k40G), MigCard(k80G, {{"3g.40gb", k40G}, {"1g.10gb", 10240}})};
  Allocation none;
  EXPECT_DOUBLE_EQ(AllocationGpus(s, none), 0);
  Allocation whole;
  whole.gpus = {0, 1};
  EXPECT_DOUBLE_EQ(AllocationGpus(s, whole), 2);
  Allocation share;
  share.gpus = {1};
  share.memory = 10240;
  EXPECT_DOUBLE_EQ(AllocationGpus(s, share), 0.25);  // 10G of a 40G card
  Allocation mig;
  mig.gpus = {2};
  mig.mig = 1;
  EXPECT_DOUBLE_EQ(AllocationGpus(s, mig), 0.125);  // 10G of an 80G card
  mig.mig = 0;
  EXPECT_DOUBLE_EQ(AllocationGpus(s, mig), 0.5);
}

TEST(QuotaBookTest, RoleQuotaMinusChargedWeek) {
  ClusterState s = FourCards();
  Policy p;
  p.quota.role_hours = {{"student", 10}};
  p.quota.user_role = {{"alice", "student"}};
  s.user_usage["alice"] = WeekUsed(kMon, 5);  // 5 of 10 h used this week
  QuotaBook book(s, p, kWed);
  EXPECT_EQ(book.week_start(), kMon);
  EXPECT_DOUBLE_EQ(book.UserLeft("alice"), 5 * 3600);
  Job j = MakeJob("alice", "nlp", 1, 5 * kHour);
  EXPECT_EQ(book.Check(j, 5 * 3600), QuotaVerdict::kOk);  // exactly what is left
  EXPECT_EQ(book.Check(j, 5 * 3600 + 1), QuotaVerdict::kExhausted);
}

TEST(QuotaBookTest, LastWeeksChargesDoNotCount) {
  ClusterState s = FourCards();
  Policy p;
  p.quota.default_hours = 10;
  s.user_usage["alice"] = WeekUsed(kMon - kWeek, 9);
  QuotaBook book(s, p, kWed);
  EXPECT_DOUBLE_EQ(book.UserLeft("alice"), 10 * 3600);
}

TEST(QuotaBookTest, UserOverrideAndUnlimited) {
  ClusterState s = FourCards();
  Policy p;
  p.quota.role_hours = {{"student", 10}};
  p.quota.user_role = {{"alice", "student"}, {"bob", "student"}};
  p.quota.user_hours = {{"bob", 40}};
  QuotaBook book(s, p, kWed);
  Job a = MakeJob("alice", "nlp", 4, 5 * kHour);  // 20 GPU-h
  Job b = MakeJob("bob", "nlp", 4, 5 * kHour);
  Job c = MakeJob("carol", "nlp", 4, 5 * kHour);  // no role, default -1: unlimited
  EXPECT_EQ(book.Check(a, 20 * 3600), QuotaVerdict::kExhausted);
  EXPECT_EQ(book.Check(b, 20 * 3600), QuotaVerdict::kOk);
  EXPECT_DOUBLE_EQ(book.UserLeft("carol"), -1);
  EXPECT_EQ(book.Check(c, 1e9), QuotaVerdict::kOk);
}

TEST(QuotaBookTest, ZeroQuotaAllowsNothing) {
  ClusterState s = FourCards();
  Policy p;
  p.quota.default_hours = 0;
  QuotaBook book(s, p, kWed);
  EXPECT_DOUBLE_EQ(book.UserLeft("alice"), 0);
  EXPECT_EQ(book.Check(MakeJob("alice", "", 1, 60), 60), QuotaVerdict::kExhausted);
}

TEST(QuotaBookTest, RunningJobsCountAtTheirLimits) {
  ClusterState s = FourCards();
  Policy p;
  p.quota.default_hours = 10;
  // 2 GPUs started an hour ago with a 3 h limit: all 6 GPU-h count, not the 2 elapsed.
  s.running.push_back(Running("alice", "nlp", {0, 1}, kWed - kHour, 3 * kHour));
  QuotaBook book(s, p, kWed);
  EXPECT_DOUBLE_EQ(book.UserLeft("alice"), (10 - 6) * 3600);
  EXPECT_DOUBLE_EQ(book.UserLeft("bob"), 10 * 3600);
}

TEST(QuotaBookTest, RunningJobFromLastWeekCountsOnlyItsPartInThisWeek) {
  ClusterState s = FourCards();
  Policy p;
  p.quota.default_hours = 10;
  // 1 GPU from Sunday 23:00 with a 3 h limit: 2 h fall in this week.
  s.running.push_back(Running("alice", "nlp", {0}, kMon - kHour, 3 * kHour));
  QuotaBook book(s, p, kMon + 30 * kMinute);
  EXPECT_DOUBLE_EQ(book.UserLeft("alice"), (10 - 2) * 3600);
}

TEST(QuotaBookTest, StoppingRunningJobCountsUntilItsKillTime) {
  ClusterState s = FourCards();
  Policy p;
  p.quota.default_hours = 10;
  RunningJob r = Running("alice", "nlp", {0}, kWed - kHour, 8 * kHour);
  r.kill_at = kWed + 120;  // being preempted: 1 h + 120 s in all, not 8 h
  s.running.push_back(r);
  QuotaBook book(s, p, kWed);
  EXPECT_DOUBLE_EQ(book.UserLeft("alice"), 10 * 3600 - 3720);
}

TEST(QuotaBookTest, TakeSpendsForTheRestOfThePass) {
  ClusterState s = FourCards();
  Policy p;
  p.quota.default_hours = 10;
  QuotaBook book(s, p, kWed);
  Job j = MakeJob("alice", "nlp", 2, 3 * kHour);
  ASSERT_EQ(book.Check(j, 6 * 3600), QuotaVerdict::kOk);
  book.Take(j, 6 * 3600, false);
  EXPECT_DOUBLE_EQ(book.UserLeft("alice"), 4 * 3600);
  EXPECT_EQ(book.Check(j, 6 * 3600), QuotaVerdict::kExhausted);
  EXPECT_EQ(book.Check(j, 4 * 3600), QuotaVerdict::kOk);
}

TEST(QuotaBookTest, ProjectModeUsesProjectQuotaOnly) {
  ClusterState s = FourCards();
  Policy p;
  p.mode = AccountMode::kProject;
  p.quota.default_hours = 0;  // user quotas do not apply in project mode
  p.quota.project_hours = {{"nlp", 20}};
  s.project_usage["nlp"] = WeekUsed(kMon, 10);
  s.running.push_back(Running("bob", "nlp", {0}, kWed, 4 * kHour));  // 4 GPU-h promised
  QuotaBook book(s, p, kWed);
  // 20 - 10 - 4 = 6 h left for the whole project.
  EXPECT_DOUBLE_EQ(book.ProjectLeft("nlp"), 6 * 3600);
  Job j = MakeJob("alice", "nlp", 1, 6 * kHour);
  EXPECT_EQ(book.Check(j, 6 * 3600), QuotaVerdict::kOk);
  EXPECT_EQ(book.Check(j, 6 * 3600 + 1), QuotaVerdict::kExhausted);
  book.Take(j, 2 * 3600, false);
  EXPECT_DOUBLE_EQ(book.ProjectLeft("nlp"), 4 * 3600);
  // A project without a quota is unlimited.
  Job v = MakeJob("alice", "vision", 4, 100 * kHour);
  EXPECT_EQ(book.Check(v, 400 * 3600), QuotaVerdict::kOk);
}

Policy HybridPolicy() {
  Policy p;
  p.mode = AccountMode::kHybrid;
  p.quota.default_hours = 10;
  p.quota.project_hours = {{"nlp", 20}};  // the nlp pool
  return p;
}

TEST(QuotaBookTest, HybridUserQuotaFirstThenPool) {
  ClusterState s = FourCards();
  Policy p = HybridPolicy();
  s.user_usage["alice"] = WeekUsed(kMon, 8);  // 2 h of her own left
  QuotaBook book(s, p, kWed);
  Job j = MakeJob("alice", "nlp", 1, kHour);
  EXPECT_EQ(book.Check(j, 1 * 3600), QuotaVerdict::kOk);        // fits her own 2 h
  EXPECT_EQ(book.Check(j, 4 * 3600), QuotaVerdict::kFromPool);  // does not: the 20 h pool
  EXPECT_EQ(book.Check(j, 21 * 3600), QuotaVerdict::kExhausted);
  // A project without a pool has none in hybrid mode.
  Job v = MakeJob("alice", "vision", 1, kHour);
  EXPECT_EQ(book.Check(v, 4 * 3600), QuotaVerdict::kExhausted);
}

TEST(QuotaBookTest, HybridPoolCountsOnlyPoolUsage) {
  ClusterState s = FourCards();
  Policy p = HybridPolicy();
  s.user_usage["alice"] = WeekUsed(kMon, 10);  // her own quota is used up
  // The project ran 100 h this week, 18 h of them on the pool: 2 h of pool left.
  s.project_usage["nlp"] = WeekUsed(kMon, 100, 18);
  // A running pool job of bob's promises 1 more pool hour; a running non-pool job does not.
  RunningJob pool_job = Running("bob", "nlp", {0}, kWed, kHour);
  pool_job.from_pool = true;
  s.running.push_back(pool_job);
  s.running.push_back(Running("carol", "nlp", {1}, kWed, 5 * kHour));
  QuotaBook book(s, p, kWed);
  EXPECT_DOUBLE_EQ(book.ProjectLeft("nlp"), 1 * 3600);  // 20 - 18 - 1
  Job j = MakeJob("alice", "nlp", 1, kHour);
  EXPECT_EQ(book.Check(j, 3600), QuotaVerdict::kFromPool);
  book.Take(j, 3600, /*from_pool=*/true);
  EXPECT_DOUBLE_EQ(book.ProjectLeft("nlp"), 0);
  EXPECT_EQ(book.Check(j, 60), QuotaVerdict::kExhausted);
}

// Hybrid mode promises each user a guaranteed base quota; the pool is "on top". A job that was
// charged to the pool must not also use up its owner's own quota, or the guarantee is lost as soon
// as the pool runs dry.
TEST(QuotaBookTest, HybridPoolJobsDoNotConsumeTheUsersOwnQuota) {
  ClusterState s = FourCards();
  Policy p = HybridPolicy();  // alice: 10 h of her own; nlp pool: 20 h
  // A 20 GPU-h job of alice's (more than her 10 h) runs on the pool and uses all of it.
  RunningJob big = Running("alice", "nlp", {0, 1}, kWed, 10 * kHour);
  big.from_pool = true;
  s.running.push_back(big);
  QuotaBook book(s, p, kWed);
  EXPECT_DOUBLE_EQ(book.ProjectLeft("nlp"), 0);
  // Her own 10 h are untouched: a 5 GPU-h job fits them.
  EXPECT_DOUBLE_EQ(book.UserLeft("alice"), 10 * 3600);
  EXPECT_EQ(book.Check(MakeJob("alice", "nlp", 1, 5 * kHour), 5 * 3600), QuotaVerdict::kOk);
}

TEST(QuotaBookTest, HybridChargedPoolRunsDoNotConsumeTheUsersOwnQuota) {
  ClusterState s = FourCards();
  Policy p = HybridPolicy();
  // Finished this week: alice ran 12 h, 8 h of which were charged to the pool (the simulator and
  // the daemon charge her Usage with from_pool): 4 h of her own 10 h are used, 6 h left.
  s.user_usage["alice"] = WeekUsed(kMon, 12, 8);
  QuotaBook book(s, p, kWed);
  EXPECT_DOUBLE_EQ(book.UserLeft("alice"), 6 * 3600);
}

TEST(QuotaBookTest, HybridTakeFromPoolDoesNotConsumeTheUsersOwnQuota) {
  ClusterState s = FourCards();
  Policy p = HybridPolicy();
  QuotaBook book(s, p, kWed);
  Job big = MakeJob("alice", "nlp", 2, 10 * kHour);  // 20 GPU-h > her 10 h
  ASSERT_EQ(book.Check(big, 20 * 3600), QuotaVerdict::kFromPool);
  book.Take(big, 20 * 3600, /*from_pool=*/true);
  EXPECT_DOUBLE_EQ(book.ProjectLeft("nlp"), 0);
  EXPECT_DOUBLE_EQ(book.UserLeft("alice"), 10 * 3600);
  EXPECT_EQ(book.Check(MakeJob("alice", "nlp", 1, 5 * kHour), 5 * 3600), QuotaVerdict::kOk);
}

TEST(QuotaBookTest, HybridUnlimitedUserNeverNeedsThePool) {
  ClusterState s = FourCards();
  Policy p = HybridPolicy();
  p.quota.user_hours = {{"prof", -1}};
  QuotaBook book(s, p, kWed);
  EXPECT_EQ(book.Check(MakeJob("prof", "nlp", 4, 100 * kHour), 400 * 3600), QuotaVerdict::kOk);
}

TEST(QuotaBookTest, SharesAndMigCountAsFractions) {
  ClusterState s;
  s.gpus = {Card(k80G), MigCard(k80G, {{"1g.10gb", 10240}})};
  Policy p;
  p.quota.default_hours = 10;
  RunningJob share = Running("alice", "", {0}, kWed, 4 * kHour);
  share.alloc.memory = 20480;  // a quarter of the card for 4 h: 1 GPU-h
  s.running.push_back(share);
  RunningJob slice = Running("alice", "", {1}, kWed, 8 * kHour);
  slice.alloc.mig = 0;  // an eighth of the card for 8 h: 1 GPU-h
  s.running.push_back(slice);
  QuotaBook book(s, p, kWed);
  EXPECT_DOUBLE_EQ(book.UserLeft("alice"), 8 * 3600);
}

}  // namespace
}  // namespace quota_test
}  // namespace rota
