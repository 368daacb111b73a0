// The daemon's one clock. The core never reads a clock: rotad reads this and passes `now`.
#pragma once

#include <ctime>

#include "core/types.h"

namespace rota::daemon {

inline Time Now() { return static_cast<Time>(std::time(nullptr)); }

}  // namespace rota::daemon
