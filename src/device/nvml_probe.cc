// Tested by scripts/gpu-smoke.sh on a machine with a real NVIDIA GPU (and by hand against the fake:
// ROTA_NVML_LIBRARY=build/libnvidia-ml-fake.so FAKE_NVML_STATE=state.json build/nvml_probe).
//
// Design: the smallest program that runs the real NVML backend and shows everything it read, as
// JSON on stdout, so a smoke test can check it with jq or grep. Exit status: 0 when the sample
// worked, 1 when NVML could not be loaded, initialised or read (the reason on stderr).
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "device/nvml_devices.h"

namespace {

using nlohmann::json;
using rota::device::ProcessInfo;

json Processes(const std::vector<ProcessInfo>& processes) {
  json out = json::array();
  for (const ProcessInfo& p : processes) {
    out.push_back({{"pid", p.pid}, {"used_memory_mib", p.used_memory}, {"sm_util", p.sm_util}});
  }
  return out;
}

}  // namespace

int main() {
  auto devices = rota::device::MakeNvmlDevices(rota::device::NvmlOptions{});
  auto snap = devices->Sample();
  if (!snap.ok()) {
    std::cerr << "nvml_probe: " << snap.status().ToString() << "\n";
    return 1;
  }
  json gpus = json::array();
  for (const auto& g : snap->gpus) {
    json mig = json::array();
    for (const auto& m : g.mig) {
      mig.push_back({{"uuid", m.uuid},
                     {"profile", m.profile},
                     {"memory_total_mib", m.memory_total},
                     {"memory_used_mib", m.memory_used},
                     {"processes", Processes(m.processes)}});
    }
    gpus.push_back({{"index", g.index},
                    {"uuid", g.uuid},
                    {"name", g.name},
                    {"pci_bus_id", g.pci_bus_id},
                    {"memory_total_mib", g.memory_total},
                    {"memory_used_mib", g.memory_used},
                    {"memory_free_mib", g.memory_free},
                    {"util_gpu", g.util_gpu},
                    {"util_memory", g.util_memory},
                    {"temperature", g.temperature},
                    {"power_mw", g.power_mw},
                    {"mig_capable", g.mig_capable},
                    {"mig_enabled", g.mig_enabled},
                    {"mig", mig},
                    {"nvlink_peers", g.nvlink_peers},
                    {"processes", Processes(g.processes)},
                    {"health", g.health.ToString()}});
  }
  json out = {{"source", devices->Describe()}, {"driver_version", snap->driver_version}, {"gpus", gpus}};
  std::cout << out.dump(2) << "\n";
  return 0;
}
