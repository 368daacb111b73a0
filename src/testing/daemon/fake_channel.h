// A notification channel for in-process tests: it keeps every attempt (with the virtual time it
// came at) and fails the attempts the test says, as a webhook answering 500 or a mail server that
// is down would. Thread-safe: the daemon's notifier thread sends, the test reads.
#pragma once

#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "daemon/clock.h"
#include "notify/channel.h"

namespace rota::testing {

class FakeChannel final : public notify::Channel {
 public:
  struct Attempt {
    Time at = 0;
    notify::Message message;
    bool delivered = false;
  };
  // `clock` stamps the attempts; it must outlive the channel.
  explicit FakeChannel(const daemon::Clock& clock) : clock_(clock) {}

  Status Send(const notify::Message& message) override {
    std::lock_guard<std::mutex> lock(mu_);
    const bool fail = failures_ > 0;
    if (fail) --failures_;
    attempts_.push_back({clock_.Now(), message, !fail});
    return fail ? failure_ : Status();
  }
  std::string Describe() const override { return "fake channel (tests)"; }

  // The next `n` attempts fail with `why` (Unavailable: retried; InvalidArgument: given up).
  void FailNext(int n, Status why) {
    std::lock_guard<std::mutex> lock(mu_);
    failures_ = n;
    failure_ = std::move(why);
  }
  std::vector<Attempt> attempts() const {
    std::lock_guard<std::mutex> lock(mu_);
    return attempts_;
  }
  // The attempts so far, forgotten here (a long run reads them as it goes: they do not pile up).
  std::vector<Attempt> TakeAttempts() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::exchange(attempts_, {});
  }

 private:
  const daemon::Clock& clock_;
  mutable std::mutex mu_;
  std::vector<Attempt> attempts_;  // GUARDED_BY(mu_)
  int failures_ = 0;               // GUARDED_BY(mu_)
  Status failure_;                 // GUARDED_BY(mu_)
};

}  // namespace rota::testing
