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
  for (const device::GpuInfo& c : cards) {
    EXPECT_EQ(c.cluster_name, "") << c.uuid;  // Slurm chooses among a type's cards
    EXPECT_EQ(c.cluster_shares, 0) << c.uuid;  // the untyped shards belong to no card Rota can name
  }
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
