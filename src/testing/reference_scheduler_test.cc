// Tests of the reference checker itself: on hand-made states the real decisions pass, and
// deliberately wrong decisions (a backfilled start that collides with a reservation, a
// double-allocated share, a reservation later than needed, a start on someone else's booking
// by a job that may not borrow it, a booking claim by someone else than the owner, wrong
// reasons, missing or duplicated entries, bad stops) are reported. A checker that cannot
// fail proves nothing. Also tests the generators (validity, determinism, shape).
#include "testing/reference_scheduler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

#include "core/scheduler.h"
#include "testing/builders.h"
#include "testing/random_state.h"

namespace rota::testing {
namespace reference_scheduler_test {
namespace {

constexpr Time kNow = 1'700'000'000;

using testing::Card;
using testing::MakeJob;

RunningJob Running(JobId id, std::vector<int> gpus, Time start, Duration limit) {
  return testing::Running(id, "zed", std::move(gpus), start, limit);
}

Policy Backfill() {
  Policy p;
  p.algorithm = Algorithm::kBackfill;
  p.time_of_day.clear();
  return p;
}

bool Mentions(const CheckResult& r, const std::string& what) {
  return std::any_of(r.violations.begin(), r.violations.end(),
                     [&](const std::string& v) { return v.find(what) != std::string::npos; });
}

std::string All(const CheckResult& r) {
  std::string s;
  for (const std::string& v : r.violations) s += v + "\n";
  return s;
}

// The PendingInfo of `id`; aborts the test binary if there is none (a broken fixture).
PendingInfo& InfoOf(Decisions& d, JobId id) {
  for (PendingInfo& p : d.pending)
    if (p.job == id) return p;
  std::fprintf(stderr, "no PendingInfo for job %lld\n", static_cast<long long>(id));
  std::abort();
}

// Two cards; card 0 busy for another hour. Job 2 (two cards) is first in line and reserved at
// now+1h; job 3 (one card, three hours) would delay it; job 4 (half an hour) backfills.
ClusterState BackfillState() {
  ClusterState s;
  s.gpus = {Card(0), Card(1)};
  s.running.push_back(Running(1, {0}, kNow - kHour, 2 * kHour));
  s.pending.push_back(MakeJob(2, "ann", 2, kHour, kNow - 300));
  s.pending.push_back(MakeJob(3, "ben", 1, 3 * kHour, kNow - 200));
  s.pending.push_back(MakeJob(4, "cat", 1, 30 * kMinute, kNow - 100));
  return s;
}

TEST(ReferenceCheckerTest, RealBackfillDecisionsPass) {
  const ClusterState s = BackfillState();
  Decisions d = Schedule(s, Backfill(), kNow);
  const CheckResult r = CheckDecisions(s, Backfill(), kNow, d);
  EXPECT_TRUE(r.ok()) << All(r) << DescribeDecisions(d, kNow);
  ASSERT_EQ(d.starts.size(), 1u);
  EXPECT_EQ(d.starts[0].job, 4);
  EXPECT_EQ(InfoOf(d, 2).expected_start, kNow + kHour);
}

TEST(ReferenceCheckerTest, CatchesBackfilledStartCollidingWithReservation) {
  const ClusterState s = BackfillState();
  Decisions d = Schedule(s, Backfill(), kNow);
  // Start job 3 as well: it cannot share card 1 with job 4, so put it there instead of job 4.
  d.starts.clear();
  d.starts.push_back({3, Allocation{{1}, -1, 0}, false, false});
  d.pending.erase(
      std::remove_if(d.pending.begin(), d.pending.end(), [](const PendingInfo& p) { return p.job == 3; }),
      d.pending.end());
  PendingInfo four;
  four.job = 4;
  four.reason = WaitReason::kPriority;
  four.estimated = true;
  d.pending.push_back(four);
  const CheckResult r = CheckDecisions(s, Backfill(), kNow, d);
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(Mentions(r, "job 3")) << All(r);
}

TEST(ReferenceCheckerTest, CatchesReservationLaterThanNeeded) {
  const ClusterState s = BackfillState();
  Decisions d = Schedule(s, Backfill(), kNow);
  InfoOf(d, 2).expected_start = kNow + 2 * kHour;
  const CheckResult r = CheckDecisions(s, Backfill(), kNow, d);
  EXPECT_TRUE(Mentions(r, "earliest time it fits")) << All(r);
}

TEST(ReferenceCheckerTest, CatchesReservationEarlierThanPossible) {
  const ClusterState s = BackfillState();
  Decisions d = Schedule(s, Backfill(), kNow);
  InfoOf(d, 2).expected_start = kNow + 30 * kMinute;
  const CheckResult r = CheckDecisions(s, Backfill(), kNow, d);
  EXPECT_FALSE(r.ok());
}

TEST(ReferenceCheckerTest, CatchesMissedStart) {
  const ClusterState s = BackfillState();
  Decisions d = Schedule(s, Backfill(), kNow);
  d.starts.clear();  // job 4 fits now and must start
  PendingInfo four;
  four.job = 4;
  four.reason = WaitReason::kPriority;
  four.estimated = true;
  d.pending.push_back(four);
  const CheckResult r = CheckDecisions(s, Backfill(), kNow, d);
  EXPECT_TRUE(Mentions(r, "fits now")) << All(r);
}

TEST(ReferenceCheckerTest, CatchesDoubleAllocatedShare) {
  ClusterState s;
  s.gpus = {Card(0, 24576, 0)};
  RunningJob r = Running(1, {0}, kNow - 60, kHour);
  r.alloc.memory = 16384;
  r.job.request = {RequestKind::kMemShare, 1, 16384, ""};
  s.running.push_back(r);
  Job j = MakeJob(2, "ann", 1, kHour, kNow - 10);
  j.request = {RequestKind::kMemShare, 1, 16384, ""};
  s.pending.push_back(j);
  const Policy p = Backfill();
  Decisions d = Schedule(s, p, kNow);
  EXPECT_TRUE(CheckDecisions(s, p, kNow, d).ok());
  ASSERT_TRUE(d.starts.empty());
  d.pending.clear();
  d.starts.push_back({2, Allocation{{0}, -1, 16384}, false, false});
  const CheckResult bad = CheckDecisions(s, p, kNow, d);
  EXPECT_TRUE(Mentions(bad, "shares on GPU 0 sum to 32768M")) << All(bad);
}

TEST(ReferenceCheckerTest, CatchesWholeCardGivenTwiceAndWrongShape) {
  ClusterState s;
  s.gpus = {Card(0), Card(1, testing::k80GiB, 1)};
  s.running.push_back(Running(1, {0}, kNow - 60, kHour));
  s.pending.push_back(MakeJob(2, "ann", 2, kHour, kNow - 10));
  s.pending.push_back(MakeJob(3, "ben", 1, kHour, kNow - 5));
  const Policy p = Backfill();
  Decisions d;
  d.starts.push_back({2, Allocation{{0}, -1, 0}, false, false});  // one card for two, and a held one
  d.starts.push_back({3, Allocation{{1}, -1, 0}, false, false});
  const CheckResult r = CheckDecisions(s, p, kNow, d);
  EXPECT_TRUE(Mentions(r, "not 2 whole cards")) << All(r);
  EXPECT_TRUE(Mentions(r, "whole card GPU 0 held together")) << All(r);
}

TEST(ReferenceCheckerTest, CatchesStartOnSomeoneElsesBooking) {
  ClusterState s;
  s.gpus = {Card(0)};
  s.pending.push_back(MakeJob(2, "ann", 1, kHour, kNow - 10));
  Booking b;
  b.id = 7;
  b.user = "bob";
  b.alloc.gpus = {0};
  b.start = kNow + 10 * kMinute;
  b.end = kNow + 2 * kHour;
  s.bookings.push_back(b);
  const Policy p = Backfill();
  Decisions d = Schedule(s, p, kNow);
  const CheckResult ok = CheckDecisions(s, p, kNow, d);
  EXPECT_TRUE(ok.ok()) << All(ok);
  ASSERT_EQ(d.pending.size(), 1u);
  EXPECT_EQ(d.pending[0].reason, WaitReason::kBooking);
  d.pending.clear();
  d.starts.push_back({2, Allocation{{0}, -1, 0}, false, false});
  const CheckResult bad = CheckDecisions(s, p, kNow, d);
  EXPECT_TRUE(Mentions(bad, "booking of bob")) << All(bad);
  // The owner may use it.
  s.pending[0].user = "bob";
  const Decisions owner = Schedule(s, p, kNow);
  EXPECT_EQ(owner.starts.size(), 1u);
  EXPECT_TRUE(CheckDecisions(s, p, kNow, owner).ok());
}

TEST(ReferenceCheckerTest, CatchesWrongReasonsAndMissingEntries) {
  const ClusterState s = BackfillState();
  Decisions d = Schedule(s, Backfill(), kNow);
  InfoOf(d, 2).reason = WaitReason::kImpossible;
  EXPECT_TRUE(Mentions(CheckDecisions(s, Backfill(), kNow, d), "has reason Impossible"));
  InfoOf(d, 2).reason = WaitReason::kDependency;
  EXPECT_TRUE(Mentions(CheckDecisions(s, Backfill(), kNow, d), "has reason Dependency"));
  d = Schedule(s, Backfill(), kNow);
  d.pending.pop_back();
  EXPECT_TRUE(Mentions(CheckDecisions(s, Backfill(), kNow, d), "neither starts nor has a PendingInfo"));
  d = Schedule(s, Backfill(), kNow);
  d.pending.push_back(d.pending[0]);
  EXPECT_TRUE(Mentions(CheckDecisions(s, Backfill(), kNow, d), "two PendingInfo"));
  d = Schedule(s, Backfill(), kNow);
  d.starts.push_back(d.starts[0]);
  EXPECT_TRUE(Mentions(CheckDecisions(s, Backfill(), kNow, d), "started twice"));
  d = Schedule(s, Backfill(), kNow);
  std::reverse(d.pending.begin(), d.pending.end());
  EXPECT_TRUE(Mentions(CheckDecisions(s, Backfill(), kNow, d), "not in the scheduler's order"));
}

TEST(ReferenceCheckerTest, CatchesStartBeforeDependencyAndOnDrainedCard) {
  ClusterState s = BackfillState();
  s.pending[2].after = {1};  // job 4 runs after job 1, which is running
  Decisions d = Schedule(s, Backfill(), kNow);
  EXPECT_TRUE(CheckDecisions(s, Backfill(), kNow, d).ok());
  EXPECT_TRUE(d.starts.empty());
  d.pending.erase(
      std::remove_if(d.pending.begin(), d.pending.end(), [](const PendingInfo& p) { return p.job == 4; }),
      d.pending.end());
  d.starts.push_back({4, Allocation{{1}, -1, 0}, false, false});
  EXPECT_TRUE(Mentions(CheckDecisions(s, Backfill(), kNow, d), "runs after"));
  s = BackfillState();
  s.gpus[1].drained = true;
  d = Schedule(s, Backfill(), kNow);
  EXPECT_TRUE(CheckDecisions(s, Backfill(), kNow, d).ok());
  d.pending.erase(
      std::remove_if(d.pending.begin(), d.pending.end(), [](const PendingInfo& p) { return p.job == 4; }),
      d.pending.end());
  d.starts.push_back({4, Allocation{{1}, -1, 0}, false, false});
  EXPECT_TRUE(Mentions(CheckDecisions(s, Backfill(), kNow, d), "drained"));
}

TEST(ReferenceCheckerTest, CatchesBadStops) {
  ClusterState s;
  s.gpus = {Card(0), Card(1)};
  RunningJob young = Running(1, {0}, kNow - 60, kHour);
  young.job.tier = Tier::kRegular;
  s.running.push_back(young);
  RunningJob due = Running(2, {1}, kNow - kHour + 60, kHour);  // warned 120 s before its end
  s.running.push_back(due);
  Policy p;
  p.time_of_day.clear();
  Decisions d = Schedule(s, p, kNow);
  const CheckResult ok = CheckDecisions(s, p, kNow, d);
  EXPECT_TRUE(ok.ok()) << All(ok);
  ASSERT_EQ(d.signals.size(), 1u);
  EXPECT_EQ(d.signals[0].job, 2);
  d.signals.clear();
  EXPECT_TRUE(Mentions(CheckDecisions(s, p, kNow, d), "due for its time-limit warning"));
  d = Schedule(s, p, kNow);
  d.kills.push_back({1, StopCause::kTimeLimit});
  EXPECT_TRUE(Mentions(CheckDecisions(s, p, kNow, d), "before its kill time"));
  d = Schedule(s, p, kNow);
  d.signals.push_back({1, 10, kNow + 120, StopCause::kPreempted, 99, false});
  EXPECT_FALSE(CheckDecisions(s, p, kNow, d).ok());
}

TEST(ReferenceCheckerTest, PreemptionIsCheckedForNeedAndTier) {
  ClusterState s;
  s.gpus = {Card(0)};
  RunningJob victim = Running(1, {0}, kNow - 60, 8 * kHour);
  victim.job.tier = Tier::kExplore;
  victim.preemptible = true;
  s.running.push_back(victim);
  Job thesis = MakeJob(2, "ann", 1, kHour, kNow - 10);
  thesis.tier = Tier::kThesis;
  s.pending.push_back(thesis);
  Policy p;
  p.time_of_day.clear();
  Decisions d = Schedule(s, p, kNow);
  const CheckResult ok = CheckDecisions(s, p, kNow, d);
  EXPECT_TRUE(ok.ok()) << All(ok) << DescribeDecisions(d, kNow);
  ASSERT_EQ(d.signals.size(), 1u);
  EXPECT_EQ(d.signals[0].cause, StopCause::kPreempted);
  // Preempting a thesis job for an explore one is wrong.
  s.running[0].job.tier = Tier::kThesis;
  s.running[0].preemptible = false;
  s.pending[0].tier = Tier::kExplore;
  EXPECT_FALSE(CheckDecisions(s, p, kNow, d).ok());
}

// Under rota with preemption, a job that starts preemptible may borrow someone else's booking
// and the booking's owner may claim it back whatever the tiers; nothing else may do either.
TEST(ReferenceCheckerTest, BookingBackfillBorrowingAndClaimsAreChecked) {
  ClusterState s;
  s.gpus = {Card(0)};
  Booking b;
  b.id = 7;
  b.user = "bob";
  b.alloc.gpus = {0};
  b.start = kNow - 10 * kMinute;
  b.end = kNow + 2 * kHour;
  s.bookings.push_back(b);
  Job explore = MakeJob(2, "ann", 1, kHour, kNow - 10);
  explore.tier = Tier::kExplore;
  s.pending.push_back(explore);
  Policy p;
  p.time_of_day.clear();
  Decisions d = Schedule(s, p, kNow);
  ASSERT_EQ(d.starts.size(), 1u);
  EXPECT_TRUE(d.starts[0].preemptible);
  const CheckResult borrowed = CheckDecisions(s, p, kNow, d);
  EXPECT_TRUE(borrowed.ok()) << All(borrowed);
  // Without preemption nothing could take the card back: the same start is a violation.
  p.preemption = false;
  EXPECT_TRUE(Mentions(CheckDecisions(s, p, kNow, d), "booking of bob"))
      << All(CheckDecisions(s, p, kNow, d));
  // And a borrower that waits although it could borrow is one too.
  p.preemption = true;
  Decisions waits;
  waits.pending.push_back({2, WaitReason::kBooking, kNow + 2 * kHour, false, PriorityFactors{}});
  waits.next_wakeup = kNow + 2 * kHour;
  EXPECT_TRUE(Mentions(CheckDecisions(s, p, kNow, waits), "may borrow"))
      << All(CheckDecisions(s, p, kNow, waits));

  // ann's explore job runs on bob's booking; bob's explore job claims it.
  s.pending.clear();
  RunningJob r = Running(1, {0}, kNow - 60, 8 * kHour);
  r.job.user = "ann";
  r.job.tier = Tier::kExplore;
  r.preemptible = true;
  s.running.push_back(r);
  Job owner = MakeJob(3, "bob", 1, kHour, kNow - 10);
  owner.tier = Tier::kExplore;
  s.pending.push_back(owner);
  d = Schedule(s, p, kNow);
  ASSERT_EQ(d.signals.size(), 1u);
  EXPECT_EQ(d.signals[0].preempted_by, 3);
  const CheckResult claim = CheckDecisions(s, p, kNow, d);
  EXPECT_TRUE(claim.ok()) << All(claim) << DescribeDecisions(d, kNow);
  // The same preemption for carol, who holds no booking, is explore preempting explore.
  s.pending[0].user = "carol";
  EXPECT_TRUE(Mentions(CheckDecisions(s, p, kNow, d), "tier is not lower"))
      << All(CheckDecisions(s, p, kNow, d));
}

TEST(ReferenceCheckerTest, HandMadeDecisionsOfEveryAlgorithmPass) {
  const ClusterState s = BackfillState();
  for (Algorithm a : {Algorithm::kFifo, Algorithm::kBackfill, Algorithm::kRota}) {
    Policy p = Backfill();
    p.algorithm = a;
    const Decisions d = Schedule(s, p, kNow);
    const CheckResult r = CheckDecisions(s, p, kNow, d);
    EXPECT_TRUE(r.ok()) << AlgorithmName(a) << "\n" << All(r) << DescribeDecisions(d, kNow);
  }
}

TEST(RandomStateTest, DeterministicAndValid) {
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    const RandomCase a = RandomCaseFromSeed(seed);
    const RandomCase b = RandomCaseFromSeed(seed);
    EXPECT_EQ(DescribeCase(a.state, a.policy, a.now), DescribeCase(b.state, b.policy, b.now));
    EXPECT_TRUE(CheckState(a.state).empty()) << "seed " << seed;
    EXPECT_GE(a.state.gpus.size(), 1u);
    EXPECT_LE(a.state.gpus.size(), 8u);
  }
  Rng r(1);
  Rng same(1);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(r.Next(), same.Next());
  for (int i = 0; i < 1000; ++i) {
    const std::int64_t v = r.Range(-3, 3);
    EXPECT_GE(v, -3);
    EXPECT_LE(v, 3);
  }
}

TEST(RandomStateTest, LargeStateHasTheRequestedShape) {
  const ClusterState s = LargeState(64, 8, 1000, 90, 7);
  EXPECT_EQ(s.gpus.size(), 64u);
  EXPECT_EQ(s.pending.size(), 1000u);
  EXPECT_TRUE(CheckState(s).empty());
  std::vector<bool> held(64, false);
  for (const RunningJob& r : s.running)
    for (int g : r.alloc.gpus) held[g] = true;
  const long busy = std::count(held.begin(), held.end(), true);
  EXPECT_GE(busy, 50);
  EXPECT_LE(busy, 60);
  int one = 0, shares = 0;
  std::set<std::string> users;
  for (const Job& j : s.pending) {
    one += j.request.kind == RequestKind::kWholeGpus && j.request.gpus == 1;
    shares += j.request.kind == RequestKind::kMemShare;
    users.insert(j.user);
  }
  EXPECT_GT(one, 700);
  EXPECT_GT(shares, 50);
  EXPECT_EQ(users.size(), 20u);
  const ClusterState again = LargeState(64, 8, 1000, 90, 7);
  EXPECT_EQ(DescribeCase(s, Policy{}, kLargeStateNow), DescribeCase(again, Policy{}, kLargeStateNow));
  // The schedule of a large state is itself consistent (small enough for the reference).
  const Decisions d = Schedule(s, Policy{}, kLargeStateNow);
  EXPECT_FALSE(d.starts.empty());
  EXPECT_EQ(d.starts.size() + d.pending.size(), 1000u);
}

}  // namespace
}  // namespace reference_scheduler_test
}  // namespace rota::testing
