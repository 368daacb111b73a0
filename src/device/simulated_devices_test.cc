// Tests of the simulated backend: cards from the config, loads from the jobs' declarations.
#include "device/simulated_devices.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace rota::device {
namespace simulated_devices_test {
namespace {

rota::Gpu Card(std::string uuid, int index, MiB memory) {
  rota::Gpu g;
  g.uuid = std::move(uuid);
  g.index = index;
  g.model = "NVIDIA A100-SXM4-80GB";
  g.memory = memory;
  return g;
}

Snapshot SampleWith(std::vector<rota::Gpu> gpus, std::vector<SimulatedLoad> loads) {
  auto devices = MakeSimulatedDevices(std::move(gpus), [loads] { return loads; });
  StatusOr<Snapshot> snap = devices->Sample();
  EXPECT_TRUE(snap.ok());
  return *std::move(snap);
}

TEST(SimulatedDevicesTest, IdleCards) {
  auto devices = MakeSimulatedDevices({Card("GPU-a", 0, 81920), Card("GPU-b", 11, 81920)}, {});
  EXPECT_EQ(devices->Describe(), "simulated");
  StatusOr<Snapshot> snap = devices->Sample();
  ASSERT_TRUE(snap.ok());
  ASSERT_EQ(snap->gpus.size(), 2u);
  const GpuInfo& a = snap->gpus[0];
  EXPECT_EQ(a.uuid, "GPU-a");
  EXPECT_EQ(a.index, 0);
  EXPECT_EQ(a.pci_bus_id, "00000000:00:00.0");
  EXPECT_EQ(snap->gpus[1].pci_bus_id, "00000000:0B:00.0");
  EXPECT_EQ(a.name, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(a.memory_total, 81920);
  EXPECT_EQ(a.memory_used, 0);
  EXPECT_EQ(a.memory_free, 81920);
  EXPECT_EQ(a.util_gpu, 0);
  EXPECT_EQ(a.util_memory, 0);
  EXPECT_EQ(a.temperature, 30);
  EXPECT_EQ(a.power_mw, 60000);
  EXPECT_FALSE(a.mig_capable);
  EXPECT_FALSE(a.mig_enabled);
  EXPECT_TRUE(a.processes.empty());
  EXPECT_TRUE(a.nvlink_peers.empty());
  EXPECT_TRUE(a.health.ok());
}

TEST(SimulatedDevicesTest, BusyJob) {
  Snapshot snap = SampleWith({Card("GPU-a", 0, 40960), Card("GPU-b", 1, 40960)},
                             {{.pid = 42, .gpu_uuid = "GPU-b", .memory = 20480, .util = 80}});
  EXPECT_EQ(snap.gpus[0].memory_used, 0);
  const GpuInfo& b = snap.gpus[1];
  EXPECT_EQ(b.memory_used, 20480);
  EXPECT_EQ(b.memory_free, 20480);
  EXPECT_EQ(b.util_gpu, 80);
  EXPECT_EQ(b.util_memory, 50);
  EXPECT_EQ(b.temperature, 70);
  EXPECT_EQ(b.power_mw, 300000);
  ASSERT_EQ(b.processes.size(), 1u);
  EXPECT_EQ(b.processes[0].pid, 42);
  EXPECT_EQ(b.processes[0].used_memory, 20480);
  EXPECT_EQ(b.processes[0].sm_util, 80);
}

TEST(SimulatedDevicesTest, SharesSumAndClamp) {
  Snapshot snap =
      SampleWith({Card("GPU-a", 0, 40960)}, {{.pid = 1, .gpu_uuid = "GPU-a", .memory = 30720, .util = 70},
                                             {.pid = 2, .gpu_uuid = "GPU-a", .memory = 20480, .util = 60}});
  const GpuInfo& a = snap.gpus[0];
  EXPECT_EQ(a.memory_used, 40960);  // 50G declared on a 40G card
  EXPECT_EQ(a.memory_free, 0);
  EXPECT_EQ(a.util_gpu, 100);
  EXPECT_EQ(a.util_memory, 100);
  ASSERT_EQ(a.processes.size(), 2u);
  EXPECT_EQ(a.processes[1].pid, 2);
  EXPECT_EQ(a.processes[1].used_memory, 20480);
}

TEST(SimulatedDevicesTest, SamePidMerged) {
  Snapshot snap =
      SampleWith({Card("GPU-a", 0, 40960)}, {{.pid = 7, .gpu_uuid = "GPU-a", .memory = 1024, .util = 10},
                                             {.pid = 7, .gpu_uuid = "GPU-a", .memory = 2048, .util = 15}});
  ASSERT_EQ(snap.gpus[0].processes.size(), 1u);
  EXPECT_EQ(snap.gpus[0].processes[0].used_memory, 3072);
  EXPECT_EQ(snap.gpus[0].processes[0].sm_util, 25);
}

TEST(SimulatedDevicesTest, MigSlicesAndParent) {
  rota::Gpu card = Card("GPU-m", 2, 81920);
  card.mig = {{"MIG-1", "3g.40gb", 40960}, {"MIG-2", "2g.20gb", 20480}, {"MIG-3", "1g.10gb", 10240}};
  Snapshot snap = SampleWith({card}, {{.pid = 10, .gpu_uuid = "MIG-1", .memory = 30720, .util = 90},
                                      {.pid = 11, .gpu_uuid = "MIG-2", .memory = 40960, .util = 30},
                                      {.pid = 12, .gpu_uuid = "GPU-m", .memory = 1024, .util = 50}});
  const GpuInfo& m = snap.gpus[0];
  EXPECT_TRUE(m.mig_capable);
  EXPECT_TRUE(m.mig_enabled);
  ASSERT_EQ(m.mig.size(), 3u);
  EXPECT_EQ(m.mig[0].uuid, "MIG-1");
  EXPECT_EQ(m.mig[0].profile, "3g.40gb");
  EXPECT_EQ(m.mig[0].memory_total, 40960);
  EXPECT_EQ(m.mig[0].memory_used, 30720);
  ASSERT_EQ(m.mig[0].processes.size(), 1u);
  EXPECT_EQ(m.mig[0].processes[0].pid, 10);
  EXPECT_EQ(m.mig[1].memory_used, 20480);  // clamped to the slice
  EXPECT_EQ(m.mig[2].memory_used, 0);
  EXPECT_TRUE(m.mig[2].processes.empty());
  // Parent: slices summed; the load naming the parent itself is ignored.
  EXPECT_EQ(m.memory_used, 51200);
  EXPECT_EQ(m.memory_free, 30720);
  // (90 * 40960 + 30 * 20480 + 0 * 10240) / 71680 = 60
  EXPECT_EQ(m.util_gpu, 60);
  EXPECT_EQ(m.util_memory, 62);
  ASSERT_EQ(m.processes.size(), 2u);
  EXPECT_EQ(m.processes[0].pid, 10);
  EXPECT_EQ(m.processes[1].pid, 11);
}

TEST(SimulatedDevicesTest, NvlinkPeers) {
  rota::Gpu a = Card("GPU-a", 0, 81920);
  rota::Gpu b = Card("GPU-b", 1, 81920);
  rota::Gpu c = Card("GPU-c", 3, 81920);
  a.nvlink = {1, 2, 9};  // 9 is out of range: ignored
  b.nvlink = {0};
  Snapshot snap = SampleWith({a, b, c}, {});
  EXPECT_EQ(snap.gpus[0].nvlink_peers, (std::vector<std::string>{"00000000:01:00.0", "00000000:03:00.0"}));
  EXPECT_EQ(snap.gpus[1].nvlink_peers, (std::vector<std::string>{"00000000:00:00.0"}));
  EXPECT_TRUE(snap.gpus[2].nvlink_peers.empty());
}

TEST(SimulatedDevicesTest, UnknownUuidIgnored) {
  Snapshot snap =
      SampleWith({Card("GPU-a", 0, 40960)}, {{.pid = 5, .gpu_uuid = "GPU-gone", .memory = 1024, .util = 50}});
  EXPECT_EQ(snap.gpus[0].memory_used, 0);
  EXPECT_EQ(snap.gpus[0].util_gpu, 0);
  EXPECT_TRUE(snap.gpus[0].processes.empty());
}

TEST(SimulatedDevicesTest, LoadsReadOnEverySample) {
  std::vector<SimulatedLoad> loads;
  auto devices = MakeSimulatedDevices({Card("GPU-a", 0, 40960)}, [&loads] { return loads; });
  EXPECT_EQ(devices->Sample()->gpus[0].util_gpu, 0);
  loads.push_back({.pid = 3, .gpu_uuid = "GPU-a", .memory = 0, .util = 40});
  EXPECT_EQ(devices->Sample()->gpus[0].util_gpu, 40);
}

TEST(ParseSimulatedLoadTest, GoodValues) {
  std::map<std::string, std::string> env = {
      {"ROTA_SIM_GPU_MEM", "20G"}, {"ROTA_SIM_GPU_UTIL", "75"}, {"HOME", "/home/alice"}};
  std::optional<SimulatedLoad> load = ParseSimulatedLoad(env, 99, "GPU-a");
  ASSERT_TRUE(load.has_value());
  EXPECT_EQ(load->pid, 99);
  EXPECT_EQ(load->gpu_uuid, "GPU-a");
  EXPECT_EQ(load->memory, 20480);
  EXPECT_EQ(load->util, 75);

  load = ParseSimulatedLoad({{"ROTA_SIM_GPU_UTIL", "100"}}, 1, "MIG-1");
  ASSERT_TRUE(load.has_value());
  EXPECT_EQ(load->memory, 0);
  EXPECT_EQ(load->util, 100);

  load = ParseSimulatedLoad({{"ROTA_SIM_GPU_MEM", "512M"}}, 1, "GPU-a");
  ASSERT_TRUE(load.has_value());
  EXPECT_EQ(load->memory, 512);
  EXPECT_EQ(load->util, 0);
}

TEST(ParseSimulatedLoadTest, UnsetOrBadValues) {
  EXPECT_FALSE(ParseSimulatedLoad({{"HOME", "/home/alice"}}, 1, "GPU-a").has_value());
  for (const char* bad : {"", "101", "-1", "+5", "50%", "abc", " 5", "5.5"}) {
    EXPECT_FALSE(ParseSimulatedLoad({{"ROTA_SIM_GPU_UTIL", bad}}, 1, "GPU-a").has_value()) << bad;
  }
  for (const char* bad : {"", "lots", "20X"}) {
    EXPECT_FALSE(
        ParseSimulatedLoad({{"ROTA_SIM_GPU_MEM", bad}, {"ROTA_SIM_GPU_UTIL", "50"}}, 1, "GPU-a").has_value())
        << bad;
  }
}

}  // namespace
}  // namespace simulated_devices_test
}  // namespace rota::device
