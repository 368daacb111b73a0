#include "daemon/notifications.h"

#include <spdlog/spdlog.h>
#include <sys/epoll.h>

#include <algorithm>
#include <optional>

#include "api/protocol.h"
#include "api/request_fields.h"
#include "core/civil_date.h"
#include "core/quota.h"
#include "core/usage.h"
#include "daemon/notify_routing.h"

namespace rota::daemon {

using json = nlohmann::json;

namespace {

// The audit trail's note of a time-limit reminder: a restarted rotad finds it and does not repeat it.
constexpr std::string_view kTimeLimitReminder = "Reminder: time limit in ";

}  // namespace

Notifications::Notifications(Setup setup, const config::Config& config)
    : setup_(std::move(setup)), config_(config), started_(setup_.clock->Now()) {
  outbox_ = std::make_unique<store::Outbox>(setup_.store->db());  // events from here on are kept
}

Notifications::~Notifications() { (void)Stop(); }

Status Notifications::Load() {
  StatusOr<std::map<std::string, std::pair<Time, int>>> told = setup_.store->LoadQuotaNotices();
  if (!told.ok()) return told.status();
  quota_told_ = std::move(*told);
  return Status();
}

StatusOr<NotifierOptions> Notifications::OptionsFrom(const config::Config& config) const {
  NotifierOptions o;
  o.db_path = setup_.store->db().path();
  for (const auto& [name, spec] : config.notify.channels) {
    StatusOr<std::unique_ptr<notify::Channel>> channel = setup_.channels(spec);
    if (!channel.ok()) return channel.status();
    o.channels[name] = std::shared_ptr<notify::Channel>(std::move(*channel));
  }
  o.per_minute = config.notify.per_minute;
  o.retry = config.notify.retry;
  o.fail_after = config.notify.fail_after;
  o.admin_channels = config.notify.admin_channels;
  o.language = config.notify.language;
  o.host = setup_.host;
  o.keep_messages = config.notify.keep_messages;
  o.clock = setup_.clock;
  return o;
}

Status Notifications::Configure(EventLoop& loop, std::function<void()> on_results) {
  const config::Config& config = config_;
  StatusOr<NotifierOptions> o = OptionsFrom(config);
  if (!o.ok()) return o.status();
  if (notifier_) {
    // A reload: the thread takes the new channels between two sends; nothing waits here.
    notifier_->Reconfigure(std::move(*o));
    spdlog::info("notifier: {} channel(s)", config.notify.channels.size());
    return Status();
  }
  StatusOr<std::unique_ptr<Notifier>> n = Notifier::Start(std::move(*o));
  if (!n.ok()) return n.status();
  notifier_ = std::move(*n);
  loop_ = &loop;
  if (Status s = loop.Add(notifier_->event_fd(), EPOLLIN, [on_results](std::uint32_t) { on_results(); });
      !s.ok()) {
    return s;
  }
  spdlog::info("notifier: {} channel(s)", config.notify.channels.size());
  return Status();
}

std::vector<Notifications::TestReply> Notifications::Stop() {
  std::vector<TestReply> out;
  if (!notifier_) return out;
  if (loop_) loop_->Remove(notifier_->event_fd());
  notifier_.reset();  // a send in progress finishes; the rest waits in the outbox
  for (auto& [token, p] : tests_) {
    json reply = api::ErrorReply("unavailable", "rotad is stopping; try again when it is back");
    if (!p.tag.is_null()) reply["tag"] = p.tag;
    out.push_back({p.conn, std::move(reply)});
  }
  tests_.clear();
  return out;
}

void Notifications::Wake() {
  if (notifier_) notifier_->Wake();
}

notify::Event Notifications::JobEvent(const std::string& name, const store::JobRecord& rec) const {
  notify::Event e;
  e.name = name;
  e.user = rec.job.user;
  e.job = rec.job.id;
  e.job_name = rec.job.name;
  e.gpus = setup_.gpus_of(rec);
  e.host = setup_.host;
  return e;
}

void Notifications::Notify(notify::Event e) {
  const config::NotifyConfig& nc = config_.notify;
  if (nc.channels.empty()) return;
  if (e.host.empty()) e.host = setup_.host;
  const Time now = setup_.clock->Now();
  std::vector<store::OutboxRow> rows = RouteEvent(e, nc, config_.users, now);
  if (rows.empty()) return;
  StatusOr<std::vector<std::int64_t>> ids = outbox_->Enqueue(rows);
  if (!ids.ok()) {
    spdlog::error("notify: cannot queue {} for {}: {}", e.name, e.user.empty() ? "admins" : e.user,
                  ids.status().message());
    return;
  }
  Wake();
  // The audit trail of a warning or an action on a job says who was told, and where.
  if (e.job != 0 && (IsWarning(e.name) || e.name.ends_with("_action"))) {
    setup_.note_job(e.job, "Told " + WhoIsTold(rows, e.user) + " of " + e.name, now);
  }
}

void Notifications::NotifyJobEnd(const store::JobRecord& rec, store::JobState state,
                                 const std::string& reason, const std::string& actor, bool requeued) {
  notify::Event e = JobEvent("job_ended", rec);
  e.state = store::JobStateName(state);
  e.reason = reason;
  e.actor = actor;
  if (state == store::JobState::kPreempted && reason.rfind("Preempted", 0) != 0) {
    // Stopped for the daemon's own reason (reclaimed as idle, its booking ended): not a preemption.
    e.name = "job_failed";
    e.state = "stopped";
  } else if (state == store::JobState::kPreempted) {
    e.name = "job_preempted";
  } else if (state == store::JobState::kFailed || state == store::JobState::kTimeout ||
             state == store::JobState::kNodeFail) {
    e.name = "job_failed";
  } else if (state == store::JobState::kCancelled && actor == rec.job.user) {
    return;  // they know: they cancelled it themselves
  }
  Notify(e);
  if (requeued) {
    notify::Event r = JobEvent("job_requeued", rec);
    r.reason = reason;
    Notify(r);
  }
}

bool Notifications::Reminded(JobId id) {
  StatusOr<std::vector<store::JobEvent>> events = setup_.store->Events(id);
  if (!events.ok()) return false;
  for (const store::JobEvent& e : *events) {
    if (e.reason.rfind(kTimeLimitReminder, 0) == 0) return true;
  }
  return false;
}

Time Notifications::RemindTimeLimits(const std::map<JobId, ActiveJob>& jobs, Time now) {
  Time next = kNever;
  const Duration before = config_.notify.time_limit_warning;
  if (before <= 0 || config_.notify.channels.empty()) return next;
  for (const auto& [id, a] : jobs) {
    if (!a.Live() || a.rec.start_time <= 0 || time_reminded_.count(id)) continue;
    const Duration limit = a.rec.job.time_limit;
    // A job shorter than the warning gets none (nor one without a limit to speak of).
    if (limit <= before || limit >= kNever - a.rec.start_time) continue;
    const Time at = a.rec.start_time + limit - before;
    if (now < at) {
      next = std::min(next, at);
      continue;
    }
    time_reminded_.insert(id);
    if (now >= a.rec.start_time + limit) continue;              // too late to be useful
    if (a.rec.start_time < started_ && Reminded(id)) continue;  // before a restart
    notify::Event e = JobEvent("time_limit_soon", a.rec);
    e.minutes = (a.rec.start_time + limit - now + 59) / 60;
    setup_.note_job(id,
                    std::string(kTimeLimitReminder) + std::to_string(e.minutes) + " min, at " +
                        FormatLocal(a.rec.start_time + limit, config_.policy.zone),
                    now);
    Notify(e);
  }
  for (auto it = time_reminded_.begin(); it != time_reminded_.end();) {
    it = jobs.count(*it) ? std::next(it) : time_reminded_.erase(it);
  }
  return next;
}

void Notifications::CheckQuota(const std::string& user, const store::UsageMaps& usage, Time now) {
  const double hours = UserQuotaHours(config_.policy.quota, user);
  if (hours <= 0) return;  // unlimited (or none to speak of)
  const Time week = WeekStart(now, config_.policy);
  auto used_it = usage.users.find(user);
  const double used = used_it == usage.users.end() ? 0 : WeekUsage(used_it->second, week) / 3600.0;
  const int level = used >= hours ? 100 : used >= 0.8 * hours ? 80 : 0;
  if (level == 0) return;
  auto& told = quota_told_[user];
  if (told.first != week) told = {week, 0};
  if (told.second >= level) return;  // once per week per level
  told.second = level;
  notify::Event e;
  e.name = level == 100 ? "quota_100" : "quota_80";
  e.user = user;
  e.percent = static_cast<int>(used / hours * 100);
  Notify(e);
  // After the message is queued: a crash in between tells the user twice rather than never.
  if (Status s = setup_.store->SaveQuotaNotice(user, week, level); !s.ok()) {
    spdlog::error("cannot record that {} was told of {} % of their quota: {}", user, level, s.message());
  }
}

json Notifications::Log(const json& request, Time now) {
  StatusOr<Time> since = api::TimeField(request, "since", now - kDay);
  if (!since.ok()) return api::ErrorReply(since.status());
  std::optional<store::OutboxState> state;
  if (auto it = request.find("state"); it != request.end()) {
    state = store::OutboxStateFromName(it->is_string() ? it->get<std::string>() : "");
    if (!state)
      return api::ErrorReply(InvalidArgument("\"state\" must be \"pending\", \"sent\" or \"failed\""));
  }
  int limit = 200;
  if (auto it = request.find("limit"); it != request.end()) {
    if (!it->is_number_integer() || it->get<long long>() < 1 || it->get<long long>() > 10000) {
      return api::ErrorReply(InvalidArgument("\"limit\" must be 1 to 10000"));
    }
    limit = it->get<int>();
  }
  StatusOr<std::vector<store::OutboxRow>> rows = outbox_->Recent(*since, state, limit);
  if (!rows.ok()) return api::ErrorReply(rows.status());
  json messages = json::array();
  for (const store::OutboxRow& r : *rows) {
    messages.push_back({{"id", r.id},
                        {"channel", r.channel},
                        {"recipient", r.recipient},
                        {"event", r.event},
                        {"subject", r.subject},
                        {"created", r.created},
                        {"state", store::OutboxStateName(r.state)},
                        {"attempts", r.attempts},
                        {"next_attempt", r.next_attempt},
                        {"delivered", r.delivered ? json(*r.delivered) : json(nullptr)},
                        {"last_error", r.last_error}});
  }
  json reply = api::OkReply();
  reply["messages"] = std::move(messages);
  return reply;
}

json Notifications::Test(ConnId conn, const std::string& caller, const json& request) {
  if (!notifier_ || config_.notify.channels.empty()) {
    return api::ErrorReply("failed_precondition",
                           "no notification channel is configured ([notify.channels.NAME] in rota.toml)");
  }
  const config::NotifyConfig& nc = config_.notify;
  std::vector<std::string> channels;
  StatusOr<std::string> only = api::fields::Text(request, "channel");
  if (!only.ok()) return api::ErrorReply(only.status());
  if (!only->empty()) {
    if (!nc.channels.count(*only)) {
      std::string known;
      for (const auto& [name, spec] : nc.channels) known += (known.empty() ? "" : ", ") + name;
      return api::ErrorReply("not_found", "no channel \"" + *only + "\" (configured: " + known + ")");
    }
    channels.push_back(*only);
  } else {
    for (const auto& [name, spec] : nc.channels) channels.push_back(name);
  }
  const std::uint64_t token = next_test_++;
  PendingTest& p = tests_[token];
  p.conn = conn;
  p.tag = request.contains("tag") ? request["tag"] : json();
  p.waiting = channels.size();
  p.results = json::array();
  for (const std::string& c : channels) {
    notify::Event e;
    e.name = "test";
    e.channel = c;
    e.actor = caller;
    e.host = setup_.host;
    notify::Message m = notify::Render(e, nc.language);
    const std::string type = nc.channels.at(c).type;
    // The caller is the one who reads the test: their terminals, their address (besides `to`).
    auto self = config_.users.find(caller);
    if (type == "tty") m.mentions = {caller};
    if (type == "email" && self != config_.users.end() && !self->second.email.empty())
      m.mentions = {self->second.email};
    notifier_->Test(token, c, std::move(m));
  }
  spdlog::info("notify: test of {} channel(s) requested by {}", channels.size(), caller);
  return json();  // answered when the attempts are done (TakeTestReplies)
}

std::vector<Notifications::TestReply> Notifications::TakeTestReplies() {
  std::vector<TestReply> out;
  if (!notifier_) return out;
  for (TestResult& r : notifier_->TakeResults()) {
    auto it = tests_.find(r.token);
    if (it == tests_.end()) continue;
    PendingTest& p = it->second;
    json one = {{"channel", r.channel}, {"describe", r.describe}, {"ok", r.status.ok()}};
    if (!r.status.ok()) one["error"] = r.status.message();
    p.results.push_back(std::move(one));
    if (--p.waiting > 0) continue;
    json reply = api::OkReply();
    reply["results"] = std::move(p.results);
    if (!p.tag.is_null()) reply["tag"] = p.tag;
    out.push_back({p.conn, std::move(reply)});
    tests_.erase(it);
  }
  return out;
}

}  // namespace rota::daemon
