// Lines in the shape Slurm 22.05.8 printed them for `sinfo -h -N -O NodesFormat()` on the test
// clusters (one and two nodes, a node drained with a reason, a slurmd stopped).
#include "slurm/nodes.h"

#include <gtest/gtest.h>

#include "testing/slurm_lines.h"

namespace rota::slurm {
namespace {

std::string NodeLine(std::initializer_list<std::string_view> values) {
  return testing::SlurmLine(values, kNodesDelimiter);
}

TEST(NodesTest, ReadsEachNodeOnceWithItsGpus) {
  const std::string text = NodeLine({"gpu1", "mixed", "none", "gpu:a100:4(S:0-1),gpu:t4:2",
                                     "gpu:a100:2(IDX:0-1),gpu:t4:1(IDX:5)"}) +
                           NodeLine({"gpu2", "drained", "fan broken", "gpu:4", "gpu:3"}) +
                           NodeLine({"gpu1", "mixed", "none", "gpu:a100:4(S:0-1),gpu:t4:2",
                                     "gpu:a100:2(IDX:0-1),gpu:t4:1(IDX:5)"}) +
                           NodeLine({"cpu1", "idle", "none", "(null)", "gpu:0"});
  StatusOr<std::vector<Node>> nodes = ParseNodes(text);
  ASSERT_TRUE(nodes.ok()) << nodes.status().message();
  ASSERT_EQ(nodes->size(), 3u);
  const Node& a = (*nodes)[0];
  EXPECT_EQ(a.name, "gpu1");
  EXPECT_TRUE(a.usable);
  EXPECT_EQ(a.reason, "");
  EXPECT_EQ(a.Gpus(), 6);
  EXPECT_EQ(a.gpus_used, 3);
  ASSERT_EQ(a.gres.size(), 2u);
  EXPECT_EQ(a.gres[0].type, "a100");
  const Node& b = (*nodes)[1];
  EXPECT_FALSE(b.usable);
  EXPECT_EQ(b.reason, "fan broken");
  EXPECT_EQ(b.Gpus(), 4);
  EXPECT_EQ(b.gpus_used, 3);
  EXPECT_EQ((*nodes)[2].Gpus(), 0);
  EXPECT_EQ(NodesFormat().substr(0, 11), std::string("NodeList:0") + kNodesDelimiter);
}

// The line 22.05.8 printed for a node whose four GPUs are each their own type with four shards,
// one job on card2, one on card0 and card3, two of card1's shards held (its count shows 1).
TEST(NodesTest, CardsOfTheirOwnTypeAreNamedWithTheirShards) {
  const std::string pinned =
      NodeLine({"n1", "mixed", "none",
                "gpu:c0:1,gpu:c1:1,gpu:c2:1,gpu:c3:1,shard:c0:4,shard:c1:4,shard:c2:4,shard:c3:4",
                "gpu:c0:1(IDX:0),gpu:c1:0(IDX:N/A),gpu:c2:1(IDX:2),gpu:c3:1(IDX:3),shard:c0:0(IDX:N/A),"
                "shard:c1:1(IDX:1),shard:c2:0(IDX:N/A),shard:c3:0(IDX:N/A)"});
  StatusOr<std::vector<Node>> nodes = ParseNodes(pinned);
  ASSERT_TRUE(nodes.ok()) << nodes.status().message();
  const Node& n = (*nodes)[0];
  EXPECT_EQ(n.Gpus(), 4);
  EXPECT_EQ(n.gpus_used, 3);
  EXPECT_EQ(n.CardTypes(), (std::vector<std::string>{"c0", "c1", "c2", "c3"}));
  EXPECT_EQ(n.Shards("c1"), 4);
  EXPECT_EQ(n.Shards("c9"), 0);
  EXPECT_EQ(n.Shards(""), 0);

  // Slurm chooses among cards of one type, or untyped ones: no card can be asked for by name.
  for (const char* gres : {"gpu:4", "gpu:a100:2", "gpu:c0:1,gpu:c0:1", "gpu:c0:1,gpu:2", "gpu:c0:1,gpu:c1:2"}) {
    StatusOr<std::vector<Node>> other = ParseNodes(NodeLine({"n2", "idle", "none", gres, "gpu:0"}));
    ASSERT_TRUE(other.ok()) << gres;
    EXPECT_TRUE((*other)[0].CardTypes().empty()) << gres;
  }
  StatusOr<std::vector<Node>> untyped_shards =
      ParseNodes(NodeLine({"n3", "idle", "none", "gpu:c0:1,gpu:c1:1,shard:8", "gpu:0"}));
  ASSERT_TRUE(untyped_shards.ok());
  EXPECT_EQ((*untyped_shards)[0].CardTypes().size(), 2u);
  EXPECT_EQ((*untyped_shards)[0].Shards("c0"), 0);  // shards of no card
}

TEST(NodesTest, MigSlicesAreNotWholeGpus) {
  for (const char* t : {"1g.10gb", "a100_1g.10gb", "a100-sxm4-80gb_3g.40gb", "1g.10gb+me", "7g.80gb"}) {
    EXPECT_NE(MigProfile(t), "") << t;
  }
  EXPECT_EQ(MigProfile("a100_1g.10gb"), "1g.10gb");
  EXPECT_EQ(MigProfile("1g.10gb+me"), "1g.10gb+me");
  for (const char* t : {"", "a100", "card0", "g.10gb", "1g.gb", "1g.10", "xg.10gb", "1g.10gbx", "1g10gb"}) {
    EXPECT_EQ(MigProfile(t), "") << t;
  }
  EXPECT_TRUE(IsWholeGpu(Gres{"gpu", "a100", 2, {}}));
  EXPECT_TRUE(IsWholeGpu(Gres{"gpu", "", 2, {}}));
  EXPECT_FALSE(IsWholeGpu(Gres{"gpu", "a100_1g.10gb", 2, {}}));
  EXPECT_FALSE(IsWholeGpu(Gres{"shard", "a100", 2, {}}));
  EXPECT_TRUE(IsGpuSlice(Gres{"gpu", "a100_1g.10gb", 1, {}}));
  EXPECT_FALSE(IsGpuSlice(Gres{"gpu", "a100", 1, {}}));
  EXPECT_FALSE(IsGpuSlice(Gres{"shard", "1g.10gb", 1, {}}));
  StatusOr<std::vector<Node>> nodes =
      ParseNodes(NodeLine({"n1", "mixed", "none", "gpu:card0:1,gpu:card1:1,gpu:a100_1g.10gb:3",
                           "gpu:card0:1(IDX:0),gpu:card1:0(IDX:N/A),gpu:a100_1g.10gb:2(IDX:2-3)"}));
  ASSERT_TRUE(nodes.ok()) << nodes.status().message();
  const Node& n = (*nodes)[0];
  EXPECT_EQ(n.Gpus(), 2);
  EXPECT_EQ(n.gpus_used, 1);  // the slices in use are not whole GPUs in use
  EXPECT_EQ(n.CardTypes(), (std::vector<std::string>{"card0", "card1"}));
}

TEST(NodesTest, OnlyNodesThatTakeJobsAreUsable) {
  for (const char* s :
       {"idle", "mixed", "allocated", "completing", "planned", "reserved", "idle-", "mixed$"}) {
    EXPECT_TRUE(UsableState(s)) << s;
  }
  for (const char* s :
       {"down", "down*", "idle*", "mixed*", "drained", "draining", "drained*", "fail", "failing", "inval",
        "unknown", "idle~", "idle#", "idle%", "idle!", "idle@", "", "IDLE"}) {
    EXPECT_FALSE(UsableState(s)) << s;
  }
}

TEST(NodesTest, RefusesWhatItCannotRead) {
  EXPECT_FALSE(ParseNodes(NodeLine({"", "idle", "none", "gpu:4", "gpu:0"})).ok());
  EXPECT_FALSE(ParseNodes(NodeLine({"gpu1", "idle", "none", "gpu:a:b:c:d", "gpu:0"})).ok());
  EXPECT_FALSE(ParseNodes(NodeLine({"gpu1", "idle", "none", "gpu:4", "gpu:a:b:c:d"})).ok());
  EXPECT_FALSE(ParseNodes(NodeLine({"gpu1", "idle"})).ok());
  EXPECT_TRUE(ParseNodes("").ok());
}

}  // namespace
}  // namespace rota::slurm
