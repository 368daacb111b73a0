// Hand-made states: which cause the idle capacity of a state is put down to, and how much.
#include "sim/idle.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "testing/builders.h"

namespace rota::sim {
namespace {

using testing::k80GiB;
using Waiting = std::vector<std::pair<const Job*, WaitReason>>;

// Two nodes of two cards; `busy` cards held by one running job each.
ClusterState TwoNodes(const std::vector<int>& busy) {
  ClusterState s;
  for (int i = 0; i < 4; ++i) s.gpus.push_back(testing::Card(i, k80GiB, i / 2));
  for (int c : busy) s.running.push_back(testing::Running(100 + c, "other", {c}, 0, 3600));
  return s;
}

TEST(IdleTest, NothingWaiting) {
  ClusterState s = TwoNodes({0});
  auto [cause, idle] = ClassifyIdle(s, {});
  EXPECT_EQ(cause, IdleCause::kNoWork);
  EXPECT_DOUBLE_EQ(idle, 3.0);
  // A job waiting for another job to end is no work for the idle cards either.
  Job after = testing::MakeJob(1, "u", 1, 3600, 0);
  EXPECT_EQ(ClassifyIdle(s, {{&after, WaitReason::kDependency}}).first, IdleCause::kNoWork);
}

TEST(IdleTest, AJobThatFitsButIsHeldBackSaysWhy) {
  ClusterState s = TwoNodes({0, 1, 2});  // card 3 idle
  Job one = testing::MakeJob(1, "u", 1, 3600, 0);
  Job two = testing::MakeJob(2, "u", 2, 3600, 0);
  EXPECT_EQ(ClassifyIdle(s, {{&one, WaitReason::kPriority}}).first, IdleCause::kHeld);
  EXPECT_EQ(ClassifyIdle(s, {{&one, WaitReason::kResources}}).first, IdleCause::kHeld);
  EXPECT_EQ(ClassifyIdle(s, {{&one, WaitReason::kBooking}}).first, IdleCause::kBooking);
  EXPECT_EQ(ClassifyIdle(s, {{&one, WaitReason::kQuotaExhausted}}).first, IdleCause::kQuota);
  // A reservation outranks a booking as the cause when both kinds of job could use the card.
  Job other = testing::MakeJob(3, "v", 1, 3600, 0);
  EXPECT_EQ(ClassifyIdle(s, {{&one, WaitReason::kBooking}, {&other, WaitReason::kPriority}}).first,
            IdleCause::kHeld);
  // Needing two cards where one is idle: draining for it.
  auto [cause, idle] = ClassifyIdle(s, {{&two, WaitReason::kResources}});
  EXPECT_EQ(cause, IdleCause::kDraining);
  EXPECT_DOUBLE_EQ(idle, 1.0);
}

TEST(IdleTest, EnoughIdleCardsOnDifferentNodesAreFragmented) {
  ClusterState s = TwoNodes({0, 2});  // cards 1 and 3 idle, one on each node
  Job two = testing::MakeJob(1, "u", 2, 3600, 0);
  EXPECT_EQ(ClassifyIdle(s, {{&two, WaitReason::kResources}}).first, IdleCause::kFragmented);
  // Larger than a node, a request may span nodes: then it fits and is held.
  Job three = testing::MakeJob(2, "u", 3, 3600, 0);
  s = TwoNodes({0});
  EXPECT_EQ(ClassifyIdle(s, {{&three, WaitReason::kPriority}}).first, IdleCause::kHeld);
}

TEST(IdleTest, SharedCardsCountTheirFreePart) {
  ClusterState s;
  s.gpus.push_back(testing::Card(0));
  RunningJob half = testing::Running(100, "other", {0}, 0, 3600);
  half.alloc.memory = k80GiB / 2;
  s.running.push_back(half);
  Job share = testing::MakeJob(1, "u", 0, 3600, 0);
  share.request.kind = RequestKind::kMemShare;
  share.request.memory = k80GiB / 4;
  auto [cause, idle] = ClassifyIdle(s, {{&share, WaitReason::kPriority}});
  EXPECT_EQ(cause, IdleCause::kHeld);
  EXPECT_DOUBLE_EQ(idle, 0.5);
  share.request.memory = k80GiB;  // more than is left: waits for the card to empty
  EXPECT_EQ(ClassifyIdle(s, {{&share, WaitReason::kResources}}).first, IdleCause::kDraining);
}

// A card in MIG mode: idle by its free slices' memory, never a free whole card, and a waiting
// slice of a free profile is held back while one of another profile waits for its slice.
TEST(IdleTest, MigCardsCountTheirFreeSlices) {
  ClusterState s;
  Gpu card = testing::Card(0);
  card.mig = {
      {"MIG-0", "3g.40gb", k80GiB / 2}, {"MIG-1", "2g.20gb", k80GiB / 4}, {"MIG-2", "2g.20gb", k80GiB / 4}};
  s.gpus.push_back(card);
  RunningJob on_slice = testing::Running(100, "other", {0}, 0, 3600);
  on_slice.alloc.mig = 0;
  s.running.push_back(on_slice);
  Job big = testing::MakeJob(1, "u", 0, 3600, 0);
  big.request.kind = RequestKind::kMig;
  big.request.mig_profile = "3g.40gb";
  Job small = big;
  small.id = 2;
  small.request.mig_profile = "2g.20gb";
  auto [cause, idle] = ClassifyIdle(s, {{&big, WaitReason::kResources}});
  EXPECT_EQ(cause, IdleCause::kDraining);  // its slice is taken; the two free ones are not its
  EXPECT_DOUBLE_EQ(idle, 0.5);
  EXPECT_EQ(ClassifyIdle(s, {{&small, WaitReason::kPriority}}).first, IdleCause::kHeld);
  // A whole card is no use to anyone here.
  Job whole = testing::MakeJob(3, "u", 1, 3600, 0);
  EXPECT_EQ(ClassifyIdle(s, {{&whole, WaitReason::kResources}}).first, IdleCause::kDraining);
}

// The shapes overload (what a replay with a queue index uses) against the list of jobs, every job
// waiting for capacity, on random states: nodes of 2 to 4 cards, some busy, some shared, waiting
// requests of whole cards (up to more than a node), shares and none.
TEST(IdleTest, ShapesGiveTheSameCauseAsTheJobs) {
  std::uint64_t seed = 99;
  auto next = [&seed](int n) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int>((seed >> 33) % static_cast<std::uint64_t>(n));
  };
  int causes[6] = {0, 0, 0, 0, 0, 0};
  for (int round = 0; round < 2000; ++round) {
    ClusterState s;
    const int nodes = 1 + next(3);
    const int per = 2 + next(3);
    for (int i = 0; i < nodes * per; ++i) s.gpus.push_back(testing::Card(i, k80GiB, i / per));
    for (int i = 0; i < nodes * per; ++i) {
      const int roll = next(3);
      if (roll == 0) s.running.push_back(testing::Running(100 + i, "o", {i}, 0, 3600));
      if (roll == 1 && next(2) == 0) {
        RunningJob r = testing::Running(200 + i, "o", {i}, 0, 3600);
        r.alloc.memory = 1024 * (1 + next(79));
        s.running.push_back(r);
      }
    }
    std::vector<Job> jobs;
    std::map<int, int> whole;
    std::map<MiB, int> shares;
    for (int k = next(4); k > 0; --k) {
      Job j = testing::MakeJob(k, "u", 1 + next(nodes * per + 1), 3600, 0);
      if (next(3) == 0) {
        j.request.kind = RequestKind::kMemShare;
        j.request.memory = 1024 * (1 + next(80));
        ++shares[j.request.memory];
      } else {
        ++whole[j.request.gpus];
      }
      jobs.push_back(j);
    }
    Waiting waiting;
    for (const Job& j : jobs) waiting.emplace_back(&j, WaitReason::kPriority);
    const auto want = ClassifyIdle(s, waiting);
    const auto got = ClassifyIdle(s, whole, shares, {});
    ASSERT_EQ(got.first, want.first) << "round " << round;
    ASSERT_DOUBLE_EQ(got.second, want.second) << "round " << round;
    ++causes[static_cast<int>(want.first)];
  }
  // Each cause a queue of capacity waiters can have turns up.
  EXPECT_GT(causes[static_cast<int>(IdleCause::kHeld)], 0);
  EXPECT_GT(causes[static_cast<int>(IdleCause::kFragmented)], 0);
  EXPECT_GT(causes[static_cast<int>(IdleCause::kDraining)], 0);
  EXPECT_GT(causes[static_cast<int>(IdleCause::kNoWork)], 0);
}

TEST(IdleTest, AddsUpByCause) {
  IdleGpuSeconds g;
  AddIdle(g, IdleCause::kHeld, 10);
  AddIdle(g, IdleCause::kFragmented, 5);
  AddIdle(g, IdleCause::kHeld, 1);
  EXPECT_DOUBLE_EQ(g.held, 11);
  EXPECT_DOUBLE_EQ(g.fragmented, 5);
  EXPECT_DOUBLE_EQ(g.Total(), 16);
}

}  // namespace
}  // namespace rota::sim
