// The daemon's GPU source for in-process tests: the simulated cards of the configuration (their
// memory and utilisation from what the running jobs declare, device/simulated_devices.h), with
// what a test makes happen on top: a card that reads as failed, processes nobody started through
// Rota, a source that fails as a whole. The sampler calls Sample() from its own thread: every
// method is safe to call from the test's thread meanwhile. What is set shows from the next
// sample on (InProcessDaemon::Sample).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "device/devices.h"

namespace rota::testing {

class FakeCards final : public device::Devices {
 public:
  explicit FakeCards(std::shared_ptr<device::Devices> simulated) : simulated_(std::move(simulated)) {}

  // Card `index` reads as `health` (OK: fine again).
  void SetHealth(int index, Status health);
  // A process on card `index` besides the jobs' (pid, the memory it holds); none: RemoveProcess.
  void AddProcess(int index, int pid, MiB memory);
  void RemoveProcess(int index, int pid);
  // Every sample fails with `why` (OK: they succeed again).
  void FailSamples(Status why);

  StatusOr<device::Snapshot> Sample() override;
  std::string Describe() const override { return "fake cards (tests) over " + simulated_->Describe(); }

 private:
  std::shared_ptr<device::Devices> simulated_;  // called under mu_ (one caller at a time)
  std::mutex mu_;
  std::map<int, Status> health_;                           // GUARDED_BY(mu_)
  std::map<int, std::vector<device::ProcessInfo>> extra_;  // GUARDED_BY(mu_)
  Status fail_;                                            // GUARDED_BY(mu_)
};

}  // namespace rota::testing
