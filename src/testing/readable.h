// Test helper: whether a descriptor becomes readable (poll POLLIN) within `ms` milliseconds (0:
// now; -1: for ever). For the eventfds and timerfds the daemon's parts signal through.
#pragma once

#include <poll.h>

namespace rota::testing {

inline bool Readable(int fd, int ms) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, ms) == 1;
}

}  // namespace rota::testing
