// The replies the daemon gives itself (docs/api.md): hello, status (the cards' part is the card
// desk's) and reload. Every other operation is a part's (op_handlers.cc says whose); the pipeline
// that brings requests here is request_pipeline.h.
#include <spdlog/spdlog.h>

#include "api/protocol.h"
#include "daemon/daemon.h"

namespace rota::daemon {

using nlohmann::json;

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
  if (agents_) {
    // Each node agent heard from: when its last readings came, and whether they still count.
    json agents = json::array();
    for (const auto& [node, st] : agents_->Nodes())
      agents.push_back({{"node", node}, {"received", st.received}, {"fresh", st.fresh}});
    out["agents"] = agents;
  }
  return out;
}

json Daemon::Reload(const Caller& caller) {
  if (Status s = ReloadConfig(); !s.ok()) {
    spdlog::error("reload requested by {}: {}; keeping the configuration in force", caller.name, s.message());
    return api::ErrorReply(s);
  }
  return api::OkReply();
}

}  // namespace rota::daemon
