#include "sim/metrics.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace rota::sim {
namespace {

JobOutcome Job(std::int64_t id, std::string user, Time submit, Time start, Time end,
               double gpus = 1) {
  return JobOutcome{id, std::move(user), submit, start, end, gpus};
}

TEST(MetricsTest, EmptyInputIsAllZero) {
  Metrics m = ComputeMetrics({}, 8);
  EXPECT_EQ(m.jobs, 0);
  EXPECT_EQ(m.avg_wait, 0);
  EXPECT_EQ(m.p99_wait, 0);
  EXPECT_EQ(m.makespan, 0);
  EXPECT_EQ(m.utilisation, 0);
  EXPECT_EQ(m.users, 0);
  EXPECT_EQ(m.jain_wait, -1);
  EXPECT_EQ(m.jain_slowdown, -1);
}

TEST(MetricsTest, NearestRankPercentiles) {
  std::vector<double> v;
  for (int i = 1; i <= 100; ++i) v.push_back(i);
  EXPECT_EQ(NearestRankPercentile(v, 50), 50);
  EXPECT_EQ(NearestRankPercentile(v, 99), 99);
  EXPECT_EQ(NearestRankPercentile(v, 100), 100);
  EXPECT_EQ(NearestRankPercentile({7}, 99), 7);
  // n = 5: p50 rank ceil(2.5) = 3, p99 rank ceil(4.95) = 5.
  EXPECT_EQ(NearestRankPercentile({1, 2, 3, 4, 5}, 50), 3);
  EXPECT_EQ(NearestRankPercentile({1, 2, 3, 4, 5}, 99), 5);
  EXPECT_EQ(NearestRankPercentile({}, 50), 0);
}

TEST(MetricsTest, WaitPercentilesFromOutcomes) {
  std::vector<JobOutcome> jobs;
  // Waits 1..100 (given in reverse order), each job runs 10 s.
  for (int i = 100; i >= 1; --i) jobs.push_back(Job(i, "u", 0, i, i + 10));
  Metrics m = ComputeMetrics(jobs, 100);
  EXPECT_EQ(m.jobs, 100);
  EXPECT_DOUBLE_EQ(m.avg_wait, 50.5);
  EXPECT_EQ(m.p50_wait, 50);
  EXPECT_EQ(m.p99_wait, 99);
  EXPECT_EQ(m.max_wait, 100);
  EXPECT_DOUBLE_EQ(m.avg_jct, 60.5);
  EXPECT_EQ(m.p99_jct, 109);
  EXPECT_EQ(m.makespan, 110);
  EXPECT_EQ(m.users, 1);
  EXPECT_EQ(m.jain_wait, -1);  // one user
}

TEST(MetricsTest, JainIndexKnownValues) {
  EXPECT_DOUBLE_EQ(JainIndex({1, 1, 1, 1}), 1.0);
  EXPECT_DOUBLE_EQ(JainIndex({1, 0, 0, 0}), 0.25);      // 1 / (4 * 1)
  EXPECT_DOUBLE_EQ(JainIndex({1, 2, 3}), 36.0 / 42.0);  // 6^2 / (3 * 14)
  EXPECT_DOUBLE_EQ(JainIndex({0, 0}), 1.0);
  EXPECT_EQ(JainIndex({5}), -1);
  EXPECT_EQ(JainIndex({}), -1);
}

TEST(MetricsTest, JainOverPerUserMeans) {
  // alice: waits 10 and 30 (mean 20); bob: wait 60. J = 80^2 / (2 * (400 + 3600)) = 0.8.
  // Runs are 100 s: slowdowns alice (110/100 + 130/100)/2 = 1.2, bob 160/100 = 1.6.
  // J = 2.8^2 / (2 * (1.44 + 2.56)) = 7.84 / 8 = 0.98.
  std::vector<JobOutcome> jobs = {Job(1, "alice", 0, 10, 110), Job(2, "alice", 0, 30, 130),
                                  Job(3, "bob", 0, 60, 160)};
  Metrics m = ComputeMetrics(jobs, 4);
  EXPECT_EQ(m.users, 2);
  EXPECT_DOUBLE_EQ(m.jain_wait, 0.8);
  EXPECT_DOUBLE_EQ(m.jain_slowdown, 0.98);
}

TEST(MetricsTest, BoundedSlowdownFloorsShortRuns) {
  // a: wait 0, run 1 -> (0 + 1) / 10 = 0.1. b: wait 9, run 1 -> 10 / 10 = 1.
  // J = 1.1^2 / (2 * (0.01 + 1)) = 1.21 / 2.02.
  std::vector<JobOutcome> jobs = {Job(1, "a", 0, 0, 1), Job(2, "b", 0, 9, 10)};
  Metrics m = ComputeMetrics(jobs, 1);
  EXPECT_DOUBLE_EQ(m.jain_slowdown, 1.21 / 2.02);
  EXPECT_DOUBLE_EQ(m.jain_wait, 0.5);  // 9^2 / (2 * 81)
}

TEST(MetricsTest, AllZeroWaitsAreFair) {
  std::vector<JobOutcome> jobs = {Job(1, "a", 0, 0, 50), Job(2, "b", 5, 5, 20)};
  Metrics m = ComputeMetrics(jobs, 2);
  EXPECT_EQ(m.jain_wait, 1.0);
  EXPECT_EQ(m.avg_wait, 0);
}

TEST(MetricsTest, UtilisationCountsShares) {
  // 4 GPUs, makespan 100 s (submit 0 .. end 100).
  // busy = 2 GPUs * 100 s + 0.5 GPU * 40 s + 1 GPU * 50 s = 270 GPU-s -> 270 / 400.
  std::vector<JobOutcome> jobs = {Job(1, "a", 0, 0, 100, 2), Job(2, "a", 10, 20, 60, 0.5),
                                  Job(3, "b", 30, 50, 100, 1)};
  Metrics m = ComputeMetrics(jobs, 4);
  EXPECT_EQ(m.makespan, 100);
  EXPECT_DOUBLE_EQ(m.utilisation, 0.675);
  EXPECT_EQ(ComputeMetrics(jobs, 0).utilisation, 0);
}

TEST(MetricsTest, MakespanFromFirstSubmitToLastEnd) {
  std::vector<JobOutcome> jobs = {Job(1, "a", 1000, 1200, 1300), Job(2, "a", 900, 950, 1250)};
  Metrics m = ComputeMetrics(jobs, 1);
  EXPECT_EQ(m.makespan, 400);
  // busy = 100 + 300 = 400 GPU-s on 1 GPU over 400 s.
  EXPECT_DOUBLE_EQ(m.utilisation, 1.0);
}

}  // namespace
}  // namespace rota::sim
