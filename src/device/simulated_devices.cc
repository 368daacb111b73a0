// Tested by simulated_devices_test.cc.
//
// Design: each Sample() is a pure function of the configured cards and the loads of the moment.
// Loads are first bucketed by the uuid they name (cards and slices share one map, built once),
// then each card is summarised from its buckets.
#include "device/simulated_devices.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <string>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

namespace rota::device {
namespace {

std::string PciBusId(int index) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "00000000:%02X:00.0", static_cast<unsigned>(index) & 0xFFu);
  return buf;
}

// Where a uuid points: a card (slice < 0) or one of its MIG slices.
struct Target {
  int card = 0;
  int slice = -1;
};

// The loads on one card or slice, merged per pid.
struct Bucket {
  MiB memory = 0;
  int util = 0;
  std::vector<ProcessInfo> processes;

  void Add(const SimulatedLoad& load) {
    const MiB mem = std::max<MiB>(0, load.memory);
    const int util_add = std::clamp(load.util, 0, 100);
    memory += mem;
    util = std::min(100, util + util_add);
    for (ProcessInfo& p : processes) {
      if (p.pid == load.pid) {
        p.used_memory += mem;
        p.sm_util = std::min(100, p.sm_util + util_add);
        return;
      }
    }
    processes.push_back(ProcessInfo{load.pid, mem, util_add});
  }
};

class SimulatedDevices final : public Devices {
 public:
  SimulatedDevices(std::vector<rota::Gpu> gpus, std::function<std::vector<SimulatedLoad>()> loads)
      : gpus_(std::move(gpus)), loads_(std::move(loads)) {
    for (int c = 0; c < static_cast<int>(gpus_.size()); ++c) {
      targets_.emplace(gpus_[c].uuid, Target{c, -1});
      for (int s = 0; s < static_cast<int>(gpus_[c].mig.size()); ++s) {
        targets_.emplace(gpus_[c].mig[s].uuid, Target{c, s});
      }
    }
  }

  StatusOr<Snapshot> Sample() override {
    // buckets[card][0] is the card itself, buckets[card][1 + s] its slice s.
    std::vector<std::vector<Bucket>> buckets(gpus_.size());
    for (size_t c = 0; c < gpus_.size(); ++c) buckets[c].resize(1 + gpus_[c].mig.size());
    if (loads_) {
      for (const SimulatedLoad& load : loads_()) {
        auto it = targets_.find(load.gpu_uuid);
        if (it == targets_.end()) continue;  // unknown uuid: ignored
        const Target t = it->second;
        if (t.slice < 0 && !gpus_[t.card].mig.empty()) continue;  // MIG parent: ignored
        buckets[t.card][t.slice + 1].Add(load);
      }
    }

    Snapshot snap;
    snap.driver_version = "simulated";
    snap.gpus.reserve(gpus_.size());
    for (size_t c = 0; c < gpus_.size(); ++c) {
      const rota::Gpu& gpu = gpus_[c];
      GpuInfo info;
      info.uuid = gpu.uuid;
      info.index = gpu.index;
      info.pci_bus_id = PciBusId(gpu.index);
      info.name = gpu.model;
      info.memory_total = gpu.memory;
      info.mig_capable = !gpu.mig.empty();
      info.mig_enabled = !gpu.mig.empty();
      MiB used = 0;
      int util = 0;
      if (gpu.mig.empty()) {
        const Bucket& b = buckets[c][0];
        used = b.memory;
        util = b.util;
        info.processes = b.processes;
      } else {
        MiB weight = 0;
        MiB weighted = 0;
        for (size_t s = 0; s < gpu.mig.size(); ++s) {
          const MigSlice& slice = gpu.mig[s];
          const Bucket& b = buckets[c][s + 1];
          MigInstance inst;
          inst.uuid = slice.uuid;
          inst.profile = slice.profile;
          inst.memory_total = slice.memory;
          inst.memory_used = std::min(b.memory, std::max<MiB>(0, slice.memory));
          inst.processes = b.processes;
          used += inst.memory_used;
          weight += std::max<MiB>(0, slice.memory);
          weighted += std::max<MiB>(0, slice.memory) * b.util;
          info.processes.insert(info.processes.end(), b.processes.begin(), b.processes.end());
          info.mig.push_back(std::move(inst));
        }
        util = weight > 0 ? static_cast<int>(weighted / weight) : 0;
      }
      const MiB total = std::max<MiB>(0, gpu.memory);
      used = std::min(used, total);
      info.memory_used = used;
      info.memory_free = total - used;
      info.util_gpu = util;
      info.util_memory = total > 0 ? static_cast<int>(used * 100 / total) : 0;
      info.temperature = 30 + util / 2;
      info.power_mw = 60000 + util * 3000;
      for (int peer : gpu.nvlink) {
        if (peer < 0 || peer >= static_cast<int>(gpus_.size())) continue;
        info.nvlink_peers.push_back(PciBusId(gpus_[peer].index));
      }
      snap.gpus.push_back(std::move(info));
    }
    return snap;
  }

  std::string Describe() const override { return "simulated"; }

 private:
  const std::vector<rota::Gpu> gpus_;
  const std::function<std::vector<SimulatedLoad>()> loads_;
  std::unordered_map<std::string, Target> targets_;
};

}  // namespace

std::optional<SimulatedLoad> ParseSimulatedLoad(const std::map<std::string, std::string>& env, int pid,
                                                std::string_view gpu_uuid) {
  const auto mem_it = env.find(kSimGpuMemEnv);
  const auto util_it = env.find(kSimGpuUtilEnv);
  if (mem_it == env.end() && util_it == env.end()) return std::nullopt;
  SimulatedLoad load;
  load.pid = pid;
  load.gpu_uuid = std::string(gpu_uuid);
  if (mem_it != env.end()) {
    const std::optional<MiB> mem = ParseMemory(mem_it->second);
    if (!mem || *mem < 0) return std::nullopt;
    load.memory = *mem;
  }
  if (util_it != env.end()) {
    const std::string& text = util_it->second;
    int util = -1;
    const char* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, util);
    if (text.empty() || text[0] == '-' || text[0] == '+' || ec != std::errc() || ptr != end || util < 0 ||
        util > 100) {
      return std::nullopt;
    }
    load.util = util;
  }
  return load;
}

std::unique_ptr<Devices> MakeSimulatedDevices(std::vector<rota::Gpu> gpus,
                                              std::function<std::vector<SimulatedLoad>()> loads) {
  return std::make_unique<SimulatedDevices>(std::move(gpus), std::move(loads));
}

}  // namespace rota::device
