// A capacity plan kept between passes (CapacityPlan::Kept) against a plan built for each pass, on
// seeded random event sequences run as the simulator runs them: random clusters (MIG slices,
// memory shares, drained cards, runs past their limit or being stopped), jobs that arrive, start,
// end (removed by swapping with the last run, the plan told), are signalled, preempted and
// requeued, and time that moves on. Every decision must be the same, and so must every unit of
// the plan once brought to the state; the plan must be built from the state only once when it is
// told of every end, and must stay right, by building itself again, when it is not.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/capacity.h"
#include "core/scheduler.h"
#include "testing/builders.h"
#include "testing/random_state.h"
#include "testing/reference_scheduler.h"
#include "testing/requests.h"

namespace rota {
namespace kept_plan_test {
namespace {

// The committed amount of `p` at `t`.
MiB ValueAt(const Profile& p, Time t) {
  MiB v = 0;
  for (const auto& [at, value] : p) {
    if (at > t) break;
    v = value;
  }
  return v;
}

// Every unit of `kept` (brought to the state) as in `fresh` (built for it), seen from `now` on.
void ExpectSameUnits(const CapacityPlan& kept, const CapacityPlan& fresh, Time now, const std::string& where) {
  ASSERT_EQ(kept.units().size(), fresh.units().size()) << where;
  for (size_t ui = 0; ui < kept.units().size(); ++ui) {
    const Unit& k = kept.units()[ui];
    const Unit& f = fresh.units()[ui];
    EXPECT_EQ(k.used_now, f.used_now) << where << " unit " << ui;
    EXPECT_EQ(k.shared, f.shared) << where << " unit " << ui;
    EXPECT_EQ(k.device_free, f.device_free) << where << " unit " << ui;
    EXPECT_EQ(k.tail, f.tail) << where << " unit " << ui;
    EXPECT_EQ(k.max_hole, f.max_hole) << where << " unit " << ui;
    std::vector<Time> times{now};
    for (const auto& bp : k.profile) times.push_back(bp.first);
    for (const auto& bp : f.profile) times.push_back(bp.first);
    for (Time t : times) {
      if (t < now) continue;
      EXPECT_EQ(ValueAt(k.profile, t), ValueAt(f.profile, t)) << where << " unit " << ui << " at " << t;
    }
  }
}

// Removes state.running[i] as the simulator does, and tells the plan when `tell`.
void TakeRunning(ClusterState& state, CapacityPlan& plan, size_t i, bool tell) {
  if (i + 1 != state.running.size()) state.running[i] = std::move(state.running.back());
  state.running.pop_back();
  if (tell) plan.RunningTaken(state, i);
}

struct Counts {
  int passes = 0;
  int starts = 0;
  int ends = 0;
  int signals = 0;
  int rebuilt_sequences = 0;
};

// One seeded sequence; `tell_every`: the plan is told of every end, or of none.
void RunSequence(std::uint64_t seed, bool tell_every, Counts& counts) {
  testing::Rng rng(seed);
  Policy policy = testing::RandomPolicy(rng);
  testing::RandomOptions options;
  options.max_gpus = 12;
  options.max_nodes = 3;
  options.max_running = 10;
  options.max_pending = 16;
  Time now = 1'700'000'000 + static_cast<Time>(rng.Below(7 * 86400));
  JobId next_id = 1;
  ClusterState state = testing::RandomClusterState(rng, now, options, &next_id);
  state.bookings.clear();  // a kept plan serves no pass with bookings
  CapacityPlan plan(CapacityPlan::Kept{}, state, policy);
  const std::string name = "seed " + std::to_string(seed);
  for (int step = 0; step < 40; ++step) {
    const std::string where = name + " step " + std::to_string(step);
    // Runs end at random or when killed; the killed ones come back when they asked to.
    for (size_t i = 0; i < state.running.size();) {
      const RunningJob& r = state.running[i];
      const bool killed = r.kill_at != kNever && r.kill_at <= now;
      if (killed || rng.Chance(0.15)) {
        if (killed && r.job.requeue) state.pending.push_back(r.job);
        TakeRunning(state, plan, i, tell_every);
        ++counts.ends;
        continue;
      }
      ++i;
    }
    for (int a = static_cast<int>(rng.Below(4)); a > 0; --a) {
      state.pending.push_back(testing::RandomPendingJob(rng, state, next_id++, now));
    }
    ASSERT_TRUE(plan.Keeps(state, policy)) << where;
    const Decisions fresh = Schedule(state, policy, now);
    const Decisions kept = Schedule(state, policy, now, nullptr, &plan);
    ++counts.passes;
    ASSERT_EQ(testing::DescribeDecisions(kept, now), testing::DescribeDecisions(fresh, now)) << where;
    if (step % 5 == 0) {
      plan.Sync(state, now);
      CapacityPlan built(state, policy, now);
      ExpectSameUnits(plan, built, now, where);
      plan.Rollback();
    }
    // Apply the decisions as the simulator does.
    for (const PendingInfo& p : fresh.pending) {
      if (p.reason != WaitReason::kImpossible) continue;
      std::erase_if(state.pending, [&](const Job& j) { return j.id == p.job; });
    }
    for (const Start& st : fresh.starts) {
      auto it = std::find_if(state.pending.begin(), state.pending.end(), [&](const Job& j) { return j.id == st.job; });
      ASSERT_NE(it, state.pending.end()) << where;
      RunningJob r;
      r.job = *it;
      r.alloc = st.alloc;
      r.start_time = now;
      r.preemptible = st.preemptible;
      r.from_pool = st.from_pool;
      *it = std::move(state.pending.back());
      state.pending.pop_back();
      state.running.push_back(std::move(r));
      ++counts.starts;
    }
    for (const Signal& sig : fresh.signals) {
      for (RunningJob& r : state.running) {
        if (r.job.id != sig.job) continue;
        r.signalled = true;
        r.kill_at = sig.kill_at;
        r.preempted = sig.cause == StopCause::kPreempted;
        ++counts.signals;
      }
    }
    for (const Kill& k : fresh.kills) {
      for (size_t i = 0; i < state.running.size(); ++i) {
        if (state.running[i].job.id != k.job) continue;
        TakeRunning(state, plan, i, tell_every);
        ++counts.ends;
        break;
      }
    }
    // On to the next event: a wake-up asked for, or a while later (past limits now and then).
    Time next = now + 1 + static_cast<Time>(rng.Below(rng.Chance(0.2) ? 12 * 3600 : 900));
    if (fresh.next_wakeup > now) next = std::min(next, fresh.next_wakeup);
    now = next;
  }
  if (tell_every) {
    EXPECT_EQ(plan.rebuilds(), 1) << name << ": built from the state again though told of every end";
  } else if (plan.rebuilds() > 1) {
    ++counts.rebuilt_sequences;
  }
}

TEST(KeptPlanTest, SameDecisionsAndUnitsAsAPlanBuiltForEachPass) {
  Counts counts;
  for (std::uint64_t seed = 1; seed <= 250; ++seed) {
    RunSequence(seed, /*tell_every=*/true, counts);
    if (::testing::Test::HasFatalFailure()) return;
  }
  // The sequences do start, end and stop jobs.
  EXPECT_GT(counts.starts, 1500);
  EXPECT_GT(counts.ends, 1500);
  EXPECT_GT(counts.signals, 50);
}

TEST(KeptPlanTest, NotToldOfEndsItBuildsItselfAgainAndStaysRight) {
  Counts counts;
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    RunSequence(seed, /*tell_every=*/false, counts);
    if (::testing::Test::HasFatalFailure()) return;
  }
  EXPECT_GT(counts.rebuilt_sequences, 40);
}

// What a pass commits (a start now, a reservation later, a victim's earlier end) is gone after
// Rollback(): the next pass sees the running jobs alone.
TEST(KeptPlanTest, RollbackLeavesTheRunningJobsAlone) {
  ClusterState state;
  state.gpus = testing::Cards(2);
  Policy policy;
  const Time now = 1'700'000'000;
  RunningJob r;
  r.job = testing::MakeJob(1, "ann", 1, 2 * kHour, now - kHour);
  r.alloc.gpus = {0};
  r.start_time = now - kHour;
  state.running.push_back(r);
  CapacityPlan plan(CapacityPlan::Kept{}, state, policy);
  plan.Sync(state, now);
  Placement start = plan.Earliest(testing::Whole(1), kHour, -1, now, true);
  ASSERT_EQ(start.start, now);
  ASSERT_EQ(start.units, std::vector<int>{1});
  plan.Commit(start, testing::Whole(1), now, now + kHour);
  Placement later = plan.Earliest(testing::Whole(2), kHour, -1, now, false);
  EXPECT_EQ(later.start, now + kHour);
  plan.Commit(later, testing::Whole(2), later.start, later.start + kHour);
  plan.SetRunningEnd(0, now + 60);
  EXPECT_EQ(plan.units()[1].used_now, testing::k80GiB);
  plan.Rollback();
  plan.Sync(state, now + 30);
  CapacityPlan built(state, policy, now + 30);
  ExpectSameUnits(plan, built, now + 30, "after rollback");
  EXPECT_EQ(plan.units()[1].used_now, 0);
  EXPECT_EQ(plan.Earliest(testing::Whole(2), kHour, -1, now + 30, false).start, now + kHour);
  plan.Rollback();
  EXPECT_EQ(plan.rebuilds(), 1);
}

}  // namespace
}  // namespace kept_plan_test
}  // namespace rota
