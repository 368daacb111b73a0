// The replies the daemon gives itself (docs/api.md): hello, status (the cards' part is the card
// desk's), rules and reload. Every other operation is a part's (op_handlers.cc says whose); the pipeline
// that brings requests here is request_pipeline.h.
#include <spdlog/spdlog.h>

#include "api/protocol.h"
#include "daemon/daemon.h"
#include "daemon/rules_text.h"
#include "replay/lab_history.h"

namespace rota::daemon {

using nlohmann::json;

StatusOr<replay::StoreTrace> Daemon::LabHistory(const std::string& since) {
  Caller reader;
  reader.name = "root";
  reader.admin = true;
  auto call = [this, &reader](const json& request) -> StatusOr<json> {
    const std::string op = request.value("op", "");
    json reply = op == "gpus"      ? card_desk_->Gpus(reader)
                 : op == "history" ? views_->History(reader, request)
                                   : desk_->ListBookings(reader, request);
    if (Status s = api::StatusOfReply(reply); !s.ok()) return s;
    return reply;
  };
  return replay::LoadHistory(call, since);
}

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

json Daemon::Rules(const Caller& caller, const json& request) {
  // The language asked for, else the reader's own ([users.NAME] language), else the lab's.
  std::string language = config_.notify.language;
  if (auto user = config_.users.find(caller.name); user != config_.users.end() && !user->second.language.empty())
    language = user->second.language;
  if (auto it = request.find("lang"); it != request.end()) {
    if (!it->is_string() || (*it != "zh" && *it != "en"))
      return api::ErrorReply(InvalidArgument("\"lang\" must be \"zh\" or \"en\""));
    language = it->get<std::string>();
  }
  // The quota week's GPU-hours, as `rota usage` counts them: one's own, an admin's everyone's.
  RulesReader reader{caller.name, caller.admin, {}};
  for (const auto& [name, hours] : ledger_->WeekHours(jobs_, Now(), OutsideRunning())) {
    if (caller.admin || name == caller.name) reader.week_hours[name] = hours;
  }
  const RulesDoc doc = DescribeRules(config_, reader, language);
  json sections = json::array();
  for (const RulesSection& s : doc.sections) {
    json items = json::array();
    for (const RulesItem& i : s.items) {
      json item = {{"text", i.text}};
      if (!i.code.empty()) item["code"] = i.code;
      items.push_back(std::move(item));
    }
    sections.push_back({{"id", s.id}, {"heading", s.heading}, {"items", std::move(items)}});
  }
  json standing = json::array();
  for (const Standing& st : doc.standing) {
    standing.push_back({{"user", st.user},
                        {"role", st.role},
                        {"quota_gpu_hours", st.quota_hours < 0 ? json(nullptr) : json(st.quota_hours)},
                        {"week_gpu_hours", st.week_hours}});
  }
  return api::OkReply({{"lang", language == "zh" ? "zh" : "en"},
                       {"title", doc.title},
                       {"sections", sections},
                       {"standing", standing}});
}

json Daemon::Reload(const Caller& caller) {
  if (Status s = ReloadConfig(); !s.ok()) {
    spdlog::error("reload requested by {}: {}; keeping the configuration in force", caller.name, s.message());
    return api::ErrorReply(s);
  }
  return api::OkReply();
}

}  // namespace rota::daemon
