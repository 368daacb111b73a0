#include "daemon/slurm_cards.h"

#include <gtest/gtest.h>

namespace rota::daemon {
namespace {

slurm::Node NodeOf(std::string name, std::vector<slurm::Gres> gres, bool usable = true,
                   std::string state = "idle", std::string reason = "") {
  slurm::Node n;
  n.name = std::move(name);
  n.gres = std::move(gres);
  n.usable = usable;
  n.state = std::move(state);
  n.reason = std::move(reason);
  return n;
}

TEST(SlurmCardsTest, EveryNodesGpusAreCardsOnThatNode) {
  std::vector<slurm::Node> nodes = {
      NodeOf("gpu1", {{"gpu", "a100", 2, {}}, {"gpu", "", 1, {}}, {"shard", "", 8, {}}}),
      NodeOf("cpu1", {}),
      NodeOf("gpu2", {{"gpu", "", 2, {}}}, false, "drained", "fan broken"),
  };
  std::vector<device::GpuInfo> cards = CardsOfNodes(nodes, "NVIDIA L40S", 46068);
  ASSERT_EQ(cards.size(), 5u);
  EXPECT_EQ(cards[0].uuid, "SLURM-gpu1-0");
  EXPECT_EQ(cards[0].name, "a100");
  EXPECT_EQ(cards[2].uuid, "SLURM-gpu1-2");
  EXPECT_EQ(cards[2].name, "NVIDIA L40S");  // untyped: the configured model
  EXPECT_EQ(cards[2].node, "gpu1");
  EXPECT_EQ(cards[3].uuid, "SLURM-gpu2-0");
  EXPECT_EQ(cards[3].index, 3);
  EXPECT_EQ(cards[4].memory_total, 46068);
  EXPECT_EQ(cards[4].util_gpu, -1);  // Slurm does not say: never idle by its readings
  EXPECT_TRUE(cards[0].out_of_service.empty());
  // A drained node takes no new work, but is not a failing card: its running jobs go on.
  EXPECT_TRUE(cards[3].health.ok());
  EXPECT_EQ(cards[3].out_of_service, "Slurm node gpu2 is drained: fan broken");
  // Typed cards are asked for by type (Slurm chooses among the type's), untyped ones not at all.
  EXPECT_EQ(cards[0].cluster_name, "a100");
  EXPECT_EQ(cards[1].cluster_name, "a100");
  EXPECT_EQ(cards[2].cluster_name, "");
  for (const device::GpuInfo& c : cards) {
    EXPECT_EQ(c.cluster_shares, 0) << c.uuid;  // the untyped shards belong to no card Rota can name
  }
}

TEST(SlurmCardsTest, MigSlicesOfATypeAreOneCardInMigModeAndTheCardsAfterKeepTheirIndices) {
  std::vector<slurm::Node> nodes = {
      NodeOf("gpu1", {{"gpu", "a100_1g.10gb", 3, {}}, {"gpu", "a100", 1, {}}, {"gpu", "a100_3g.40gb", 0, {}}}),
      NodeOf("gpu2", {{"gpu", "2g.20gb", 2, {}}}, false, "down*"),
  };
  std::vector<device::GpuInfo> cards = CardsOfNodes(nodes, "NVIDIA A100-SXM4-80GB", 81920);
  ASSERT_EQ(cards.size(), 3u);  // a type with no slices is no card
  const device::GpuInfo& slices = cards[0];
  EXPECT_EQ(slices.uuid, "SLURM-gpu1-a100_1g.10gb");
  EXPECT_TRUE(slices.mig_enabled);
  EXPECT_EQ(slices.cluster_name, "a100_1g.10gb");
  ASSERT_EQ(slices.mig.size(), 3u);
  EXPECT_EQ(slices.mig[2].uuid, "SLURM-gpu1-a100_1g.10gb-2");
  EXPECT_EQ(slices.mig[0].profile, "1g.10gb");
  EXPECT_EQ(slices.mig[0].memory_total, 10240);
  // Slurm numbers the slices among the node's GPUs: the whole card after them is its fourth.
  EXPECT_EQ(cards[1].uuid, "SLURM-gpu1-3");
  EXPECT_EQ(cards[1].index, 1);
  EXPECT_EQ(cards[1].cluster_name, "a100");
  EXPECT_EQ(cards[2].mig.size(), 2u);
  EXPECT_EQ(cards[2].mig[0].memory_total, 20480);
  EXPECT_EQ(cards[2].out_of_service, "Slurm node gpu2 is down*");
}

TEST(SlurmCardsTest, CardsOfTheirOwnTypesAreNamedByThemWithTheirShards) {
  std::vector<slurm::Node> nodes = {
      NodeOf("gpu1", {{"gpu", "c0", 1, {}}, {"gpu", "c1", 1, {}}, {"shard", "c0", 4, {}}, {"shard", "c1", 8, {}}}),
      NodeOf("gpu2", {{"gpu", "c0", 1, {}}, {"gpu", "c1", 1, {}}}),
  };
  std::vector<device::GpuInfo> cards = CardsOfNodes(nodes, "NVIDIA L40S", 46068);
  ASSERT_EQ(cards.size(), 4u);
  EXPECT_EQ(cards[1].uuid, "SLURM-gpu1-1");
  EXPECT_EQ(cards[1].name, "NVIDIA L40S");  // the type names the card, not its model
  EXPECT_EQ(cards[1].cluster_name, "c1");
  EXPECT_EQ(cards[0].cluster_shares, 4);
  EXPECT_EQ(cards[1].cluster_shares, 8);
  EXPECT_EQ(cards[3].cluster_name, "c1");
  EXPECT_EQ(cards[3].cluster_shares, 0);  // pinned, but without shards
}

}  // namespace
}  // namespace rota::daemon
