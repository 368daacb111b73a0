// The notifier: one thread that delivers the outbox (store/outbox.h). The event loop only inserts
// rows and calls Wake(); this thread takes the due rows through its own database connection,
// sends each through its channel (which may block up to the channel's deadline), and records the
// outcome, applying notify/delivery.h's decisions: retries with backoff and jitter, per-channel
// rate limits, and a channel that keeps failing reported once to the admin channels.
//
// `rota notify test` goes through Test(): one attempt per channel, outside the outbox, whose
// results come back through event_fd() (readable when TakeResults() has something), so the loop
// can answer the client without waiting.
//
// Thread-safety: Wake, Test, TakeResults and event_fd may be called from the loop thread while
// the worker runs; everything else is the worker's. Destruction stops the thread: a send in
// progress finishes (bounded by its channel's deadline), rows not yet tried stay pending.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/status.h"
#include "daemon/clock.h"
#include "notify/channel.h"
#include "notify/delivery.h"
#include "store/db.h"
#include "store/outbox.h"

namespace rota::daemon {

struct NotifierOptions {
  std::string db_path;  // the daemon's database (already migrated)
  std::map<std::string, std::shared_ptr<notify::Channel>> channels;  // by name
  std::map<std::string, int> per_minute;                             // by name; 0 = unlimited
  notify::RetryRules retry;
  int fail_after = 3;
  std::vector<std::string> admin_channels;  // where "channel_failing" goes
  std::string language = "zh";              // of the admins' messages
  std::string host;
  Duration keep_messages = 30 * kDay;  // sent and failed rows are deleted this long after their event; 0 = kept
  // The daemon's clock (attempts, backoff, pruning). On a virtual clock the worker waits for
  // Wake(), which the one who moves the time calls. Must outlive the notifier; kept from Start.
  const Clock* clock = &SystemClock();
};

struct TestResult {
  std::uint64_t token = 0;
  std::string channel;
  std::string describe;  // the channel's Describe()
  Status status;
};

class Notifier {
 public:
  static StatusOr<std::unique_ptr<Notifier>> Start(NotifierOptions options);
  ~Notifier();
  Notifier(const Notifier&) = delete;
  Notifier& operator=(const Notifier&) = delete;

  // New rows may be due: look now.
  void Wake();
  // New channels and rules (a reload), taken by the worker between two sends: the loop never
  // waits for a send in progress. The database path is kept.
  void Reconfigure(NotifierOptions options);
  // Sends `message` once through `channel`; the result comes back with `token`.
  void Test(std::uint64_t token, const std::string& channel, notify::Message message);
  std::vector<TestResult> TakeResults();
  // Readable (an eventfd) when results are waiting; the loop reads it to clear it.
  int event_fd() const { return event_fd_; }

 private:
  explicit Notifier(NotifierOptions options);
  void Run();
  // The worker takes Reconfigure's options, keeping the rate and health of unchanged channels.
  void ApplyOptions(std::unique_ptr<NotifierOptions> next);
  // Under mu_: stop_ as it is, and the pending options handed over.
  bool Stopping(std::unique_ptr<NotifierOptions>& next);
  // Sends the due rows; returns false when the database failed (the loop waits and retries).
  bool DeliverDue();
  void Deliver(const store::OutboxRow& row);
  void ReportFailing(const std::string& channel, const std::string& error, Time now);
  // Deletes the settled rows older than keep_messages, once an hour; returns when to look again.
  Time PruneWhenDue(Time now);
  static constexpr Time kPruneEvery = 3600;

  NotifierOptions options_;
  const Clock& clock_;
  int event_fd_ = -1;

  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;                              // GUARDED_BY(mu_)
  bool woken_ = false;                             // GUARDED_BY(mu_)
  std::unique_ptr<NotifierOptions> next_options_;  // GUARDED_BY(mu_)
  struct TestJob {
    std::uint64_t token;
    std::string channel;
    notify::Message message;
  };
  std::deque<TestJob> tests_;        // GUARDED_BY(mu_)
  std::vector<TestResult> results_;  // GUARDED_BY(mu_)

  // The worker's own.
  std::unique_ptr<store::Db> db_;
  std::unique_ptr<store::Outbox> outbox_;
  std::map<std::string, notify::TokenBucket> buckets_;
  std::map<std::string, notify::ChannelHealth> health_;
  std::mt19937_64 random_;
  Time next_prune_ = 0;
  std::thread thread_;  // last: started when everything else is ready
};

}  // namespace rota::daemon
