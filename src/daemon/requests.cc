// The API operations that change jobs or the daemon (docs/api.md): hello, submit's checks, run,
// cancel, status, reload. What users read of jobs (queue, show, history, logs, events) is
// job_views.h's; the pipeline that brings requests here is pipeline.cc.
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
    StatusOr<store::JobRecord> rec = views_->Visible(caller, id);
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
      runner_->BeginStop(a, now);
      results.push_back({{"job_id", id}, {"ok", true}, {"state", "cancelling"}});
    }
    dirty_ = true;
  }
  return api::OkReply({{"results", std::move(results)}});
}

json Daemon::StatusReply() {
  int pending = 0, running = 0;
  for (const auto& [id, a] : jobs_) (a.rec.state == store::JobState::kRunning ? running : pending)++;
  json out = api::OkReply({{"version", api::kDaemonVersion},
                           {"mode", options_.user_mode ? "user" : "system"},
                           {"started", started_},
                           {"jobs", {{"pending", pending}, {"running", running}}},
                           {"executor", engine_->Describe()}});
  card_desk_->AddToStatus(out);
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
