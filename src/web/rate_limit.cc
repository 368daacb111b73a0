// Tested by rate_limit_test.cc.
#include "web/rate_limit.h"

#include <algorithm>

namespace rota::web {

bool RateLimiter::Allow(const std::string& address, double now) {
  if (rate_ <= 0) return true;
  std::lock_guard<std::mutex> lock(mu_);
  if (buckets_.size() > 10000) {
    // Forget the full buckets: they are the same as new ones.
    std::erase_if(buckets_, [&](const auto& kv) { return kv.second.tokens + (now - kv.second.at) * rate_ >= burst_; });
  }
  auto [it, fresh] = buckets_.try_emplace(address, Bucket{burst_, now});
  Bucket& b = it->second;
  if (!fresh) {
    b.tokens = std::min(burst_, b.tokens + std::max(0.0, now - b.at) * rate_);
    b.at = now;
  }
  if (b.tokens < 1) return false;
  b.tokens -= 1;
  return true;
}

void RateLimiter::Refund(const std::string& address) {
  if (rate_ <= 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = buckets_.find(address);
  if (it != buckets_.end()) it->second.tokens = std::min(burst_, it->second.tokens + 1);
}

}  // namespace rota::web
