// Fuzz target: the NVML backend (device/nvml_devices.h) on what a driver may report, through the
// fake libnvidia-ml's state file (src/testing/fake_nvml): cards, MIG instances, processes,
// errors and Xid events with any values, of any type. The input is the state file. Properties:
// no crash; a sample either succeeds with at most the fake's 64 cards, each index once, or
// fails saying why. States that ask the fake to hang are skipped (they test the
// deadline, which device tests cover).
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "device/nvml_devices.h"
#include "fuzz/fuzz.h"

namespace {

struct Fixture {
  std::string dir;
  std::string state;
  std::unique_ptr<rota::device::Devices> devices;
  Fixture() {
    dir = (std::filesystem::temp_directory_path() / ("rota-fuzz-nvml-" + std::to_string(::getpid()))).string();
    std::filesystem::create_directories(dir);
    state = dir + "/state.json";
    ::setenv("FAKE_NVML_STATE", state.c_str(), 1);
    rota::device::NvmlOptions options;
    options.library_path = ROTA_FAKE_NVML;
    devices = rota::device::MakeNvmlDevices(options);
  }
  ~Fixture() {
    devices.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rota;
  const std::string_view text = fuzz::Text(data, size);
  if (text.find("hang_ms") != std::string_view::npos) return 0;
  static Fixture fixture;
  {
    // A new file each time (write, then rename): the fake re-reads a file whose inode changed.
    std::ofstream(fixture.state + ".tmp", std::ios::binary) << text;
    std::filesystem::rename(fixture.state + ".tmp", fixture.state);
  }
  const StatusOr<device::Snapshot> snapshot = fixture.devices->Sample();
  if (!snapshot.ok()) {
    fuzz::Require(!snapshot.status().message().empty(), "a failed sample says why");
    return 0;
  }
  fuzz::Require(snapshot->gpus.size() <= 64, "at most the fake's 64 cards");
  std::set<int> indices;
  for (const device::GpuInfo& g : snapshot->gpus) {
    fuzz::Require(indices.insert(g.index).second, "each card's index once");
  }
  return 0;
}
