// Which part answers which operation: the daemon's wiring of the request pipeline
// (request_pipeline.h) to its parts. Every operation of api/ops.h but submit (Admission's) has
// its handler here; a missing one stops rotad at start (RequestPipeline::CheckComplete).
#include "api/protocol.h"
#include "daemon/daemon.h"

namespace rota::daemon {

using nlohmann::json;

void Daemon::RegisterOps() {
  pipeline_->Register("hello", [this](ConnId, const Caller& c, const json&) { return Hello(c); });
  pipeline_->Register("run", [this](ConnId id, const Caller& c, const json& r) {
    return sessions_->Queue(c, id, admission_->Prepare(c, r, /*interactive=*/true, id));
  });
  pipeline_->Register("session_end",
                      [this](ConnId id, const Caller&, const json& r) { return sessions_->End(id, r); });
  pipeline_->Register("session_signal",
                      [this](ConnId id, const Caller&, const json& r) { return sessions_->PassSignal(id, r); });
  pipeline_->Register("session_attach",
                      [this](ConnId id, const Caller& c, const json& r) { return sessions_->Attach(c, id, r); });
  pipeline_->Register("queue",
                      [this](ConnId, const Caller& c, const json& r) { return views_->Queue(c, r); });
  pipeline_->Register("show", [this](ConnId, const Caller& c, const json& r) { return views_->Show(c, r); });
  pipeline_->Register("cancel",
                      [this](ConnId, const Caller& c, const json& r) { return runner_->Cancel(c, r); });
  pipeline_->Register("history",
                      [this](ConnId, const Caller& c, const json& r) { return views_->History(c, r); });
  pipeline_->Register("logs", [this](ConnId, const Caller& c, const json& r) { return views_->Logs(c, r); });
  pipeline_->Register("status", [this](ConnId, const Caller&, const json&) { return StatusReply(); });
  pipeline_->Register("gpus", [this](ConnId, const Caller& c, const json&) { return card_desk_->Gpus(c); });
  pipeline_->Register("inventory",
                      [this](ConnId, const Caller&, const json&) { return card_desk_->InventoryReply(); });
  pipeline_->Register("drain",
                      [this](ConnId, const Caller& c, const json& r) { return card_desk_->Drain(c, r); });
  pipeline_->Register("resume",
                      [this](ConnId, const Caller& c, const json& r) { return card_desk_->Resume(c, r); });
  pipeline_->Register("advise", [this](ConnId, const Caller& c, const json& r) { return Advise(c, r); });
  pipeline_->Register("rules", [this](ConnId, const Caller& c, const json& r) { return Rules(c, r); });
  pipeline_->Register("replay", [this](ConnId, const Caller&, const json& r) {
    return replays_->Ask(ReplayDesk::Kind::kReplay, r, Now());
  });
  pipeline_->Register("tune", [this](ConnId, const Caller&, const json& r) {
    return replays_->Ask(ReplayDesk::Kind::kTune, r, Now());
  });
  pipeline_->Register("reload", [this](ConnId, const Caller& c, const json&) { return Reload(c); });
  pipeline_->Register("poke", [this](ConnId conn, const Caller&, const json& r) {
    // "wait": answered once the engine has looked and submitted what the end let start (a
    // node's epilog, which Slurm waits for before it schedules again), within a bound.
    const auto wait = r.is_object() ? r.find("wait") : r.end();
    if (wait != r.end() && !wait->is_boolean())
      return api::ErrorReply(InvalidArgument("\"wait\" must be true or false"));
    if (wait == r.end() || !wait->get<bool>()) {
      engine_->Poke();
      return api::OkReply();
    }
    json later = api::OkReply();
    if (auto tag = r.find("tag"); tag != r.end()) later["tag"] = *tag;
    if (!engine_->PokeAndWait([this, conn, later] { pipeline_->Reply(conn, later); })) return api::OkReply();
    return json();  // answered by the engine
  });
  pipeline_->Register("keep", [this](ConnId, const Caller& c, const json& r) {
    auto id = r.find("job_id");
    if (id == r.end() || !id->is_number_integer()) {
      return api::ErrorReply(InvalidArgument("\"job_id\" must be a job id"));
    }
    StatusOr<store::JobRecord> rec = views_->Visible(c, id->get<JobId>());
    if (!rec.ok()) return api::ErrorReply(rec.status());
    return allocs_->Keep(c, id->get<JobId>(), Now());
  });
  pipeline_->Register("events",
                      [this](ConnId, const Caller& c, const json& r) { return views_->Events(c, r); });
  pipeline_->Register("usage", [this](ConnId, const Caller& c, const json& r) { return ledger_->Report(c, r, jobs_, Now(), OutsideRunning()); });
  pipeline_->Register("book", [this](ConnId, const Caller& c, const json& r) { return desk_->Book(c, r); });
  pipeline_->Register("bookings",
                      [this](ConnId, const Caller& c, const json& r) {
                        // The time ahead: the jobs on the cards in the same window (time_ahead.cc).
                        const auto ahead = r.is_object() ? r.find("ahead") : r.end();
                        if (ahead != r.end() && !ahead->is_boolean())
                          return api::ErrorReply(InvalidArgument("\"ahead\" must be true or false"));
                        json out = desk_->ListBookings(c, r);
                        if (out.value("ok", false) && ahead != r.end() && ahead->is_boolean() && ahead->get<bool>())
                          out["ahead"] = TimeAhead(out.value("from", Time{0}), out.value("to", Time{0}));
                        return out;
                      });
  pipeline_->Register("unbook",
                      [this](ConnId, const Caller& c, const json& r) { return desk_->Unbook(c, r); });
  pipeline_->Register("release",
                      [this](ConnId, const Caller& c, const json& r) { return desk_->ReleaseBooking(c, r); });
  pipeline_->Register("extend",
                      [this](ConnId, const Caller& c, const json& r) { return desk_->ExtendBooking(c, r); });
  pipeline_->Register(
      "approve", [this](ConnId, const Caller& c, const json& r) { return desk_->DecideBooking(c, r, true); });
  pipeline_->Register(
      "reject", [this](ConnId, const Caller& c, const json& r) { return desk_->DecideBooking(c, r, false); });
  pipeline_->Register("bookings_export",
                      [this](ConnId, const Caller& c, const json& r) { return desk_->ExportBookings(c, r); });
  pipeline_->Register("bookings_import",
                      [this](ConnId, const Caller& c, const json& r) { return desk_->ImportBookings(c, r); });
  pipeline_->Register("web_login",
                      [this](ConnId, const Caller& c, const json&) { return door_->WebLogin(c); });
  pipeline_->Register("token_create",
                      [this](ConnId, const Caller& c, const json& r) { return door_->TokenCreate(c, r); });
  pipeline_->Register("token_list",
                      [this](ConnId, const Caller& c, const json& r) { return door_->TokenList(c, r); });
  pipeline_->Register("token_revoke",
                      [this](ConnId, const Caller& c, const json& r) { return door_->TokenRevoke(c, r); });
  pipeline_->Register("notify_test", [this](ConnId id, const Caller& c, const json& r) {
    json reply = notes_->Test(id, c.name, r);
    // Held open until the answer (ConfigureNotifications).
    if (reply.is_null() && !RequestPipeline::IsLocal(id)) server_->SetHeld(id, true);
    return reply;
  });
  pipeline_->Register("notify_log",
                      [this](ConnId, const Caller&, const json& r) { return notes_->Log(r, Now()); });
}

}  // namespace rota::daemon
