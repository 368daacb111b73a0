// The GPU inventory alone (inventory.h): the cards of a sample (NVLink peers, MIG slices, device
// nodes), an allocation in durable terms and back after the cards change, what a job is told of
// its cards, the device nodes it is refused, and finding a card by index or UUID.
#include "daemon/inventory.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "exec/device_filter.h"

namespace rota::daemon {
namespace inventory_test {
namespace {

device::GpuInfo Card(int index, int minor) {
  device::GpuInfo info;
  info.index = index;
  info.uuid = "GPU-" + std::to_string(index);
  info.pci_bus_id = "00000000:0" + std::to_string(index) + ":00.0";
  info.name = "NVIDIA A100-SXM4-80GB";
  info.memory_total = 81920;
  info.minor = minor;
  return info;
}

// Three cards: 0 and 1 joined by NVLink, 2 in MIG mode with two slices.
device::Snapshot Sample() {
  device::Snapshot snap;
  snap.gpus = {Card(0, 0), Card(1, 1), Card(2, 2)};
  snap.gpus[0].nvlink_peers = {snap.gpus[1].pci_bus_id, "00000000:99:00.0"};  // the second is not here
  snap.gpus[1].nvlink_peers = {snap.gpus[0].pci_bus_id};
  snap.gpus[2].mig = {device::MigInstance{"MIG-a", "3g.40gb", 40960, -1, {}},
                      device::MigInstance{"MIG-b", "3g.40gb", 40960, -1, {}}};
  return snap;
}

TEST(InventoryTest, TheCardsOfASampleWithTheirLinksAndSlices) {
  Inventory inv;
  const device::Snapshot snap = Sample();
  inv.Load(&snap);
  ASSERT_EQ(inv.gpus().size(), 3u);
  EXPECT_EQ(inv.gpus()[0].nvlink, std::vector<int>{1});
  EXPECT_EQ(inv.gpus()[1].nvlink, std::vector<int>{0});
  ASSERT_EQ(inv.gpus()[2].mig.size(), 2u);
  EXPECT_EQ(inv.gpus()[2].mig[1].uuid, "MIG-b");
  EXPECT_EQ(inv.state().gpus.size(), 3u);
  inv.Load(nullptr);  // a source that cannot be read: no cards
  EXPECT_TRUE(inv.gpus().empty());
}

TEST(InventoryTest, APlacementIsKeptByUuidAndFoundAgainAfterTheCardsChange) {
  Inventory inv;
  device::Snapshot snap = Sample();
  inv.Load(&snap);
  store::JobRecord whole;
  whole.placement = inv.PlacementOf(Allocation{{0, 1}, -1, 0});
  EXPECT_EQ(whole.placement.gpu_uuids, (std::vector<std::string>{"GPU-0", "GPU-1"}));
  store::JobRecord slice;
  slice.placement = inv.PlacementOf(Allocation{{2}, 1, 0});
  EXPECT_EQ(slice.placement.mig_uuid, "MIG-b");

  // Card 0 is gone and the order changed: card 1 is now first, the MIG card second with its
  // slices swapped.
  device::Snapshot later;
  later.gpus = {snap.gpus[1], snap.gpus[2]};
  std::swap(later.gpus[1].mig[0], later.gpus[1].mig[1]);
  inv.Load(&later);
  inv.Remap(whole);
  EXPECT_EQ(whole.placement.alloc.gpus, std::vector<int>{0});  // the job runs on; card 0 holds nothing
  inv.Remap(slice);
  EXPECT_EQ(slice.placement.alloc.gpus, std::vector<int>{1});
  EXPECT_EQ(slice.placement.alloc.mig, 0);
}

TEST(InventoryTest, WhatAJobIsToldOfItsCardsAndTheNodesItIsRefused) {
  Inventory inv;
  const device::Snapshot snap = Sample();
  inv.Load(&snap);
  store::JobRecord rec;
  rec.job.id = 17;
  rec.placement = inv.PlacementOf(Allocation{{1, 0}, -1, 0});
  std::map<std::string, std::string> env = inv.Env(rec);
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "GPU-1,GPU-0");
  EXPECT_EQ(env["CUDA_DEVICE_ORDER"], "PCI_BUS_ID");
  EXPECT_EQ(env["ROTA_JOB_ID"], "17");
  EXPECT_EQ(env["ROTA_GPUS"], "1,0");
  EXPECT_FALSE(env.count("ROTA_GPU_MEM"));
  EXPECT_EQ(inv.OtherCardsDevices(rec.placement.alloc),
            (std::vector<std::pair<unsigned, unsigned>>{{exec::kNvidiaMajor, 2}}));

  store::JobRecord share;
  share.placement = inv.PlacementOf(Allocation{{0}, -1, 20480});
  EXPECT_EQ(inv.Env(share)["ROTA_GPU_MEM"], "20480M");
  store::JobRecord slice;
  slice.job.request.mig_profile = "3g.40gb";
  slice.placement = inv.PlacementOf(Allocation{{2}, 0, 0});
  env = inv.Env(slice);
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "MIG-a");
  EXPECT_EQ(env["ROTA_MIG_PROFILE"], "3g.40gb");

  // Simulated cards have no device node: nothing to refuse.
  device::Snapshot simulated = Sample();
  for (device::GpuInfo& g : simulated.gpus) g.minor = -1;
  inv.Load(&simulated);
  EXPECT_TRUE(inv.OtherCardsDevices(Allocation{{0}, -1, 0}).empty());
}

TEST(InventoryTest, ACardIsFoundByIndexUuidOrSliceAndAnUnknownOneListsTheCards) {
  Inventory inv;
  const device::Snapshot snap = Sample();
  inv.Load(&snap);
  EXPECT_EQ(*inv.Find("1"), 1u);
  EXPECT_EQ(*inv.Find("GPU-2"), 2u);
  EXPECT_EQ(*inv.Find("MIG-b"), 2u);
  const StatusOr<size_t> none = inv.Find("7");
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(none.status().message(), "no GPU '7' on this server (GPUs: 0, 1, 2; use an index or a UUID)");
}

TEST(InventoryTest, CardsOfSeveralMachinesKeepTheirNodes) {
  // A Slurm partition's cards: each machine a node of the core's, named for the engine.
  device::Snapshot snap;
  snap.gpus = {Card(0, -1), Card(1, -1), Card(2, -1), Card(3, -1)};
  snap.gpus[0].node = snap.gpus[1].node = "gpu1";
  snap.gpus[2].node = "gpu2";
  snap.gpus[3].node = "gpu1";
  Inventory inv;
  inv.Load(&snap);
  EXPECT_EQ(inv.gpus()[0].node, 0);
  EXPECT_EQ(inv.gpus()[2].node, 1);
  EXPECT_EQ(inv.gpus()[3].node, 0);
  EXPECT_EQ(inv.NodeOf(Allocation{{2}, -1, 0}), "gpu2");
  EXPECT_EQ(inv.NodeOf(Allocation{{0, 3}, -1, 0}), "gpu1");
  EXPECT_EQ(inv.NodeOf(Allocation{}), "");
  // Whole nodes of an allocation: every card of the machine, whole.
  EXPECT_EQ(inv.WholeNodesOf(Allocation{{0, 1, 2, 3}, -1, 0}), (std::vector<std::string>{"gpu1", "gpu2"}));
  EXPECT_EQ(inv.WholeNodesOf(Allocation{{0, 2, 3}, -1, 0}), std::vector<std::string>{"gpu2"});
  EXPECT_TRUE(inv.WholeNodesOf(Allocation{{0, 3}, -1, 0}).empty());
  EXPECT_TRUE(inv.WholeNodesOf(Allocation{{2}, -1, 1024}).empty());  // a share of it
  const device::Snapshot here = Sample();  // this machine's cards
  inv.Load(&here);
  EXPECT_EQ(inv.NodeOf(Allocation{{1}, -1, 0}), "");
  EXPECT_TRUE(inv.WholeNodesOf(Allocation{{0, 1, 2}, -1, 0}).empty());  // this machine has no name
  EXPECT_EQ(inv.gpus()[2].node, 0);
}

TEST(InventoryTest, ACardOfItsOwnTypeIsAskedForByNameAndSharedInWholeShards) {
  // Two Slurm nodes: gpu1's cards are their own types with 8 shards each (80 GiB: 10 GiB a
  // share); gpu2's second card is its own type without shards.
  device::Snapshot snap;
  snap.gpus = {Card(0, -1), Card(1, -1), Card(2, -1), Card(3, -1)};
  for (int i = 0; i < 4; ++i) snap.gpus[static_cast<size_t>(i)].node = i < 2 ? "gpu1" : "gpu2";
  snap.gpus[0].cluster_name = "c0";
  snap.gpus[1].cluster_name = "c1";
  snap.gpus[0].cluster_shares = snap.gpus[1].cluster_shares = 8;
  snap.gpus[2].cluster_shares = 0;
  snap.gpus[3].cluster_name = "c1";
  snap.gpus[3].cluster_shares = 0;
  Inventory inv;
  inv.Load(&snap);
  EXPECT_EQ(inv.ClusterNamesOf(Allocation{{1, 0}, -1, 0}), (std::vector<std::string>{"c1", "c0"}));
  EXPECT_TRUE(inv.ClusterNamesOf(Allocation{{0, 2}, -1, 0}).empty());  // Slurm chooses gpu2's cards
  EXPECT_EQ(inv.ClusterSharesOf(Allocation{{1}, -1, 10240}), 1);
  EXPECT_EQ(inv.ClusterSharesOf(Allocation{{1}, -1, 10241}), 2);
  EXPECT_EQ(inv.ClusterSharesOf(Allocation{{1}, -1, 81920}), 8);
  EXPECT_EQ(inv.ClusterSharesOf(Allocation{{1}, -1, 0}), 0);      // a whole card
  EXPECT_EQ(inv.ClusterSharesOf(Allocation{{3}, -1, 10240}), 0);  // no shards
  // One card Slurm cannot share, and no share runs: the core would place one there.
  EXPECT_EQ(inv.WhyNoShares(),
            "memory shares (--gpu-mem) need Slurm to share every GPU: each its own gres type with shards "
            "(gres/shard), and GPU 2 on gpu2 is not its own type; ask for whole GPUs (--gpus N)");
  EXPECT_EQ(inv.ShareGiven(10240), 10240);
  EXPECT_EQ(inv.ShareGiven(10241), 20480);  // what Slurm gives: two shares
  EXPECT_EQ(inv.ShareGiven(1), 10240);
  EXPECT_EQ(inv.ShareGiven(81920), 81920);
  EXPECT_EQ(inv.ShareGiven(90000), 90000);  // more than a card: refused as it is
  // A job outside Rota holding shards: their part of their card, in GPUs (its charge).
  EXPECT_DOUBLE_EQ(inv.ShardGpus("gpu1", "c1", 2), 0.25);
  EXPECT_DOUBLE_EQ(inv.ShardGpus("gpu1", "", 4), 0.5);    // untyped: the node's first shared card
  EXPECT_DOUBLE_EQ(inv.ShardGpus("gpu1", "c0", 12), 1.0);  // never more than the card
  EXPECT_DOUBLE_EQ(inv.ShardGpus("gpu2", "c1", 2), 0.0);   // that card has no shards
  EXPECT_DOUBLE_EQ(inv.ShardGpus("gpu9", "c0", 2), 0.0);   // no such node
  EXPECT_DOUBLE_EQ(inv.ShardGpus("gpu1", "c7", 2), 0.0);   // no such card
  EXPECT_DOUBLE_EQ(inv.ShardGpus("gpu1", "c0", 0), 0.0);

  snap.gpus.resize(2);  // gpu1 alone: every card shared
  inv.Load(&snap);
  EXPECT_EQ(inv.WhyNoShares(), "");
  snap.gpus[1].cluster_shares = 0;
  inv.Load(&snap);
  EXPECT_NE(inv.WhyNoShares().find("GPU 1 on gpu1 has no shards"), std::string::npos) << inv.WhyNoShares();

  // Three shares of a 80 GiB card: 27,306 MiB each once rounded down; three fit the card.
  snap.gpus = {Card(0, -1)};
  snap.gpus[0].node = "gpu1";
  snap.gpus[0].cluster_name = "c0";
  snap.gpus[0].cluster_shares = 3;
  inv.Load(&snap);
  EXPECT_EQ(inv.ShareGiven(20000), 27306);
  EXPECT_LE(3 * inv.ShareGiven(20000), 81920);
  EXPECT_EQ(inv.ClusterSharesOf(Allocation{{0}, -1, inv.ShareGiven(20000)}), 1);

  const device::Snapshot here = Sample();  // this machine's cards: shared as Rota places them
  inv.Load(&here);
  EXPECT_EQ(inv.WhyNoShares(), "");
  EXPECT_EQ(inv.ShareGiven(10241), 10241);
  EXPECT_TRUE(inv.ClusterNamesOf(Allocation{{0}, -1, 0}).empty());
}

TEST(InventoryTest, MigSlicesHeldOutsideRotaAreChargedAsARotaJobOnOneIs) {
  // A Slurm node's whole card and its slices of one gres type (one card in MIG mode, 80 GiB).
  device::Snapshot snap;
  snap.gpus = {Card(0, -1), Card(1, -1)};
  for (device::GpuInfo& g : snap.gpus) g.node = "gpu1";
  snap.gpus[0].cluster_name = "card0";
  snap.gpus[1].cluster_name = "a100_1g.10gb";
  for (int k = 0; k < 3; ++k) snap.gpus[1].mig.push_back({"S-" + std::to_string(k), "1g.10gb", 10240, -1, {}});
  Inventory inv;
  inv.Load(&snap);
  EXPECT_DOUBLE_EQ(inv.SliceGpus("gpu1", "a100_1g.10gb", 1), 0.125);
  EXPECT_DOUBLE_EQ(inv.SliceGpus("gpu1", "a100_1g.10gb", 2), 0.25);
  EXPECT_DOUBLE_EQ(inv.SliceGpus("gpu1", "card0", 1), 0.0);        // a whole card, not slices
  EXPECT_DOUBLE_EQ(inv.SliceGpus("gpu1", "a100_3g.40gb", 1), 0.0);  // no such slices there
  EXPECT_DOUBLE_EQ(inv.SliceGpus("gpu2", "a100_1g.10gb", 1), 0.0);  // no such node
  EXPECT_DOUBLE_EQ(inv.SliceGpus("gpu1", "a100_1g.10gb", 0), 0.0);
}

TEST(InventoryTest, HostMemoryIsPerGpuTimesTheCards) {
  store::JobRecord rec;
  EXPECT_EQ(HostMemoryLimit(rec, Allocation{{0, 1}, -1, 0}, 1024), 2048LL * 1024 * 1024);
  rec.job.host_mem_per_gpu = 4096;
  EXPECT_EQ(HostMemoryLimit(rec, Allocation{{0}, -1, 0}, 1024), 4096LL * 1024 * 1024);
  EXPECT_EQ(HostMemoryLimit(rec, Allocation{{}, -1, 0}, 1024), 4096LL * 1024 * 1024);  // at least one card
}

}  // namespace
}  // namespace inventory_test
}  // namespace rota::daemon
