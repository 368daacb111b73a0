// Tested by tests/daemon/test_notify.py (a real SMTP server and HTTP receivers); the decisions it
// applies by notify/delivery_test.cc in virtual time.
//
// Design: the worker is the only reader of due rows and the only writer of their outcome; the
// loop only inserts. A row is marked sent after its channel accepted it, so a crash between the
// two repeats that one message (at least once); a clean stop never does, since the send in
// progress finishes and is recorded before the thread exits. This thread reads the real clock
// (the decisions themselves take time as a value).
#include "daemon/notifier.h"

#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

#include "notify/templates.h"

namespace rota::daemon {

namespace {

constexpr int kBatch = 50;

// The rate limits' time in milliseconds: the steady clock's, or on a virtual clock (tests) the
// virtual seconds, so that a limit spreads messages over virtual minutes as over real ones.
std::int64_t NowMs(const Clock& clock) {
  if (clock.Virtual()) return static_cast<std::int64_t>(clock.Now()) * 1000;
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

Notifier::Notifier(NotifierOptions options)
    : options_(std::move(options)), clock_(*options_.clock), random_(std::random_device{}()) {}

StatusOr<std::unique_ptr<Notifier>> Notifier::Start(NotifierOptions options) {
  std::unique_ptr<Notifier> n(new Notifier(std::move(options)));
  n->event_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (n->event_fd_ < 0) return Internal(std::string("eventfd: ") + std::strerror(errno));
  StatusOr<std::unique_ptr<store::Db>> db = store::Db::Open(n->options_.db_path);
  if (!db.ok()) return db.status();
  n->db_ = std::move(*db);
  n->outbox_ = std::make_unique<store::Outbox>(*n->db_);
  n->ApplyOptions(std::make_unique<NotifierOptions>(n->options_));
  n->thread_ = std::thread([p = n.get()] { p->Run(); });
  return n;
}

Notifier::~Notifier() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (event_fd_ >= 0) ::close(event_fd_);
}

void Notifier::Wake() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    woken_ = true;
  }
  cv_.notify_all();
}

void Notifier::Reconfigure(NotifierOptions options) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    next_options_ = std::make_unique<NotifierOptions>(std::move(options));
  }
  cv_.notify_all();
}

void Notifier::ApplyOptions(std::unique_ptr<NotifierOptions> next) {
  if (!next) return;
  const std::string db_path = options_.db_path;
  const std::map<std::string, int> old_rates = options_.per_minute;
  const int old_fail_after = options_.fail_after;
  options_ = std::move(*next);
  if (!db_path.empty()) options_.db_path = db_path;
  std::map<std::string, notify::TokenBucket> buckets;
  std::map<std::string, notify::ChannelHealth> health;
  for (const auto& [name, channel] : options_.channels) {
    auto rate = options_.per_minute.find(name);
    const int per_minute = rate == options_.per_minute.end() ? 0 : rate->second;
    auto old = old_rates.find(name);
    auto bucket = buckets_.find(name);
    if (bucket != buckets_.end() && old != old_rates.end() && old->second == per_minute) {
      buckets.emplace(name, bucket->second);  // a reload is no reason to allow a burst
    } else {
      buckets.emplace(name, notify::TokenBucket(per_minute));
    }
    auto h = health_.find(name);
    if (h != health_.end() && old_fail_after == options_.fail_after) {
      health.emplace(name, h->second);  // a failing channel is not reported again
    } else {
      health.emplace(name, notify::ChannelHealth(options_.fail_after));
    }
  }
  buckets_ = std::move(buckets);
  health_ = std::move(health);
}

bool Notifier::Stopping(std::unique_ptr<NotifierOptions>& next) {
  std::lock_guard<std::mutex> lock(mu_);
  next.swap(next_options_);
  return stop_;
}

void Notifier::Test(std::uint64_t token, const std::string& channel, notify::Message message) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    tests_.push_back(TestJob{token, channel, std::move(message)});
  }
  cv_.notify_all();
}

std::vector<TestResult> Notifier::TakeResults() {
  std::uint64_t count;
  while (::read(event_fd_, &count, sizeof count) > 0) {
  }
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<TestResult> out;
  out.swap(results_);
  return out;
}

void Notifier::Run() {
  Time next_due = clock_.Now();  // kNever: nothing is due; wait to be woken
  while (true) {
    std::deque<TestJob> tests;
    std::unique_ptr<NotifierOptions> options;
    {
      std::unique_lock<std::mutex> lock(mu_);
      auto ready = [&] { return stop_ || woken_ || !tests_.empty() || next_options_ != nullptr; };
      if (next_due != kNever && !clock_.Virtual()) {
        cv_.wait_until(lock, std::chrono::system_clock::from_time_t(static_cast<std::time_t>(next_due)), ready);
      } else {
        cv_.wait(lock, ready);
      }
      if (stop_) return;
      woken_ = false;
      tests.swap(tests_);
      options.swap(next_options_);
    }
    ApplyOptions(std::move(options));
    for (TestJob& t : tests) {
      TestResult r;
      r.token = t.token;
      r.channel = t.channel;
      auto it = options_.channels.find(t.channel);
      if (it == options_.channels.end()) {
        r.status = NotFound("no channel " + t.channel);
      } else {
        r.describe = it->second->Describe();
        r.status = it->second->Send(t.message);
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        results_.push_back(std::move(r));
      }
      std::uint64_t one = 1;
      if (::write(event_fd_, &one, sizeof one) < 0)
        spdlog::error("notifier: eventfd: {}", std::strerror(errno));
    }
    const Time prune_at = PruneWhenDue(clock_.Now());
    if (!DeliverDue()) {
      next_due = std::min(prune_at, clock_.Now() + 5);
      continue;
    }
    StatusOr<std::optional<Time>> next = outbox_->NextDue();
    const Time at = std::min(prune_at, next.ok() ? next->value_or(kNever) : clock_.Now() + 5);
    next_due = at;
  }
}

Time Notifier::PruneWhenDue(Time now) {
  if (options_.keep_messages <= 0) return kNever;
  if (now < next_prune_) return next_prune_;
  next_prune_ = now + kPruneEvery;
  StatusOr<std::int64_t> pruned = outbox_->Prune(now - options_.keep_messages);
  if (!pruned.ok()) {
    spdlog::error("notifier: pruning the outbox: {}", pruned.status().message());
  } else if (*pruned > 0) {
    spdlog::info("notifier: deleted {} sent or failed notifications older than {}", *pruned,
                 FormatSpan(options_.keep_messages));
  }
  return next_prune_;
}

bool Notifier::DeliverDue() {
  while (true) {
    StatusOr<std::vector<store::OutboxRow>> due = outbox_->Due(clock_.Now(), kBatch);
    if (!due.ok()) {
      spdlog::error("notifier: reading the outbox: {}", due.status().message());
      return false;
    }
    for (const store::OutboxRow& row : *due) {
      std::unique_ptr<NotifierOptions> next;
      if (Stopping(next)) return true;  // the rest stay pending for the next start
      ApplyOptions(std::move(next));
      Deliver(row);
    }
    if (due->size() < static_cast<size_t>(kBatch)) return true;
  }
}

void Notifier::Deliver(const store::OutboxRow& row) {
  auto it = options_.channels.find(row.channel);
  if (it == options_.channels.end()) {
    Status s =
        outbox_->MarkFailed(row.id, row.attempts, "channel " + row.channel + " is no longer configured");
    if (!s.ok()) spdlog::error("notifier: outbox row {}: {}", row.id, s.message());
    return;
  }
  notify::TokenBucket& bucket = buckets_[row.channel];
  const std::int64_t now_ms = NowMs(clock_);
  if (!bucket.TryTake(now_ms)) {
    const Time at = clock_.Now() + (bucket.ReadyAt(now_ms) - now_ms + 999) / 1000;
    if (Status s = outbox_->Defer(row.id, at); !s.ok())
      spdlog::error("notifier: outbox row {}: {}", row.id, s.message());
    return;
  }
  notify::Message m;
  m.subject = row.subject;
  m.text = row.body;
  m.event = row.event;
  m.mentions = row.mentions;
  const Status result = it->second->Send(m);
  const Time now = clock_.Now();
  const int attempts = row.attempts + 1;
  std::uniform_real_distribution<double> jitter(0.0, 1.0);
  notify::Decision d = notify::Decide(options_.retry, result, attempts, row.created, now, jitter(random_));
  Status s;
  switch (d.verdict) {
    case notify::Verdict::kSent:
      s = outbox_->MarkSent(row.id, attempts, now);
      spdlog::info("notify: {} (outbox {}) for {} sent through {}", row.event, row.id,
                   row.recipient.empty() ? "admins" : row.recipient, row.channel);
      break;
    case notify::Verdict::kRetry:
      s = outbox_->Retry(row.id, attempts, d.next_attempt, result.message());
      spdlog::warn("notify: {} (outbox {}) through {}: attempt {} failed: {}; next in {}s", row.event, row.id,
                   row.channel, attempts, result.message(), d.next_attempt - now);
      break;
    case notify::Verdict::kGiveUp:
    case notify::Verdict::kDrop:
      s = outbox_->MarkFailed(row.id, attempts, d.reason);
      if (result.code() == StatusCode::kNotFound) {
        spdlog::info("notify: {} (outbox {}) through {}: {}", row.event, row.id, row.channel, d.reason);
      } else {
        spdlog::error("notify: {} (outbox {}) through {} failed: {}", row.event, row.id, row.channel,
                      d.reason);
      }
      break;
  }
  if (!s.ok()) spdlog::error("notifier: outbox row {}: {}", row.id, s.message());
  switch (health_[row.channel].Observe(result)) {
    case notify::ChannelHealth::Change::kNowFailing:
      if (row.event != "channel_failing") ReportFailing(row.channel, result.message(), now);
      break;
    case notify::ChannelHealth::Change::kRecovered:
      spdlog::warn("notify: channel {} works again", row.channel);
      break;
    case notify::ChannelHealth::Change::kNone:
      break;
  }
}

void Notifier::ReportFailing(const std::string& channel, const std::string& error, Time now) {
  spdlog::error("notify: channel {} is failing: {}; telling the admins once", channel, error);
  notify::Event e;
  e.name = "channel_failing";
  e.channel = channel;
  e.reason = error;
  e.host = options_.host;
  notify::Message m = notify::Render(e, options_.language);
  std::vector<store::OutboxRow> rows;
  for (const std::string& admin : options_.admin_channels) {
    if (admin == channel || !options_.channels.count(admin)) continue;
    store::OutboxRow r;
    r.channel = admin;
    r.event = m.event;
    r.language = options_.language;
    r.subject = m.subject;
    r.body = m.text;
    r.created = now;
    r.next_attempt = now;
    rows.push_back(std::move(r));
  }
  if (auto ids = outbox_->Enqueue(rows); !ids.ok()) spdlog::error("notifier: {}", ids.status().message());
}

}  // namespace rota::daemon
