// Tests of `rota tune`'s search: a configuration that orders a burst badly is changed (its
// figures before and after), what it proposes never gives up the p99 wait, utilisation or
// fairness, the grid's size, determinism, and a history where nothing waits changes nothing.
#include "sim/tune.h"

#include <gtest/gtest.h>

namespace rota::sim {
namespace tune_test {
namespace {

TraceJob Job(Time submit, Duration duration, std::string user) {
  TraceJob j;
  j.submit = submit;
  j.duration = duration;
  j.gpus = 1;
  j.user = std::move(user);
  return j;
}

SimConfig OneCard() {
  SimConfig c;
  c.gpus = 1;
  c.gpus_per_node = 1;
  c.policy.time_of_day = {};
  return c;
}

// One card; at the same second a 10-hour job and then nine 10-minute ones: in submit order the
// short ones wait behind the long one; ranked by size they go first.
Trace Burst() {
  Trace t;
  t.jobs.push_back(Job(0, 10 * kHour, "u"));
  for (int i = 0; i < 9; ++i) t.jobs.push_back(Job(0, 10 * kMinute, "u"));
  for (size_t i = 0; i < t.jobs.size(); ++i) t.jobs[i].line = static_cast<std::int64_t>(i) + 2;
  return t;
}

TEST(Tune, TheProposalIsShownWithPromisesTurnedTheOtherWay) {
  // The burst ranked by size: the short jobs first, the long one waits 90 minutes. It was
  // promised the start at once (first in submit order), so with promises kept it goes first and
  // the nine short jobs wait behind it, as in submit order.
  StatusOr<TuneResult> r = Tune(Burst(), OneCard());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->best.promise_slack, -1);
  EXPECT_EQ(r->best.result.metrics.max_wait, 90 * kMinute);
  const TuneCandidate& p = r->other_promises;
  EXPECT_EQ(p.promise_slack, 0);
  EXPECT_EQ(p.weights.size, r->best.weights.size);
  EXPECT_EQ(p.result.metrics.max_wait, 10 * kHour + 80 * kMinute);
  EXPECT_GT(p.result.metrics.avg_wait, r->best.result.metrics.avg_wait);
  // A lab that keeps promises sees the proposal without them.
  SimConfig c = OneCard();
  c.policy.promise_slack = 0;
  r = Tune(Burst(), c);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->best.promise_slack, 0);
  EXPECT_EQ(r->best.result.metrics.max_wait, 10 * kHour + 80 * kMinute);
  EXPECT_EQ(r->other_promises.promise_slack, -1);
  EXPECT_EQ(r->other_promises.result.metrics.max_wait, 90 * kMinute);
}

TEST(Tune, AConfigurationThatOrdersABurstBadlyIsChanged) {
  SimConfig c = OneCard();
  c.policy.weights.fairshare = 0;
  c.policy.weights.age = 0;
  c.policy.weights.size = 0;
  StatusOr<TuneResult> r = Tune(Burst(), c);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // 4 fair-share values x 5 age values x (size 0, and 1000 and 2000 each on the limit or the
  // prediction) (the configuration's are among them), no time-of-day table to turn off.
  EXPECT_EQ(r->tried, 4 * 5 * 5 + 1);  // and the proposal with promises
  EXPECT_TRUE(r->change);
  EXPECT_GT(r->best.weights.size, 0);
  // Before: the nine short jobs wait 10 h and more; after: the long one waits 90 minutes.
  EXPECT_GE(r->current.result.metrics.p99_wait, 10 * kHour);
  EXPECT_EQ(r->best.result.metrics.p99_wait, 90 * kMinute);
  EXPECT_LT(r->best.result.metrics.avg_wait, r->current.result.metrics.avg_wait / 5);
  ASSERT_FALSE(r->changes.empty());
  EXPECT_EQ(r->changes.back().rfind("[policy.weights] size = ", 0), 0u) << r->changes.back();
  EXPECT_EQ(r->best.result.outcomes.size(), 10u);
  // The same again: replays are deterministic.
  StatusOr<TuneResult> again = Tune(Burst(), c);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->changes, r->changes);
}

TEST(Tune, AProposalNeverGivesUpTheTailUtilisationOrFairness) {
  // Two users, a mix of sizes, on two cards, with the default weights and time-of-day table.
  Trace t;
  for (int i = 0; i < 40; ++i) {
    TraceJob j = Job(i * 600, (i % 5 + 1) * 1800, i % 3 == 0 ? "heavy" : "light");
    j.gpus = i % 4 == 0 ? 2 : 1;
    j.line = i + 2;
    t.jobs.push_back(j);
  }
  SimConfig c;
  c.gpus = 2;
  c.gpus_per_node = 2;
  StatusOr<TuneResult> r = Tune(t, c);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->tried, 4 * 5 * 5 * 2 + 1);  // and the time-of-day table on or off
  const Metrics& before = r->current.result.metrics;
  const Metrics& after = r->best.result.metrics;
  EXPECT_LE(after.p99_wait, before.p99_wait);
  EXPECT_GE(after.utilisation, before.utilisation - 0.01);
  EXPECT_GE(after.jain_slowdown, before.jain_slowdown - 0.01);
  EXPECT_LE(after.avg_wait, before.avg_wait);
  EXPECT_EQ(r->change, !r->changes.empty());
}

TEST(Tune, WhenNothingWaitsNothingChanges) {
  Trace t;
  t.jobs.push_back(Job(0, kHour, "u"));
  t.jobs.push_back(Job(2 * kHour, kHour, "v"));
  StatusOr<TuneResult> r = Tune(t, OneCard());
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->change);
  EXPECT_TRUE(r->changes.empty());
  EXPECT_EQ(r->best.weights.age, r->current.weights.age);
}

}  // namespace
}  // namespace tune_test
}  // namespace rota::sim
