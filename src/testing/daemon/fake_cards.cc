#include "testing/daemon/fake_cards.h"

#include <algorithm>

namespace rota::testing {

void FakeCards::SetHealth(int index, Status health) {
  std::lock_guard<std::mutex> lock(mu_);
  health_[index] = std::move(health);
}

void FakeCards::AddProcess(int index, int pid, MiB memory) {
  std::lock_guard<std::mutex> lock(mu_);
  device::ProcessInfo p;
  p.pid = pid;
  p.used_memory = memory;
  extra_[index].push_back(p);
}

void FakeCards::RemoveProcess(int index, int pid) {
  std::lock_guard<std::mutex> lock(mu_);
  std::erase_if(extra_[index], [pid](const device::ProcessInfo& p) { return p.pid == pid; });
}

void FakeCards::FailSamples(Status why) {
  std::lock_guard<std::mutex> lock(mu_);
  fail_ = std::move(why);
}

StatusOr<device::Snapshot> FakeCards::Sample() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!fail_.ok()) return fail_;
  StatusOr<device::Snapshot> snap = simulated_->Sample();
  if (!snap.ok()) return snap;
  for (device::GpuInfo& info : snap->gpus) {
    if (auto it = health_.find(info.index); it != health_.end()) info.health = it->second;
    if (auto it = extra_.find(info.index); it != extra_.end()) {
      for (const device::ProcessInfo& p : it->second) {
        info.processes.push_back(p);
        if (p.used_memory > 0 && info.memory_used >= 0) {
          info.memory_used = std::min(info.memory_total, info.memory_used + p.used_memory);
          info.memory_free = info.memory_total - info.memory_used;
        }
      }
    }
  }
  return snap;
}

}  // namespace rota::testing
