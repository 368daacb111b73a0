// Tested by sampler_test.cc.
//
// Design: one long-lived thread, because the NVML backend already bounds each Sample() by its
// deadline (a hung driver costs one abandoned worker there, not this thread). The thread waits
// on a condition variable between samples, so stopping or SampleSoon() take effect at once.
#include "device/sampler.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

namespace rota::device {

Sampler::Sampler(std::shared_ptr<Devices> devices, std::chrono::milliseconds interval)
    : devices_(std::move(devices)), interval_(interval) {}

Sampler::~Sampler() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (event_fd_ >= 0) ::close(event_fd_);
}

Status Sampler::Start() {
  if (thread_.joinable()) return Status();
  event_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (event_fd_ < 0) return Internal(std::string("eventfd: ") + std::strerror(errno));
  thread_ = std::thread([this] { Loop(); });
  return Status();
}

void Sampler::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    soon_ = false;
    lock.unlock();
    StatusOr<Snapshot> snap = devices_->Sample();
    lock.lock();
    latest_ = std::move(snap);
    ++samples_;
    const std::uint64_t one = 1;
    (void)!::write(event_fd_, &one, sizeof one);
    cv_.wait_for(lock, interval_, [this] { return stop_ || soon_; });
  }
}

std::optional<StatusOr<Snapshot>> Sampler::Take() {
  std::uint64_t count;
  while (::read(event_fd_, &count, sizeof count) > 0) {
  }
  std::lock_guard<std::mutex> lock(mu_);
  std::optional<StatusOr<Snapshot>> out = std::move(latest_);
  latest_.reset();
  return out;
}

void Sampler::SampleSoon() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    soon_ = true;
  }
  cv_.notify_all();
}

long Sampler::samples() const {
  std::lock_guard<std::mutex> lock(mu_);
  return samples_;
}

}  // namespace rota::device
