#include "daemon/job_views.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>

#include "api/job_json.h"
#include "api/protocol.h"
#include "api/request_fields.h"
#include "api/when.h"
#include "core/forecast.h"
#include "core/quota.h"
#include "exec/files.h"
#include "exec/open_as.h"
#include "json/bounded.h"

namespace rota::daemon {

using nlohmann::json;

namespace {

json WithError(const Status& s) { return api::ErrorReply(s); }

StatusOr<JobId> JobIdField(const json& request) { return api::fields::Id(request, "job_id", "a job id"); }

// Replaces invalid UTF-8 so the bytes can travel as a JSON string.
std::string ValidUtf8(const std::string& in) {
  StatusOr<json> back = ParseBoundedJson(json(in).dump(-1, ' ', false, json::error_handler_t::replace));
  return back.ok() && back->is_string() ? back->get<std::string>() : std::string();
}

}  // namespace

JobViews::JobViews(Setup setup)
    : store_(setup.store),
      clock_(setup.clock),
      config_(*setup.config),
      jobs_(*setup.jobs),
      cards_(*setup.cards),
      foresight_(setup.foresight),
      accounts_(std::move(setup.accounts)) {}

json JobViews::JobJson(const store::JobRecord& rec, const Caller& caller) {
  const PendingInfo* info = jobs_.Waiting(rec.job.id);
  json out = api::JobToJson(rec, info, caller.admin || caller.uid == static_cast<uid_t>(rec.uid));
  if (foresight_ != nullptr) {
    // Pending: when it is likely to start (the plan's expected_start stays what is promised).
    // Running: when it is likely to end.
    if (rec.state == store::JobState::kPending && out.contains("pending")) {
      const Foresight::Entry* e = foresight_->Of(rec.job.id, Now());
      if (e != nullptr && Foresight::Telling(*e)) out["pending"]["forecast"] = foresight_->ToJson(*e);
    } else if (rec.state == store::JobState::kRunning && rec.start_time > 0) {
      // Without history the prediction is its limit, which the job says already.
      const RuntimePrediction p = foresight_->Runtime(rec.job, Now());
      if (p.basis != RuntimeBasis::kLimit) {
        const Time end = LikelyEnd(rec.start_time, rec.job.time_limit, p.runtime, Now());
        out["predicted_end"] = {{"time", end}, {"basis", RuntimeBasisName(p.basis)}, {"samples", p.samples}};
      }
    }
  }
  // On a cluster, the node a running job's cards are on (its GPU indices are Rota's, as `rota gpus`
  // lists them; a user looks for the job there).
  if (rec.state == store::JobState::kRunning) {
    if (const std::string& node = cards_.NodeOf(rec.placement.alloc); !node.empty()) out["node"] = node;
  }
  // GPU-hours so far (or in all, once ended), in GPU-equivalents of this server's cards.
  if (rec.start_time > 0 && !rec.placement.alloc.gpus.empty()) {
    const Time end = rec.end_time > 0 ? rec.end_time : Now();
    out["gpu_hours"] = AllocationGpus(cards_.state(), rec.placement.alloc) *
                       static_cast<double>(end - rec.start_time) / 3600.0;
  }
  return out;
}

json JobViews::Queue(const Caller& caller, const json& request) {
  StatusOr<bool> all_field = api::fields::Bool(request, "all");
  if (!all_field.ok()) return WithError(all_field.status());
  const bool all = *all_field;
  json jobs = json::array();
  auto visible = [&](const store::JobRecord& r) {
    return all || r.uid == static_cast<std::int64_t>(caller.uid);
  };
  for (const auto& [id, a] : jobs_) {
    if (a.rec.state == store::JobState::kRunning && visible(a.rec)) jobs.push_back(JobJson(a.rec, caller));
  }
  std::set<JobId> listed;
  for (JobId id : jobs_.waiting_order()) {
    auto it = jobs_.find(id);
    if (it == jobs_.end() || it->second.rec.state != store::JobState::kPending || !visible(it->second.rec))
      continue;
    jobs.push_back(JobJson(it->second.rec, caller));
    listed.insert(id);
  }
  for (const auto& [id, a] : jobs_) {  // submitted since the last pass
    if (a.rec.state == store::JobState::kPending && !listed.count(id) && visible(a.rec)) {
      jobs.push_back(JobJson(a.rec, caller));
    }
  }
  return api::OkReply({{"jobs", std::move(jobs)}});
}

StatusOr<store::JobRecord> JobViews::Visible(const Caller& caller, JobId id) {
  store::JobRecord rec;
  if (auto it = jobs_.find(id); it != jobs_.end()) {
    rec = it->second.rec;
  } else {
    StatusOr<store::JobRecord> r = store_->Get(id);
    if (!r.ok())
      return r.status().code() == StatusCode::kNotFound ? NotFound("no job " + std::to_string(id))
                                                        : r.status();
    rec = std::move(*r);
  }
  if (!caller.admin && rec.uid != static_cast<std::int64_t>(caller.uid)) {
    // Other users' jobs are listed by `queue --all` but their details are private.
    return PermissionDenied("job " + std::to_string(id) + " belongs to " + rec.job.user +
                            "; only they and admins may see its details or act on it");
  }
  return rec;
}

json JobViews::Show(const Caller& caller, const json& request) {
  StatusOr<JobId> id = JobIdField(request);
  if (!id.ok()) return WithError(id.status());
  StatusOr<store::JobRecord> rec = Visible(caller, *id);
  if (!rec.ok()) return WithError(rec.status());
  StatusOr<std::vector<store::JobEvent>> events = store_->Events(*id);
  if (!events.ok()) return WithError(events.status());
  json ev = json::array();
  for (const store::JobEvent& e : *events) ev.push_back(api::EventToJson(e));
  return api::OkReply({{"job", JobJson(*rec, caller)}, {"events", std::move(ev)}});
}

json JobViews::History(const Caller& caller, const json& request) {
  // Unix seconds, or what the user typed (read in the server's zone, as bookings are).
  auto it = request.find("since");
  StatusOr<Time> since = it != request.end() && it->is_string()
                             ? api::ParseSince(it->get<std::string>(), Now(), config_.policy.zone)
                             : api::TimeField(request, "since", 0);
  if (!since.ok()) return WithError(since.status());
  // A page at a time (docs/api.md): a history of months is many requests, each of them small.
  const int most = config_.limits.history_limit;
  int limit = most;
  if (auto l = request.find("limit"); l != request.end()) {
    if (!l->is_number_integer() || l->get<std::int64_t>() < 1 || l->get<std::int64_t>() > most) {
      return WithError(InvalidArgument("\"limit\" must be a number of jobs from 1 to " +
                                       std::to_string(most) + " ([limits] history_limit)"));
    }
    limit = l->get<int>();
  }
  std::pair<Time, JobId> after{0, 0};
  if (auto c = request.find("after"); c != request.end()) {
    long long end = 0, id = 0;
    char extra = 0;
    if (!c->is_string() ||
        std::sscanf(c->get_ref<const std::string&>().c_str(), "%lld:%lld%c", &end, &id, &extra) != 2) {
      return WithError(InvalidArgument("\"after\" must be the \"next\" of the page before"));
    }
    after = {end, id};
  }
  StatusOr<bool> all_field = api::fields::Bool(request, "all");
  if (!all_field.ok()) return WithError(all_field.status());
  const bool all = *all_field;
  StatusOr<store::JobStore::HistoryPageResult> page =
      store_->HistoryPage(*since, all ? std::nullopt : std::optional<std::int64_t>(caller.uid), after, limit);
  if (!page.ok()) return WithError(page.status());
  json out = json::array();
  for (const store::JobRecord& r : page->jobs) out.push_back(JobJson(r, caller));
  json reply = api::OkReply({{"jobs", std::move(out)}, {"since", *since}});
  if (page->more) {
    const store::JobRecord& last = page->jobs.back();
    reply["next"] = std::to_string(last.end_time) + ":" + std::to_string(last.job.id);
  }
  return reply;
}

json JobViews::Logs(const Caller& caller, const json& request) {
  StatusOr<JobId> id = JobIdField(request);
  if (!id.ok()) return WithError(id.status());
  StatusOr<store::JobRecord> rec = Visible(caller, *id);
  if (!rec.ok()) return WithError(rec.status());
  if (rec->interactive) {
    return WithError(FailedPrecondition("job " + std::to_string(*id) +
                                        " is an interactive session: its output went to its terminal"));
  }
  std::int64_t offset = 0;
  std::int64_t max_bytes = 65536;
  if (auto it = request.find("offset"); it != request.end() && it->is_number_integer())
    offset = std::max<std::int64_t>(0, it->get<std::int64_t>());
  if (auto it = request.find("max_bytes"); it != request.end() && it->is_number_integer()) {
    max_bytes = std::clamp<std::int64_t>(it->get<std::int64_t>(), 1, 1 << 20);
  }
  const std::string path = api::ExpandOutput(rec->output, *id);
  const bool final = store::IsFinal(rec->state);
  json reply =
      api::OkReply({{"path", path}, {"data", ""}, {"offset", offset}, {"eof", true}, {"final", final}});
  if (rec->state == store::JobState::kPending) return reply;
  // Opened with its owner's rights, never root's (exec::OpenAsUser): the path is one its owner
  // chose, in directories its owner may or may not enter. Only a regular file of theirs is served;
  // a link at the end is not followed, a device or FIFO is never opened for reading here.
  StatusOr<UnixAccount> owner = accounts_(static_cast<uid_t>(rec->uid));
  if (!owner.ok()) return WithError(owner.status());
  StatusOr<exec::OpenedFile> file = exec::OpenAsUser(path, owner->uid, owner->gid, owner->groups);
  if (!file.ok()) {
    if (file.status().code() == StatusCode::kNotFound) return reply;
    return WithError(file.status());
  }
  exec::UniqueFd fd(file->fd);
  const std::int64_t size = file->size;
  std::string data(
      static_cast<size_t>(std::min<std::int64_t>(max_bytes, std::max<std::int64_t>(0, size - offset))), '\0');
  ssize_t n = data.empty() ? 0 : ::pread(fd.get(), data.data(), data.size(), offset);
  if (n < 0) return WithError(Unavailable("reading " + path + ": " + std::strerror(errno)));
  data.resize(static_cast<size_t>(n));
  reply["data"] = ValidUtf8(data);
  reply["offset"] = offset + n;
  reply["eof"] = offset + n >= size;
  return reply;
}

json JobViews::Events(const Caller& caller, const json& request) {
  StatusOr<Time> since_field = api::TimeField(request, "since", Now() - kDay);
  if (!since_field.ok()) return api::ErrorReply(since_field.status());
  Time since = *since_field;
  JobId job = 0;
  if (auto it = request.find("job_id"); it != request.end()) {
    if (!it->is_number_integer() || it->get<JobId>() <= 0) {
      return api::ErrorReply(InvalidArgument("\"job_id\" must be a job id"));
    }
    job = it->get<JobId>();
    if (StatusOr<store::JobRecord> rec = Visible(caller, job); !rec.ok())
      return api::ErrorReply(rec.status());
    since = 0;
  }
  const bool all = request.contains("all") && request["all"].is_boolean() && request["all"].get<bool>();
  if (all && !caller.admin) return api::ErrorReply(PermissionDenied("only admins may see everyone's events"));
  StatusOr<std::vector<store::AuditEvent>> rows = store_->AuditEvents(since, job, 5000);
  if (!rows.ok()) return api::ErrorReply(rows.status());
  json events = json::array();
  for (const store::AuditEvent& e : *rows) {
    if (!all && job == 0 && e.kind != "gpu" && e.owner != caller.name) continue;
    events.push_back({{"time", e.time},
                      {"kind", e.kind},
                      {"id", e.id},
                      {"user", e.owner},
                      {"from", e.from.empty() ? json() : json(e.from)},
                      {"to", e.to},
                      {"reason", e.reason},
                      {"actor", e.actor}});
  }
  json out = api::OkReply();
  out["events"] = std::move(events);
  return out;
}

}  // namespace rota::daemon
