// Schedule() with a QueueIndex against Schedule() without one, on seeded random event sequences
// run as the simulator runs them: jobs arrive, start (removed from the queue by swapping with the
// last, so that the queue is in no order), end, are preempted and requeued, and time moves on,
// past age caps, protection bounds and time-of-day boundaries. Every decision must be the same;
// the test also counts the passes the index served, so that it cannot pass by never using it.
#include "core/queue_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/scheduler.h"
#include "core/capacity.h"
#include "core/promise.h"
#include "testing/builders.h"
#include "testing/random_state.h"
#include "testing/requests.h"

namespace rota {
namespace queue_index_test {
namespace {

constexpr Time kStart = 1704110400;  // 2024-01-01 12:00 UTC, a Monday

struct Rand {
  std::uint64_t s;
  int operator()(int n) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int>((s >> 33) % static_cast<std::uint64_t>(std::max(n, 1)));
  }
};

std::string Describe(const Decisions& d) {
  std::string out;
  for (const Start& s : d.starts) {
    out += "start " + std::to_string(s.job) + " on";
    for (int g : s.alloc.gpus) out += " " + std::to_string(g);
    out += " mem " + std::to_string(s.alloc.memory) + " mig " + std::to_string(s.alloc.mig) +
           (s.preemptible ? " preemptible" : "") + "\n";
  }
  for (const Signal& s : d.signals) {
    out += "signal " + std::to_string(s.job) + " kill " + std::to_string(s.kill_at) + " by " +
           std::to_string(s.preempted_by) + "\n";
  }
  for (const Kill& k : d.kills) out += "kill " + std::to_string(k.job) + "\n";
  for (const PendingInfo& p : d.pending) {
    out += "pending " + std::to_string(p.job) + " " + std::to_string(static_cast<int>(p.reason)) + "\n";
  }
  out += "wake " + std::to_string(d.next_wakeup) + "\n";
  return out;
}

Policy RandomPolicy(Rand& rnd) {
  Policy p;
  p.explain = false;
  p.estimate_starts = false;
  const int alg = rnd(4);
  p.algorithm = alg == 0 ? Algorithm::kFifo : alg == 1 ? Algorithm::kBackfill : Algorithm::kRota;
  p.plan_depth = 1 + rnd(8);
  p.mode = rnd(3) == 0 ? AccountMode::kHybrid : rnd(2) == 0 ? AccountMode::kProject : AccountMode::kUser;
  // Short scales, so that ages reach their cap and jobs become protected within a sequence.
  p.age_max = rnd(5) == 0 ? 0 : (1 + rnd(6)) * kHour;
  p.age_cap = rnd(3) == 0 ? 0.5 : rnd(2) == 0 ? 1.0 : 3.0;
  p.protect_after = rnd(4) == 0 ? -1 : rnd(3) * kHour;
  p.protect_max = rnd(3);
  p.heavy_gpus = 2 + rnd(2);
  p.heavy_time = (1 + rnd(4)) * kHour;
  p.size_max_gpu_hours = 4 + rnd(64);
  p.preemption = rnd(3) == 0;
  p.fairshare_half_life = kHour * (1 + rnd(24));
  if (rnd(2) == 0) {
    TimeOfDayRule r;
    r.start_minute = 13 * 60 + rnd(60);
    r.end_minute = 18 * 60;
    r.factor = 0.25 + 0.25 * rnd(4);
    p.time_of_day.push_back(r);
  }
  p.promise_slack = rnd(3) == 0 ? -1 : rnd(2) * 30 * kMinute;
  return p;
}

Job RandomJob(Rand& rnd, JobId id, Time now, int cards) {
  static const char* const kUsers[] = {"ann", "bob", "cai", "dee"};
  Job j = testing::MakeJob(id, kUsers[rnd(4)], 1, (1 + rnd(12)) * 15 * kMinute, now - rnd(2) * rnd(600),
                           static_cast<Tier>(rnd(kTierCount)));
  j.project = rnd(2) == 0 ? "vision" : "speech";
  const int kind = rnd(10);
  if (kind < 2) {
    j.request = testing::Share(1024 * (1 + rnd(40)));
  } else {
    j.request = testing::Whole(kind < 7 ? 1 : 1 + rnd(cards));
  }
  j.grace = rnd(3) * 60;
  j.requeue = rnd(2) == 0;
  return j;
}

// Removes state.pending[i] by moving the last job into its place, and tells the index.
void SwapRemove(ClusterState& state, QueueIndex& index, size_t i) {
  index.Remove(state.pending[i].id);
  if (i + 1 != state.pending.size()) {
    state.pending[i] = std::move(state.pending.back());
    index.Moved(state.pending[i].id, i);
  }
  state.pending.pop_back();
}

// Applies `d`'s starts and signals as the simulator does (starts removed from the queue by
// swapping, the index told); returns how many of each.
std::pair<int, int> ApplyStartsAndSignals(ClusterState& state, QueueIndex& index, const Decisions& d, Time now) {
  int starts = 0;
  int signals = 0;
  for (const Start& st : d.starts) {
    for (size_t i = 0; i < state.pending.size(); ++i) {
      if (state.pending[i].id != st.job) continue;
      RunningJob r;
      r.job = state.pending[i];
      r.alloc = st.alloc;
      r.start_time = now;
      r.preemptible = st.preemptible;
      state.running.push_back(std::move(r));
      SwapRemove(state, index, i);
      ++starts;
      break;
    }
  }
  for (const Signal& sig : d.signals) {
    for (RunningJob& r : state.running) {
      if (r.job.id != sig.job) continue;
      r.signalled = true;
      r.kill_at = sig.kill_at;
      r.preempted = sig.cause == StopCause::kPreempted;
      ++signals;
    }
  }
  return {starts, signals};
}

TEST(QueueIndexTest, SameDecisionsAsWithoutTheIndexOnRandomSequences) {
  int served = 0;
  int passes = 0;
  int started = 0;
  for (std::uint64_t seed = 1; seed <= 120; ++seed) {
    Rand rnd{seed * 7919};
    const Policy policy = RandomPolicy(rnd);
    ClusterState state;
    const int nodes = 1 + rnd(3);
    const int per_node = 2 + rnd(3);
    for (int n = 0; n < nodes; ++n) {
      for (int c = 0; c < per_node; ++c) state.gpus.push_back(testing::Card(n * per_node + c, 81920, n));
    }
    QueueIndex index(policy, state.gpus);
    Time now = kStart;
    JobId next_id = 1;
    for (int step = 0; step < 120; ++step) {
      // Runs end; some of the ended ones were preempted and come back.
      for (size_t i = 0; i < state.running.size();) {
        RunningJob& r = state.running[i];
        const bool killed = r.kill_at != kNever && r.kill_at <= now;
        if (killed || rnd(4) == 0) {
          if (killed && r.job.requeue) {
            state.pending.push_back(r.job);
            index.Add(r.job, state.pending.size() - 1);
          } else {
            Usage& u = state.user_usage[r.job.user];
            u.decayed_gpu_seconds += static_cast<double>(now - r.start_time);
            u.as_of = now;
          }
          state.running[i] = std::move(state.running.back());
          state.running.pop_back();
          continue;
        }
        ++i;
      }
      const size_t before = state.pending.size();
      for (int a = rnd(4); a > 0; --a) state.pending.push_back(RandomJob(rnd, next_id++, now, nodes * per_node));
      // Promised as the daemon does, before the pass (their due times are the index's).
      for (const auto& [id, promise] : MakePromises(state, policy, now)) {
        for (Job& j : state.pending) {
          if (j.id == id) j.promise = promise;
        }
      }
      for (size_t i = before; i < state.pending.size(); ++i) index.Add(state.pending[i], i);
      if (rnd(6) == 0) state.penalty[rnd(2) == 0 ? "ann" : "bob"] = 0.1 * rnd(10);
      index.Advance(now);
      const Decisions plain = Schedule(state, policy, now);
      const Decisions indexed = Schedule(state, policy, now, &index);
      ++passes;
      served += index.Serves(state, policy, now) ? 1 : 0;
      ASSERT_EQ(Describe(indexed), Describe(plain)) << "seed " << seed << " step " << step;
      // Apply the decisions as the simulator does.
      for (const PendingInfo& p : plain.pending) {
        if (p.reason != WaitReason::kImpossible) continue;
        for (size_t i = 0; i < state.pending.size(); ++i) {
          if (state.pending[i].id == p.job) SwapRemove(state, index, i);
        }
      }
      started += ApplyStartsAndSignals(state, index, plain, now).first;
      Time next = now + 60 * (1 + rnd(40));
      if (plain.next_wakeup > now) next = std::min(next, plain.next_wakeup);
      now = next;
    }
  }
  // Most passes are the index's (the others: an impossible job waiting to be listed), and the
  // sequences do schedule.
  EXPECT_GT(served, passes * 3 / 4) << served << " of " << passes;
  EXPECT_GT(started, 2000);
}

// Long queues on a busy cluster with cards free that nothing waiting fits now (held for a
// reservation, or too few on a node): an unexplained pass stops walking once every shape the
// queue holds fails for its shortest limit (with the index), or once the pass's preemption
// budget is spent, and must still make every decision an explained pass makes. Three passes per
// state, the decisions applied in between.
TEST(QueueIndexTest, LongQueuesStopWhereNothingMoreCanStartWithTheSameDecisions) {
  int signals = 0;
  int starts = 0;
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    for (Algorithm a : {Algorithm::kBackfill, Algorithm::kRota}) {
      ClusterState state = testing::LargeState(64, 8, 3000, 90, seed);
      for (Job& j : state.pending) {
        j.after.clear();
        j.after_ok.clear();
      }
      Policy explained;
      explained.algorithm = a;
      explained.estimate_starts = false;
      Policy policy = explained;
      policy.explain = false;
      QueueIndex index(policy, state.gpus);
      for (size_t i = 0; i < state.pending.size(); ++i) index.Add(state.pending[i], i);
      CapacityPlan kept(CapacityPlan::Kept{}, state, policy);
      Time now = testing::kLargeStateNow;
      for (int step = 0; step < 3; ++step) {
        const std::string where = std::string(AlgorithmName(a)) + " seed " + std::to_string(seed) + " step " +
                                  std::to_string(step);
        index.Advance(now);
        ASSERT_TRUE(index.Serves(state, policy, now)) << where;
        Decisions all = Schedule(state, explained, now);
        std::erase_if(all.pending, [](const PendingInfo& p) { return p.reason != WaitReason::kImpossible; });
        const Decisions plain = Schedule(state, policy, now);
        const Decisions fast = Schedule(state, policy, now, &index, &kept);
        ASSERT_EQ(Describe(plain), Describe(all)) << where;
        ASSERT_EQ(Describe(fast), Describe(all)) << where;
        const auto [started, signalled] = ApplyStartsAndSignals(state, index, all, now);
        starts += started;
        signals += signalled;
        now += 10 * 60;
      }
    }
  }
  EXPECT_GT(starts, 20);
  EXPECT_GT(signals, 5);
}

// Where the index cannot give the order, the pass orders the queue itself: a job that can never
// run is still listed, a quota still applies, and the decisions are those without the index.
TEST(QueueIndexTest, PassesItDoesNotServeOrderTheQueueThemselves) {
  Policy policy;
  policy.explain = false;
  policy.estimate_starts = false;
  ClusterState state;
  state.gpus = testing::Cards(2);
  QueueIndex index(policy, state.gpus);
  state.pending.push_back(testing::MakeJob(1, "ann", 1, kHour, kStart - 10));
  state.pending.push_back(testing::MakeJob(2, "bob", 3, kHour, kStart - 5));  // more cards than there are
  for (size_t i = 0; i < state.pending.size(); ++i) index.Add(state.pending[i], i);
  index.Advance(kStart);
  EXPECT_TRUE(index.Serves(state, policy, kStart));  // all but the cards, which the pass checks
  const Decisions d = Schedule(state, policy, kStart, &index);
  EXPECT_EQ(Describe(d), Describe(Schedule(state, policy, kStart)));
  ASSERT_EQ(d.pending.size(), 1u);
  EXPECT_EQ(d.pending[0].job, 2);
  EXPECT_EQ(d.pending[0].reason, WaitReason::kImpossible);

  // Not advanced since the last arrival, explained, another ranking, other cards: not served.
  state.pending.push_back(testing::MakeJob(3, "cai", 1, kHour, kStart));
  index.Add(state.pending.back(), 2);
  EXPECT_FALSE(index.Serves(state, policy, kStart));
  index.Advance(kStart);
  EXPECT_TRUE(index.Serves(state, policy, kStart));
  Policy explained = policy;
  explained.explain = true;
  EXPECT_FALSE(index.Serves(state, explained, kStart));
  Policy other = policy;
  other.weights.size = 7;
  EXPECT_FALSE(index.Serves(state, other, kStart));
  ClusterState smaller = state;
  smaller.gpus[1].memory = 40960;
  EXPECT_FALSE(index.Serves(smaller, policy, kStart));
  Policy quota = policy;
  quota.quota.default_hours = 1;
  EXPECT_FALSE(index.Serves(state, quota, kStart));
  EXPECT_EQ(Describe(Schedule(state, quota, kStart, &index)), Describe(Schedule(state, quota, kStart)));
}

}  // namespace
}  // namespace queue_index_test
}  // namespace rota
