// The request pipeline (docs/design.md, "Engines and the outside world"; docs/api.md,
// "Operations"): request lines from the socket and in-process calls are read after each batch of
// events (ProcessInbox), checked (framing, version, the table of operations in api/ops.h), and
// answered through Handle, which HTTP calls share (web_ops.cc); submissions are group-committed
// (FlushSubmits). Tested in-process by dispatch_test.cc and with real processes by
// tests/daemon/test_protocol.py.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <unordered_map>

#include "api/ops.h"
#include "api/protocol.h"
#include "api/zone_json.h"
#include "daemon/daemon.h"
#include "json/bounded.h"

namespace rota::daemon {

using nlohmann::json;

namespace {
// The span of the zone sent with read-only replies: their times are around now.
constexpr Duration kZoneSpan = 400 * kDay;
}  // namespace

void Daemon::OnLine(ConnId conn, std::string_view line) {
  // Lines are handled after the whole batch of events has been read, so that submissions that
  // arrive together share one disk sync (group commit; see ProcessInbox).
  inbox_.push_back(InboxLine{conn, std::string(line), nullptr});
}

void Daemon::Call(const Caller& caller, const json& request, std::function<void(json)> done) {
  const ConnId conn = next_local_conn_++;
  local_waiting_[conn] = LocalCall{caller, std::move(done)};
  inbox_.push_back(InboxLine{conn, request.dump(), nullptr});  // answered by the next idle hook
}

void Daemon::ProcessInbox() {
  std::vector<InboxLine> lines;
  lines.swap(inbox_);
  activity_ += lines.size();
  admission_->Recount();
  for (InboxLine& in : lines) {
    if (in.http) {
      ProcessHttpCall(in.conn, in.http);
      continue;
    }
    Caller caller;
    if (auto local = local_waiting_.find(in.conn); local != local_waiting_.end()) {
      caller = local->second.caller;
    } else {
      const Peer* peer = server_->PeerOf(in.conn);
      if (peer == nullptr) continue;  // closed meanwhile
      caller = callers_.Get(peer->uid, peer->gid, peer->pid, CallerCache::Clock::now());
    }
    // A user-mode daemon is its one user's own: they administer it (reload, drain, resume).
    if (options_.user_mode) caller.admin = true;
    // Depth-bounded: a deep request is refused here, before anything copies or echoes a part of
    // it (json/bounded.h).
    StatusOr<json> parsed = ParseBoundedJson(in.line);
    json request = parsed.ok() ? std::move(*parsed) : json();
    std::string op_name;
    json reply;
    if (!parsed.ok()) {
      reply = api::ErrorReply("invalid_argument", "the request is not a JSON object: " + parsed.status().message() +
                                                      " (see docs/api.md)");
    } else if (!request.is_object()) {
      reply = api::ErrorReply("invalid_argument", "the request is not a JSON object (see docs/api.md)");
    } else if (Status bad_tag = api::CheckTag(request); !bad_tag.ok()) {
      reply = api::ErrorReply(bad_tag);
    } else {
      auto v = request.find("v");
      auto op = request.find("op");
      if (op != request.end() && op->is_string()) op_name = op->get<std::string>();
      if (v == request.end() || !v->is_number_integer()) {
        reply = api::ErrorReply("invalid_argument", "the request has no API version \"v\"");
      } else if (v->get<std::int64_t>() != api::kVersion) {
        reply = api::ErrorReply("unsupported_version", "this rotad speaks API version " +
                                                           std::to_string(api::kVersion) + ", not " + v->dump());
      } else if (op == request.end() || !op->is_string()) {
        reply = api::ErrorReply("invalid_argument", "the request has no operation \"op\"");
      } else if (options_.user_mode && caller.uid != ::getuid()) {
        reply = api::ErrorReply("permission_denied", "this rotad runs in user mode for uid " +
                                                         std::to_string(::getuid()) + " only");
      } else {
        reply = Handle(in.conn, caller, request, /*over_http=*/false);
        if (reply.is_null() && op_name == "submit") continue;  // answered by FlushSubmits
      }
      // A null reply is answered later (notify_test), with its tag (a scalar: CheckTag).
      if (auto tag = request.find("tag"); tag != request.end() && !reply.is_null()) reply["tag"] = *tag;
    }
    NoteRefusal(caller, op_name, reply);
    FlushSubmits();
    if (!reply.is_null()) Reply(in.conn, reply);
  }
  FlushSubmits();
}

void Daemon::NoteRefusal(const Caller& caller, std::string_view op, const json& reply) {
  if (!reply.is_object() || reply.value("ok", true)) return;
  NoteRefusal(caller, op, api::StatusOfReply(reply));
}

void Daemon::NoteRefusal(const Caller& caller, std::string_view op, const Status& status) {
  if (status.ok()) return;
  const std::string who = caller.name.empty() ? "uid " + std::to_string(caller.uid) : caller.name;
  RefusalLog::Write(refusals_.Note("uid " + std::to_string(caller.uid), who, op, status, Now()), status.code());
}

void Daemon::FlushSubmits() {
  for (Admission::Answer& a : admission_->Flush()) {
    if (a.reply.value("ok", false)) submissions_waiting_ = true;
    Reply(a.conn, a.reply);
  }
}

json Daemon::Handle(ConnId conn, const Caller& caller, const json& request, bool over_http) {
  const std::string op = request["op"].get<std::string>();
  const api::OpInfo* info = api::FindOp(op);
  if (info == nullptr) {
    return api::ErrorReply("invalid_argument", "unknown operation \"" + op + "\" (" + api::OpNames() + ")");
  }
  if (over_http && !info->socket_only.empty()) {
    return api::ErrorReply("invalid_argument", "\"" + op + "\" " + std::string(info->socket_only));
  }
  if (info->access == api::OpAccess::kAdmin && !caller.admin) {
    return api::ErrorReply(PermissionDenied("only admins may " + std::string(info->admin_action)));
  }
  // Handlers read fields with defaults (`value`), which throws on a field of the wrong type: that
  // is the caller's mistake, answered as such, never a crash of the daemon.
  try {
    if (op == "submit") {
      StatusOr<store::JobRecord> rec = admission_->Prepare(caller, request, /*interactive=*/false, conn);
      if (!rec.ok()) return api::ErrorReply(rec.status());
      admission_->Batch(conn, request.contains("tag") ? request["tag"] : json(), std::move(*rec));
      return json();  // answered by FlushSubmits with the others of this batch: one disk sync for all
    }
    FlushSubmits();  // replies go out in request order
    CatchUpOnSubmissions();
    json reply = Dispatch(conn, caller, request);
    // What only reads shows times: the server's zone comes with them (docs/api.md, "Zone"), so that
    // every client shows them as rotad reads them, whatever its own zone.
    if (info->read_only && reply.is_object() && reply.value("ok", false) && !reply.contains("zone")) {
      const Time now = Now();
      reply["zone"] = api::ZoneJson(config_.policy.zone, now - kZoneSpan, now + kZoneSpan);
    }
    return reply;
  } catch (const json::exception& e) {
    return api::ErrorReply("invalid_argument",
                           std::string("a field of the request has the wrong type (see docs/api.md): ") + e.what());
  }
}

json Daemon::Dispatch(ConnId conn, const Caller& caller, const json& request) {
  admission_->Recount();  // any of these may start, cancel or end jobs
  using OpHandler = json (*)(Daemon&, ConnId, const Caller&, const json&);
  // Every operation of api/ops.h but submit (batched by Handle).
  static const std::unordered_map<std::string_view, OpHandler> kHandlers = {
      {"hello", [](Daemon& d, ConnId, const Caller& c, const json&) { return d.Hello(c); }},
      {"run",
       [](Daemon& d, ConnId id, const Caller& c, const json& r) {
         return d.sessions_->Queue(c, id, d.admission_->Prepare(c, r, /*interactive=*/true, id));
       }},
      {"session_end", [](Daemon& d, ConnId id, const Caller&, const json& r) { return d.sessions_->End(id, r); }},
      {"queue", [](Daemon& d, ConnId, const Caller& c, const json& r) { return d.views_->Queue(c, r); }},
      {"show", [](Daemon& d, ConnId, const Caller& c, const json& r) { return d.views_->Show(c, r); }},
      {"cancel", [](Daemon& d, ConnId, const Caller& c, const json& r) { return d.runner_->Cancel(c, r); }},
      {"history", [](Daemon& d, ConnId, const Caller& c, const json& r) { return d.views_->History(c, r); }},
      {"logs", [](Daemon& d, ConnId, const Caller& c, const json& r) { return d.views_->Logs(c, r); }},
      {"status", [](Daemon& d, ConnId, const Caller&, const json&) { return d.StatusReply(); }},
      {"gpus", [](Daemon& d, ConnId, const Caller& c, const json&) { return d.card_desk_->Gpus(c); }},
      {"inventory", [](Daemon& d, ConnId, const Caller&, const json&) { return d.card_desk_->InventoryReply(); }},
      {"drain", [](Daemon& d, ConnId, const Caller& c, const json& r) { return d.card_desk_->Drain(c, r); }},
      {"resume", [](Daemon& d, ConnId, const Caller& c, const json& r) { return d.card_desk_->Resume(c, r); }},
      {"reload", [](Daemon& d, ConnId, const Caller& c, const json&) { return d.Reload(c); }},
      {"keep",
       [](Daemon& d, ConnId, const Caller& c, const json& r) {
         auto id = r.find("job_id");
         if (id == r.end() || !id->is_number_integer()) {
           return api::ErrorReply(InvalidArgument("\"job_id\" must be a job id"));
         }
         StatusOr<store::JobRecord> rec = d.views_->Visible(c, id->get<JobId>());
         if (!rec.ok()) return api::ErrorReply(rec.status());
         return d.allocs_->Keep(c, id->get<JobId>(), d.Now());
       }},
      {"events", [](Daemon& d, ConnId, const Caller& c, const json& r) { return d.views_->Events(c, r); }},
      {"usage", [](Daemon& d, ConnId, const Caller& c, const json& r) { return d.Usage(c, r); }},
      {"book", [](Daemon& d, ConnId, const Caller& c, const json& r) { return d.desk_->Book(c, r); }},
      {"bookings", [](Daemon& d, ConnId, const Caller& c, const json& r) { return d.desk_->ListBookings(c, r); }},
      {"unbook", [](Daemon& d, ConnId, const Caller& c, const json& r) { return d.desk_->Unbook(c, r); }},
      {"release", [](Daemon& d, ConnId, const Caller& c, const json& r) { return d.desk_->ReleaseBooking(c, r); }},
      {"extend", [](Daemon& d, ConnId, const Caller& c, const json& r) { return d.desk_->ExtendBooking(c, r); }},
      {"approve", [](Daemon& d, ConnId, const Caller& c, const json& r) { return d.desk_->DecideBooking(c, r, true); }},
      {"reject", [](Daemon& d, ConnId, const Caller& c, const json& r) { return d.desk_->DecideBooking(c, r, false); }},
      {"bookings_export", [](Daemon& d, ConnId, const Caller& c, const json& r) { return d.desk_->ExportBookings(c, r); }},
      {"bookings_import", [](Daemon& d, ConnId, const Caller& c, const json& r) { return d.desk_->ImportBookings(c, r); }},
      {"web_login", [](Daemon& d, ConnId, const Caller& c, const json&) { return d.door_->WebLogin(c); }},
      {"token_create", [](Daemon& d, ConnId, const Caller& c, const json& r) { return d.door_->TokenCreate(c, r); }},
      {"token_list", [](Daemon& d, ConnId, const Caller& c, const json& r) { return d.door_->TokenList(c, r); }},
      {"token_revoke", [](Daemon& d, ConnId, const Caller& c, const json& r) { return d.door_->TokenRevoke(c, r); }},
      {"notify_test",
       [](Daemon& d, ConnId id, const Caller& c, const json& r) {
         json reply = d.notes_->Test(id, c.name, r);
         // Held open until the answer (ConfigureNotifications).
         if (reply.is_null() && d.server_ && id < kLocalConnBase) d.server_->SetHeld(id, true);
         return reply;
       }},
      {"notify_log", [](Daemon& d, ConnId, const Caller&, const json& r) { return d.notes_->Log(r, d.Now()); }},
  };
  auto it = kHandlers.find(request["op"].get_ref<const std::string&>());
  if (it == kHandlers.end()) return api::ErrorReply(Internal("no handler for a known operation"));
  return it->second(*this, conn, caller, request);
}

}  // namespace rota::daemon
