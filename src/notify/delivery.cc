// Tested by delivery_test.cc (virtual time).
#include "notify/delivery.h"

#include <algorithm>
#include <cmath>

#include "notify/channel.h"

namespace rota::notify {

Duration Backoff(const RetryRules& rules, int attempts, double jitter, bool rate_limited) {
  double delay = static_cast<double>(std::max<Duration>(1, rules.first_backoff));
  for (int i = 1; i < attempts && delay < static_cast<double>(rules.max_backoff); ++i) delay *= 2;
  delay = std::min(delay, static_cast<double>(std::max<Duration>(1, rules.max_backoff)));
  delay *= 0.75 + 0.5 * std::clamp(jitter, 0.0, 1.0);
  if (rate_limited) delay = std::max(delay, 60.0);
  return std::max<Duration>(1, static_cast<Duration>(std::llround(delay)));
}

Decision Decide(const RetryRules& rules, const Status& result, int attempts, Time created, Time now,
                double jitter) {
  Decision d;
  if (result.ok()) return d;
  if (!IsRetryable(result)) {
    d.verdict = Verdict::kDrop;
    d.reason = result.message();
    return d;
  }
  const Time next = now + Backoff(rules, attempts, jitter, result.code() == StatusCode::kResourceExhausted);
  if (attempts >= rules.max_attempts || next - created > rules.max_age) {
    d.verdict = Verdict::kGiveUp;
    d.reason = "gave up after " + std::to_string(attempts) + (attempts == 1 ? " attempt: " : " attempts: ") +
               result.message();
    return d;
  }
  d.verdict = Verdict::kRetry;
  d.next_attempt = next;
  return d;
}

TokenBucket::TokenBucket(int per_minute) {
  if (per_minute <= 0) return;
  capacity_ = std::max(1.0, per_minute / 2.0);
  per_ms_ = per_minute / 2.0 / 60'000.0;
  tokens_ = capacity_;
}

void TokenBucket::Refill(std::int64_t now_ms) {
  if (last_ms_ >= 0 && now_ms > last_ms_) {
    tokens_ = std::min(capacity_, tokens_ + static_cast<double>(now_ms - last_ms_) * per_ms_);
  }
  if (now_ms > last_ms_) last_ms_ = now_ms;
}

bool TokenBucket::TryTake(std::int64_t now_ms) {
  if (capacity_ == 0) return true;
  Refill(now_ms);
  if (tokens_ < 1.0) return false;
  tokens_ -= 1.0;
  return true;
}

std::int64_t TokenBucket::ReadyAt(std::int64_t now_ms) {
  if (capacity_ == 0) return now_ms;
  Refill(now_ms);
  if (tokens_ >= 1.0) return now_ms;
  return now_ms + static_cast<std::int64_t>(std::ceil((1.0 - tokens_) / per_ms_));
}

ChannelHealth::Change ChannelHealth::Observe(const Status& result) {
  if (result.ok() || result.code() == StatusCode::kNotFound) {
    failures_ = 0;
    if (!failing_ || !result.ok()) return Change::kNone;
    failing_ = false;
    return Change::kRecovered;
  }
  ++failures_;
  last_error_ = result.message();
  if (failing_) return Change::kNone;
  if (failures_ >= threshold_ || !IsRetryable(result)) {
    failing_ = true;
    return Change::kNowFailing;
  }
  return Change::kNone;
}

}  // namespace rota::notify
