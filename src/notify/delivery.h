// The outbox's decisions, pure and clock-free (time comes in as a value, so tests use virtual
// time): when to try a message again, how fast a channel may send, and when a channel that keeps
// failing is reported to the admins (once) and when it has recovered. The notifier thread
// (daemon/notifier.h) applies them. docs/design.md, "Notifications: outbox and delivery".
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"
#include "core/types.h"

namespace rota::notify {

// [notify] retry settings.
struct RetryRules {
  Duration first_backoff = 30;  // seconds before the second attempt
  Duration max_backoff = 3600;  // the backoff doubles up to this
  Duration max_age = 86400;     // a message older than this is given up on
  int max_attempts = 12;        // and so is one tried this often
};

// What to do with a message after an attempt.
enum class Verdict : std::uint8_t {
  kSent,    // delivered
  kRetry,   // try again at Decision::next_attempt
  kGiveUp,  // retryable, but too old or tried too often: failed
  kDrop,    // not retryable (refused, misconfigured, nobody to deliver to): failed
};

struct Decision {
  Verdict verdict = Verdict::kSent;
  Time next_attempt = 0;  // kRetry only
  std::string reason;     // kGiveUp / kDrop: for last_error
};

// The delay before attempt `attempts + 1` after `attempts` failed ones (>= 1): first_backoff
// doubled per attempt, at most max_backoff, times a jitter factor 0.75 + 0.5 * `jitter` (`jitter`
// in [0, 1), from the caller's random source), at least 1 s. A rate limit refusal
// (kResourceExhausted) waits at least a minute: the platforms count per minute.
Duration Backoff(const RetryRules& rules, int attempts, double jitter, bool rate_limited);

// Judges attempt number `attempts` (1-based) of a message created at `created`, that ended with
// `result` at `now`.
Decision Decide(const RetryRules& rules, const Status& result, int attempts, Time created, Time now,
                double jitter);

// A token bucket that keeps a channel under `per_minute` messages in any 60 s: it holds at most
// per_minute / 2 tokens (at least 1) and refills per_minute / 2 a minute, so a full bucket
// emptied at once and the refill during the next minute still fit the platform's window.
// per_minute <= 0: unlimited. Times are milliseconds on any monotonic scale.
class TokenBucket {
 public:
  explicit TokenBucket(int per_minute = 0);
  // Takes a token at `now_ms` if one is there.
  bool TryTake(std::int64_t now_ms);
  // When the next token will be there (now_ms when one is).
  std::int64_t ReadyAt(std::int64_t now_ms);

 private:
  void Refill(std::int64_t now_ms);
  double capacity_ = 0;
  double per_ms_ = 0;
  double tokens_ = 0;
  std::int64_t last_ms_ = -1;
};

// Whether a channel is failing, so that the admins hear of it once and its recovery is logged.
// A channel is failing after `threshold` failed attempts in a row, or at once after a failure
// that no retry can fix (a refused secret, a wrong URL: not IsRetryable, except kNotFound, which
// means nobody was there to receive it).
class ChannelHealth {
 public:
  enum class Change : std::uint8_t { kNone, kNowFailing, kRecovered };
  explicit ChannelHealth(int threshold = 3) : threshold_(threshold) {}
  Change Observe(const Status& result);
  bool failing() const { return failing_; }
  const std::string& last_error() const { return last_error_; }

 private:
  int threshold_;
  int failures_ = 0;
  bool failing_ = false;
  std::string last_error_;
};

}  // namespace rota::notify
