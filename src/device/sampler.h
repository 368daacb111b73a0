// Sampler: reads the cards in the background, every interval, so the daemon's loop never waits
// for the driver. Each finished sample is handed over through an eventfd that the daemon's epoll
// loop watches; the daemon takes the latest result with Take().
//
// Thread-safety: one sampling thread calls Devices::Sample() (the only caller while the sampler
// runs); Take(), SampleSoon() and fd() are for the daemon's thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "core/status.h"
#include "device/devices.h"

namespace rota::device {

class Sampler {
 public:
  // Does not start sampling yet (see Start()).
  Sampler(std::shared_ptr<Devices> devices, std::chrono::milliseconds interval);
  // Stops the thread; waits for a sample under way, which the source bounds by its deadline.
  ~Sampler();
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  // Creates the eventfd and starts the thread; the first sample is taken at once.
  Status Start();
  // Readable when a sample finished since the last Take().
  int fd() const { return event_fd_; }
  // The latest finished sample, if one finished since the last call; clears the eventfd.
  std::optional<StatusOr<Snapshot>> Take();
  // Asks for a sample now instead of at the end of the interval (a job started or ended).
  void SampleSoon();
  // Samples taken so far (for tests and benchmarks).
  long samples() const;

 private:
  void Loop();

  std::shared_ptr<Devices> devices_;
  std::chrono::milliseconds interval_;
  int event_fd_ = -1;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool soon_ = false;
  long samples_ = 0;
  std::optional<StatusOr<Snapshot>> latest_;
  std::thread thread_;
};

}  // namespace rota::device
