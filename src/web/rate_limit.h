// A token bucket per client address: `rate` requests per second on average, bursts of `burst`.
// Thread-safe (one mutex). Time is passed in (seconds, fractional), so tests drive it. Tested by
// rate_limit_test.cc.
#pragma once

#include <mutex>
#include <string>
#include <unordered_map>

namespace rota::web {

class RateLimiter {
 public:
  // rate <= 0: unlimited.
  RateLimiter(double rate, double burst) : rate_(rate), burst_(burst) {}
  // Takes one token for `address`; false when its bucket is empty.
  bool Allow(const std::string& address, double now);
  // Gives back a token Allow took (a limit on failures takes one before each attempt, so that
  // attempts made at once cannot all pass, and gives it back when the attempt succeeds).
  void Refund(const std::string& address);

 private:
  struct Bucket {
    double tokens;
    double at;
  };
  const double rate_;
  const double burst_;
  std::mutex mu_;
  std::unordered_map<std::string, Bucket> buckets_;  // GUARDED_BY(mu_)
};

}  // namespace rota::web
