// Tested by webhooks_test.cc and email_test.cc (the codes each channel returns).
#include "notify/channel.h"

#include <chrono>

namespace rota::notify {

bool IsRetryable(const Status& status) {
  return status.code() == StatusCode::kUnavailable || status.code() == StatusCode::kResourceExhausted;
}

std::int64_t RealWallClockMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace rota::notify
