// The API operations on jobs (docs/api.md): hello, submit's checks, run, queue, show, cancel,
// history, logs, status, reload. The pipeline that brings requests here is pipeline.cc.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "api/job_json.h"
#include "api/protocol.h"
#include "api/request_fields.h"
#include "api/when.h"
#include "core/capacity.h"
#include "core/quota.h"
#include "daemon/clock.h"
#include "daemon/daemon.h"
#include "exec/files.h"
#include "exec/open_as.h"
#include "exec/process.h"
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

json Daemon::Hello(const Caller& caller) {
  // The login shell is what `rota shell` starts when SHELL is unset: the static command line
  // does no password-database lookups of its own.
  StatusOr<UnixAccount> account = Account(static_cast<uid_t>(caller.uid));
  return api::OkReply({{"server", "rotad"},
             {"version", api::kDaemonVersion},
             {"api", api::kVersion},
             {"mode", options_.user_mode ? "user" : "system"},
             {"user", caller.name},
             {"uid", caller.uid},
             {"admin", caller.admin},
             {"shell", account.ok() ? account->shell : std::string()}});
}

Status Daemon::CheckSubmittable(const store::JobRecord& rec) {
  const Job& j = rec.job;
  if (!config_.projects.empty() && !j.project.empty() && !config_.projects.count(j.project)) {
    std::vector<std::string> known;
    for (const auto& [name, p] : config_.projects) known.push_back(name);
    return InvalidArgument("unknown project \"" + j.project + "\" (this server has: " + Join(known, ", ") + ")");
  }
  // A host-memory limit beyond this server's memory can never be honoured (Slurm refuses such a
  // --mem as well): the cgroup would take it, but the job would not get what it asked for.
  if (j.host_mem_per_gpu > 0 && host_memory_ > 0) {
    const int gpus = j.request.kind == RequestKind::kWholeGpus ? std::max(1, j.request.gpus) : 1;
    const MiB total = j.host_mem_per_gpu * gpus;
    if (total > host_memory_) {
      return ResourceExhausted("this job can never run here: it asks for " + FormatMemory(j.host_mem_per_gpu) +
                               " of host memory per GPU" + (gpus > 1 ? " (" + FormatMemory(total) + " in all)" : "") +
                               ", but this server has " + FormatMemory(host_memory_));
    }
  }
  if (Status s = CheckDependencies(j); !s.ok()) return s;
  // Whether any card of this server could ever hold the request: the core's own test.
  CapacityPlan plan(cards_.state(), config_.policy, Now());
  if (!plan.Possible(j.request)) return ResourceExhausted("this job can never run here: it asks for " + WhyNeverFits(cards_.gpus(), j.request));
  return Status();
}

StatusOr<store::JobRecord> Daemon::PrepareJob(const Caller& caller, const json& request, bool interactive,
                                               ConnId conn) {
  if (caller.name.empty()) {
    return PermissionDenied("uid " + std::to_string(caller.uid) + " has no user name on this server");
  }
  if (interactive && jobs_.SessionOf(conn) != 0) return FailedPrecondition("this connection already holds a session");
  auto job = request.find("job");
  if (job == request.end()) return InvalidArgument("the request has no \"job\"");
  StatusOr<store::JobRecord> rec = api::JobFromRequest(*job, interactive);
  if (!rec.ok()) return rec.status();
  if (caller.uid == 0 && !options_.user_mode && !config_.allow_root_jobs) {
    return PermissionDenied("rotad does not run jobs as root; submit as the user the job should run as "
                            "(sudo -u USER rota ...), or set allow_root_jobs = true in the configuration");
  }
  rec->job.user = caller.name;
  rec->uid = caller.uid;
  // A job that asked for no warning signal gets the lab's, where the admin set one knowingly.
  if (rec->job.signal == 0 && config_.default_signal) {
    rec->job.signal = config_.default_signal->signal;
    rec->job.grace = config_.default_signal->grace;
  }
  if (rec->command.empty()) rec->command = {"(session)"};
  if (Status s = CheckSubmittable(*rec); !s.ok()) return s;
  if (Status s = CheckSubmitLimits(caller); !s.ok()) return s;
  return rec;
}

json Daemon::RunSession(const Caller& caller, const json& request, ConnId conn) {
  StatusOr<store::JobRecord> rec = PrepareJob(caller, request, /*interactive=*/true, conn);
  if (!rec.ok()) return WithError(rec.status());
  // The session's client is moved into the job's cgroup and killed with it: it must be a process
  // proven to be the caller's, held by a pidfd, never a bare pid that another process may have
  // by the time the GPUs are free (docs/security.md, "Sessions").
  auto process = std::make_shared<exec::UniqueFd>(server_->TakeProcessHandle(conn));
  if (process->get() < 0) {
    return WithError(FailedPrecondition("rotad cannot tell which process this session is: `rota run` passes a "
                                        "handle on itself (a pidfd, Linux 5.3 or later); see docs/api.md, op \"run\""));
  }
  StatusOr<pid_t> pid = exec::PidfdProcessOf(process->get(), static_cast<uid_t>(caller.uid));
  if (!pid.ok()) return WithError(Status(pid.status().code(), "the session's process: " + pid.status().message()));
  const Time now = Now();
  StatusOr<JobId> id = store_->Submit(*rec, now);
  if (!id.ok()) {
    spdlog::error("session for {}: {}", caller.name, id.status().message());
    return WithError(id.status());
  }
  rec->job.id = *id;
  rec->job.submit_time = now;
  Active a;
  a.rec = std::move(*rec);
  a.session = conn;
  a.session_pid = *pid;
  a.session_process = std::move(process);
  jobs_.Add(std::move(a));  // bound to its connection
  server_->SetHeld(conn, true);  // a session's connection is quiet while the command runs
  dirty_ = true;
  return api::OkReply({{"job_id", *id}, {"event", "queued"}});
}

json Daemon::JobJson(const store::JobRecord& rec, const Caller& caller) {
  const PendingInfo* info = jobs_.Waiting(rec.job.id);
  json out = api::JobToJson(rec, info, caller.admin || caller.uid == static_cast<uid_t>(rec.uid));
  // GPU-hours so far (or in all, once ended), in GPU-equivalents of this server's cards.
  if (rec.start_time > 0 && !rec.placement.alloc.gpus.empty()) {
    const Time end = rec.end_time > 0 ? rec.end_time : Now();
    out["gpu_hours"] = AllocationGpus(cards_.state(), rec.placement.alloc) * static_cast<double>(end - rec.start_time) / 3600.0;
  }
  return out;
}

json Daemon::Queue(const Caller& caller, const json& request) {
  StatusOr<bool> all_field = api::fields::Bool(request, "all");
  if (!all_field.ok()) return WithError(all_field.status());
  const bool all = *all_field;
  json jobs = json::array();
  auto visible = [&](const store::JobRecord& r) { return all || r.uid == static_cast<std::int64_t>(caller.uid); };
  for (const auto& [id, a] : jobs_) {
    if (a.rec.state == store::JobState::kRunning && visible(a.rec)) jobs.push_back(JobJson(a.rec, caller));
  }
  std::set<JobId> listed;
  for (JobId id : jobs_.waiting_order()) {
    auto it = jobs_.find(id);
    if (it == jobs_.end() || it->second.rec.state != store::JobState::kPending || !visible(it->second.rec)) continue;
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

StatusOr<store::JobRecord> Daemon::Visible(const Caller& caller, JobId id) {
  store::JobRecord rec;
  if (auto it = jobs_.find(id); it != jobs_.end()) {
    rec = it->second.rec;
  } else {
    StatusOr<store::JobRecord> r = store_->Get(id);
    if (!r.ok()) return r.status().code() == StatusCode::kNotFound ? NotFound("no job " + std::to_string(id)) : r.status();
    rec = std::move(*r);
  }
  if (!caller.admin && rec.uid != static_cast<std::int64_t>(caller.uid)) {
    // Other users' jobs are listed by `queue --all` but their details are private.
    return PermissionDenied("job " + std::to_string(id) + " belongs to " + rec.job.user +
                            "; only they and admins may see its details or act on it");
  }
  return rec;
}

json Daemon::Show(const Caller& caller, const json& request) {
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

json Daemon::CancelJobs(const Caller& caller, const json& request) {
  auto ids = request.find("job_ids");
  if (ids == request.end() || !ids->is_array() || ids->empty()) {
    return WithError(InvalidArgument("\"job_ids\" must be a non-empty list of job ids"));
  }
  // Bounded, so one request's work on the loop stays small (rota cancel sends long lists in parts).
  if (ids->size() > static_cast<size_t>(config_.limits.ids_per_request)) {
    return WithError(InvalidArgument("at most " + std::to_string(config_.limits.ids_per_request) +
                                     " job ids in one cancel ([limits] ids_per_request); send the rest in another"));
  }
  const Time now = Now();
  json results = json::array();
  for (const json& v : *ids) {
    if (!v.is_number_integer()) {
      results.push_back({{"job_id", v}, {"ok", false}, {"error", {{"code", "invalid_argument"}, {"message", "not a job id"}}}});
      continue;
    }
    const JobId id = v.get<JobId>();
    auto fail = [&](const Status& s) {
      NoteRefusal(caller, "cancel", s);
      results.push_back({{"job_id", id}, {"ok", false}, {"error", {{"code", api::ErrorCode(s.code())}, {"message", s.message()}}}});
    };
    StatusOr<store::JobRecord> rec = Visible(caller, id);
    if (!rec.ok()) {
      fail(rec.status());
      continue;
    }
    auto it = jobs_.find(id);
    if (it == jobs_.end()) {
      fail(FailedPrecondition("job " + std::to_string(id) + " has already ended (" +
                              store::JobStateName(rec->state) + ")"));
      continue;
    }
    Active& a = it->second;
    if (a.released_at != 0) {
      // Its processes are gone (EngineEvents::JobReleased): how it ended is being collected, not cancelled.
      fail(FailedPrecondition("job " + std::to_string(id) + " has already ended (its end is being recorded)"));
      continue;
    }
    if (a.rec.state == store::JobState::kPending) {
      if (Status s = CancelPending(id, caller.name, "Cancelled by " + caller.name, now); !s.ok()) {
        fail(s);
        continue;
      }
      results.push_back({{"job_id", id}, {"ok", true}, {"state", "cancelled"}});
    } else {
      if (a.cancelled_by.empty()) {
        // On disk first: a daemon restarted before the job is gone finishes the stop.
        if (Status s = store_->MarkCancelRequested(id, caller.name, now); !s.ok()) {
          fail(s);
          continue;
        }
        a.cancelled_by = caller.name;
      }
      BeginStop(a, now);
      results.push_back({{"job_id", id}, {"ok", true}, {"state", "cancelling"}});
    }
    dirty_ = true;
  }
  return api::OkReply({{"results", std::move(results)}});
}

json Daemon::History(const Caller& caller, const json& request) {
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
      return WithError(InvalidArgument("\"limit\" must be a number of jobs from 1 to " + std::to_string(most) +
                                       " ([limits] history_limit)"));
    }
    limit = l->get<int>();
  }
  std::pair<Time, JobId> after{0, 0};
  if (auto c = request.find("after"); c != request.end()) {
    long long end = 0, id = 0;
    char extra = 0;
    if (!c->is_string() || std::sscanf(c->get_ref<const std::string&>().c_str(), "%lld:%lld%c", &end, &id, &extra) != 2) {
      return WithError(InvalidArgument("\"after\" must be the \"next\" of the page before"));
    }
    after = {end, id};
  }
  StatusOr<bool> all_field = api::fields::Bool(request, "all");
  if (!all_field.ok()) return WithError(all_field.status());
  const bool all = *all_field;
  StatusOr<store::JobStore::HistoryPageResult> page = store_->HistoryPage(
      *since, all ? std::nullopt : std::optional<std::int64_t>(caller.uid), after, limit);
  if (!page.ok()) return WithError(page.status());
  json out = json::array();
  for (const store::JobRecord& r : page->jobs) out.push_back(JobJson(r, caller));
  json reply = api::OkReply({{"jobs", std::move(out)}});
  if (page->more) {
    const store::JobRecord& last = page->jobs.back();
    reply["next"] = std::to_string(last.end_time) + ":" + std::to_string(last.job.id);
  }
  return reply;
}

json Daemon::Logs(const Caller& caller, const json& request) {
  StatusOr<JobId> id = JobIdField(request);
  if (!id.ok()) return WithError(id.status());
  StatusOr<store::JobRecord> rec = Visible(caller, *id);
  if (!rec.ok()) return WithError(rec.status());
  if (rec->interactive) {
    return WithError(FailedPrecondition("job " + std::to_string(*id) + " is an interactive session: its output went to its terminal"));
  }
  std::int64_t offset = 0;
  std::int64_t max_bytes = 65536;
  if (auto it = request.find("offset"); it != request.end() && it->is_number_integer()) offset = std::max<std::int64_t>(0, it->get<std::int64_t>());
  if (auto it = request.find("max_bytes"); it != request.end() && it->is_number_integer()) {
    max_bytes = std::clamp<std::int64_t>(it->get<std::int64_t>(), 1, 1 << 20);
  }
  const std::string path = api::ExpandOutput(rec->output, *id);
  const bool final = store::IsFinal(rec->state);
  json reply = api::OkReply({{"path", path}, {"data", ""}, {"offset", offset}, {"eof", true}, {"final", final}});
  if (rec->state == store::JobState::kPending) return reply;
  // Opened with its owner's rights, never root's (exec::OpenAsUser): the path is one its owner
  // chose, in directories its owner may or may not enter. Only a regular file of theirs is served;
  // a link at the end is not followed, a device or FIFO is never opened for reading here.
  StatusOr<UnixAccount> owner = Account(static_cast<uid_t>(rec->uid));
  if (!owner.ok()) return WithError(owner.status());
  StatusOr<exec::OpenedFile> file = exec::OpenAsUser(path, owner->uid, owner->gid, owner->groups);
  if (!file.ok()) {
    if (file.status().code() == StatusCode::kNotFound) return reply;
    return WithError(file.status());
  }
  exec::UniqueFd fd(file->fd);
  const std::int64_t size = file->size;
  std::string data(static_cast<size_t>(std::min<std::int64_t>(max_bytes, std::max<std::int64_t>(0, size - offset))), '\0');
  ssize_t n = data.empty() ? 0 : ::pread(fd.get(), data.data(), data.size(), offset);
  if (n < 0) return WithError(Unavailable("reading " + path + ": " + std::strerror(errno)));
  data.resize(static_cast<size_t>(n));
  reply["data"] = ValidUtf8(data);
  reply["offset"] = offset + n;
  reply["eof"] = offset + n >= size;
  return reply;
}

json Daemon::StatusReply() {
  json gpus = json::array();
  for (const Gpu& g : cards_.gpus()) {
    json mig = json::array();
    for (const MigSlice& m : g.mig) mig.push_back({{"uuid", m.uuid}, {"profile", m.profile}, {"memory", m.memory}});
    gpus.push_back({{"index", g.index}, {"uuid", g.uuid}, {"model", g.model}, {"memory", g.memory}, {"mig", mig}, {"drained", g.drained}, {"held_outside", outside_.Holds(g.uuid)}});
  }
  int pending = 0, running = 0;
  for (const auto& [id, a] : jobs_) (a.rec.state == store::JobState::kRunning ? running : pending)++;
  json out = api::OkReply({{"version", api::kDaemonVersion},
                 {"mode", options_.user_mode ? "user" : "system"},
                 {"started", started_},
                 {"gpus", gpus},
                 {"jobs", {{"pending", pending}, {"running", running}}},
                 {"devices", devices_ ? devices_->Describe() : std::string("none")},
                 {"executor", engine_->Describe()}});
  if (!devices_error_.empty()) out["devices_error"] = devices_error_;
  out["scheduler"] = counters_.PassesJson();
  return out;
}

json Daemon::Reload(const Caller& caller) {
  if (Status s = ReloadConfig(); !s.ok()) {
    spdlog::error("reload requested by {}: {}; keeping the configuration in force", caller.name, s.message());
    return WithError(s);
  }
  return api::OkReply();
}

}  // namespace rota::daemon
