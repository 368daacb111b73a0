#include "core/capacity.h"

#include <gtest/gtest.h>

#include "testing/builders.h"
#include "testing/requests.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace rota {
namespace capacity_test {
namespace {

using testing::Mig;
using testing::Share;
using testing::Whole;

constexpr Time kNow = 1704110400;  // 2024-01-01 12:00 UTC, a Monday
constexpr MiB k80G = 81920;
constexpr MiB k40G = 40960;

using testing::Card;

// `n` cards per node on `nodes` nodes; gpu index i is unit index i.
ClusterState Nodes(int nodes, int n, MiB memory = k80G) {
  ClusterState s;
  for (int node = 0; node < nodes; ++node) {
    for (int i = 0; i < n; ++i) s.gpus.push_back(Card(i, memory, node));
  }
  return s;
}

// An 8-card node with NVLink pairs (0,1) (2,3) (4,5) (6,7).
ClusterState EightWithPairs() {
  ClusterState s = Nodes(1, 8);
  for (int i = 0; i < 8; ++i) s.gpus[i].nvlink = {i ^ 1};
  return s;
}

// A running job of `user` on `cards` (whole, or a share of `memory` on one card) from `start`
// with limit `limit`.
RunningJob Busy(JobId id, std::vector<int> cards, Time start, Duration limit, MiB memory = 0,
               std::string user = "other") {
  RunningJob r;
  r.job.id = id;
  r.job.user = std::move(user);
  r.job.time_limit = limit;
  r.alloc.gpus = std::move(cards);
  r.alloc.memory = memory;
  r.start_time = start;
  return r;
}

std::vector<int> Sorted(std::vector<int> v) {
  std::sort(v.begin(), v.end());
  return v;
}

int LinksWithin(const ClusterState& s, const std::vector<int>& gpus) {
  int links = 0;
  for (size_t i = 0; i < gpus.size(); ++i) {
    for (size_t j = i + 1; j < gpus.size(); ++j) {
      const auto& peers = s.gpus[gpus[i]].nvlink;
      links += std::find(peers.begin(), peers.end(), gpus[j]) != peers.end();
    }
  }
  return links;
}

// ---- ExpectedEnd -----------------------------------------------------------------------------

TEST(ExpectedEndTest, Rules) {
  Policy p;
  RunningJob r = Busy(1, {0}, kNow - 100, 1000);
  EXPECT_EQ(ExpectedEnd(r, p, kNow), kNow + 900);  // start + limit
  r.kill_at = kNow + 50;
  EXPECT_EQ(ExpectedEnd(r, p, kNow), kNow + 50);  // a stop under way: the kill time
  r.kill_at = kNow - 5;
  EXPECT_EQ(ExpectedEnd(r, p, kNow), kNow + 1);  // overdue kill: any moment now
  r.kill_at = kNever;
  r.job.time_limit = 50;  // past its limit
  EXPECT_EQ(ExpectedEnd(r, p, kNow), kNow + 1);
  p.enforce_time_limits = false;
  p.overdue_grace = 300;
  EXPECT_EQ(ExpectedEnd(r, p, kNow), kNow + 300);
}

// ---- Whole cards ---------------------------------------------------------------------------

TEST(CapacityTest, WholeCardOnlyOnAWholeFreeCard) {
  ClusterState s = Nodes(1, 2);
  s.running.push_back(Busy(1, {0}, kNow - 10, 1000, /*memory=*/8192));  // a small share on card 0
  Policy p;
  CapacityPlan plan(s, p, kNow);
  Placement pl = plan.Earliest(Whole(1), 3600, -1, kNow, /*now_only=*/true);
  EXPECT_EQ(pl.start, kNow);
  EXPECT_EQ(pl.units, (std::vector<int>{1}));
  // With card 1 taken too, the share on card 0 blocks a whole-card job until it ends.
  s.running.push_back(Busy(2, {1}, kNow - 10, 5000));
  CapacityPlan plan2(s, p, kNow);
  EXPECT_EQ(plan2.Earliest(Whole(1), 3600, -1, kNow, true).start, kNever);
  Placement later = plan2.Earliest(Whole(1), 3600, -1, kNow, false);
  EXPECT_EQ(later.start, kNow + 990);
  EXPECT_EQ(later.units, (std::vector<int>{0}));
}

TEST(CapacityTest, NvlinkPairForTwoGpus) {
  ClusterState s = EightWithPairs();
  Policy p;
  {
    CapacityPlan plan(s, p, kNow);
    Placement pl = plan.Earliest(Whole(2), 3600, -1, kNow, true);
    ASSERT_EQ(pl.start, kNow);
    EXPECT_EQ(LinksWithin(s, pl.units), 1) << "got " << pl.units[0] << "," << pl.units[1];
  }
  // Cards 0 and 2 busy: 1 and 3 have lost their partners; the job takes a full pair, 4+5 or 6+7.
  s.running.push_back(Busy(1, {0}, kNow - 10, 1000));
  s.running.push_back(Busy(2, {2}, kNow - 10, 1000));
  CapacityPlan plan(s, p, kNow);
  Placement pl = plan.Earliest(Whole(2), 3600, -1, kNow, true);
  ASSERT_EQ(pl.start, kNow);
  ASSERT_EQ(pl.units.size(), 2u);
  EXPECT_EQ(LinksWithin(s, pl.units), 1) << "got " << pl.units[0] << "," << pl.units[1];
  EXPECT_NE(pl.units[0], 1);
  EXPECT_NE(pl.units[0], 3);
}

TEST(CapacityTest, NvlinkTwoPairsForFourGpusWhenAllFree) {
  ClusterState s = EightWithPairs();
  Policy p;
  CapacityPlan plan(s, p, kNow);
  Placement pl = plan.Earliest(Whole(4), 3600, -1, kNow, true);
  ASSERT_EQ(pl.units.size(), 4u);
  EXPECT_EQ(LinksWithin(s, pl.units), 2);
}

// One card busy: free are 1..7, and 1 has lost its partner. Two full pairs (e.g. 2+3, 4+5) are
// available and a 4-GPU job should get them, not the orphan 1 plus half of another pair.
TEST(CapacityTest, NvlinkTwoPairsForFourGpusAroundAnOrphan) {
  ClusterState s = EightWithPairs();
  s.running.push_back(Busy(1, {0}, kNow - 10, 1000));
  Policy p;
  CapacityPlan plan(s, p, kNow);
  Placement pl = plan.Earliest(Whole(4), 3600, -1, kNow, true);
  ASSERT_EQ(pl.start, kNow);
  ASSERT_EQ(pl.units.size(), 4u);
  EXPECT_EQ(LinksWithin(s, pl.units), 2) << "got " << pl.units[0] << "," << pl.units[1] << ","
                                         << pl.units[2] << "," << pl.units[3];
  EXPECT_EQ(std::count(pl.units.begin(), pl.units.end(), 1), 0);
}

TEST(CapacityTest, BestFitNode) {
  // Node 0: cards 0-3, two busy. Node 1: cards 4-7, all free.
  ClusterState s = Nodes(2, 4);
  s.running.push_back(Busy(1, {0, 1}, kNow - 10, 1000));
  Policy p;
  CapacityPlan plan(s, p, kNow);
  // Two cards go where exactly two are free, keeping node 1 whole for a 4-GPU job.
  Placement two = plan.Earliest(Whole(2), 3600, -1, kNow, true);
  EXPECT_EQ(two.start, kNow);
  EXPECT_EQ(Sorted(two.units), (std::vector<int>{2, 3}));
  // One card too: the node with the fewest free cards.
  Placement one = plan.Earliest(Whole(1), 3600, -1, kNow, true);
  ASSERT_EQ(one.units.size(), 1u);
  EXPECT_LT(one.units[0], 4);
  EXPECT_GE(one.units[0], 2);
}

TEST(CapacityTest, MultiGpuJobStaysOnOneNodeWhenItCan) {
  // Two 4-card nodes, two cards busy on each: 4 free in all but never 4 on one node until
  // node 0's jobs end at now+1000.
  ClusterState s = Nodes(2, 4);
  s.running.push_back(Busy(1, {0, 1}, kNow - 10, 1010));  // ends kNow + 1000
  s.running.push_back(Busy(2, {4, 5}, kNow - 10, 2010));  // ends kNow + 2000
  Policy p;
  CapacityPlan plan(s, p, kNow);
  EXPECT_FALSE(plan.PhysicallyFitsNow(Whole(4)));
  EXPECT_EQ(plan.Earliest(Whole(4), 3600, -1, kNow, true).start, kNever);
  Placement pl = plan.Earliest(Whole(4), 3600, -1, kNow, false);
  EXPECT_EQ(pl.start, kNow + 1000);
  EXPECT_EQ(Sorted(pl.units), (std::vector<int>{0, 1, 2, 3}));
}

TEST(CapacityTest, JobLargerThanANodeSpreadsOverNodes) {
  ClusterState s = Nodes(2, 4);
  Policy p;
  CapacityPlan plan(s, p, kNow);
  EXPECT_TRUE(plan.Possible(Whole(8)));
  EXPECT_TRUE(plan.PhysicallyFitsNow(Whole(8)));
  Placement pl = plan.Earliest(Whole(8), 3600, -1, kNow, true);
  EXPECT_EQ(pl.start, kNow);
  EXPECT_EQ(Sorted(pl.units), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  // Six cards: a whole node plus two of the other.
  Placement six = plan.Earliest(Whole(6), 3600, -1, kNow, true);
  ASSERT_EQ(six.units.size(), 6u);
  int on_node0 = static_cast<int>(std::count_if(six.units.begin(), six.units.end(), [](int u) { return u < 4; }));
  EXPECT_TRUE(on_node0 == 4 || on_node0 == 2) << on_node0;
}

TEST(CapacityTest, WhereJobsNeverSpanNodesOneLargerThanAnyNodeCanNeverRun) {
  // rotad's setting (Policy::span_nodes off): its jobs run on one node.
  ClusterState s = Nodes(2, 4);
  Policy p;
  p.span_nodes = false;
  CapacityPlan plan(s, p, kNow);
  EXPECT_TRUE(plan.Possible(Whole(4)));
  EXPECT_FALSE(plan.Possible(Whole(5)));
  EXPECT_FALSE(plan.Possible(Whole(8)));
  EXPECT_FALSE(plan.PhysicallyFitsNow(Whole(6)));  // 8 free, at most 4 on one node
  EXPECT_EQ(plan.Earliest(Whole(6), 3600, -1, kNow, true).start, kNever);
  EXPECT_EQ(plan.Earliest(Whole(6), 3600, -1, kNow, false).start, kNever);
  // A job that fits on a node is placed as before, on one.
  Placement four = plan.Earliest(Whole(4), 3600, -1, kNow, true);
  ASSERT_EQ(four.units.size(), 4u);
  EXPECT_TRUE(Sorted(four.units) == (std::vector<int>{0, 1, 2, 3}) ||
              Sorted(four.units) == (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(WhyNeverFits(s.gpus, Whole(6)),
            "6 GPUs, but a job runs on one node, and the largest here has 4 whole GPUs (8 GPUs on 2 nodes)");
  EXPECT_EQ(WhyNeverFits(s.gpus, Whole(9)), "9 GPUs, but this server has 8 whole GPUs");
}

TEST(CapacityTest, AKeptPlanAlsoKeepsJobsOnOneNode) {
  ClusterState s = Nodes(2, 2);
  Policy p;
  p.span_nodes = false;
  CapacityPlan kept(CapacityPlan::Kept{}, s, p);
  EXPECT_FALSE(kept.Possible(Whole(3)));
  EXPECT_TRUE(kept.Possible(Whole(2)));
}

// ---- Memory shares ------------------------------------------------------------------------

TEST(CapacityTest, SharesPackBestFitOntoSharedCardsSoWholeCardsStayWhole) {
  // Three 40G cards: card 0 holds a 20G share, card 1 a 10G share, card 2 is free.
  ClusterState s = Nodes(1, 3, k40G);
  s.running.push_back(Busy(1, {0}, kNow - 10, 1000, 20480));
  s.running.push_back(Busy(2, {1}, kNow - 10, 1000, 10240));
  Policy p;
  CapacityPlan plan(s, p, kNow);
  // 8G: leftover 12G on card 0 vs 22.5G on card 1: best fit is card 0; never the free card 2.
  Placement a = plan.Earliest(Share(8192), 3600, -1, kNow, true);
  EXPECT_EQ(a.start, kNow);
  EXPECT_EQ(a.units, (std::vector<int>{0}));
  // 25G does not fit next to card 0's 20G (45G > 40G): card 1 (10G + 25G = 35G).
  Placement b = plan.Earliest(Share(25000), 3600, -1, kNow, true);
  EXPECT_EQ(b.units, (std::vector<int>{1}));
  // After committing the 8G share, a whole-card job still finds card 2 whole.
  plan.Commit(a, Share(8192), kNow, kNow + 3600);
  Placement w = plan.Earliest(Whole(1), 3600, -1, kNow, true);
  EXPECT_EQ(w.start, kNow);
  EXPECT_EQ(w.units, (std::vector<int>{2}));
  // 30G fits no shared card now (card 0: 28G used, card 1: 10G + 30G = 40G fits exactly).
  Placement c = plan.Earliest(Share(30720), 3600, -1, kNow, true);
  EXPECT_EQ(c.units, (std::vector<int>{1}));
}

TEST(CapacityTest, ShareOnFreeCardsIsBestFitBySize) {
  ClusterState s;
  s.gpus = {Card(0, k80G), Card(1, 24576), Card(2, k40G)};
  Policy p;
  CapacityPlan plan(s, p, kNow);
  // 16G: leftovers 64G, 8G, 24G: the 24G card.
  Placement pl = plan.Earliest(Share(16384), 3600, -1, kNow, true);
  EXPECT_EQ(pl.units, (std::vector<int>{1}));
  // 30G does not fit the 24G card: the 40G card.
  EXPECT_EQ(plan.Earliest(Share(30720), 3600, -1, kNow, true).units, (std::vector<int>{2}));
}

TEST(CapacityTest, ShareNeedsUnallocatedAndDeviceReportedFreeMemory) {
  ClusterState s = Nodes(1, 1, k40G);
  s.running.push_back(Busy(1, {0}, kNow - 10, 1010, 10240));  // 10G allocated until kNow + 1000
  s.gpus[0].reported_free = 8000;  // the device says only ~7.8G are free (others' real use)
  Policy p;
  CapacityPlan plan(s, p, kNow);
  // 16G: 30G unallocated, but only 8000 MiB really free now.
  EXPECT_FALSE(plan.PhysicallyFitsNow(Share(16384)));
  EXPECT_EQ(plan.Earliest(Share(16384), 3600, -1, kNow, true).start, kNever);
  // 4G fits both.
  EXPECT_TRUE(plan.PhysicallyFitsNow(Share(4096)));
  Placement small = plan.Earliest(Share(4096), 3600, -1, kNow, true);
  ASSERT_EQ(small.start, kNow);
  // Committing it lowers the device's free memory as well: 8000 - 4096 = 3904 left.
  plan.Commit(small, Share(4096), kNow, kNow + 3600);
  EXPECT_FALSE(plan.PhysicallyFitsNow(Share(4000)));
  EXPECT_EQ(plan.Earliest(Share(4000), 3600, -1, kNow, true).start, kNever);
  EXPECT_TRUE(plan.PhysicallyFitsNow(Share(3904)));
  // And the unallocated side: a 27G share does not fit next to 10G + 4G (41G > 40G).
  s.gpus[0].reported_free = -1;
  CapacityPlan plan2(s, p, kNow);
  plan2.Commit(plan2.Earliest(Share(4096), 3600, -1, kNow, true), Share(4096), kNow, kNow + 3600);
  EXPECT_FALSE(plan2.PhysicallyFitsNow(Share(27648)));
  EXPECT_TRUE(plan2.PhysicallyFitsNow(Share(26624)));  // 10 + 4 + 26 = 40G exactly
}

// A share as large as the whole card is still a share: it must fit in what the device reports
// free. (A whole-card request is not held to the device's number, which always lies a little
// below the total because of the driver's own use.)
TEST(CapacityTest, FullCardShareStillNeedsDeviceReportedFreeMemory) {
  ClusterState s = Nodes(1, 1, k80G);
  s.gpus[0].reported_free = 81620;  // 300 MiB used by the driver or another tenant
  Policy p;
  CapacityPlan plan(s, p, kNow);
  EXPECT_EQ(plan.Earliest(Whole(1), 3600, -1, kNow, true).start, kNow);
  EXPECT_FALSE(plan.PhysicallyFitsNow(Share(k80G)));
  EXPECT_EQ(plan.Earliest(Share(k80G), 3600, -1, kNow, true).start, kNever);
  EXPECT_EQ(plan.Earliest(Share(81620), 3600, -1, kNow, true).start, kNow);
}

// ---- MIG ----------------------------------------------------------------------------------

ClusterState MigCluster() {
  // Card 0: whole. Cards 1 and 2 in MIG mode with seven 1g.10gb slices each.
  ClusterState s;
  s.gpus.push_back(Card(0));
  for (int c = 1; c <= 2; ++c) {
    Gpu g = Card(c);
    for (int i = 0; i < 7; ++i) g.mig.push_back({"", "1g.10gb", 10240});
    s.gpus.push_back(g);
  }
  s.gpus[2].mig[0] = {"", "3g.40gb", 40960};  // card 2: one 3g slice and six 1g slices
  return s;
}

RunningJob RunMig(JobId id, int card, int slice, Time start, Duration limit) {
  RunningJob r = Busy(id, {card}, start, limit);
  r.alloc.mig = slice;
  return r;
}

TEST(CapacityTest, MigByProfileAndPacked) {
  ClusterState s = MigCluster();
  // Card 1: three of its seven slices in use; card 2's six 1g slices are all free.
  for (int i = 0; i < 3; ++i) s.running.push_back(RunMig(i + 1, 1, i, kNow - 10, 1000));
  Policy p;
  CapacityPlan plan(s, p, kNow);
  // Units: 0 = card 0; 1..7 = card 1 slices 0..6; 8..14 = card 2 slices 0..6.
  ASSERT_EQ(plan.units().size(), 15u);
  Placement pl = plan.Earliest(Mig("1g.10gb"), 3600, -1, kNow, true);
  ASSERT_EQ(pl.start, kNow);
  ASSERT_EQ(pl.units.size(), 1u);
  const Unit& u = plan.units()[pl.units[0]];
  EXPECT_EQ(u.gpu, 1);  // pack onto the card with fewer free slices
  EXPECT_GE(u.mig, 3);  // a free slice
  Allocation a = plan.ToAllocation(pl, Mig("1g.10gb"));
  EXPECT_EQ(a.gpus, (std::vector<int>{1}));
  EXPECT_EQ(a.mig, u.mig);
  EXPECT_EQ(a.memory, 0);
  // The 3g profile exists only on card 2.
  Placement big = plan.Earliest(Mig("3g.40gb"), 3600, -1, kNow, true);
  ASSERT_EQ(big.units.size(), 1u);
  EXPECT_EQ(plan.units()[big.units[0]].gpu, 2);
  EXPECT_EQ(plan.units()[big.units[0]].mig, 0);
  // Whole-card requests never land on MIG cards; shares neither.
  EXPECT_EQ(plan.Earliest(Whole(1), 3600, -1, kNow, true).units, (std::vector<int>{0}));
  EXPECT_EQ(plan.Earliest(Share(1024), 3600, -1, kNow, true).units, (std::vector<int>{0}));
  EXPECT_FALSE(plan.Possible(Whole(2)));  // only one whole card
}

TEST(CapacityTest, MigSliceBusyUntilItsJobEnds) {
  ClusterState s = MigCluster();
  s.running.push_back(RunMig(1, 2, 0, kNow - 10, 510));  // the only 3g slice, until kNow + 500
  Policy p;
  CapacityPlan plan(s, p, kNow);
  EXPECT_FALSE(plan.PhysicallyFitsNow(Mig("3g.40gb")));
  EXPECT_EQ(plan.Earliest(Mig("3g.40gb"), 3600, -1, kNow, true).start, kNever);
  EXPECT_EQ(plan.Earliest(Mig("3g.40gb"), 3600, -1, kNow, false).start, kNow + 500);
}

// ---- Drained cards ------------------------------------------------------------------------

TEST(CapacityTest, DrainedCardsGetNoWork) {
  ClusterState s = Nodes(1, 2);
  s.gpus[0].drained = true;
  Policy p;
  CapacityPlan plan(s, p, kNow);
  EXPECT_EQ(plan.Earliest(Whole(1), 3600, -1, kNow, true).units, (std::vector<int>{1}));
  EXPECT_EQ(plan.Earliest(Share(1024), 3600, -1, kNow, true).units, (std::vector<int>{1}));
  EXPECT_TRUE(plan.Possible(Whole(2)));  // the hardware exists...
  EXPECT_FALSE(plan.PhysicallyFitsNow(Whole(2)));
  EXPECT_EQ(plan.Earliest(Whole(2), 3600, -1, kNow, false).start, kNever);  // ...but is not used
  s.gpus[1].drained = true;
  CapacityPlan none(s, p, kNow);
  EXPECT_FALSE(none.PhysicallyFitsNow(Whole(1)));
  EXPECT_EQ(none.Earliest(Whole(1), 3600, -1, kNow, false).start, kNever);
  EXPECT_EQ(none.Earliest(Share(1024), 3600, -1, kNow, false).start, kNever);
}

TEST(CapacityTest, DrainedMigCard) {
  ClusterState s = MigCluster();
  s.gpus[2].drained = true;  // the only card with a 3g slice
  Policy p;
  CapacityPlan plan(s, p, kNow);
  EXPECT_TRUE(plan.Possible(Mig("3g.40gb")));
  EXPECT_FALSE(plan.PhysicallyFitsNow(Mig("3g.40gb")));
  EXPECT_EQ(plan.Earliest(Mig("3g.40gb"), 60, -1, kNow, false).start, kNever);
  Placement pl = plan.Earliest(Mig("1g.10gb"), 60, -1, kNow, true);
  ASSERT_EQ(pl.units.size(), 1u);
  EXPECT_EQ(plan.units()[pl.units[0]].gpu, 1);
}

// ---- Times --------------------------------------------------------------------------------

TEST(CapacityTest, EarliestWithRunningJobsAndReservations) {
  // Card 0 busy until kNow + 900; card 1 free now but reserved over [kNow + 500, kNow + 1500).
  ClusterState s = Nodes(1, 2);
  s.running.push_back(Busy(1, {0}, kNow - 100, 1000));
  Policy p;
  CapacityPlan plan(s, p, kNow);
  Placement res;
  res.start = kNow + 500;
  res.units = {1};
  plan.Commit(res, Whole(1), kNow + 500, kNow + 1500);
  EXPECT_TRUE(plan.PhysicallyFitsNow(Whole(1)));  // a future reservation does not use card 1 now
  // 400 s fits before the reservation on card 1.
  Placement a = plan.Earliest(Whole(1), 400, -1, kNow, false);
  EXPECT_EQ(a.start, kNow);
  EXPECT_EQ(a.units, (std::vector<int>{1}));
  // 501 s does not: card 0 frees at kNow + 900 ([900, 1401) is free there).
  Placement b = plan.Earliest(Whole(1), 501, -1, kNow, false);
  EXPECT_EQ(b.start, kNow + 900);
  EXPECT_EQ(b.units, (std::vector<int>{0}));
  // not_before is respected: from kNow + 1000 card 0 is free.
  EXPECT_EQ(plan.Earliest(Whole(1), 60, -1, kNow + 1000, false).start, kNow + 1000);
  // Two cards for 100 s: card 0 from 900, card 1 in [now, 400] or from 1500: at kNow + 1500.
  EXPECT_EQ(plan.Earliest(Whole(2), 100, -1, kNow, false).start, kNow + 1500);
  // The same on one unit, through EarliestOnUnit's candidate times.
  EXPECT_EQ(plan.Earliest(Whole(1), 600, -1, kNow + 950, false).start, kNow + 950);
}

TEST(CapacityTest, MultiGpuFitsExactlyIntoAGap) {
  // Card 0 free from kNow + 100; card 1 busy until kNow + 300, then reserved [500, 600).
  ClusterState s = Nodes(1, 2);
  s.running.push_back(Busy(1, {0}, kNow - 10, 110));
  s.running.push_back(Busy(2, {1}, kNow - 10, 310));
  Policy p;
  CapacityPlan plan(s, p, kNow);
  Placement res;
  res.start = kNow + 500;
  res.units = {1};
  plan.Commit(res, Whole(1), kNow + 500, kNow + 600);
  // 200 s fits [300, 500) exactly; 201 s must wait until 600.
  Placement fits = plan.Earliest(Whole(2), 200, -1, kNow, false);
  EXPECT_EQ(fits.start, kNow + 300);
  EXPECT_EQ(Sorted(fits.units), (std::vector<int>{0, 1}));
  EXPECT_EQ(plan.Earliest(Whole(2), 201, -1, kNow, false).start, kNow + 600);
}

// At the same instant card 0 becomes free and card 1's last feasible start passes. The job needs
// both cards at once, which happens only after card 1's reservation ends.
TEST(CapacityTest, MultiGpuWindowOpeningAndClosingAtTheSameInstant) {
  ClusterState s = Nodes(1, 2);
  s.running.push_back(Busy(1, {0}, kNow - 10, 210));  // card 0 busy until kNow + 200
  Policy p;
  CapacityPlan plan(s, p, kNow);
  Placement res;
  res.start = kNow + 299;
  res.units = {1};
  plan.Commit(res, Whole(1), kNow + 299, kNow + 400);  // card 1 reserved [299, 400)
  // 100 s on both: card 0 from 200; card 1 in [now, 199] or from 400. Answer: 400 on both cards.
  Placement pl = plan.Earliest(Whole(2), 100, -1, kNow, false);
  EXPECT_EQ(pl.start, kNow + 400);
  EXPECT_EQ(Sorted(pl.units), (std::vector<int>{0, 1}));
}

// Multi-card reservations on random plans against a brute-force answer: the earliest instant
// (t0 or a breakpoint of some card) at which n cards, on one node when n fits in one, have
// nothing committed for the whole span. Reservations committed first leave holes before the
// cards' tails, so that both kinds of card in the sweep are exercised: those whose windows are
// read off their profiles and those read off the tails index.
TEST(CapacityTest, MultiGpuEarliestMatchesBruteForceOnRandomPlans) {
  std::uint64_t seed = 12345;
  auto next = [&seed](int n) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int>((seed >> 33) % static_cast<std::uint64_t>(n));
  };
  auto free_over = [](const Unit& u, Time s, Time e) {
    if (!u.usable) return false;
    MiB at = 0;  // value in force at s
    for (const auto& [t, v] : u.profile) {
      if (t <= s) {
        at = v;
      } else if (t < e && v != 0) {
        return false;
      }
    }
    return at == 0;
  };
  int checked = 0;
  for (int round = 0; round < 300; ++round) {
    const int nodes = 1 + next(4);
    const int per_node = 2 + next(4);
    ClusterState s = Nodes(nodes, per_node);
    for (int g = 0; g < static_cast<int>(s.gpus.size()); ++g) {
      if (next(3) != 0) s.running.push_back(Busy(g + 1, {g}, kNow - 10, 20 + 100 * next(8)));
    }
    if (next(5) == 0) s.gpus[next(static_cast<int>(s.gpus.size()))].drained = true;
    Policy p;
    CapacityPlan plan(s, p, kNow);
    for (int k = 0; k < 6; ++k) {  // reservations, placed as the scheduler would
      const int n = 1 + next(per_node);
      const Duration d = 50 + 50 * next(6);
      const Time not_before = kNow + 100 * next(10);
      Placement r = plan.Earliest(Whole(n), d, -1, not_before, false);
      if (r.start != kNever) plan.Commit(r, Whole(n), r.start, r.start + d);
    }
    for (int q = 0; q < 10; ++q) {
      const int n = 2 + next(static_cast<int>(s.gpus.size()) - 1);
      Duration d = 1 + 40 * next(10);
      // Sometimes exactly a card's longest hole: the edge between the two kinds of card.
      const Unit& some = plan.units()[static_cast<size_t>(next(static_cast<int>(s.gpus.size())))];
      if (next(3) == 0 && some.max_hole > 0) d = some.max_hole;
      const Time t0 = kNow + 25 * next(20);
      std::vector<Time> candidates{t0};
      for (const Unit& u : plan.units()) {
        for (const auto& bp : u.profile) {
          if (bp.first > t0) candidates.push_back(bp.first);
        }
      }
      std::sort(candidates.begin(), candidates.end());
      Time want = kNever;
      for (Time t : candidates) {
        std::vector<int> count(static_cast<size_t>(nodes), 0);
        int total = 0;
        for (const Unit& u : plan.units()) {
          if (!free_over(u, t, t + d)) continue;
          ++count[static_cast<size_t>(u.node)];
          ++total;
        }
        const bool fits = n <= per_node ? *std::max_element(count.begin(), count.end()) >= n : total >= n;
        if (fits) {
          want = t;
          break;
        }
      }
      Placement got = plan.Earliest(Whole(n), d, -1, t0, false);
      ASSERT_EQ(got.start, want) << "round " << round << " query " << q << ": " << n << " cards for " << d << " s";
      if (want == kNever) continue;
      ASSERT_EQ(got.units.size(), static_cast<size_t>(n));
      for (int ui : got.units) {
        EXPECT_TRUE(free_over(plan.units()[ui], got.start, got.start + d)) << "round " << round;
        if (n <= per_node) {
          EXPECT_EQ(plan.units()[ui].node, plan.units()[got.units[0]].node);
        }
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 1000);  // most queries find a start: the comparison is not vacuous
}

TEST(CapacityTest, SetRunningEndMovesTheRelease) {
  ClusterState s = Nodes(1, 1);
  s.running.push_back(Busy(1, {0}, kNow - 10, 10010));  // until kNow + 10000
  Policy p;
  CapacityPlan plan(s, p, kNow);
  EXPECT_EQ(plan.Earliest(Whole(1), 60, -1, kNow, false).start, kNow + 10000);
  EXPECT_EQ(plan.SetRunningEnd(0, kNow + 120), kNow + 10000);  // returns the old end
  EXPECT_EQ(plan.Earliest(Whole(1), 60, -1, kNow, false).start, kNow + 120);
  EXPECT_EQ(plan.SetRunningEnd(0, kNow + 10000), kNow + 120);
  EXPECT_EQ(plan.Earliest(Whole(1), 60, -1, kNow, false).start, kNow + 10000);
  EXPECT_EQ(plan.SetRunningEnd(5, kNow), kNever);  // no such running job
}

TEST(CapacityTest, CommitNowUsesCapacityNow) {
  ClusterState s = Nodes(1, 1);
  Policy p;
  CapacityPlan plan(s, p, kNow);
  Placement pl = plan.Earliest(Whole(1), 600, -1, kNow, true);
  ASSERT_EQ(pl.start, kNow);
  plan.Commit(pl, Whole(1), kNow, kNow + 600);
  EXPECT_FALSE(plan.PhysicallyFitsNow(Whole(1)));
  EXPECT_FALSE(plan.PhysicallyFitsNow(Share(1)));
  EXPECT_EQ(plan.Earliest(Whole(1), 60, -1, kNow, false).start, kNow + 600);
}

// ---- Bookings ------------------------------------------------------------------------------

TEST(CapacityTest, BookingsBindOthersButNotTheirOwner) {
  ClusterState s = Nodes(1, 1);
  Booking b;
  b.id = 1;
  b.user = "bob";
  b.alloc.gpus = {0};
  b.start = kNow + 100;
  b.end = kNow + 1000;
  s.bookings.push_back(b);
  Policy p;
  CapacityPlan plan(s, p, kNow);
  const int bob = plan.UserId("bob");
  const int alice = plan.UserId("alice");
  EXPECT_GE(bob, 0);
  EXPECT_EQ(alice, -1);  // holds no booking
  EXPECT_TRUE(plan.PhysicallyFitsNow(Whole(1)));  // bookings are not physical use
  // alice: 50 s ends before the booking; 200 s would run into it and waits for its end.
  EXPECT_EQ(plan.Earliest(Whole(1), 50, alice, kNow, true).start, kNow);
  EXPECT_EQ(plan.Earliest(Whole(1), 200, alice, kNow, true).start, kNever);
  EXPECT_EQ(plan.Earliest(Whole(1), 200, alice, kNow, false).start, kNow + 1000);
  EXPECT_EQ(plan.Earliest(Whole(1), 200, alice, kNow, true, Holds::kNone).start, kNow);
  // bob uses his own booking freely.
  EXPECT_EQ(plan.Earliest(Whole(1), 2000, bob, kNow, true).start, kNow);
  // Shares and multi-card requests of others are bound too.
  EXPECT_EQ(plan.Earliest(Share(1024), 200, alice, kNow, false).start, kNow + 1000);
}

TEST(CapacityTest, BookedShareLeavesTheRestOfTheCard) {
  ClusterState s = Nodes(1, 1, k40G);
  Booking b;
  b.user = "bob";
  b.alloc.gpus = {0};
  b.alloc.memory = 30720;  // 30G of the 40G card booked over [now, now + 1000)
  b.start = kNow;
  b.end = kNow + 1000;
  s.bookings.push_back(b);
  Policy p;
  CapacityPlan plan(s, p, kNow);
  EXPECT_EQ(plan.Earliest(Share(10240), 600, -1, kNow, true).start, kNow);  // 30 + 10 = 40
  EXPECT_EQ(plan.Earliest(Share(10241), 600, -1, kNow, false).start, kNow + 1000);
  EXPECT_EQ(plan.Earliest(Whole(1), 600, -1, kNow, false).start, kNow + 1000);
}

TEST(CapacityTest, PastBookingsAreIgnored) {
  ClusterState s = Nodes(1, 1);
  Booking b;
  b.user = "bob";
  b.alloc.gpus = {0};
  b.start = kNow - 1000;
  b.end = kNow;  // just ended
  s.bookings.push_back(b);
  Policy p;
  CapacityPlan plan(s, p, kNow);
  EXPECT_EQ(plan.UserId("bob"), -1);
  EXPECT_EQ(plan.Earliest(Whole(1), 600, -1, kNow, true).start, kNow);
}

// ---- Bookings: borrowing (Holds::kBorrow) and preferences -------------------------------------

Booking BookFor(std::string user, std::vector<int> cards, Time start, Time end, MiB memory = 0,
                int mig = -1) {
  Booking b;
  b.user = std::move(user);
  b.alloc.gpus = std::move(cards);
  b.alloc.memory = memory;
  b.alloc.mig = mig;
  b.start = start;
  b.end = end;
  return b;
}

// A borrower sees no booking at all, but still every running job and reservation.
TEST(CapacityBookingBackfillTest, BorrowIgnoresBookingsButNotJobsOrReservations) {
  ClusterState s = Nodes(1, 3);
  s.bookings.push_back(BookFor("bob", {0}, kNow, kNow + 1000));       // under way
  s.bookings.push_back(BookFor("bob", {1}, kNow + 100, kNow + 900));  // begins later
  s.running.push_back(Busy(1, {2}, kNow - 10, 5000));
  Policy p;
  CapacityPlan plan(s, p, kNow);
  const int alice = plan.UserId("alice");
  EXPECT_TRUE(plan.HasBookings());
  EXPECT_EQ(plan.Earliest(Whole(1), 3600, alice, kNow, true).start, kNever);
  Placement borrowed = plan.Earliest(Whole(1), 3600, alice, kNow, true, Holds::kBorrow);
  EXPECT_EQ(borrowed.start, kNow);
  EXPECT_NE(borrowed.units, (std::vector<int>{2}));  // not on the running job
  EXPECT_EQ(plan.Earliest(Whole(2), 3600, alice, kNow, true, Holds::kBorrow).units, (std::vector<int>{0, 1}));
  EXPECT_EQ(plan.Earliest(Whole(3), 60, alice, kNow, true, Holds::kBorrow).start, kNever);
  // A reservation on card 0 binds borrowers like everyone.
  Placement res;
  res.start = kNow + 200;
  res.units = {0};
  plan.Commit(res, Whole(1), kNow + 200, kNow + 800);
  EXPECT_EQ(plan.Earliest(Whole(1), 3600, alice, kNow, true, Holds::kBorrow).units, (std::vector<int>{1}));
  EXPECT_EQ(plan.Earliest(Whole(2), 3600, alice, kNow, true, Holds::kBorrow).start, kNever);
  // Reservations respect the bookings unless asked otherwise: card 1 after bob's second booking.
  EXPECT_EQ(plan.Earliest(Whole(1), 3600, alice, kNow, false).start, kNow + 900);
}

// Among cards free at the same time, the owner takes his booked ones first, a borrower those
// nobody booked first; a job that neither owns nor borrows takes what it took without bookings.
TEST(CapacityBookingBackfillTest, OwnerPrefersBookedCardsBorrowerUnbookedOnes) {
  ClusterState s = Nodes(1, 3);
  s.bookings.push_back(BookFor("bob", {1}, kNow + 1800, kNow + 7200));  // within an hour's span
  s.bookings.push_back(BookFor("carol", {0}, kNow - 100, kNow + 7200));
  Policy p;
  CapacityPlan plan(s, p, kNow);
  const int bob = plan.UserId("bob"), carol = plan.UserId("carol"), alice = plan.UserId("alice");
  EXPECT_EQ(plan.Earliest(Whole(1), kHour, bob, kNow, true).units, (std::vector<int>{1}));
  EXPECT_EQ(plan.Earliest(Whole(1), kHour, carol, kNow, true).units, (std::vector<int>{0}));
  EXPECT_EQ(plan.Earliest(Whole(1), kHour, alice, kNow, true, Holds::kBorrow).units, (std::vector<int>{2}));
  EXPECT_EQ(plan.Earliest(Whole(1), kHour, alice, kNow, true).units, (std::vector<int>{2}));  // the only one
  // bob's booking does not overlap a 10-minute job: no preference, the first card he may use.
  EXPECT_EQ(plan.Earliest(Whole(1), 600, bob, kNow, true).units, (std::vector<int>{1}));
  EXPECT_EQ(plan.Earliest(Whole(1), 600, alice, kNow, true, Holds::kBorrow).units, (std::vector<int>{1}));
  // bob borrowing carol's card still goes to his own first, then to the unbooked one.
  EXPECT_EQ(plan.Earliest(Whole(2), kHour, bob, kNow, true, Holds::kBorrow).units, (std::vector<int>{1, 2}));
}

// Several cards: the owner's booked cards come before NVLink pairs and best fit, and the node
// with his booked cards before the others; a borrower keeps off booked cards while it can.
TEST(CapacityBookingBackfillTest, MultiCardPreferences) {
  {
    ClusterState s = EightWithPairs();
    s.bookings.push_back(BookFor("bob", {3, 4}, kNow, kNow + 7200));  // two cards, not a pair
    Policy p;
    CapacityPlan plan(s, p, kNow);
    EXPECT_EQ(plan.Earliest(Whole(2), kHour, plan.UserId("bob"), kNow, true).units, (std::vector<int>{3, 4}));
    EXPECT_EQ(plan.Earliest(Whole(3), kHour, plan.UserId("bob"), kNow, true).units,
              (std::vector<int>{2, 3, 4}));
    EXPECT_EQ(plan.Earliest(Whole(2), kHour, -1, kNow, true, Holds::kBorrow).units, (std::vector<int>{0, 1}));
  }
  {
    ClusterState s = EightWithPairs();
    s.bookings.push_back(BookFor("bob", {0, 1, 2, 3, 4, 5}, kNow, kNow + 7200));
    Policy p;
    CapacityPlan plan(s, p, kNow);
    EXPECT_EQ(plan.Earliest(Whole(2), kHour, -1, kNow, true, Holds::kBorrow).units, (std::vector<int>{6, 7}));
    std::vector<int> three = plan.Earliest(Whole(3), kHour, -1, kNow, true, Holds::kBorrow).units;
    ASSERT_EQ(three.size(), 3u);
    EXPECT_EQ(std::count_if(three.begin(), three.end(), [](int u) { return u >= 6; }), 2);
  }
  {
    ClusterState s = Nodes(2, 4);  // units 0-3 on node 0, 4-7 on node 1
    s.bookings.push_back(BookFor("bob", {5, 6}, kNow, kNow + 7200));
    Policy p;
    CapacityPlan plan(s, p, kNow);
    const int bob = plan.UserId("bob");
    EXPECT_EQ(plan.Earliest(Whole(2), kHour, bob, kNow, true).units, (std::vector<int>{5, 6}));
    EXPECT_EQ(plan.Earliest(Whole(2), kHour, -1, kNow, true, Holds::kBorrow).units, (std::vector<int>{0, 1}));
    std::vector<int> borrower = plan.Earliest(Whole(4), kHour, -1, kNow, true, Holds::kBorrow).units;
    EXPECT_EQ(borrower, (std::vector<int>{0, 1, 2, 3}));
    // Larger than a node: the node with the owner's cards first, and those cards.
    std::vector<int> wide = plan.Earliest(Whole(5), kHour, bob, kNow, true).units;
    EXPECT_EQ(Sorted(wide), (std::vector<int>{0, 4, 5, 6, 7}));
    s.bookings.clear();
    CapacityPlan plain(s, p, kNow);
    EXPECT_EQ(plain.Earliest(Whole(5), kHour, -1, kNow, true).units, (std::vector<int>{0, 1, 2, 3, 4}));
  }
}

// Shares and slices follow the same preferences.
TEST(CapacityBookingBackfillTest, SharesAndSlicesPreferences) {
  {
    ClusterState s = Nodes(1, 2, k40G);
    s.bookings.push_back(BookFor("bob", {1}, kNow, kNow + 7200, /*memory=*/20480));
    Policy p;
    CapacityPlan plan(s, p, kNow);
    EXPECT_EQ(plan.Earliest(Share(10240), kHour, plan.UserId("bob"), kNow, true).units,
              (std::vector<int>{1}));
    EXPECT_EQ(plan.Earliest(Share(10240), kHour, -1, kNow, true, Holds::kBorrow).units,
              (std::vector<int>{0}));
    // A share that neither owns nor borrows: best fit, the booked card's free 20G (as before).
    EXPECT_EQ(plan.Earliest(Share(20480), kHour, -1, kNow, true).units, (std::vector<int>{1}));
  }
  {
    ClusterState s = MigCluster();
    s.bookings.push_back(BookFor("bob", {2}, kNow, kNow + 7200, 0, /*mig=*/3));  // unit 11
    Policy p;
    CapacityPlan plan(s, p, kNow);
    EXPECT_EQ(plan.Earliest(Mig("1g.10gb"), kHour, plan.UserId("bob"), kNow, true).units,
              (std::vector<int>{11}));
    Placement borrowed = plan.Earliest(Mig("1g.10gb"), kHour, -1, kNow, true, Holds::kBorrow);
    ASSERT_EQ(borrowed.units.size(), 1u);
    EXPECT_NE(borrowed.units[0], 11);
  }
}

// ---- Possible / PhysicallyFitsNow ------------------------------------------------------------

TEST(CapacityTest, Possible) {
  ClusterState s = Nodes(2, 4, k40G);
  s.gpus.push_back(Card(8, k80G, 2));
  Gpu mig = Card(9, k80G, 2);
  mig.mig = {{"", "3g.40gb", 40960}};
  s.gpus.push_back(mig);
  Policy p;
  CapacityPlan plan(s, p, kNow);
  EXPECT_TRUE(plan.Possible(Whole(1)));
  EXPECT_TRUE(plan.Possible(Whole(4)));
  EXPECT_TRUE(plan.Possible(Whole(9)));    // spread over nodes: 9 whole cards exist
  EXPECT_FALSE(plan.Possible(Whole(10)));  // the MIG card is not a whole card
  EXPECT_FALSE(plan.Possible(Whole(0)));
  EXPECT_TRUE(plan.Possible(Share(k80G)));       // the 80G card
  EXPECT_FALSE(plan.Possible(Share(k80G + 1)));  // larger than any card
  EXPECT_FALSE(plan.Possible(Share(0)));
  EXPECT_TRUE(plan.Possible(Mig("3g.40gb")));
  EXPECT_FALSE(plan.Possible(Mig("1g.10gb")));
}

TEST(CapacityTest, WhyNeverFitsSaysWhatTheCardsOffer) {
  std::vector<Gpu> plain = {Card(0, k40G), Card(1, k80G)};
  EXPECT_EQ(WhyNeverFits(plain, Whole(3)), "3 GPUs, but this server has 2 whole GPUs");
  EXPECT_EQ(WhyNeverFits(plain, Share(k80G + 1024)),
            "a memory share of " + FormatMemory(k80G + 1024) + ", larger than any card (the largest has " +
                FormatMemory(k80G) + ")");
  EXPECT_EQ(WhyNeverFits(plain, Mig("1g.10gb")), "MIG profile 1g.10gb, which no card here offers (no card is in MIG mode)");

  Gpu mig = Card(2, k80G);
  mig.mig = {{"", "3g.40gb", 40960}, {"", "1g.10gb", 10240}};
  std::vector<Gpu> mixed = plain;
  mixed.push_back(mig);
  EXPECT_EQ(WhyNeverFits(mixed, Whole(3)), "3 GPUs, but this server has 2 whole GPUs (cards in MIG mode are used by slice)");
  const std::string offered = Join(MigProfiles(mixed, false), ", ");
  EXPECT_EQ(WhyNeverFits(mixed, Mig("7g.80gb")), "MIG profile 7g.80gb, which no card here offers (offered: " + offered + ")");

  std::vector<Gpu> all_mig = {mig};
  EXPECT_EQ(WhyNeverFits(all_mig, Whole(1)),
            "1 GPU, but every card here is in MIG mode: ask for a slice with --mig (" + offered + ")");
  EXPECT_EQ(WhyNeverFits({}, Share(1024)), "a memory share of " + FormatMemory(1024) + ", but this server has no GPUs");
  // Each refused request is one that Possible refuses.
  ClusterState s;
  s.gpus = mixed;
  CapacityPlan plan(s, Policy{}, kNow);
  EXPECT_FALSE(plan.Possible(Whole(3)));
  EXPECT_FALSE(plan.Possible(Mig("7g.80gb")));
}

TEST(CapacityTest, PhysicallyFitsNow) {
  // Node 0: cards 0-3; node 1: cards 4-7. Cards 0, 1, 4 busy: 2 free on node 0, 3 on node 1.
  ClusterState s = Nodes(2, 4, k40G);
  s.running.push_back(Busy(1, {0, 1}, kNow - 10, 1000));
  s.running.push_back(Busy(2, {4}, kNow - 10, 1000));
  Policy p;
  CapacityPlan plan(s, p, kNow);
  EXPECT_TRUE(plan.PhysicallyFitsNow(Whole(3)));   // node 1
  EXPECT_FALSE(plan.PhysicallyFitsNow(Whole(4)));  // 5 free, but at most 3 on one node
  EXPECT_TRUE(plan.PhysicallyFitsNow(Share(k40G)));
  EXPECT_FALSE(plan.PhysicallyFitsNow(Mig("1g.10gb")));
}

}  // namespace
}  // namespace capacity_test
}  // namespace rota
