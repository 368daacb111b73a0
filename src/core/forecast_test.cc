// Tests of forecast starts: the scheduler played forward on predicted run times, with its
// decisions on time limits (hand-computed), a running job past its prediction, and where the play
// stops.
#include "core/forecast.h"

#include <gtest/gtest.h>

#include "core/scheduler.h"
#include "testing/builders.h"

namespace rota {
namespace forecast_test {
namespace {

constexpr Time kNow = 1704067200 + 2 * kDay + 11 * kHour;  // a Wednesday, 11:00 UTC

RunningJob Running(JobId id, int card, Time start, Duration limit) {
  RunningJob r;
  r.job = testing::MakeJob(id, "other", 1, limit, start - 10);
  r.alloc.gpus = {card};
  r.start_time = start;
  return r;
}

Policy Plain(Algorithm a) {
  Policy p;
  p.algorithm = a;
  p.time_of_day = {};
  return p;
}

// Two cards: A (limit 10 h, started an hour ago) and B (limit 4 h, just started) run; J1 waits for
// both cards (limit 8 h), J2 for one (limit 2 h). Everyone's jobs run a quarter of their limits.
struct TwoCards {
  ClusterState state;
  RuntimeModel model{10, 3};
  TwoCards() {
    state.gpus = testing::Cards(2);
    state.running.push_back(Running(1, 0, kNow - kHour, 10 * kHour));  // predicted end: now + 1.5 h
    state.running.push_back(Running(2, 1, kNow, 4 * kHour));           // predicted end: now + 1 h
    state.pending.push_back(testing::MakeJob(3, "u", 2, 8 * kHour, kNow - 100));  // runs 2 h
    state.pending.push_back(testing::MakeJob(4, "u", 1, 2 * kHour, kNow - 50));   // runs 30 min
    for (int i = 0; i < 3; ++i) model.Add({"other", "", 4 * kHour, kHour});
  }
};

TEST(Forecast, FifoStartsEachJobWhenThePredictedEndsLeaveRoom) {
  TwoCards t;
  const Policy p = Plain(Algorithm::kFifo);
  auto f = ForecastStarts(t.state, p, kNow, t.model);
  EXPECT_EQ(f.at(3), kNow + 90 * kMinute);
  EXPECT_EQ(f.at(4), kNow + 90 * kMinute + 2 * kHour);
  // The plan on limits says much later: A's limit ends in nine hours.
  const Decisions d = Schedule(t.state, p, kNow);
  ASSERT_EQ(d.pending.size(), 2u);
  EXPECT_EQ(d.pending[0].expected_start, kNow + 9 * kHour);
}

TEST(Forecast, BackfillDecidesOnLimitsWhileJobsEndAsPredicted) {
  TwoCards t;
  // When B ends (in an hour), J1's reservation on limits is nine hours away, so J2 (two hours on
  // its limit) backfills on B's card; A ends at 1.5 h and so does J2 (a quarter of 2 h): J1 then.
  auto f = ForecastStarts(t.state, Plain(Algorithm::kBackfill), kNow, t.model);
  EXPECT_EQ(f.at(4), kNow + kHour);
  EXPECT_EQ(f.at(3), kNow + 90 * kMinute);
}

TEST(Forecast, AJobPastItsPredictionGetsAQuarterOfItsTimeAgain) {
  TwoCards t;
  t.state.running[0].start_time = kNow - 3 * kHour;                 // predicted 2.5 h: overdue
  t.state.running[1].start_time = kNow - 3 * kHour - 59 * kMinute;  // ends at its limit in a minute
  auto f = ForecastStarts(t.state, Plain(Algorithm::kFifo), kNow, t.model);
  EXPECT_EQ(f.at(3), kNow + 45 * kMinute);
}

TEST(Forecast, ThePlayStopsAtItsTargetsOrItsPassesAndEstimatesTheRest) {
  TwoCards t;
  ForecastOptions o;
  o.targets = {3};
  auto f = ForecastStarts(t.state, Plain(Algorithm::kFifo), kNow, t.model, o);
  EXPECT_EQ(f.at(3), kNow + 90 * kMinute);
  // No pass played: the plan on predicted run times, now (fifo reserves J2 after J1's two hours).
  o.targets.clear();
  o.max_passes = 0;
  f = ForecastStarts(t.state, Plain(Algorithm::kFifo), kNow, t.model, o);
  EXPECT_EQ(f.at(3), kNow + 90 * kMinute);
  EXPECT_EQ(f.at(4), kNow + 90 * kMinute + 2 * kHour);
}

// Fifo's queue deeper than the plan: where the play stops, every waiting job still gets its place
// in line, not the backlog spread over both cards as if the two-card job left none idle. Two cards,
// nothing running, no history (run times are the limits): J1 (two cards, 1 h) starts now; then J2
// (one card, 1 h), J3 (two cards, 1 h), J4 and J5 (one card, 1 h each).
TEST(Forecast, FifoPastThePlansDepthKeepsItsPlaceInLine) {
  ClusterState state;
  state.gpus = testing::Cards(2);
  const int gpus[] = {2, 1, 2, 1, 1};
  for (int i = 0; i < 5; ++i)
    state.pending.push_back(testing::MakeJob(i + 1, "u", gpus[i], kHour, kNow - 100 + i));
  Policy p = Plain(Algorithm::kFifo);
  p.plan_depth = 1;
  ForecastOptions o;
  o.max_passes = 1;  // J1 starts; the rest is left to the plan
  const RuntimeModel empty;
  auto f = ForecastStarts(state, p, kNow, empty, o);
  EXPECT_EQ(f.at(1), kNow);
  EXPECT_EQ(f.at(2), kNow + kHour);
  EXPECT_EQ(f.at(3), kNow + 2 * kHour);  // the plan's one reservation
  EXPECT_EQ(f.at(4), kNow + 3 * kHour);  // spread over the cards it was 2 h, beside J3
  EXPECT_EQ(f.at(5), kNow + 3 * kHour);  // spread, 2.5 h
}

TEST(Forecast, WithoutHistoryItIsThePlanOnLimits) {
  TwoCards t;
  const RuntimeModel empty;
  const Policy p = Plain(Algorithm::kFifo);
  auto f = ForecastStarts(t.state, p, kNow, empty);
  EXPECT_EQ(f.at(3), kNow + 9 * kHour);
  EXPECT_EQ(f.at(4), kNow + 17 * kHour);
}

TEST(Forecast, AJobThatCanNeverRunHasNoStart) {
  TwoCards t;
  t.state.pending.push_back(testing::MakeJob(5, "u", 3, kHour, kNow));
  auto f = ForecastStarts(t.state, Plain(Algorithm::kRota), kNow, t.model);
  EXPECT_EQ(f.at(5), kNever);
  EXPECT_EQ(f.at(3), kNow + 90 * kMinute);
}

// One card, busy for another hour as predicted; J waits. A thesis job foreseen to arrive in half
// an hour takes the card first under the rota policy (the tiers order the queue), and runs its
// predicted half hour: J starts later by that much. Under fifo it queues behind J.
TEST(Forecast, AForeseenArrivalOvertakesWhereThePolicyLetsIt) {
  ClusterState state;
  state.gpus = testing::Cards(1);
  state.running.push_back(Running(1, 0, kNow - kHour, 8 * kHour));  // predicted 2 h: ends in 1 h
  state.pending.push_back(testing::MakeJob(2, "u", 1, 4 * kHour, kNow - 100));
  RuntimeModel model{10, 3};
  for (int i = 0; i < 3; ++i) model.Add({"other", "", 4 * kHour, kHour});
  ForecastOptions o;
  o.arrivals.push_back(testing::MakeJob(10, "v", 1, 2 * kHour, kNow + 30 * kMinute, Tier::kThesis));
  // One that comes after J has started changes nothing.
  o.arrivals.push_back(testing::MakeJob(11, "v", 1, 2 * kHour, kNow + 5 * kHour, Tier::kThesis));

  auto f = ForecastStarts(state, Plain(Algorithm::kRota), kNow, model, o);
  EXPECT_EQ(f.at(2), kNow + 90 * kMinute);
  EXPECT_EQ(f.count(10), 0u) << "a foreseen arrival gets no forecast of its own";
  EXPECT_EQ(f.count(11), 0u);
  EXPECT_EQ(ForecastStarts(state, Plain(Algorithm::kFifo), kNow, model, o).at(2), kNow + kHour);
  // Without it, J is next.
  EXPECT_EQ(ForecastStarts(state, Plain(Algorithm::kRota), kNow, model).at(2), kNow + kHour);
  // A play stopped before the arrival: the plan on predicted run times, which knows none.
  o.max_passes = 1;
  EXPECT_EQ(ForecastStarts(state, Plain(Algorithm::kRota), kNow, model, o).at(2), kNow + kHour);
}

}  // namespace
}  // namespace forecast_test
}  // namespace rota
