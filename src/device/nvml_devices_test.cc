// Tests of the NVML backend against the fake libnvidia-ml builds (src/testing/fake_nvml).
//
// The fake reads its state from $FAKE_NVML_STATE on every call, so each test writes a state file
// and points the variable at it. Tests run one at a time in this binary, so setenv is safe here.
#include "device/nvml_devices.h"
#include "device/nvml_reader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

namespace rota::device {
namespace nvml_devices_test {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

class NvmlDevicesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("rota-nvml-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    state_ = (dir_ / "state.json").string();
    setenv("FAKE_NVML_STATE", state_.c_str(), 1);
  }
  void TearDown() override {
    unsetenv("FAKE_NVML_STATE");
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  void Write(const json& state) {
    std::string tmp = state_ + ".tmp";
    std::ofstream(tmp) << state.dump();
    std::filesystem::rename(tmp, state_);  // atomic: a worker never sees half a file
  }

  static std::unique_ptr<Devices> Make(const char* library, milliseconds deadline = milliseconds(2000)) {
    NvmlOptions options;
    options.library_path = library;
    options.deadline = deadline;
    return MakeNvmlDevices(options);
  }

  static json A100(int i) {
    char pci[32];
    std::snprintf(pci, sizeof pci, "00000000:%02X:00.0", 0x3B + i);
    return {{"uuid", "GPU-a100-" + std::to_string(i)},
            {"name", "NVIDIA A100-SXM4-80GB"},
            {"pci", pci},
            {"memory_total_mib", 81920},
            {"memory_used_mib", 1024},
            {"util_gpu", 50 + i},
            {"util_memory", 20},
            {"temperature", 40},
            {"power_mw", 250000},
            {"minor", 3},
            {"mig_mode", 0}};
  }

  std::filesystem::path dir_;
  std::string state_;
};

TEST_F(NvmlDevicesTest, EnumeratesCardsWithAllFields) {
  json c0 = A100(0);
  c0["processes"] = {{{"pid", 4242}, {"used_mib", 2048}, {"sm_util", 70}},
                     {{"pid", 4343}, {"used_mib", 512}}};
  c0["nvlink"] = {"00000000:3C:00.0", "00000000:3C:00.0"};  // two links to one peer
  Write({{"driver_version", "550.54.15"}, {"cards", {c0, A100(1)}}});
  auto devices = Make(ROTA_FAKE_NVML);
  auto snap = devices->Sample();
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  EXPECT_EQ(snap->driver_version, "550.54.15");
  ASSERT_EQ(snap->gpus.size(), 2u);
  const GpuInfo& g = snap->gpus[0];
  EXPECT_TRUE(g.health.ok()) << g.health.ToString();
  EXPECT_EQ(g.uuid, "GPU-a100-0");
  EXPECT_EQ(g.index, 0);
  EXPECT_EQ(g.name, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(g.pci_bus_id, "00000000:3B:00.0");
  EXPECT_EQ(g.memory_total, 81920);
  EXPECT_EQ(g.memory_used, 1024);
  EXPECT_EQ(g.memory_free, 80896);
  EXPECT_EQ(g.util_gpu, 50);
  EXPECT_EQ(g.util_memory, 20);
  EXPECT_EQ(g.temperature, 40);
  EXPECT_EQ(g.power_mw, 250000);
  EXPECT_EQ(g.minor, 3);
  EXPECT_TRUE(g.mig_capable);
  EXPECT_FALSE(g.mig_enabled);
  EXPECT_EQ(g.nvlink_peers, std::vector<std::string>{"00000000:3C:00.0"});
  ASSERT_EQ(g.processes.size(), 2u);
  EXPECT_EQ(g.processes[0].pid, 4242);
  EXPECT_EQ(g.processes[0].used_memory, 2048);
  EXPECT_EQ(g.processes[0].sm_util, 70);
  EXPECT_EQ(g.processes[1].pid, 4343);
  EXPECT_EQ(g.processes[1].sm_util, -1);
  EXPECT_EQ(snap->gpus[1].index, 1);
  EXPECT_EQ(snap->gpus[1].pci_bus_id, "00000000:3C:00.0");
  EXPECT_EQ(snap->gpus[1].util_gpu, 51);
  EXPECT_TRUE(snap->gpus[1].nvlink_peers.empty());
  EXPECT_EQ(devices->Describe(), "nvml (" ROTA_FAKE_NVML "; driver 550.54.15)");
}

TEST_F(NvmlDevicesTest, ReadsMigInstancesAndTheirProcesses) {
  json card = A100(0);
  card["mig_mode"] = 1;
  card["mig"] = {{{"uuid", "MIG-aaaa"},
                  {"profile", "3g.40gb"},
                  {"memory_total_mib", 40192},
                  {"memory_used_mib", 300},
                  {"processes", {{{"pid", 77}, {"used_mib", 300}}}}},
                 {{"uuid", "MIG-bbbb"}, {"profile", "1g.10gb"}, {"memory_total_mib", 9984}}};
  Write({{"cards", {card}}});
  auto snap = Make(ROTA_FAKE_NVML)->Sample();
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  const GpuInfo& g = snap->gpus.at(0);
  EXPECT_TRUE(g.mig_capable);
  EXPECT_TRUE(g.mig_enabled);
  ASSERT_EQ(g.mig.size(), 2u);
  EXPECT_EQ(g.mig[0].uuid, "MIG-aaaa");
  EXPECT_EQ(g.mig[0].profile, "3g.40gb");
  EXPECT_EQ(g.mig[0].memory_total, 40192);
  EXPECT_EQ(g.mig[0].memory_used, 300);
  ASSERT_EQ(g.mig[0].processes.size(), 1u);
  EXPECT_EQ(g.mig[0].processes[0].pid, 77);
  EXPECT_EQ(g.mig[1].profile, "1g.10gb");
  EXPECT_EQ(g.mig[1].memory_used, 0);
  EXPECT_TRUE(g.mig[1].processes.empty());
}

TEST_F(NvmlDevicesTest, LostCardIsListedWithItsErrorWhileOthersAreFine) {
  json lost = A100(1);
  lost["error"] = "GPU_IS_LOST";
  json reset = A100(2);
  reset["error"] = "RESET_REQUIRED";
  reset["error_at"] = "handle";
  Write({{"cards", {A100(0), lost, reset}}});
  auto snap = Make(ROTA_FAKE_NVML)->Sample();
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  ASSERT_EQ(snap->gpus.size(), 3u);
  EXPECT_TRUE(snap->gpus[0].health.ok());
  EXPECT_EQ(snap->gpus[0].memory_total, 81920);
  const GpuInfo& g = snap->gpus[1];
  EXPECT_EQ(g.health.code(), StatusCode::kUnavailable);
  EXPECT_NE(g.health.message().find("GPU_IS_LOST"), std::string::npos) << g.health.message();
  EXPECT_NE(g.health.message().find("nvmlDeviceGetMemoryInfo"), std::string::npos);
  EXPECT_EQ(g.uuid, "GPU-a100-1");  // still known, so the daemon can drain the right card
  EXPECT_EQ(g.memory_used, -1);
  EXPECT_EQ(snap->gpus[2].index, 2);
  EXPECT_NE(snap->gpus[2].health.message().find("RESET_REQUIRED"), std::string::npos);
  EXPECT_NE(snap->gpus[2].health.message().find("nvmlDeviceGetHandleByIndex"), std::string::npos);
}

TEST_F(NvmlDevicesTest, MinimalLibraryFallsBackAndLeavesOptionalDataUnknown) {
  json card = A100(0);
  card["mig_mode"] = 1;
  card["mig"] = {{{"uuid", "MIG-aaaa"}, {"profile", "3g.40gb"}, {"memory_total_mib", 40192}}};
  card["nvlink"] = {"00000000:3C:00.0"};
  card["processes"] = {{{"pid", 4242}, {"used_mib", 2048}, {"sm_util", 70}}, {{"pid", 5}}};
  Write({{"driver_version", "550.54.15"}, {"cards", {card}}});
  auto devices = Make(ROTA_FAKE_NVML_MINIMAL);
  auto snap = devices->Sample();
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  EXPECT_EQ(snap->driver_version, "");
  const GpuInfo& g = snap->gpus.at(0);
  EXPECT_TRUE(g.health.ok()) << g.health.ToString();
  EXPECT_EQ(g.uuid, "GPU-a100-0");
  EXPECT_EQ(g.memory_total, 81920);
  EXPECT_EQ(g.pci_bus_id, "00000000:3B:00.0");  // built from the legacy fields
  EXPECT_EQ(g.util_gpu, -1);
  EXPECT_EQ(g.util_memory, -1);
  EXPECT_EQ(g.temperature, -1);
  EXPECT_EQ(g.power_mw, -1);
  EXPECT_EQ(g.minor, -1);
  EXPECT_FALSE(g.mig_capable);
  EXPECT_TRUE(g.mig.empty());
  EXPECT_TRUE(g.nvlink_peers.empty());
  // The v1 process layout (16-byte elements) is parsed correctly.
  ASSERT_EQ(g.processes.size(), 2u);
  EXPECT_EQ(g.processes[0].pid, 4242);
  EXPECT_EQ(g.processes[0].used_memory, 2048);
  EXPECT_EQ(g.processes[0].sm_util, -1);
  EXPECT_EQ(g.processes[1].pid, 5);
  EXPECT_EQ(g.processes[1].used_memory, -1);
  std::string describe = devices->Describe();
  EXPECT_NE(describe.find("without"), std::string::npos) << describe;
  EXPECT_NE(describe.find("nvmlDeviceGetProcessUtilization"), std::string::npos) << describe;
  EXPECT_NE(describe.find("nvmlDeviceGetMigMode"), std::string::npos) << describe;
  EXPECT_NE(describe.find("Xid events"), std::string::npos) << describe;
  EXPECT_EQ(g.ecc_uncorrected, -1);
  EXPECT_TRUE(g.xids.empty());
}

TEST_F(NvmlDevicesTest, UncorrectedEccErrorsMarkTheCard) {
  json bad = A100(0);
  bad["ecc_uncorrected"] = 2;
  json good = A100(1);
  good["ecc_uncorrected"] = 0;
  Write({{"cards", {bad, good, A100(2)}}});
  auto snap = Make(ROTA_FAKE_NVML)->Sample();
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  EXPECT_EQ(snap->gpus[0].ecc_uncorrected, 2);
  EXPECT_FALSE(snap->gpus[0].health.ok());
  EXPECT_NE(snap->gpus[0].health.message().find("2 uncorrected ECC errors"), std::string::npos);
  EXPECT_EQ(snap->gpus[0].memory_used, 1024);  // still read: the values are shown, the card is not trusted
  EXPECT_EQ(snap->gpus[1].ecc_uncorrected, 0);
  EXPECT_TRUE(snap->gpus[1].health.ok());
  EXPECT_EQ(snap->gpus[2].ecc_uncorrected, -1);  // ECC not supported: unknown, not a problem
  EXPECT_TRUE(snap->gpus[2].health.ok());
}

TEST_F(NvmlDevicesTest, XidEventsAreDeliveredOnceAndHardwareOnesMarkTheCard) {
  Write({{"cards", {A100(0), A100(1)}}});
  auto devices = Make(ROTA_FAKE_NVML);
  ASSERT_TRUE(devices->Sample().ok());  // registers the cards for events
  json app = A100(0);
  app["xid"] = {13};  // a program's fault: listed, the card stays trusted
  json hw = A100(1);
  hw["xid"] = {79};  // fallen off the bus
  Write({{"cards", {app, hw}}});
  auto snap = devices->Sample();
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  EXPECT_EQ(snap->gpus[0].xids, std::vector<int>{13});
  EXPECT_TRUE(snap->gpus[0].health.ok());
  EXPECT_EQ(snap->gpus[1].xids, std::vector<int>{79});
  EXPECT_FALSE(snap->gpus[1].health.ok());
  EXPECT_NE(snap->gpus[1].health.message().find("Xid 79"), std::string::npos);
  // Events are consumed: the next sample has none.
  snap = devices->Sample();
  ASSERT_TRUE(snap.ok());
  EXPECT_TRUE(snap->gpus[0].xids.empty());
  EXPECT_TRUE(snap->gpus[1].xids.empty());
  EXPECT_TRUE(snap->gpus[1].health.ok());
}

TEST(NvmlXid, HardwareXidsAreTheCardsFault) {
  EXPECT_TRUE(nvml::HardwareXid(79));
  EXPECT_TRUE(nvml::HardwareXid(48));
  EXPECT_TRUE(nvml::HardwareXid(94));
  EXPECT_FALSE(nvml::HardwareXid(13));
  EXPECT_FALSE(nvml::HardwareXid(31));
  EXPECT_FALSE(nvml::HardwareXid(43));
}

TEST_F(NvmlDevicesTest, MissingLibraryIsUnavailableNamingThePath) {
  const std::string path = (dir_ / "no-such-libnvidia-ml.so.1").string();
  auto devices = Make(path.c_str());
  auto snap = devices->Sample();
  ASSERT_FALSE(snap.ok());
  EXPECT_EQ(snap.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(snap.status().message().find(path), std::string::npos) << snap.status().message();
  EXPECT_NE(devices->Describe().find("not loaded"), std::string::npos);
}

// nvmlInit starts driver threads that run the library's code (the fake's wakes every 20 ms).
// Releasing the backend must not unmap that code under them: the library stays loaded.
TEST_F(NvmlDevicesTest, TheLibraryStaysLoadedForTheDriversThreads) {
  Write({{"cards", {A100(0)}}});
  for (const char* path : {ROTA_FAKE_NVML_MINIMAL, ROTA_FAKE_NVML}) {
    auto devices = Make(path);
    ASSERT_TRUE(devices->Sample().ok()) << path;
    devices.reset();                                // nvmlShutdown, then the last dlclose
    std::this_thread::sleep_for(milliseconds(100));  // five of the driver thread's wake-ups
    std::ifstream maps("/proc/self/maps");
    const std::string library = std::filesystem::canonical(path).string();
    bool mapped = false;
    for (std::string line; std::getline(maps, line);)
      mapped = mapped || line.find(library) != std::string::npos;
    EXPECT_TRUE(mapped) << library << " was unmapped while its driver thread runs";
  }
}

TEST_F(NvmlDevicesTest, InitFailureIsUnavailableAndRetried) {
  Write({{"init_error", "DRIVER_NOT_LOADED"}, {"cards", {A100(0)}}});
  auto devices = Make(ROTA_FAKE_NVML);
  auto snap = devices->Sample();
  ASSERT_FALSE(snap.ok());
  EXPECT_EQ(snap.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(snap.status().message().find("DRIVER_NOT_LOADED"), std::string::npos) << snap.status().message();
  Write({{"cards", {A100(0)}}});
  snap = devices->Sample();
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  EXPECT_EQ(snap->gpus.size(), 1u);
}

TEST_F(NvmlDevicesTest, HangBeyondDeadlineIsUnavailableAndRecovers) {
  json card = A100(1);
  card["hang_ms"] = 1500;
  Write({{"cards", {A100(0), card}}});
  auto devices = Make(ROTA_FAKE_NVML, milliseconds(200));
  auto start = std::chrono::steady_clock::now();
  auto snap = devices->Sample();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  ASSERT_FALSE(snap.ok());
  EXPECT_EQ(snap.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(snap.status().message().find("did not answer within 200 ms"), std::string::npos)
      << snap.status().message();
  EXPECT_EQ(devices->StuckCard(), 1);  // the second card hung; the first read fine
  // While the first call is stuck, a second one does not start another thread.
  Write({{"cards", {A100(0), A100(1)}}});
  snap = devices->Sample();
  ASSERT_FALSE(snap.ok());
  EXPECT_NE(snap.status().message().find("still stuck"), std::string::npos) << snap.status().message();
  EXPECT_EQ(devices->StuckCard(), 1);
  // Once the driver answers again, sampling works (this also waits out the abandoned thread).
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!snap.ok() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(50));
    snap = devices->Sample();
  }
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  EXPECT_EQ(snap->gpus.at(0).memory_total, 81920);
  EXPECT_EQ(devices->StuckCard(), -1);
}

TEST_F(NvmlDevicesTest, LibraryPathComesFromOptionsThenEnvironmentThenDefault) {
  NvmlOptions options;
  unsetenv("ROTA_NVML_LIBRARY");
  EXPECT_EQ(ResolveNvmlLibraryPath(options), "libnvidia-ml.so.1");
  setenv("ROTA_NVML_LIBRARY", "/opt/nvml/libnvidia-ml.so.1", 1);
  EXPECT_EQ(ResolveNvmlLibraryPath(options), "/opt/nvml/libnvidia-ml.so.1");
  options.library_path = "/x/libnvidia-ml.so";
  EXPECT_EQ(ResolveNvmlLibraryPath(options), "/x/libnvidia-ml.so");
  unsetenv("ROTA_NVML_LIBRARY");
}

}  // namespace
}  // namespace nvml_devices_test
}  // namespace rota::device
