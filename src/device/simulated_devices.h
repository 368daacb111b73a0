// The simulated backend: cards described in the config, with memory and utilisation driven by
// what the jobs running on them declare. It lets tests, the demo and `make run` drive the same
// daemon code on a machine without a GPU.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/cluster.h"
#include "core/types.h"
#include "device/devices.h"

namespace rota::device {

// What a job running on simulated GPUs "uses", as it declares in its environment.
struct SimulatedLoad {
  int pid = 0;
  std::string gpu_uuid;  // a card uuid or a MIG slice uuid
  MiB memory = 0;        // memory it holds on that card/slice
  int util = 0;          // percent of the card (or slice) it keeps busy
};

// The environment variables a job sets to declare its simulated load.
inline constexpr char kSimGpuMemEnv[] = "ROTA_SIM_GPU_MEM";    // "20G", "512M", "40960"
inline constexpr char kSimGpuUtilEnv[] = "ROTA_SIM_GPU_UTIL";  // "0".."100"

// The load a job with environment `env` and process `pid` puts on `gpu_uuid`. nullopt when
// neither variable is set, or when either is set to a bad value (a size rota::ParseMemory
// rejects; a utilisation that is not a whole number from 0 to 100). An unset variable counts 0.
std::optional<SimulatedLoad> ParseSimulatedLoad(const std::map<std::string, std::string>& env, int pid,
                                                std::string_view gpu_uuid);

// Cards `gpus` (ordered by index; Gpu::nvlink holds positions in this vector, out-of-range ones
// are ignored). Every Sample() calls `loads` (may be empty: no loads) and derives the snapshot
// from its answer alone: no clock, no randomness, so equal loads give equal snapshots. Never
// fails. Per card:
//  - pci_bus_id "00000000:%02X:00.0" from the index; name = model; driver_version "simulated".
//  - A card with MIG slices is in MIG mode (mig_capable = mig_enabled = true): only loads naming
//    a slice count; a load naming the parent card itself is ignored, as is one naming an unknown
//    uuid. Slice memory_used = sum of its loads, clamped to the slice; the card's is the sum of
//    its slices; util_gpu is the slice-memory-weighted mean of the slice utilisations (each
//    min(100, sum of its loads)).
//  - Otherwise memory_used = sum of the loads on the card, clamped to its memory, and util_gpu =
//    min(100, sum of their utils).
//  - memory_free = total - used; util_memory = used * 100 / total; temperature = 30 +
//    util_gpu / 2; power_mw = 60000 + util_gpu * 3000; health OK.
//  - processes: one entry per pid (loads of the same pid on the same card or slice are summed,
//    utilisation clamped to 100), in order of first appearance; a MIG card lists the processes of
//    all its slices, each slice its own.
// Negative memory or utilisation in a load counts as 0. Describe() returns "simulated".
std::unique_ptr<Devices> MakeSimulatedDevices(std::vector<rota::Gpu> gpus,
                                              std::function<std::vector<SimulatedLoad>()> loads);

}  // namespace rota::device
