// Hand-made states with hand-computed decisions. Every test sets policy.time_of_day = {} unless it
// is about the time of day, so that factor is 1 for every job.
#include "core/scheduler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "testing/builders.h"

namespace rota {
namespace scheduler_test {
namespace {

constexpr Time kMon = 1704067200;                  // 2024-01-01 00:00 UTC, a Monday
constexpr Time kNow = kMon + 2 * kDay + 11 * kHour;  // Wednesday 11:00

// testing/builders.h's cards and jobs, in the argument order these tests read best in (the user
// last: most jobs here are one anonymous user's).
ClusterState Cards(int n, MiB memory = testing::k80GiB) {
  ClusterState s;
  s.gpus = testing::Cards(n, memory);
  return s;
}

Job MakeJob(JobId id, int gpus, Duration limit, Time submit, Tier tier = Tier::kRegular, std::string user = "u") {
  return testing::MakeJob(id, std::move(user), gpus, limit, submit, tier);
}

// A running job on `cards` that started at `start` with `limit`. Regular tier and not
// preemptible unless said otherwise.
RunningJob Running(JobId id, std::vector<int> cards, Time start, Duration limit, Tier tier = Tier::kRegular,
                   bool preemptible = false, std::string user = "other") {
  RunningJob r;
  r.job = MakeJob(id, static_cast<int>(cards.size()), limit, start - 10, tier, std::move(user));
  r.alloc.gpus = std::move(cards);
  r.start_time = start;
  r.preemptible = preemptible;
  return r;
}

Policy Quiet(Algorithm a = Algorithm::kRota) {
  Policy p;
  p.algorithm = a;
  p.time_of_day = {};
  return p;
}

bool IsPending(const Decisions& d, JobId id) {
  return std::any_of(d.pending.begin(), d.pending.end(), [id](const PendingInfo& p) { return p.job == id; });
}

bool IsStarted(const Decisions& d, JobId id) {
  return std::any_of(d.starts.begin(), d.starts.end(), [id](const Start& s) { return s.job == id; });
}

// The pending entry of `id`; a failure (and an entry for job -1) when there is none.
const PendingInfo& Info(const Decisions& d, JobId id) {
  for (const PendingInfo& p : d.pending) {
    if (p.job == id) return p;
  }
  ADD_FAILURE() << "job " << id << " is not pending";
  static const PendingInfo kMissing = [] {
    PendingInfo p;
    p.job = -1;
    return p;
  }();
  return kMissing;
}

const Start& Started(const Decisions& d, JobId id) {
  for (const Start& s : d.starts) {
    if (s.job == id) return s;
  }
  ADD_FAILURE() << "job " << id << " did not start";
  static const Start kMissing = [] {
    Start s;
    s.job = -1;
    return s;
  }();
  return kMissing;
}

std::vector<JobId> PendingIds(const Decisions& d) {
  std::vector<JobId> v;
  for (const PendingInfo& p : d.pending) v.push_back(p.job);
  return v;
}

std::vector<JobId> SignalledIds(const Decisions& d) {
  std::vector<JobId> v;
  for (const Signal& s : d.signals) v.push_back(s.job);
  std::sort(v.begin(), v.end());
  return v;
}

// ---- fifo and EASY backfill ----------------------------------------------------------------

// Two cards; card 0 busy until kNow + 1000 (started kNow - 2600 with a 1 h limit, so its warning
// is due at kNow + 880). A (first) needs both cards for 1 h; B (second) one card.
ClusterState HeadOfLine(Duration b_limit) {
  ClusterState s = Cards(2);
  s.running.push_back(Running(100, {0}, kNow - 2600, kHour));
  s.pending.push_back(MakeJob(1, 2, kHour, kNow - 200));
  s.pending.push_back(MakeJob(2, 1, b_limit, kNow - 100));
  return s;
}

TEST(SchedulerFifoTest, HeadOfLineBlocking) {
  ClusterState s = HeadOfLine(600);
  Decisions d = Schedule(s, Quiet(Algorithm::kFifo), kNow);
  // B would fit on card 1 and end before A can start, but fifo never passes the head.
  EXPECT_TRUE(d.starts.empty());
  ASSERT_EQ(PendingIds(d), (std::vector<JobId>{1, 2}));
  const PendingInfo& a = Info(d, 1);
  EXPECT_EQ(a.reason, WaitReason::kResources);
  EXPECT_EQ(a.expected_start, kNow + 1000);  // when card 0 frees
  EXPECT_FALSE(a.estimated);
  const PendingInfo& b = Info(d, 2);
  EXPECT_EQ(b.reason, WaitReason::kPriority);
  EXPECT_EQ(b.expected_start, kNow + 1000 + 3600);  // after A, never before it
  EXPECT_FALSE(b.estimated);
  // The running job's warning (kNow + 880) comes first.
  EXPECT_EQ(d.next_wakeup, kNow + 880);
  EXPECT_TRUE(d.signals.empty());
  EXPECT_TRUE(d.kills.empty());
}

TEST(SchedulerFifoTest, StartsInOrderWhileNothingIsBlocked) {
  ClusterState s = Cards(2);
  s.pending.push_back(MakeJob(2, 1, kHour, kNow - 100));
  s.pending.push_back(MakeJob(1, 1, kHour, kNow - 200));
  s.pending.push_back(MakeJob(3, 1, kHour, kNow - 50));
  Decisions d = Schedule(s, Quiet(Algorithm::kFifo), kNow);
  ASSERT_EQ(d.starts.size(), 2u);
  EXPECT_EQ(d.starts[0].job, 1);  // by submit time
  EXPECT_EQ(d.starts[1].job, 2);
  EXPECT_FALSE(d.starts[0].preemptible);  // only rota starts jobs preemptible
  ASSERT_EQ(PendingIds(d), (std::vector<JobId>{3}));
  EXPECT_EQ(Info(d, 3).reason, WaitReason::kResources);
  EXPECT_EQ(Info(d, 3).expected_start, kNow + kHour);
}

TEST(SchedulerBackfillTest, EasyStartsShortJobThatDoesNotDelayTheHead) {
  ClusterState s = HeadOfLine(600);  // B: 600 s on card 1 ends at kNow + 600 < kNow + 1000
  Decisions d = Schedule(s, Quiet(Algorithm::kBackfill), kNow);
  ASSERT_EQ(d.starts.size(), 1u);
  EXPECT_EQ(d.starts[0].job, 2);
  EXPECT_EQ(d.starts[0].alloc.gpus, (std::vector<int>{1}));
  EXPECT_FALSE(d.starts[0].preemptible);
  EXPECT_FALSE(d.starts[0].from_pool);
  ASSERT_EQ(PendingIds(d), (std::vector<JobId>{1}));
  EXPECT_EQ(Info(d, 1).reason, WaitReason::kResources);
  EXPECT_EQ(Info(d, 1).expected_start, kNow + 1000);  // not delayed
  EXPECT_FALSE(Info(d, 1).estimated);
}

TEST(SchedulerBackfillTest, EasyRefusesLongJobThatWouldDelayTheHead) {
  ClusterState s = HeadOfLine(2000);  // B: 2000 s on card 1 would run past kNow + 1000
  Decisions d = Schedule(s, Quiet(Algorithm::kBackfill), kNow);
  EXPECT_TRUE(d.starts.empty());
  ASSERT_TRUE(IsPending(d, 2));
  const PendingInfo& b = Info(d, 2);
  EXPECT_EQ(b.reason, WaitReason::kPriority);
  // EASY: no reservation for B, an estimate from the plan: after A, kNow + 4600.
  EXPECT_EQ(b.expected_start, kNow + 4600);
  EXPECT_TRUE(b.estimated);
  EXPECT_EQ(Info(d, 1).expected_start, kNow + 1000);
}

// Three cards. Card 0 busy until kNow + 1000, card 1 until kNow + 3000, card 2 free.
// A: 3 cards x 1 h; B: 2 cards x 1000 s; C: 1 card x 1500 s; D: 1 card x 500 s (submit order).
//   A can start at kNow + 3000 (all three) -> reserved [3000, 6600).
//   B fits [1000, 2000) on cards 0 and 2 before A.
//   C on card 2 now would end at 1500: harmless to A (3000) but runs into B's [1000, 2000).
//   D on card 2 now ends at 500: harmless to both.
ClusterState EasyVersusConservative() {
  ClusterState s = Cards(3);
  s.running.push_back(Running(100, {0}, kNow - 2600, kHour));  // until kNow + 1000
  s.running.push_back(Running(101, {1}, kNow - 600, kHour));   // until kNow + 3000
  s.pending.push_back(MakeJob(1, 3, kHour, kNow - 400));
  s.pending.push_back(MakeJob(2, 2, 1000, kNow - 300));
  s.pending.push_back(MakeJob(3, 1, 1500, kNow - 200));
  s.pending.push_back(MakeJob(4, 1, 500, kNow - 100));
  return s;
}

TEST(SchedulerBackfillTest, EasyProtectsOnlyTheFirstBlockedJob) {
  Decisions d = Schedule(EasyVersusConservative(), Quiet(Algorithm::kBackfill), kNow);
  // C starts on card 2 (it does not delay A); B, which EASY does not protect, is pushed back.
  ASSERT_EQ(d.starts.size(), 1u);
  EXPECT_EQ(d.starts[0].job, 3);
  EXPECT_EQ(d.starts[0].alloc.gpus, (std::vector<int>{2}));
  EXPECT_EQ(Info(d, 1).reason, WaitReason::kResources);
  EXPECT_EQ(Info(d, 1).expected_start, kNow + 3000);
  EXPECT_FALSE(Info(d, 1).estimated);
  EXPECT_EQ(Info(d, 2).reason, WaitReason::kPriority);
  EXPECT_EQ(Info(d, 2).expected_start, kNow + 1000);  // estimated before C started
  EXPECT_TRUE(Info(d, 2).estimated);
  // D no longer fits anywhere now (card 2 went to C).
  EXPECT_EQ(Info(d, 4).reason, WaitReason::kPriority);
  EXPECT_EQ(Info(d, 4).expected_start, kNow + 1000);  // card 0 after its job: B holds no reservation
  EXPECT_TRUE(Info(d, 4).estimated);
}

// An unexplained pass (the simulator's, and the daemon's decisions) stops walking once no shape
// the queue holds can start now, for the shortest limit among its jobs of that shape. Card 0 is
// busy until kNow + 1000, card 1 free. A (2 cards) is reserved at kNow + 1000; B (1 card for
// 2000 s) would delay it and fails; C (3000 s) fails without a search; D (500 s) ends before the
// reservation and starts: the walk must not stop after B, though every 1-card job so far failed.
TEST(SchedulerBackfillTest, AnUnexplainedPassStopsOnlyWhereNoShapeCanStartForItsShortestLimit) {
  ClusterState s = Cards(2);
  s.running.push_back(Running(100, {0}, kNow - 2600, kHour));  // until kNow + 1000
  s.pending.push_back(MakeJob(1, 2, kHour, kNow - 400));
  s.pending.push_back(MakeJob(2, 1, 2000, kNow - 300));
  s.pending.push_back(MakeJob(3, 1, 3000, kNow - 200));
  s.pending.push_back(MakeJob(4, 1, 500, kNow - 100));
  for (Algorithm a : {Algorithm::kBackfill, Algorithm::kRota}) {
    Policy p = Quiet(a);
    p.weights.size = 0;  // rota: submit order, as backfill's
    p.plan_depth = 1;    // rota: as backfill, the walk may stop once A is reserved
    p.estimate_starts = false;
    p.explain = false;
    const Decisions d = Schedule(s, p, kNow);
    ASSERT_EQ(d.starts.size(), 1u) << AlgorithmName(a);
    EXPECT_EQ(d.starts[0].job, 4) << AlgorithmName(a);
    EXPECT_EQ(d.starts[0].alloc.gpus, (std::vector<int>{1})) << AlgorithmName(a);
    EXPECT_TRUE(d.pending.empty()) << AlgorithmName(a);
  }
}

TEST(SchedulerRotaTest, ConservativeBackfillProtectsEveryReservation) {
  Policy p = Quiet(Algorithm::kRota);
  p.weights.size = 0;  // one user, equal tiers: priority order = age order = submit order
  Decisions d = Schedule(EasyVersusConservative(), p, kNow);
  // Only D starts (card 2, ends at kNow + 500, before B's reservation at kNow + 1000).
  ASSERT_EQ(d.starts.size(), 1u);
  EXPECT_EQ(d.starts[0].job, 4);
  EXPECT_EQ(d.starts[0].alloc.gpus, (std::vector<int>{2}));
  EXPECT_FALSE(d.starts[0].preemptible);  // a regular job within quota
  ASSERT_EQ(PendingIds(d), (std::vector<JobId>{1, 2, 3}));
  EXPECT_EQ(Info(d, 1).reason, WaitReason::kResources);
  EXPECT_EQ(Info(d, 1).expected_start, kNow + 3000);
  EXPECT_EQ(Info(d, 2).reason, WaitReason::kPriority);
  EXPECT_EQ(Info(d, 2).expected_start, kNow + 1000);  // reserved in the gap before A
  // C: no 1500 s gap on any card before A ends (card 0: [2000, 3000), card 2: [0, 1000) and
  // [2000, 3000)): after A, kNow + 6600.
  EXPECT_EQ(Info(d, 3).reason, WaitReason::kPriority);
  EXPECT_EQ(Info(d, 3).expected_start, kNow + 6600);
  for (JobId id : {1, 2, 3}) EXPECT_FALSE(Info(d, id).estimated) << id;
  // Wakeups: the running jobs' warnings at kNow + 880 and kNow + 2880; reservations later.
  EXPECT_EQ(d.next_wakeup, kNow + 880);
}

TEST(SchedulerRotaTest, EstimatesPastThePlanDepth) {
  ClusterState s = Cards(2);
  s.running.push_back(Running(100, {0}, kNow - 2600, kHour));  // until kNow + 1000
  s.running.push_back(Running(101, {1}, kNow - 1600, kHour));  // until kNow + 2000
  s.pending.push_back(MakeJob(1, 1, kHour, kNow - 200));
  s.pending.push_back(MakeJob(2, 1, kHour, kNow - 100));
  Policy p = Quiet();
  p.plan_depth = 1;
  Decisions d = Schedule(s, p, kNow);
  EXPECT_EQ(Info(d, 1).expected_start, kNow + 1000);
  EXPECT_FALSE(Info(d, 1).estimated);
  // Past the depth: the 3600 GPU-s of blocked work ahead spread over 2 GPUs: kNow + 1800.
  EXPECT_EQ(Info(d, 2).expected_start, kNow + 1800);
  EXPECT_TRUE(Info(d, 2).estimated);
  EXPECT_EQ(Info(d, 2).reason, WaitReason::kPriority);
}

TEST(SchedulerRotaTest, HigherPriorityStartsFirst) {
  // One free card. The regular job waited a day; the thesis job arrived just now and takes it.
  ClusterState s = Cards(2);
  s.running.push_back(Running(100, {0}, kNow - 100, 10 * kHour));
  s.pending.push_back(MakeJob(1, 1, kHour, kNow - kDay));
  s.pending.push_back(MakeJob(2, 1, kHour, kNow, Tier::kThesis));
  Decisions d = Schedule(s, Quiet(), kNow);
  ASSERT_EQ(d.starts.size(), 1u);
  EXPECT_EQ(d.starts[0].job, 2);
  EXPECT_EQ(d.starts[0].alloc.gpus, (std::vector<int>{1}));
  EXPECT_EQ(Info(d, 1).reason, WaitReason::kResources);
  EXPECT_EQ(Info(d, 1).expected_start, kNow + kHour);  // after the thesis job on card 1
  // fifo would have started the old job instead.
  Decisions f = Schedule(s, Quiet(Algorithm::kFifo), kNow);
  ASSERT_EQ(f.starts.size(), 1u);
  EXPECT_EQ(f.starts[0].job, 1);
}

TEST(SchedulerRotaTest, SizeByPredictionOrdersByTheRunButPlansOnTheLimit) {
  // One card free now, the other at kNow + 2 h. A asks 2 days and its owner's history says it runs
  // an hour; B asks 4 hours and will take them. Submitted together, same user, same tier.
  ClusterState s = Cards(2);
  s.running.push_back(Running(100, {0}, kNow - kHour, 3 * kHour));
  Job a = MakeJob(1, 1, 2 * kDay, kNow - 60);
  a.predicted_run = kHour;
  Job b = MakeJob(2, 1, 4 * kHour, kNow - 60);
  s.pending = {a, b};
  Policy p = Quiet();
  // On limits B is the smaller request and starts.
  Decisions d = Schedule(s, p, kNow);
  ASSERT_EQ(d.starts.size(), 1u);
  EXPECT_EQ(d.starts[0].job, 2);
  // On predictions A does; B's reservation comes after A's limit (card 1) or the running job (card 0):
  // planned on A's two days, not on its predicted hour, so the plan never promises a start that a
  // wrong prediction would break.
  p.size_by_prediction = true;
  d = Schedule(s, p, kNow);
  ASSERT_EQ(d.starts.size(), 1u);
  EXPECT_EQ(d.starts[0].job, 1);
  EXPECT_EQ(Info(d, 2).expected_start, kNow + 2 * kHour);
  EXPECT_EQ(Info(d, 2).reason, WaitReason::kResources);
  // A prediction longer than the limit is the limit.
  s.pending[0].predicted_run = 5 * kDay;
  d = Schedule(s, p, kNow);
  ASSERT_EQ(d.starts.size(), 1u);
  EXPECT_EQ(d.starts[0].job, 2);
  // With no prediction the limit is used.
  s.pending[0].predicted_run = 0;
  d = Schedule(s, p, kNow);
  ASSERT_EQ(d.starts.size(), 1u);
  EXPECT_EQ(d.starts[0].job, 2);
}

TEST(SchedulerRotaTest, AShortPredictionDoesNotBackfillIntoAHoleShorterThanTheLimit) {
  // Card 0 busy for an hour; C (both cards) is reserved at kNow + 1 h. A's owner's history says
  // 10 minutes, but A asks 2 hours: card 1's hole is an hour, so A waits (its limit would delay C).
  ClusterState s = Cards(2);
  s.running.push_back(Running(100, {0}, kNow - 2 * kHour, 3 * kHour));
  s.pending.push_back(MakeJob(3, 2, kHour, kNow - kDay, Tier::kThesis));
  Job a = MakeJob(1, 1, 2 * kHour, kNow - 60);
  a.predicted_run = 10 * kMinute;
  s.pending.push_back(a);
  Policy p = Quiet();
  p.size_by_prediction = true;
  Decisions d = Schedule(s, p, kNow);
  EXPECT_TRUE(d.starts.empty());
  EXPECT_EQ(Info(d, 3).expected_start, kNow + kHour);
  EXPECT_EQ(Info(d, 1).expected_start, kNow + 2 * kHour);
}

// ---- The bound on overtaking (Policy::protect_after) -------------------------------------

// Two cards, free at kNow + 1000 (card 0) and kNow + 3000 (card 1). A needs both for an hour and
// for ten hours and waited `a_waited`; B, a small job submitted just now, ranks above it by
// size as long as A's age factor (500 over 14 days) is below 392.
ClusterState Overtaking(Duration a_waited) {
  ClusterState s = Cards(2);
  s.running.push_back(Running(100, {0}, kNow - 2600, kHour));  // until kNow + 1000
  s.running.push_back(Running(101, {1}, kNow - 600, kHour));   // until kNow + 3000
  s.pending.push_back(MakeJob(1, 2, 10 * kHour, kNow - a_waited));
  s.pending.push_back(MakeJob(2, 1, 5000, kNow));
  return s;
}

TEST(SchedulerProtectionTest, AJobThatWaitedLongEnoughCannotBeOvertaken) {
  Policy p = Quiet();
  // A waited six days: not yet protected. B comes first and takes card 0 from kNow + 1000 to
  // kNow + 6000, which pushes A back to kNow + 6000.
  Decisions d = Schedule(Overtaking(6 * kDay), p, kNow);
  ASSERT_EQ(PendingIds(d), (std::vector<JobId>{2, 1}));
  EXPECT_EQ(Info(d, 2).expected_start, kNow + 1000);
  EXPECT_EQ(Info(d, 1).expected_start, kNow + 6000);
  // A week: A is protected and reserved first, at kNow + 3000; B may not delay it and waits for
  // its end.
  d = Schedule(Overtaking(7 * kDay), p, kNow);
  ASSERT_EQ(PendingIds(d), (std::vector<JobId>{1, 2}));
  EXPECT_EQ(Info(d, 1).expected_start, kNow + 3000);
  EXPECT_EQ(Info(d, 2).expected_start, kNow + 3000 + 10 * kHour);
  // The bound is the admin's: a shorter one protects A sooner, none never.
  p.protect_after = kDay;
  EXPECT_EQ(PendingIds(Schedule(Overtaking(2 * kDay), p, kNow)), (std::vector<JobId>{1, 2}));
  p.protect_after = -1;
  EXPECT_EQ(PendingIds(Schedule(Overtaking(10 * kDay), p, kNow)), (std::vector<JobId>{2, 1}));
  p.protect_after = 0;
  p.protect_max = 0;
  EXPECT_EQ(PendingIds(Schedule(Overtaking(10 * kDay), p, kNow)), (std::vector<JobId>{2, 1}));
  // The baselines order by submit time anyway.
  EXPECT_EQ(PendingIds(Schedule(Overtaking(kHour), Quiet(Algorithm::kFifo), kNow)), (std::vector<JobId>{1, 2}));
}

TEST(SchedulerProtectionTest, AJobPastItsPromiseCannotBeOvertaken) {
  // A waited an hour (far from the week) but was promised kNow - 60: first come first served
  // would have started it by now. With promises kept it is protected, as after a week.
  ClusterState s = Overtaking(kHour);
  s.pending[0].promise = kNow - 60;
  Policy p = Quiet();
  EXPECT_EQ(PendingIds(Schedule(s, p, kNow)), (std::vector<JobId>{2, 1}));  // promises not kept
  p.promise_slack = 0;
  Decisions d = Schedule(s, p, kNow);
  ASSERT_EQ(PendingIds(d), (std::vector<JobId>{1, 2}));
  EXPECT_TRUE(Info(d, 1).factors.is_protected);
  EXPECT_EQ(Info(d, 1).expected_start, kNow + 3000);
  // The slack is how far past its promise a job may be overtaken; the week still applies.
  // (A overtaken would start at kNow + 6000, past its due time: protection foreseen would protect
  // it at once; AJobThePlanWouldStartPastItsDueTimeIsProtectedAtOnce.)
  p.promise_slack = 120;
  p.protect_foreseen = false;
  d = Schedule(s, p, kNow);
  EXPECT_EQ(PendingIds(d), (std::vector<JobId>{2, 1}));
  EXPECT_LE(d.next_wakeup, kNow + 60);  // when A becomes protected
  EXPECT_EQ(PendingIds(Schedule(Overtaking(7 * kDay), p, kNow)), (std::vector<JobId>{1, 2}));
  // A job with no promise (it came before promises were kept) has only the week.
  s.pending[0].promise = kNever;
  p.promise_slack = 0;
  EXPECT_EQ(PendingIds(Schedule(s, p, kNow)), (std::vector<JobId>{2, 1}));
  // Promises alone, the week turned off.
  s.pending[0].promise = kNow - 60;
  p.protect_after = -1;
  EXPECT_EQ(PendingIds(Schedule(s, p, kNow)), (std::vector<JobId>{1, 2}));
}

TEST(SchedulerProtectionTest, APassWakesWhenTheNextJobBecomesProtected) {
  // One card held for ten more days; A waited six days. Nothing else would wake the pass before
  // the card frees, but A is protected in a day, which may change the order then.
  ClusterState s = Cards(1);
  s.running.push_back(Running(100, {0}, kNow - kDay, 11 * kDay));
  s.pending.push_back(MakeJob(1, 1, kHour, kNow - 6 * kDay));
  Policy p = Quiet();
  p.protect_foreseen = false;  // which would protect A at once: it cannot start before it is due
  EXPECT_EQ(Schedule(s, p, kNow).next_wakeup, kNow + kDay);
  // Already protected, or protection off: the next wake-up is the card's warning, days later.
  p.protect_after = -1;
  const Time later = Schedule(s, p, kNow).next_wakeup;
  EXPECT_GT(later, kNow + kDay);
  p.protect_after = 5 * kDay;
  EXPECT_EQ(Schedule(s, p, kNow).next_wakeup, later);
}

TEST(SchedulerProtectionTest, AJobThePlanWouldStartPastItsDueTimeIsProtectedAtOnce) {
  // A is due in an hour (the week). Overtaken by B it would start at kNow + 6000, after that
  // hour: it would be protected before it starts anyway, so it is protected now, reserved first
  // (kNow + 3000), and B's expected start is planned around it.
  ClusterState s = Overtaking(7 * kDay - kHour);
  Policy p = Quiet();
  Decisions d = Schedule(s, p, kNow);
  ASSERT_EQ(PendingIds(d), (std::vector<JobId>{1, 2}));
  EXPECT_TRUE(Info(d, 1).factors.is_protected);
  EXPECT_EQ(Info(d, 1).expected_start, kNow + 3000);
  EXPECT_EQ(Info(d, 2).expected_start, kNow + 3000 + 10 * kHour);
  // Turned off, A is overtaken until it is due, and B's expected start is the one it loses then.
  p.protect_foreseen = false;
  d = Schedule(s, p, kNow);
  ASSERT_EQ(PendingIds(d), (std::vector<JobId>{2, 1}));
  EXPECT_EQ(Info(d, 1).expected_start, kNow + 6000);
  EXPECT_FALSE(Info(d, 1).factors.is_protected);
  p.protect_foreseen = true;
  // Due in two hours, A overtaken still starts before then: nothing is foreseen.
  d = Schedule(Overtaking(7 * kDay - 2 * kHour), p, kNow);
  ASSERT_EQ(PendingIds(d), (std::vector<JobId>{2, 1}));
  EXPECT_FALSE(Info(d, 1).factors.is_protected);
  // With the one place held by a job due already, A is not protected before it is due.
  s.pending.push_back(MakeJob(3, 1, kHour, kNow - 8 * kDay));
  d = Schedule(s, p, kNow);
  EXPECT_TRUE(Info(d, 3).factors.is_protected);
  EXPECT_FALSE(Info(d, 1).factors.is_protected);
  // Two places: A takes the second at once.
  p.protect_max = 2;
  d = Schedule(s, p, kNow);
  EXPECT_TRUE(Info(d, 3).factors.is_protected);
  EXPECT_TRUE(Info(d, 1).factors.is_protected);
  // An explore job is never protected, foreseen or not.
  s.pending[0].tier = Tier::kExplore;
  d = Schedule(s, p, kNow);
  EXPECT_FALSE(Info(d, 1).factors.is_protected);
}

TEST(SchedulerProtectionTest, ProtectionForeseenFillsOnlyTheRoomTheDueJobsLeave) {
  // One card busy for ten hours. A and B are due by the week in one and two hours, both reserved
  // past that; C came a minute ago but is past its promise: due now. Two places: C (due) takes
  // one, and of A and B the longer waiting, A, the other, though both waited longer than C.
  ClusterState s = Cards(1);
  s.running.push_back(Running(100, {0}, kNow - kHour, 11 * kHour));
  s.pending.push_back(MakeJob(1, 1, kHour, kNow - 7 * kDay + kHour));
  s.pending.push_back(MakeJob(2, 1, kHour, kNow - 7 * kDay + 2 * kHour));
  s.pending.push_back(MakeJob(3, 1, kHour, kNow - 60));
  s.pending[2].promise = kNow - 60;
  Policy p = Quiet();
  p.promise_slack = 0;
  p.protect_max = 2;
  const Decisions d = Schedule(s, p, kNow);
  EXPECT_TRUE(Info(d, 3).factors.is_protected);
  EXPECT_TRUE(Info(d, 1).factors.is_protected);
  EXPECT_FALSE(Info(d, 2).factors.is_protected);
  EXPECT_EQ(PendingIds(d), (std::vector<JobId>{1, 3, 2}));
}

TEST(SchedulerProtectionTest, AJobThatCannotStartAnywayDoesNotTakeTheProtectedPlace) {
  // The oldest job waits for a running job (--after): protecting it would hold the one place for
  // nothing. The next oldest, A, is protected instead.
  ClusterState s = Overtaking(8 * kDay);
  Job chained = MakeJob(3, 1, kHour, kNow - 9 * kDay);
  chained.after = {100};
  s.pending.push_back(chained);
  Decisions d = Schedule(s, Quiet(), kNow);
  EXPECT_TRUE(Info(d, 1).factors.is_protected);
  EXPECT_FALSE(Info(d, 3).factors.is_protected);
  EXPECT_EQ(Info(d, 3).reason, WaitReason::kDependency);
  EXPECT_EQ(PendingIds(d).front(), 1);
}

TEST(SchedulerProtectionTest, AProtectedJobStillYieldsToAHigherTier) {
  ClusterState s = Overtaking(10 * kDay);
  s.pending[1].tier = Tier::kThesis;
  Decisions d = Schedule(s, Quiet(), kNow);
  EXPECT_EQ(PendingIds(d), (std::vector<JobId>{2, 1}));
}

TEST(SchedulerProtectionTest, ExploreJobsAreNeverProtected) {
  ClusterState s = Overtaking(10 * kDay);
  s.pending[0].tier = Tier::kExplore;
  s.pending[1].tier = Tier::kExplore;
  EXPECT_EQ(PendingIds(Schedule(s, Quiet(), kNow)), (std::vector<JobId>{2, 1}));
}

TEST(SchedulerProtectionTest, OnlyTheLongestWaitingUpToTheLimitAreProtectedAndGoBySubmitTime) {
  // Four one-card jobs on one busy card: 1 and 2 large and old, 3 older still but the largest,
  // 4 small and new. Protected, two at most: 3 (oldest) then 1; then 4 and 2 by priority.
  ClusterState s = Cards(1);
  s.running.push_back(Running(100, {0}, kNow - 600, kHour));
  s.pending.push_back(MakeJob(1, 1, 40 * kHour, kNow - 8 * kDay));
  s.pending.push_back(MakeJob(2, 1, 40 * kHour, kNow - 7 * kDay - kHour));
  s.pending.push_back(MakeJob(3, 1, 60 * kHour, kNow - 9 * kDay));
  s.pending.push_back(MakeJob(4, 1, kHour, kNow));
  Policy p = Quiet();
  p.protect_max = 2;
  EXPECT_EQ(PendingIds(Schedule(s, p, kNow)), (std::vector<JobId>{3, 1, 4, 2}));
  p.protect_max = 1;
  EXPECT_EQ(PendingIds(Schedule(s, p, kNow)), (std::vector<JobId>{3, 4, 1, 2}));
}

TEST(SchedulerRotaTest, ExploreJobsStartPreemptible) {
  ClusterState s = Cards(2);
  s.pending.push_back(MakeJob(1, 1, kHour, kNow - 100, Tier::kExplore));
  s.pending.push_back(MakeJob(2, 1, kHour, kNow - 100, Tier::kRegular));
  Decisions d = Schedule(s, Quiet(), kNow);
  ASSERT_EQ(d.starts.size(), 2u);
  EXPECT_TRUE(Started(d, 1).preemptible);
  EXPECT_FALSE(Started(d, 2).preemptible);
}

TEST(SchedulerRotaTest, OverdueJobWithoutEnforcedLimitsIsAssumedToEndSoon) {
  // Limits not enforced (simulating estimates): a job 400 s past its estimate is assumed to end
  // overdue_grace (300 s) from now.
  ClusterState s = Cards(1);
  s.running.push_back(Running(100, {0}, kNow - 4000, kHour));
  s.pending.push_back(MakeJob(1, 1, kHour, kNow - 100));
  Policy p = Quiet();
  p.enforce_time_limits = false;
  Decisions d = Schedule(s, p, kNow);
  EXPECT_TRUE(d.signals.empty());
  EXPECT_EQ(Info(d, 1).expected_start, kNow + 300);
  EXPECT_EQ(d.next_wakeup, kNow + 300);
}

// ---- Reasons -------------------------------------------------------------------------------

TEST(SchedulerReasonTest, QuotaExhaustedWaitsForNextWeek) {
  ClusterState s = Cards(2);  // all free
  s.pending.push_back(MakeJob(1, 1, 2 * kHour, kNow - 100));  // 2 GPU-h
  s.pending.push_back(MakeJob(2, 1, 30 * kMinute, kNow - 50));  // 0.5 GPU-h
  for (Algorithm a : {Algorithm::kBackfill, Algorithm::kRota}) {
    Policy p = Quiet(a);
    p.quota.default_hours = 1;
    p.quota.overflow_as_explore = false;
    Decisions d = Schedule(s, p, kNow);
    ASSERT_EQ(d.starts.size(), 1u) << AlgorithmName(a);
    EXPECT_EQ(d.starts[0].job, 2);
    ASSERT_TRUE(IsPending(d, 1));
    const PendingInfo& i = Info(d, 1);
    EXPECT_EQ(i.reason, WaitReason::kQuotaExhausted);
    EXPECT_EQ(i.expected_start, kMon + kWeek);  // next Monday 00:00
    EXPECT_TRUE(i.estimated);
    EXPECT_EQ(d.next_wakeup, kMon + kWeek);
  }
}

TEST(SchedulerReasonTest, OverQuotaRunsPreemptibleAsExplore) {
  ClusterState s = Cards(1);
  s.pending.push_back(MakeJob(1, 1, 2 * kHour, kNow - 100, Tier::kThesis));
  Policy p = Quiet();
  p.quota.default_hours = 1;  // overflow_as_explore is on by default
  Decisions d = Schedule(s, p, kNow);
  ASSERT_EQ(d.starts.size(), 1u);
  EXPECT_EQ(d.starts[0].job, 1);
  EXPECT_TRUE(d.starts[0].preemptible);  // a thesis job, but over quota
  EXPECT_FALSE(d.starts[0].from_pool);
  EXPECT_TRUE(d.pending.empty());
}

TEST(SchedulerReasonTest, OverQuotaJobRanksAsExploreAndPreemptsNobody) {
  ClusterState s = Cards(1);
  s.running.push_back(Running(100, {0}, kNow - 100, 10 * kHour, Tier::kExplore, /*preemptible=*/true));
  s.pending.push_back(MakeJob(1, 1, 2 * kHour, kNow - 100, Tier::kThesis));
  Policy p = Quiet();
  p.quota.default_hours = 1;
  Decisions d = Schedule(s, p, kNow);
  EXPECT_TRUE(d.starts.empty());
  EXPECT_TRUE(d.signals.empty());  // an over-quota job may not preempt
  ASSERT_TRUE(IsPending(d, 1));
  const PendingInfo& i = Info(d, 1);
  EXPECT_DOUBLE_EQ(i.factors.tier, 0.0);
  EXPECT_EQ(i.reason, WaitReason::kResources);
  EXPECT_EQ(i.expected_start, kNow - 100 + 10 * kHour);
}

TEST(SchedulerReasonTest, Dependency) {
  ClusterState s = Cards(4);
  s.running.push_back(Running(100, {0}, kNow - 100, kHour));
  Job on_running = MakeJob(1, 1, kHour, kNow - 100);
  on_running.after = {100};
  Job on_pending = MakeJob(2, 1, kHour, kNow - 90);
  on_pending.after = {1};
  Job on_gone = MakeJob(3, 1, kHour, kNow - 80);
  on_gone.after = {999};  // ended long ago: no longer in the state
  Job on_self = MakeJob(4, 1, kHour, kNow - 70);
  on_self.after = {4};
  s.pending = {on_running, on_pending, on_gone, on_self};
  Decisions d = Schedule(s, Quiet(), kNow);
  EXPECT_EQ(Info(d, 1).reason, WaitReason::kDependency);
  EXPECT_EQ(Info(d, 1).expected_start, kNever);
  EXPECT_EQ(Info(d, 2).reason, WaitReason::kDependency);
  ASSERT_EQ(d.starts.size(), 2u);
  EXPECT_TRUE(IsStarted(d, 3));
  EXPECT_TRUE(IsStarted(d, 4));
}

// --after-ok waits as --after does; what a failed predecessor means is the daemon's to act on.
TEST(SchedulerReasonTest, DependencyOnSuccessWaitsForEveryListedJob) {
  ClusterState s = Cards(4);
  s.running.push_back(Running(100, {0}, kNow - 100, kHour));
  Job ok_on_running = MakeJob(1, 1, kHour, kNow - 100);
  ok_on_running.after_ok = {100};
  Job ok_on_pending = MakeJob(2, 1, kHour, kNow - 90);
  ok_on_pending.after_ok = {999, 1};  // one ended long ago, one still waiting
  Job both = MakeJob(3, 1, kHour, kNow - 80);
  both.after = {999};
  both.after_ok = {100};
  Job ok_on_gone = MakeJob(4, 1, kHour, kNow - 70);
  ok_on_gone.after_ok = {998};
  // Held out of this pass (its start retried later, its requeue not yet recorded): still to run.
  Job on_held = MakeJob(5, 1, kHour, kNow - 60);
  on_held.after = {50};
  Job ok_on_held = MakeJob(6, 1, kHour, kNow - 50);
  ok_on_held.after_ok = {50};
  s.held = {50};
  s.pending = {ok_on_running, ok_on_pending, both, ok_on_gone, on_held, ok_on_held};
  Decisions d = Schedule(s, Quiet(), kNow);
  EXPECT_EQ(Info(d, 1).reason, WaitReason::kDependency);
  EXPECT_EQ(Info(d, 2).reason, WaitReason::kDependency);
  EXPECT_EQ(Info(d, 3).reason, WaitReason::kDependency);
  EXPECT_EQ(Info(d, 5).reason, WaitReason::kDependency);
  EXPECT_EQ(Info(d, 6).reason, WaitReason::kDependency);
  ASSERT_EQ(d.starts.size(), 1u);
  EXPECT_TRUE(IsStarted(d, 4));
}

TEST(SchedulerReasonTest, BookingBlocksOthersButNotItsOwner) {
  ClusterState s = Cards(1);
  Booking b;
  b.id = 7;
  b.user = "bob";
  b.alloc.gpus = {0};
  b.start = kNow + 100;
  b.end = kNow + 1000;
  s.bookings.push_back(b);
  s.pending.push_back(MakeJob(1, 1, kHour, kNow - 200, Tier::kRegular, "alice"));  // older: first
  s.pending.push_back(MakeJob(2, 1, 900, kNow - 100, Tier::kRegular, "bob"));
  Policy p = Quiet();
  p.weights.size = 0;  // alice ranks first by age alone
  Decisions d = Schedule(s, p, kNow);
  // alice's hour would run into bob's booking: she waits for its end and gets [1000, 4600).
  ASSERT_TRUE(IsPending(d, 1));
  const PendingInfo& a = Info(d, 1);
  EXPECT_EQ(a.reason, WaitReason::kBooking);
  EXPECT_EQ(a.expected_start, kNow + 1000);
  // bob's 900 s run inside his own booking and end before alice's reservation.
  ASSERT_EQ(d.starts.size(), 1u);
  EXPECT_EQ(d.starts[0].job, 2);
  EXPECT_EQ(d.starts[0].alloc.gpus, (std::vector<int>{0}));
  // Wake up when the booking starts.
  EXPECT_EQ(d.next_wakeup, kNow + 100);
}

TEST(SchedulerReasonTest, PeakHoursForHeavyJobsHeldBackByPriority) {
  Time now = kMon + 15 * kHour;  // Monday 15:00: heavy jobs x0.5
  ClusterState s = Cards(2);
  s.running.push_back(Running(100, {0}, now - 2600, kHour));  // card 0 until now + 1000
  s.pending.push_back(MakeJob(1, 2, kHour, now - 300, Tier::kThesis));  // reserved at now + 1000
  s.pending.push_back(MakeJob(2, 1, 5 * kHour, now - 200));  // heavy (5 h), fits card 1 but not before A
  s.pending.push_back(MakeJob(3, 1, 2000, now - 100));       // light, same situation
  Policy p;  // the default time-of-day table
  p.preemption = false;
  Decisions d = Schedule(s, p, now);
  EXPECT_TRUE(d.starts.empty());
  EXPECT_EQ(Info(d, 1).reason, WaitReason::kResources);
  EXPECT_EQ(Info(d, 2).reason, WaitReason::kPeakHours);
  EXPECT_DOUBLE_EQ(Info(d, 2).factors.time_of_day, 0.5);
  EXPECT_EQ(Info(d, 3).reason, WaitReason::kPriority);
  EXPECT_DOUBLE_EQ(Info(d, 3).factors.time_of_day, 1.0);
  // Wakeups: the warning at now + 880 precedes the table's next change at 18:00.
  EXPECT_EQ(d.next_wakeup, now + 880);
}

TEST(SchedulerReasonTest, Impossible) {
  ClusterState s = Cards(2, 40960);
  s.pending.push_back(MakeJob(1, 3, kHour, kNow - 100));  // three cards on a two-card cluster
  Job mig = MakeJob(2, 1, kHour, kNow - 90);
  mig.request.kind = RequestKind::kMig;
  mig.request.mig_profile = "1g.10gb";  // no MIG here
  Job big = MakeJob(3, 1, kHour, kNow - 80);
  big.request.kind = RequestKind::kMemShare;
  big.request.memory = 40961;  // larger than any card
  s.pending.push_back(mig);
  s.pending.push_back(big);
  s.pending.push_back(MakeJob(4, 2, kHour, kNow - 70));  // possible: starts
  Decisions d = Schedule(s, Quiet(), kNow);
  for (JobId id : {1, 2, 3}) {
    ASSERT_TRUE(IsPending(d, id)) << id;
    EXPECT_EQ(Info(d, id).reason, WaitReason::kImpossible) << id;
    EXPECT_EQ(Info(d, id).expected_start, kNever) << id;
  }
  ASSERT_EQ(d.starts.size(), 1u);
  EXPECT_EQ(d.starts[0].job, 4);
}

TEST(SchedulerReasonTest, LargerThanAnyNodeWhereJobsStayOnOneNode) {
  // Two nodes of two cards, all free. With jobs that may span nodes (the simulator's traces) a
  // 3-card job starts over both; rotad's (Policy::span_nodes off) never can, under every policy.
  ClusterState s = Cards(4);
  s.gpus[2].node = s.gpus[3].node = 1;
  s.pending.push_back(MakeJob(1, 3, kHour, kNow - 100));
  s.pending.push_back(MakeJob(2, 2, kHour, kNow - 90));
  EXPECT_TRUE(IsStarted(Schedule(s, Quiet(Algorithm::kFifo), kNow), 1));
  for (Algorithm a : kAlgorithms) {
    Policy p = Quiet(a);
    p.span_nodes = false;
    Decisions d = Schedule(s, p, kNow);
    ASSERT_TRUE(IsPending(d, 1)) << AlgorithmName(a);
    EXPECT_EQ(Info(d, 1).reason, WaitReason::kImpossible) << AlgorithmName(a);
    ASSERT_EQ(d.starts.size(), 1u) << AlgorithmName(a);
    EXPECT_EQ(d.starts[0].job, 2) << AlgorithmName(a);
  }
}

// Unexplained passes (the simulator's) stop walking the queue once the rest can change no
// decision (scheduler.cc, Run). What lies past that point must still be found.
Policy Unexplained(Algorithm a, int depth) {
  Policy p = Quiet(a);
  p.explain = false;
  p.plan_depth = depth;
  return p;
}

TEST(SchedulerUnexplainedTest, ListsTheJobsThatCanNeverRunPastWhereTheWalkStops) {
  ClusterState s = Cards(2);
  s.running.push_back(Running(10, {0, 1}, kNow - 100, kHour));  // nothing free now
  s.pending.push_back(MakeJob(1, 1, kHour, kNow - 100));         // blocked: the walk stops here
  s.pending.push_back(MakeJob(2, 3, kHour, kNow - 90));          // three cards on a two-card cluster
  Job share = MakeJob(3, 1, kHour, kNow - 80);
  share.request.kind = RequestKind::kMemShare;
  share.request.memory = testing::k80GiB + 1;  // more than any card
  s.pending.push_back(share);
  Job waiting = MakeJob(4, 5, kHour, kNow - 70);  // impossible, but waits on job 1 first
  waiting.after = {1};
  s.pending.push_back(waiting);
  for (Algorithm a : {Algorithm::kFifo, Algorithm::kBackfill, Algorithm::kRota}) {
    for (int depth : {0, 1, 64}) {
      const Decisions d = Schedule(s, Unexplained(a, depth), kNow);
      EXPECT_TRUE(d.starts.empty()) << AlgorithmName(a);
      std::vector<JobId> listed = PendingIds(d);
      std::sort(listed.begin(), listed.end());
      EXPECT_EQ(listed, (std::vector<JobId>{2, 3})) << AlgorithmName(a) << " depth " << depth;
      for (const PendingInfo& p : d.pending) EXPECT_EQ(p.reason, WaitReason::kImpossible);
    }
  }
}

TEST(SchedulerUnexplainedTest, AJobPastThePlanDepthStillPreemptsALowerTier) {
  ClusterState s = Cards(1);
  s.running.push_back(Running(10, {0}, kNow - 100, kHour, Tier::kExplore, /*preemptible=*/true));
  s.pending.push_back(MakeJob(1, 1, kHour, kNow - 50));  // regular: preempts the explore job
  for (bool explain : {true, false}) {
    Policy p = Unexplained(Algorithm::kRota, 0);
    p.explain = explain;
    const Decisions d = Schedule(s, p, kNow);
    EXPECT_EQ(SignalledIds(d), (std::vector<JobId>{10})) << "explain " << explain;
  }
}

TEST(SchedulerUnexplainedTest, AQuotaBehindABlockedJobStillWakesTheNextWeek) {
  ClusterState s = Cards(1);
  s.running.push_back(Running(10, {0}, kNow - 100, 4 * kWeek));   // ends long after the week
  s.pending.push_back(MakeJob(1, 1, 30 * kMinute, kNow - 100));  // blocked by capacity
  s.pending.push_back(MakeJob(2, 1, 2 * kHour, kNow - 50));      // over its 1 GPU-hour quota
  for (Algorithm a : {Algorithm::kFifo, Algorithm::kBackfill}) {
    Policy p = Unexplained(a, 1);
    p.quota.default_hours = 1;
    p.quota.overflow_as_explore = false;
    const Decisions d = Schedule(s, p, kNow);
    EXPECT_TRUE(d.starts.empty()) << AlgorithmName(a);
    EXPECT_EQ(d.next_wakeup, kMon + kWeek) << AlgorithmName(a);
  }
}

TEST(SchedulerReasonTest, NamesOfReasons) {
  EXPECT_STREQ(WaitReasonName(WaitReason::kResources), "Resources");
  EXPECT_STREQ(WaitReasonName(WaitReason::kPriority), "Priority");
  EXPECT_STREQ(WaitReasonName(WaitReason::kQuotaExhausted), "QuotaExhausted");
  EXPECT_STREQ(WaitReasonName(WaitReason::kDependency), "Dependency");
  EXPECT_STREQ(WaitReasonName(WaitReason::kBooking), "Booking");
  EXPECT_STREQ(WaitReasonName(WaitReason::kPeakHours), "PeakHours");
  EXPECT_STREQ(WaitReasonName(WaitReason::kImpossible), "Impossible");
}

TEST(SchedulerTest, HybridPoolStartIsMarked) {
  ClusterState s = Cards(2);
  s.pending.push_back(MakeJob(1, 1, 2 * kHour, kNow - 100));  // 2 GPU-h, user "u" project "p"
  Policy p = Quiet();
  p.mode = AccountMode::kHybrid;
  p.quota.default_hours = 1;
  p.quota.project_hours = {{"p", 10}};
  Decisions d = Schedule(s, p, kNow);
  ASSERT_EQ(d.starts.size(), 1u);
  EXPECT_TRUE(d.starts[0].from_pool);
  EXPECT_FALSE(d.starts[0].preemptible);  // within the pool: a normal start
}

TEST(SchedulerTest, SharesAndMigStart) {
  ClusterState s = Cards(1, 40960);
  Gpu mig;
  mig.index = 1;
  mig.memory = 81920;
  mig.mig = {{"", "3g.40gb", 40960}, {"", "3g.40gb", 40960}};
  s.gpus.push_back(mig);
  Job share = MakeJob(1, 1, kHour, kNow - 100);
  share.request.kind = RequestKind::kMemShare;
  share.request.memory = 10240;
  Job slice = MakeJob(2, 1, kHour, kNow - 90);
  slice.request.kind = RequestKind::kMig;
  slice.request.mig_profile = "3g.40gb";
  s.pending = {share, slice};
  Decisions d = Schedule(s, Quiet(), kNow);
  ASSERT_EQ(d.starts.size(), 2u);
  ASSERT_TRUE(IsStarted(d, 1));
  const Start& a = Started(d, 1);
  EXPECT_EQ(a.alloc.gpus, (std::vector<int>{0}));
  EXPECT_EQ(a.alloc.memory, 10240);
  EXPECT_EQ(a.alloc.mig, -1);
  ASSERT_TRUE(IsStarted(d, 2));
  const Start& b = Started(d, 2);
  EXPECT_EQ(b.alloc.gpus, (std::vector<int>{1}));
  EXPECT_GE(b.alloc.mig, 0);
  EXPECT_EQ(b.alloc.memory, 0);
}

TEST(SchedulerTest, ASliceHeldOutsideRotaTakesNoJobAndTheJobWaitsForOneThatIsFree) {
  ClusterState s;
  Gpu mig;
  mig.memory = 81920;
  mig.mig = {{"s0", "1g.10gb", 10240}, {"s1", "1g.10gb", 10240}};
  mig.mig[0].drained = true;  // a cluster's job outside Rota holds it
  s.gpus.push_back(mig);
  Job first = MakeJob(1, 1, kHour, kNow - 100);
  first.request.kind = RequestKind::kMig;
  first.request.mig_profile = "1g.10gb";
  Job second = first;
  second.id = 2;
  second.submit_time = kNow - 90;
  s.pending = {first, second};
  for (bool explain : {true, false}) {
    Policy p = Quiet();
    p.explain = explain;
    Decisions d = Schedule(s, p, kNow);
    ASSERT_EQ(d.starts.size(), 1u) << explain;
    EXPECT_EQ(d.starts[0].job, 1) << explain;
    EXPECT_EQ(d.starts[0].alloc.mig, 1) << explain;  // the free slice, not the held one
  }
  s.gpus[0].mig[1].drained = true;  // both held: nothing starts, and the job can still run later
  Decisions d = Schedule(s, Quiet(), kNow);
  EXPECT_TRUE(d.starts.empty());
  EXPECT_EQ(Info(d, 1).reason, WaitReason::kResources);
}

// ---- Time limits ---------------------------------------------------------------------------

TEST(SchedulerTimeLimitTest, SignalAtLimitMinusGraceKillAtEnd) {
  ClusterState s = Cards(1);
  RunningJob r = Running(100, {0}, kNow - 3500, kHour);  // ends kNow + 100; grace 120: warn at -20
  r.job.signal = 12;
  s.running.push_back(r);
  Decisions d = Schedule(s, Quiet(), kNow);
  ASSERT_EQ(d.signals.size(), 1u);
  const Signal& sig = d.signals[0];
  EXPECT_EQ(sig.job, 100);
  EXPECT_EQ(sig.signal, 12);
  EXPECT_EQ(sig.kill_at, kNow + 100);  // the end of its limit, not now + grace
  EXPECT_EQ(sig.cause, StopCause::kTimeLimit);
  EXPECT_FALSE(sig.requeue);
  EXPECT_TRUE(d.kills.empty());
  EXPECT_EQ(d.next_wakeup, kNow + 100);
}

TEST(SchedulerTimeLimitTest, NothingBeforeTheWarningButWakeUpForIt) {
  ClusterState s = Cards(1);
  s.running.push_back(Running(100, {0}, kNow - 1000, kHour));  // warn at kNow - 1000 + 3480
  Decisions d = Schedule(s, Quiet(), kNow);
  EXPECT_TRUE(d.signals.empty());
  EXPECT_TRUE(d.kills.empty());
  EXPECT_EQ(d.next_wakeup, kNow + 2480);
}

TEST(SchedulerTimeLimitTest, WarningExactlyAtLimitMinusGrace) {
  ClusterState s = Cards(1);
  s.running.push_back(Running(100, {0}, kNow - 3480, kHour));  // warn time is exactly now
  Decisions d = Schedule(s, Quiet(), kNow);
  ASSERT_EQ(d.signals.size(), 1u);
  EXPECT_EQ(d.signals[0].kill_at, kNow + 120);
  // One second earlier: not yet.
  Decisions before = Schedule(s, Quiet(), kNow - 1);
  EXPECT_TRUE(before.signals.empty());
  EXPECT_EQ(before.next_wakeup, kNow);
}

// The first-day fault: a 1-minute job with the default USR1@120 got its warning at its start and
// died of it. The warning waits for half the limit, whatever the grace.
TEST(SchedulerTimeLimitTest, GraceLongerThanTheLimitWarnsAtHalfTheLimit) {
  ClusterState s = Cards(1);
  RunningJob r = Running(100, {0}, kNow, 60);
  r.job.grace = 120;
  s.running.push_back(r);
  Decisions d = Schedule(s, Quiet(), kNow);
  EXPECT_TRUE(d.signals.empty());
  EXPECT_EQ(d.next_wakeup, kNow + 30);
  d = Schedule(s, Quiet(), kNow + 29);
  EXPECT_TRUE(d.signals.empty());
  d = Schedule(s, Quiet(), kNow + 30);
  ASSERT_EQ(d.signals.size(), 1u);
  EXPECT_EQ(d.signals[0].kill_at, kNow + 60);
  // A 5-minute job with a 2-minute grace is warned at 3 minutes, as before.
  s.running[0] = Running(100, {0}, kNow, 300);
  s.running[0].job.grace = 120;
  EXPECT_TRUE(Schedule(s, Quiet(), kNow + 179).signals.empty());
  EXPECT_EQ(Schedule(s, Quiet(), kNow + 180).signals.size(), 1u);
}

// Jobs of 1, 2 and 5 minutes: with the warning they asked for (USR1, 120 s ahead) it comes at
// half the limit or 120 s ahead, whichever is later; without one, nothing comes before the end,
// and at the end the stop is due at once (a signal decision of signal 0: the daemon sends nothing
// and stops the job with SIGTERM).
TEST(SchedulerTimeLimitTest, OneTwoAndFiveMinuteJobs) {
  struct Case {
    Duration limit;
    Time warn_after;  // with USR1@120
  };
  for (Case c : {Case{60, 30}, Case{120, 60}, Case{300, 180}}) {
    SCOPED_TRACE(c.limit);
    ClusterState s = Cards(1);
    s.running.push_back(Running(100, {0}, kNow, c.limit));
    s.running[0].job.signal = 10;
    s.running[0].job.grace = 120;
    EXPECT_TRUE(Schedule(s, Quiet(), kNow + c.warn_after - 1).signals.empty());
    Decisions d = Schedule(s, Quiet(), kNow + c.warn_after);
    ASSERT_EQ(d.signals.size(), 1u);
    EXPECT_EQ(d.signals[0].signal, 10);
    EXPECT_EQ(d.signals[0].kill_at, kNow + c.limit);
    // Asked for nothing: signal 0, grace 0 (the API's default).
    s.running[0].job.signal = 0;
    s.running[0].job.grace = 0;
    EXPECT_TRUE(Schedule(s, Quiet(), kNow + c.limit - 1).signals.empty());
    EXPECT_EQ(Schedule(s, Quiet(), kNow + c.limit - 1).next_wakeup, kNow + c.limit);
    d = Schedule(s, Quiet(), kNow + c.limit);
    ASSERT_EQ(d.signals.size(), 1u);
    EXPECT_EQ(d.signals[0].signal, 0);
    EXPECT_EQ(d.signals[0].kill_at, kNow + c.limit);
  }
}

TEST(SchedulerTimeLimitTest, FoundPastItsEndStillGetsItsGrace) {
  ClusterState s = Cards(1);
  s.running.push_back(Running(100, {0}, kNow - 4000, kHour));  // ended at kNow - 400 (daemon was down)
  Decisions d = Schedule(s, Quiet(), kNow);
  ASSERT_EQ(d.signals.size(), 1u);
  EXPECT_EQ(d.signals[0].kill_at, kNow + 120);
  EXPECT_TRUE(d.kills.empty());
  EXPECT_EQ(d.next_wakeup, kNow + 120);
}

TEST(SchedulerTimeLimitTest, KillWhenKillTimePassed) {
  ClusterState s = Cards(2);
  RunningJob limit = Running(100, {0}, kNow - 4000, kHour);
  limit.signalled = true;
  limit.kill_at = kNow;  // due now
  RunningJob preempted = Running(101, {1}, kNow - 500, kHour, Tier::kExplore, true);
  preempted.signalled = true;
  preempted.preempted = true;
  preempted.kill_at = kNow - 5;  // overdue
  s.running = {limit, preempted};
  Decisions d = Schedule(s, Quiet(), kNow);
  EXPECT_TRUE(d.signals.empty());  // no second warning
  ASSERT_EQ(d.kills.size(), 2u);
  EXPECT_EQ(d.kills[0].job, 100);
  EXPECT_EQ(d.kills[0].cause, StopCause::kTimeLimit);
  EXPECT_EQ(d.kills[1].job, 101);
  EXPECT_EQ(d.kills[1].cause, StopCause::kPreempted);
}

TEST(SchedulerTimeLimitTest, StopUnderWayWaitsForItsKillTime) {
  ClusterState s = Cards(1);
  RunningJob r = Running(100, {0}, kNow - 3550, kHour);
  r.signalled = true;
  r.kill_at = kNow + 50;
  s.running.push_back(r);
  Decisions d = Schedule(s, Quiet(), kNow);
  EXPECT_TRUE(d.signals.empty());
  EXPECT_TRUE(d.kills.empty());
  EXPECT_EQ(d.next_wakeup, kNow + 50);
}

TEST(SchedulerTimeLimitTest, NotEnforcedNoSignal) {
  ClusterState s = Cards(1);
  s.running.push_back(Running(100, {0}, kNow - 4000, kHour));
  Policy p = Quiet();
  p.enforce_time_limits = false;
  Decisions d = Schedule(s, p, kNow);
  EXPECT_TRUE(d.signals.empty());
  EXPECT_TRUE(d.kills.empty());
  EXPECT_EQ(d.next_wakeup, kNever);
}

// ---- Preemption ----------------------------------------------------------------------------

// Two cards, both held by preemptible explore jobs with 10 h limits: X (id 10) on card 0 since
// kNow - 1000, Y (id 11) on card 1 since kNow - 100. A thesis job T (id 1) needs one card.
ClusterState TwoExplorers() {
  ClusterState s = Cards(2);
  RunningJob x = Running(10, {0}, kNow - 1000, 10 * kHour, Tier::kExplore, true);
  RunningJob y = Running(11, {1}, kNow - 100, 10 * kHour, Tier::kExplore, true);
  y.job.grace = 300;
  y.job.signal = 15;
  y.job.requeue = true;
  s.running = {x, y};
  s.pending.push_back(MakeJob(1, 1, kHour, kNow - 50, Tier::kThesis, "t"));
  return s;
}

TEST(SchedulerPreemptionTest, ThesisPreemptsTheYoungestExploreJob) {
  Decisions d = Schedule(TwoExplorers(), Quiet(), kNow);
  EXPECT_TRUE(d.starts.empty());  // it starts once the victim is gone
  ASSERT_EQ(d.signals.size(), 1u);
  const Signal& s = d.signals[0];
  EXPECT_EQ(s.job, 11);                 // Y: 100 GPU-s of work lost, against X's 1000
  EXPECT_EQ(s.signal, 15);              // the victim's own signal
  EXPECT_EQ(s.kill_at, kNow + 300);     // now + the victim's grace
  EXPECT_EQ(s.cause, StopCause::kPreempted);
  EXPECT_EQ(s.preempted_by, 1);
  EXPECT_TRUE(s.requeue);               // carried from the victim
  EXPECT_TRUE(d.kills.empty());
  ASSERT_TRUE(IsPending(d, 1));
  const PendingInfo& t = Info(d, 1);
  EXPECT_EQ(t.reason, WaitReason::kResources);
  EXPECT_EQ(t.expected_start, kNow + 300);  // on the victim's card when it is killed
  EXPECT_FALSE(t.estimated);
  EXPECT_EQ(d.next_wakeup, kNow + 300);
}

TEST(SchedulerPreemptionTest, LeastWorkLostBeatsYoungest) {
  // X: 1 card since kNow - 100 (100 GPU-s); Y: 2 cards since kNow - 80 (160 GPU-s), younger.
  ClusterState s = Cards(3);
  s.running.push_back(Running(10, {0}, kNow - 100, 10 * kHour, Tier::kExplore, true));
  s.running.push_back(Running(11, {1, 2}, kNow - 80, 10 * kHour, Tier::kExplore, true));
  s.pending.push_back(MakeJob(1, 1, kHour, kNow - 50, Tier::kThesis, "t"));
  Decisions d = Schedule(s, Quiet(), kNow);
  EXPECT_EQ(SignalledIds(d), (std::vector<JobId>{10}));
  EXPECT_EQ(d.signals[0].kill_at, kNow + 120);
  EXPECT_FALSE(d.signals[0].requeue);
}

TEST(SchedulerPreemptionTest, OnlyAsManyVictimsAsNeeded) {
  // Four explore jobs on four cards, started 400, 300, 200, 100 s ago; a thesis job needs two.
  ClusterState s = Cards(4);
  for (int i = 0; i < 4; ++i) {
    s.running.push_back(Running(10 + i, {i}, kNow - 400 + 100 * i, 10 * kHour, Tier::kExplore, true));
  }
  s.pending.push_back(MakeJob(1, 2, kHour, kNow - 50, Tier::kThesis, "t"));
  Decisions d = Schedule(s, Quiet(), kNow);
  EXPECT_EQ(SignalledIds(d), (std::vector<JobId>{12, 13}));  // the two youngest
  for (const Signal& sig : d.signals) {
    EXPECT_EQ(sig.cause, StopCause::kPreempted);
    EXPECT_EQ(sig.preempted_by, 1);
    EXPECT_EQ(sig.kill_at, kNow + 120);
  }
  EXPECT_EQ(Info(d, 1).expected_start, kNow + 120);
}

TEST(SchedulerPreemptionTest, DropsAVictimThatTurnsOutUnneeded) {
  // P: 1 card, 50 s old (50 GPU-s); Q: 2 cards, 100 s old (200 GPU-s). A thesis job needs 2 cards.
  // P alone is not enough, P + Q is; then Q alone is enough, so P is spared.
  ClusterState s = Cards(3);
  s.running.push_back(Running(10, {0}, kNow - 50, 10 * kHour, Tier::kExplore, true));
  s.running.push_back(Running(11, {1, 2}, kNow - 100, 10 * kHour, Tier::kExplore, true));
  s.pending.push_back(MakeJob(1, 2, kHour, kNow - 50, Tier::kThesis, "t"));
  Decisions d = Schedule(s, Quiet(), kNow);
  EXPECT_EQ(SignalledIds(d), (std::vector<JobId>{11}));
  EXPECT_EQ(Info(d, 1).expected_start, kNow + 120);
}

TEST(SchedulerPreemptionTest, NoSecondPreemptionWhileTheVictimStops) {
  // The state after the first pass of ThesisPreemptsTheYoungestExploreJob was applied: Y has been
  // signalled and is killed at kNow + 300. Ten seconds later, nothing new happens. (X's grace is
  // as long as Y's here, so stopping X could not free a card sooner either.)
  ClusterState s = TwoExplorers();
  s.running[0].job.grace = 300;
  s.running[1].signalled = true;
  s.running[1].preempted = true;
  s.running[1].kill_at = kNow + 300;
  Time later = kNow + 10;
  Decisions d = Schedule(s, Quiet(), later);
  EXPECT_TRUE(d.signals.empty());
  EXPECT_TRUE(d.kills.empty());
  EXPECT_TRUE(d.starts.empty());
  EXPECT_EQ(Info(d, 1).expected_start, kNow + 300);
  EXPECT_EQ(d.next_wakeup, kNow + 300);
  // At the kill time, the kill.
  Decisions at = Schedule(s, Quiet(), kNow + 300);
  ASSERT_EQ(at.kills.size(), 1u);
  EXPECT_EQ(at.kills[0].job, 11);
  EXPECT_EQ(at.kills[0].cause, StopCause::kPreempted);
  EXPECT_TRUE(at.signals.empty());
}

// As above, but the other explore job X has a short grace (60 s): stopping X too would free a
// card at later + 60, sooner than Y's kill. The job is already served by Y's stop; a second victim
// for the same job is work lost for 230 s of waiting.
TEST(SchedulerPreemptionTest, NoSecondVictimEvenIfItWouldStopSooner) {
  ClusterState s = TwoExplorers();
  s.running[0].job.grace = 60;
  s.running[1].signalled = true;
  s.running[1].preempted = true;
  s.running[1].kill_at = kNow + 300;
  Decisions d = Schedule(s, Quiet(), kNow + 10);
  EXPECT_TRUE(d.signals.empty()) << "signalled job " << d.signals[0].job;
  EXPECT_EQ(Info(d, 1).expected_start, kNow + 300);
}

TEST(SchedulerPreemptionTest, WhoMayPreemptWhom) {
  // Regular jobs preempt explore jobs; explore jobs do not preempt explore jobs; nobody preempts
  // a non-preemptible regular job; a regular job running over quota (preemptible) counts as
  // explore.
  struct Case {
    Tier pending;
    Tier running;
    bool running_preemptible;
    bool expect;
  };
  for (const Case& c : {Case{Tier::kRegular, Tier::kExplore, true, true},
                        Case{Tier::kExplore, Tier::kExplore, true, false},
                        Case{Tier::kThesis, Tier::kRegular, false, false},
                        Case{Tier::kRegular, Tier::kRegular, true, true},
                        Case{Tier::kThesis, Tier::kThesis, true, true}}) {
    ClusterState s = Cards(1);
    s.running.push_back(Running(10, {0}, kNow - 100, 10 * kHour, c.running, c.running_preemptible));
    s.pending.push_back(MakeJob(1, 1, kHour, kNow - 50, c.pending, "t"));
    Decisions d = Schedule(s, Quiet(), kNow);
    EXPECT_EQ(d.signals.size(), c.expect ? 1u : 0u)
        << TierName(c.pending) << " vs " << TierName(c.running) << (c.running_preemptible ? " (p)" : "");
  }
}

TEST(SchedulerPreemptionTest, OffWhenDisabledOrNotRota) {
  Policy off = Quiet();
  off.preemption = false;
  EXPECT_TRUE(Schedule(TwoExplorers(), off, kNow).signals.empty());
  EXPECT_TRUE(Schedule(TwoExplorers(), Quiet(Algorithm::kBackfill), kNow).signals.empty());
  EXPECT_TRUE(Schedule(TwoExplorers(), Quiet(Algorithm::kFifo), kNow).signals.empty());
}

TEST(SchedulerPreemptionTest, NoPreemptionWhenCapacityComesSoonerAnyway) {
  // Card 1's explore job Y ends by its own limit at kNow + 60, sooner than any kill (grace 120).
  ClusterState s = Cards(2);
  s.running.push_back(Running(10, {0}, kNow - 1000, 10 * kHour, Tier::kExplore, true));
  RunningJob y = Running(11, {1}, kNow - 3540, kHour, Tier::kExplore, true);  // ends kNow + 60
  y.signalled = true;  // its time-limit warning went out already
  s.running.push_back(y);
  s.pending.push_back(MakeJob(1, 1, kHour, kNow - 50, Tier::kThesis, "t"));
  Decisions d = Schedule(s, Quiet(), kNow);
  EXPECT_TRUE(d.signals.empty());
  EXPECT_EQ(Info(d, 1).expected_start, kNow + 60);
}

// ---- Bookings: explore jobs backfill unused bookings ----------------------------------------

Booking Book(std::int64_t id, std::string user, std::vector<int> cards, Time start, Time end) {
  Booking b;
  b.id = id;
  b.user = std::move(user);
  b.alloc.gpus = std::move(cards);
  b.start = start;
  b.end = end;
  return b;
}

// Applies decisions as the daemon does: kills (requeued preemptions back to pending), signals,
// starts at `now`.
void Apply(ClusterState& s, const Decisions& d, Time now) {
  for (const Kill& k : d.kills) {
    auto it = std::find_if(s.running.begin(), s.running.end(),
                           [&](const RunningJob& r) { return r.job.id == k.job; });
    if (it == s.running.end()) continue;
    if (it->preempted && it->job.requeue) s.pending.push_back(it->job);
    s.running.erase(it);
  }
  for (const Signal& sg : d.signals) {
    for (RunningJob& r : s.running) {
      if (r.job.id != sg.job) continue;
      r.signalled = true;
      r.kill_at = sg.kill_at;
      r.preempted = sg.cause == StopCause::kPreempted;
    }
  }
  for (const Start& st : d.starts) {
    auto it = std::find_if(s.pending.begin(), s.pending.end(), [&](const Job& j) { return j.id == st.job; });
    if (it == s.pending.end()) continue;
    RunningJob r;
    r.job = *it;
    r.alloc = st.alloc;
    r.start_time = now;
    r.preemptible = st.preemptible;
    s.pending.erase(it);
    s.running.push_back(std::move(r));
  }
}

// Card 0 is booked by bob and under way; card 1 is busy for 10 h. alice's explore job borrows the
// unused booking; carol's regular job may not, waits for the booking and keeps her reservation.
TEST(SchedulerBookingBackfillTest, ExploreStartsOnAnUnusedBookingButARegularJobDoesNot) {
  ClusterState s = Cards(2);
  s.bookings.push_back(Book(7, "bob", {0}, kNow - 600, kNow + 4 * kHour));
  s.running.push_back(Running(100, {1}, kNow - 100, 10 * kHour));
  s.pending.push_back(MakeJob(1, 1, kHour, kNow - 200, Tier::kRegular, "carol"));
  s.pending.push_back(MakeJob(2, 1, 2 * kHour, kNow - 100, Tier::kExplore, "alice"));
  Decisions d = Schedule(s, Quiet(), kNow);
  ASSERT_TRUE(IsStarted(d, 2));
  EXPECT_EQ(Started(d, 2).alloc.gpus, (std::vector<int>{0}));
  EXPECT_TRUE(Started(d, 2).preemptible);
  ASSERT_TRUE(IsPending(d, 1));
  EXPECT_EQ(Info(d, 1).reason, WaitReason::kBooking);
  EXPECT_EQ(Info(d, 1).expected_start, kNow + 4 * kHour);  // the borrower ends before that
  EXPECT_TRUE(d.signals.empty());
}

// A borrower may run into a booking that begins later (it leaves if the owner needs it); a
// regular job of the same length may not.
TEST(SchedulerBookingBackfillTest, ExploreMayRunIntoABookingThatBeginsLater) {
  ClusterState s = Cards(1);
  s.bookings.push_back(Book(7, "bob", {0}, kNow + kHour, kNow + 5 * kHour));
  s.pending.push_back(MakeJob(1, 1, 3 * kHour, kNow - 100, Tier::kExplore, "alice"));
  Decisions d = Schedule(s, Quiet(), kNow);
  ASSERT_TRUE(IsStarted(d, 1));
  EXPECT_TRUE(Started(d, 1).preemptible);
  s.pending[0].tier = Tier::kRegular;
  d = Schedule(s, Quiet(), kNow);
  EXPECT_TRUE(d.starts.empty());
  EXPECT_EQ(Info(d, 1).reason, WaitReason::kBooking);
  EXPECT_EQ(Info(d, 1).expected_start, kNow + 5 * kHour);
}

// Only a job that would start preemptible, under rota with preemption on, borrows: regular and
// thesis jobs, explore jobs under fifo or backfill (they start non-preemptible) and explore jobs
// when preemption is off (nothing could take the capacity back) all wait for the booking.
TEST(SchedulerBookingBackfillTest, NonPreemptibleJobsNeverStartOnSomeoneElsesBooking) {
  struct Case {
    Algorithm algorithm;
    bool preemption;
    Tier tier;
    bool over_quota;
    bool borrows;
  };
  for (const Case& c : {Case{Algorithm::kRota, true, Tier::kExplore, false, true},
                        Case{Algorithm::kRota, true, Tier::kRegular, true, true},  // over quota: explore
                        Case{Algorithm::kRota, true, Tier::kRegular, false, false},
                        Case{Algorithm::kRota, true, Tier::kThesis, false, false},
                        Case{Algorithm::kRota, false, Tier::kExplore, false, false},
                        Case{Algorithm::kBackfill, true, Tier::kExplore, false, false},
                        Case{Algorithm::kFifo, true, Tier::kExplore, false, false}}) {
    ClusterState s = Cards(1);
    s.bookings.push_back(Book(7, "bob", {0}, kNow - 600, kNow + 4 * kHour));
    s.pending.push_back(MakeJob(1, 1, kHour, kNow - 100, c.tier, "alice"));
    Policy p = Quiet(c.algorithm);
    p.preemption = c.preemption;
    if (c.over_quota) p.quota.user_hours = {{"alice", 0.5}};
    Decisions d = Schedule(s, p, kNow);
    const std::string what = std::string(AlgorithmName(c.algorithm)) + " preemption " +
                             std::to_string(c.preemption) + " " + TierName(c.tier) +
                             (c.over_quota ? " over quota" : "");
    EXPECT_EQ(IsStarted(d, 1), c.borrows) << what;
    if (c.borrows) {
      EXPECT_TRUE(Started(d, 1).preemptible) << what;
    } else {
      EXPECT_EQ(Info(d, 1).reason, WaitReason::kBooking) << what;
      EXPECT_EQ(Info(d, 1).expected_start, kNow + 4 * kHour) << what;
    }
  }
}

// The whole story in passes at increasing times: alice's explore job borrows bob's unused
// booking; bob's job arrives and preempts it with its own signal and grace (requeue as asked);
// it is killed at its kill time, requeued, and bob's job starts on his booked card.
TEST(SchedulerBookingBackfillTest, OwnersJobPreemptsTheBorrowerAndStartsWhenItIsGone) {
  ClusterState s = Cards(2);
  s.bookings.push_back(Book(7, "bob", {0}, kNow, kNow + 4 * kHour));
  s.running.push_back(Running(100, {1}, kNow - 100, 10 * kHour));  // card 1 busy all along
  Job borrower = MakeJob(1, 1, 8 * kHour, kNow - 100, Tier::kExplore, "alice");
  borrower.signal = 15;
  borrower.grace = 300;
  borrower.requeue = true;
  s.pending.push_back(borrower);
  const Policy p = Quiet();

  Decisions d = Schedule(s, p, kNow);  // the booking begins; nobody uses it
  ASSERT_TRUE(IsStarted(d, 1));
  EXPECT_EQ(Started(d, 1).alloc.gpus, (std::vector<int>{0}));
  Apply(s, d, kNow);

  Time t = kNow + 600;  // still unused: the borrower stays
  d = Schedule(s, p, t);
  EXPECT_TRUE(d.signals.empty());

  s.pending.push_back(MakeJob(2, 1, kHour, t, Tier::kRegular, "bob"));  // the owner needs it
  d = Schedule(s, p, t);
  ASSERT_EQ(d.signals.size(), 1u);
  const Signal& sg = d.signals[0];
  EXPECT_EQ(sg.job, 1);
  EXPECT_EQ(sg.signal, 15);
  EXPECT_EQ(sg.kill_at, t + 300);
  EXPECT_EQ(sg.cause, StopCause::kPreempted);
  EXPECT_EQ(sg.preempted_by, 2);
  EXPECT_TRUE(sg.requeue);
  EXPECT_TRUE(d.starts.empty());
  EXPECT_EQ(Info(d, 2).reason, WaitReason::kResources);
  EXPECT_EQ(Info(d, 2).expected_start, t + 300);
  EXPECT_EQ(d.next_wakeup, t + 300);
  Apply(s, d, t);

  d = Schedule(s, p, t + 100);  // stopping: nothing new
  EXPECT_TRUE(d.signals.empty());
  EXPECT_TRUE(d.starts.empty());
  EXPECT_EQ(Info(d, 2).expected_start, t + 300);

  t += 300;
  d = Schedule(s, p, t);  // the kill
  ASSERT_EQ(d.kills.size(), 1u);
  EXPECT_EQ(d.kills[0].job, 1);
  EXPECT_EQ(d.kills[0].cause, StopCause::kPreempted);
  Apply(s, d, t);
  ASSERT_TRUE(std::any_of(s.pending.begin(), s.pending.end(), [](const Job& j) { return j.id == 1; }));

  d = Schedule(s, p, t);  // the card is free: the owner's job starts on it
  ASSERT_TRUE(IsStarted(d, 2));
  EXPECT_EQ(Started(d, 2).alloc.gpus, (std::vector<int>{0}));
  EXPECT_FALSE(IsStarted(d, 1));  // the requeued borrower waits
  EXPECT_TRUE(d.signals.empty());
}

// Found by the lab soak (src/daemon/lab_soak_test.cc): bob's job over quota (so ranked as
// explore, below the borrowers, who waited longer) claims his booking; the borrowers, stopped
// at once (no grace) and requeued, came first in the next pass and borrowed the cards again,
// and were preempted again: 640,000 times in one virtual second. A booking whose owner has a
// job waiting binds borrowers too: each borrower is preempted once and then waits for the
// booking's end. (bob's job, which would run 4 hours past it, waits behind them: they rank
// above it.)
TEST(SchedulerBookingBackfillTest, ClaimedBorrowersDoNotComeBackWhileTheOwnersJobWaits) {
  ClusterState s = Cards(2);
  s.bookings.push_back(Book(7, "bob", {0, 1}, kNow - kHour, kNow + 2 * kHour));
  for (JobId id : {10, 11}) {
    const int card = static_cast<int>(id - 10);
    RunningJob r = Running(id, {card}, kNow - kHour, 8 * kHour, Tier::kExplore, true, "alice");
    r.job.submit_time = kNow - 3 * kDay;  // older than bob's: ahead of it in the queue
    r.job.requeue = true;
    r.job.grace = 0;  // no warning signal asked for: stopped at once
    s.running.push_back(r);
  }
  s.pending.push_back(MakeJob(1, 2, 6 * kHour, kNow, Tier::kRegular, "bob"));  // past the booking's end
  Policy p = Quiet();
  p.quota.user_hours = {{"bob", 0.5}};
  std::vector<JobId> signalled;
  for (int pass = 0; pass < 6; ++pass) {
    const Decisions d = Schedule(s, p, kNow);
    for (const Signal& sg : d.signals) signalled.push_back(sg.job);
    EXPECT_FALSE(IsStarted(d, 10)) << "pass " << pass;
    EXPECT_FALSE(IsStarted(d, 11)) << "pass " << pass;
    Apply(s, d, kNow);
  }
  EXPECT_EQ(signalled, (std::vector<JobId>{10, 11})) << "each borrower is preempted once";
  const Decisions d = Schedule(s, p, kNow);
  EXPECT_EQ(Info(d, 10).reason, WaitReason::kBooking);
  EXPECT_EQ(Info(d, 10).expected_start, kNow + 2 * kHour);
  // Without bob's job waiting, his booking is lent again.
  s.pending.erase(std::remove_if(s.pending.begin(), s.pending.end(), [](const Job& j) { return j.id == 1; }),
                  s.pending.end());
  EXPECT_TRUE(IsStarted(Schedule(s, p, kNow), 10));
}

// Claims do not depend on tiers: bob's explore job takes back his booking from alice's explore
// job (explore never preempts explore otherwise), and so does his job over quota. carol's
// explore job, or any job of a user without the booking, claims nothing.
TEST(SchedulerBookingBackfillTest, OwnersJobOfAnyTierClaimsButOthersDoNot) {
  struct Case {
    std::string user;
    Tier tier;
    bool over_quota;
    bool claims;
  };
  for (const Case& c :
       {Case{"bob", Tier::kExplore, false, true}, Case{"bob", Tier::kRegular, true, true},
        Case{"carol", Tier::kExplore, false, false}, Case{"carol", Tier::kRegular, true, false}}) {
    ClusterState s = Cards(1);
    s.bookings.push_back(Book(7, "bob", {0}, kNow - 600, kNow + 4 * kHour));
    s.running.push_back(Running(10, {0}, kNow - 500, 8 * kHour, Tier::kExplore, true, "alice"));
    s.pending.push_back(MakeJob(1, 1, kHour, kNow - 100, c.tier, c.user));
    Policy p = Quiet();
    if (c.over_quota) p.quota.user_hours = {{c.user, 0.5}};
    Decisions d = Schedule(s, p, kNow);
    const std::string what = c.user + " " + TierName(c.tier) + (c.over_quota ? " over quota" : "");
    EXPECT_EQ(SignalledIds(d), c.claims ? std::vector<JobId>{10} : std::vector<JobId>{}) << what;
    if (c.claims && !d.signals.empty()) {
      EXPECT_EQ(d.signals[0].preempted_by, 1) << what;
    }
  }
}

// The owner's job that would run on his booked card now does not wait for the booking to begin:
// the borrower that ran into the booking goes now. A job that would end before the booking
// begins is no claim (the borrower is on capacity nobody booked then).
TEST(SchedulerBookingBackfillTest, ClaimBeforeTheBookingBegins) {
  ClusterState s = Cards(1);
  s.bookings.push_back(Book(7, "bob", {0}, kNow + kHour, kNow + 5 * kHour));
  s.running.push_back(Running(10, {0}, kNow - 500, 8 * kHour, Tier::kExplore, true, "alice"));
  s.pending.push_back(MakeJob(1, 1, 2 * kHour, kNow - 100, Tier::kExplore, "bob"));
  Decisions d = Schedule(s, Quiet(), kNow);
  EXPECT_EQ(SignalledIds(d), (std::vector<JobId>{10}));
  EXPECT_EQ(Info(d, 1).expected_start, kNow + 120);
  s.pending[0].time_limit = 30 * kMinute;  // ends before the booking begins
  d = Schedule(s, Quiet(), kNow);
  EXPECT_TRUE(d.signals.empty());
}

// When the owner's job may preempt by tier as well, the borrower on his booking goes rather than
// an explore job on capacity nobody booked, even one that lost less work.
TEST(SchedulerBookingBackfillTest, ClaimsComeBeforeOtherVictims) {
  ClusterState s = Cards(2);
  s.bookings.push_back(Book(7, "bob", {1}, kNow - 600, kNow + 4 * kHour));
  s.running.push_back(Running(10, {0}, kNow - 50, 8 * kHour, Tier::kExplore, true, "carol"));
  s.running.push_back(Running(11, {1}, kNow - 500, 8 * kHour, Tier::kExplore, true, "alice"));
  s.pending.push_back(MakeJob(1, 1, kHour, kNow - 100, Tier::kRegular, "bob"));
  Decisions d = Schedule(s, Quiet(), kNow);
  EXPECT_EQ(SignalledIds(d), (std::vector<JobId>{11}));
  // Without the booking, carol's younger job goes (least work lost).
  s.bookings.clear();
  d = Schedule(s, Quiet(), kNow);
  EXPECT_EQ(SignalledIds(d), (std::vector<JobId>{10}));
}

// Owners go to their booked cards first; borrowers to cards nobody booked first.
TEST(SchedulerBookingBackfillTest, OwnerPrefersBookedCardsAndExplorePrefersUnbookedOnes) {
  ClusterState s = Cards(2);
  s.bookings.push_back(Book(7, "bob", {1}, kNow - 600, kNow + 4 * kHour));
  s.pending.push_back(MakeJob(1, 1, kHour, kNow - 100, Tier::kRegular, "bob"));
  Decisions d = Schedule(s, Quiet(), kNow);
  EXPECT_EQ(Started(d, 1).alloc.gpus, (std::vector<int>{1}));
  s.bookings[0].alloc.gpus = {0};
  s.pending[0].user = "alice";
  s.pending[0].tier = Tier::kExplore;
  d = Schedule(s, Quiet(), kNow);
  EXPECT_EQ(Started(d, 1).alloc.gpus, (std::vector<int>{1}));
  // Without bookings both would take card 0.
  s.bookings.clear();
  d = Schedule(s, Quiet(), kNow);
  EXPECT_EQ(Started(d, 1).alloc.gpus, (std::vector<int>{0}));
}

// A booking begins while a borrower holds its card and the owner has nothing waiting: the
// borrower stays (the booking is unused), and others still may not start on it.
TEST(SchedulerBookingBackfillTest, BorrowerStaysWhileTheOwnerHasNoWorkWaiting) {
  ClusterState s = Cards(2);
  s.bookings.push_back(Book(7, "bob", {0}, kNow, kNow + 4 * kHour));
  s.running.push_back(Running(10, {0}, kNow - 3600, 8 * kHour, Tier::kExplore, true, "alice"));
  s.running.push_back(Running(11, {1}, kNow - 3600, 8 * kHour, Tier::kExplore, true, "erin"));
  s.pending.push_back(MakeJob(1, 1, kHour, kNow - 100, Tier::kThesis, "carol"));
  s.pending.push_back(MakeJob(2, 1, kHour, kNow - 100, Tier::kExplore, "dave"));
  Decisions d = Schedule(s, Quiet(), kNow);
  // carol's thesis job preempts erin's explore job on the free card, not alice's on the booking
  // (which would not let her start anyway).
  EXPECT_EQ(SignalledIds(d), (std::vector<JobId>{11}));
  EXPECT_TRUE(d.starts.empty());
}

// The failed shapes of one view of the bookings are not taken for another's: a regular job that
// cannot start on the booked card does not stop an explore job of the same shape behind it.
TEST(SchedulerBookingBackfillTest, FailedShapesAreKeptPerViewOfTheBookings) {
  ClusterState s = Cards(1);
  s.bookings.push_back(Book(7, "bob", {0}, kNow - 600, kNow + 4 * kHour));
  for (JobId id = 1; id <= 3; ++id)
    s.pending.push_back(MakeJob(id, 1, kHour, kNow - 100 + id, Tier::kRegular, "carol"));
  s.pending.push_back(MakeJob(4, 1, kHour, kNow, Tier::kExplore, "alice"));
  Policy p = Quiet();
  p.plan_depth = 0;  // no reservations: the card stays free now for every job in turn
  Decisions d = Schedule(s, p, kNow);
  EXPECT_TRUE(IsStarted(d, 4));
  for (JobId id = 1; id <= 3; ++id) EXPECT_EQ(Info(d, id).reason, WaitReason::kBooking);
}

// ---- next_wakeup ---------------------------------------------------------------------------

TEST(SchedulerWakeupTest, EmptyStateNever) {
  Decisions d = Schedule(Cards(2), Policy{}, kNow);
  EXPECT_TRUE(d.starts.empty());
  EXPECT_TRUE(d.pending.empty());
  EXPECT_EQ(d.next_wakeup, kNever);
}

TEST(SchedulerWakeupTest, TimeOfDayChangeWhenJobsWait) {
  ClusterState s = Cards(1);
  s.running.push_back(Running(100, {0}, kNow - 100, 10 * kHour));  // warns at kNow + 35780
  s.pending.push_back(MakeJob(1, 1, kHour, kNow - 50));
  Policy p;  // default table; Wednesday 11:00 -> next change at 14:00
  Decisions d = Schedule(s, p, kNow);
  EXPECT_EQ(d.next_wakeup, kNow + 3 * kHour);
  // Without a table: the reservation at the running job's end.
  Decisions q = Schedule(s, Quiet(), kNow);
  EXPECT_EQ(q.next_wakeup, kNow - 100 + 10 * kHour - 120);  // the warning comes before the end
}

TEST(SchedulerWakeupTest, NoTimeOfDayWakeupWithoutPendingJobs) {
  ClusterState s = Cards(1);
  s.running.push_back(Running(100, {0}, kNow - 100, 10 * kHour));
  Decisions d = Schedule(s, Policy{}, kNow);
  EXPECT_EQ(d.next_wakeup, kNow - 100 + 10 * kHour - 120);
}

TEST(SchedulerWakeupTest, ReservationStart) {
  ClusterState s = Cards(1);
  RunningJob r = Running(100, {0}, kNow - 100, 10 * kHour);
  r.signalled = true;
  r.kill_at = kNow + 500;  // a stop under way
  s.running.push_back(r);
  s.pending.push_back(MakeJob(1, 1, kHour, kNow - 50));
  Policy p = Quiet();
  p.preemption = false;
  Decisions d = Schedule(s, p, kNow);
  EXPECT_EQ(Info(d, 1).expected_start, kNow + 500);
  EXPECT_EQ(d.next_wakeup, kNow + 500);
}

}  // namespace
}  // namespace scheduler_test
}  // namespace rota
