// A daemon::Clock on virtual time for tests that drive a whole daemon in-process: time moves only
// when the test says (Advance, Set), and the daemon's deadline wakes its loop as the real one
// would once the virtual time reaches it (an eventfd made readable).
#pragma once

#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

#include "daemon/clock.h"

namespace rota::testing {

class FakeClock final : public daemon::Clock {
 public:
  explicit FakeClock(Time start) : now_(start), fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}
  ~FakeClock() override { ::close(fd_); }
  FakeClock(const FakeClock&) = delete;
  FakeClock& operator=(const FakeClock&) = delete;

  Time Now() const override { return now_.load(); }
  int WakeFd() const override { return fd_; }
  void WakeAt(Time at) override {
    wake_ = at;
    Check();
  }
  void Woken() override {
    std::uint64_t n;
    while (::read(fd_, &n, sizeof n) > 0) {
    }
  }

  bool Virtual() const override { return true; }

  void Advance(Duration d) { Set(now_.load() + d); }
  void Set(Time t) {
    now_.store(t);
    Check();
  }
  // The deadline the daemon last asked for (kNever: none).
  Time wake() const { return wake_; }

 private:
  void Check() {
    if (wake_ == kNever || now_.load() < wake_) return;
    wake_ = kNever;
    const std::uint64_t one = 1;
    (void)!::write(fd_, &one, sizeof one);
  }

  std::atomic<Time> now_;
  int fd_;
  Time wake_ = kNever;
};

}  // namespace rota::testing
