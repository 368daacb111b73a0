// The daemon's clock: the one place rotad reads the time of day (the core never reads a clock:
// rotad reads this and passes `now`), and its one deadline, the time of the next scheduling pass
// the core asked for. Injected through DaemonDeps, so that a test drives a whole daemon on
// testing::FakeClock's virtual time: advancing it past the deadline wakes the daemon's loop
// exactly as the real time would.
#pragma once

#include "core/types.h"

namespace rota::daemon {

class Clock {
 public:
  virtual ~Clock() = default;
  // Unix seconds. Thread-safe: the HTTP threads read it too.
  virtual Time Now() const = 0;
  // A descriptor that becomes readable once Now() reaches the time given to WakeAt (the daemon
  // watches it on its loop), until Woken() is called. Owned by the clock.
  virtual int WakeFd() const = 0;
  // The deadline: `at` (kNever: none), replacing the last one. A time already past wakes at once.
  virtual void WakeAt(Time at) = 0;
  // Clears the readiness of WakeFd after a wake-up.
  virtual void Woken() = 0;
  // Whether the time moves only when someone moves it (a test's FakeClock): then nothing may wait
  // for it on the system's clock (the notifier waits to be woken instead).
  virtual bool Virtual() const { return false; }
};

// time(2), and a CLOCK_REALTIME timerfd for the deadline (so that setting the system's clock
// wakes rotad at the new right time).
class RealClock final : public Clock {
 public:
  RealClock();
  ~RealClock() override;
  RealClock(const RealClock&) = delete;
  RealClock& operator=(const RealClock&) = delete;
  Time Now() const override;
  int WakeFd() const override { return fd_; }
  void WakeAt(Time at) override;
  void Woken() override;

 private:
  int fd_ = -1;
};

// The process's RealClock (DaemonDeps' default).
Clock& SystemClock();

}  // namespace rota::daemon
