// Tested by clock_test.cc.
#include "daemon/clock.h"

#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <ctime>

namespace rota::daemon {

RealClock::RealClock() : fd_(::timerfd_create(CLOCK_REALTIME, TFD_CLOEXEC | TFD_NONBLOCK)) {}

RealClock::~RealClock() {
  if (fd_ >= 0) ::close(fd_);
}

Time RealClock::Now() const { return static_cast<Time>(std::time(nullptr)); }

void RealClock::WakeAt(Time at) {
  itimerspec spec{};
  if (at != kNever) spec.it_value.tv_sec = std::max<Time>(at, 1);  // absolute; a past time fires at once
  ::timerfd_settime(fd_, TFD_TIMER_ABSTIME, &spec, nullptr);
}

void RealClock::Woken() {
  std::uint64_t expirations;
  while (::read(fd_, &expirations, sizeof expirations) > 0) {
  }
}

Clock& SystemClock() {
  static RealClock clock;
  return clock;
}

}  // namespace rota::daemon
