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
