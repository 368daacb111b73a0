// The `events` operation (`rota events`): what happened to one's jobs and bookings and to the
// GPUs, newest last, from the three audit trails in the store. Admins see everyone's.
// Tested by tests/daemon/test_watch.py.
#include "api/protocol.h"
#include "daemon/clock.h"
#include "daemon/daemon.h"

namespace rota::daemon {

using nlohmann::json;

json Daemon::Events(const Caller& caller, const json& request) {
  StatusOr<Time> since_field = api::TimeField(request, "since", Now() - kDay);
  if (!since_field.ok()) return api::ErrorReply(since_field.status());
  Time since = *since_field;
  JobId job = 0;
  if (auto it = request.find("job_id"); it != request.end()) {
    if (!it->is_number_integer() || it->get<JobId>() <= 0) {
      return api::ErrorReply(InvalidArgument("\"job_id\" must be a job id"));
    }
    job = it->get<JobId>();
    if (StatusOr<store::JobRecord> rec = Visible(caller, job); !rec.ok()) return api::ErrorReply(rec.status());
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
