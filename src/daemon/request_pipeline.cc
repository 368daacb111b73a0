// The request pipeline (request_pipeline.h): request lines from the socket, HTTP calls and
// in-process calls, read after each batch of events, checked, handed to their handlers; the
// submissions among them group-committed.
//
// Design: an HTTP call carries a Principal (the uid a credential was minted for); the caller is
// resolved here, on the loop, with Identify, exactly as for a socket peer, so the admin rule
// (uid 0, admin_group, the user-mode daemon's own user) is one rule.
#include "daemon/request_pipeline.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include "api/ops.h"
#include "api/protocol.h"
#include "api/zone_json.h"
#include "daemon/http_bridge.h"
#include "json/bounded.h"

namespace rota::daemon {

using nlohmann::json;

namespace {
// The span of the zone sent with read-only replies: their times are around now.
constexpr Duration kZoneSpan = 400 * kDay;
}  // namespace

RequestPipeline::RequestPipeline(Setup setup) : setup_(std::move(setup)) {}

void RequestPipeline::Register(std::string_view op, Handler handler) {
  const api::OpInfo* info = api::FindOp(op);
  if (info == nullptr) {
    spdlog::critical("no operation \"{}\" to register", op);
    return;
  }
  handlers_[info->name] = std::move(handler);  // the table's own string, which outlives the map
}

Status RequestPipeline::CheckComplete() const {
  for (const api::OpInfo& op : api::Ops()) {
    if (op.name != "submit" && !handlers_.count(op.name)) {
      return Internal("no handler for the operation \"" + std::string(op.name) + "\"");
    }
  }
  return Status();
}

void RequestPipeline::TakeHttp(ConnId conn, std::shared_ptr<HttpCall> call) {
  inbox_.push_back(Line{conn, std::string(), std::move(call), std::nullopt});
}

void RequestPipeline::TakeLine(ConnId conn, std::string line) {
  // Lines are handled after the whole batch of events has been read, so that submissions that
  // arrive together share one disk sync (group commit; see ProcessInbox).
  inbox_.push_back(Line{conn, std::move(line), nullptr, std::nullopt});
}

void RequestPipeline::Call(const Caller& caller, const json& request, std::function<void(json)> done) {
  CallLine(caller, request.dump(), std::move(done));
}

void RequestPipeline::CallLine(const Caller& caller, std::string line, std::function<void(json)> done) {
  const ConnId conn = next_local_conn_++;
  local_waiting_[conn] = LocalCall{caller, std::move(done)};
  inbox_.push_back(Line{conn, std::move(line), nullptr, std::nullopt});  // answered by the next idle hook
}

void RequestPipeline::CallHttp(const Caller& caller, json request, std::function<void(json)> done) {
  const ConnId conn = next_local_conn_++;
  local_waiting_[conn] = LocalCall{caller, std::move(done)};
  inbox_.push_back(Line{conn, std::string(), nullptr, std::move(request)});
}

std::size_t RequestPipeline::Process() {
  std::vector<Line> lines;
  lines.swap(inbox_);
  setup_.admission->Recount();
  for (Line& in : lines) {
    if (in.http) {
      ProcessHttpCall(in.conn, in.http);
      continue;
    }
    Caller caller;
    if (auto local = local_waiting_.find(in.conn); local != local_waiting_.end()) {
      caller = local->second.caller;
    } else {
      const Peer* peer = setup_.server->PeerOf(in.conn);
      if (peer == nullptr) continue;  // closed meanwhile
      caller = setup_.callers->Get(peer->uid, peer->gid, peer->pid, CallerCache::Clock::now());
    }
    // A user-mode daemon is its one user's own: they administer it (reload, drain, resume).
    if (setup_.user_mode) caller.admin = true;
    const bool over_http = in.object.has_value();
    // Depth-bounded: a deep request is refused here, before anything copies or echoes a part of
    // it (json/bounded.h).
    StatusOr<json> parsed = over_http ? StatusOr<json>(std::move(*in.object)) : ParseBoundedJson(in.line, kMaxJsonDepth, JsonFloats::kWithinInt32);
    json request = parsed.ok() ? std::move(*parsed) : json();
    std::string op_name;
    json reply;
    if (!parsed.ok()) {
      reply = api::ErrorReply("invalid_argument", "the request is not a JSON object: " +
                                                      parsed.status().message() + " (see docs/api.md)");
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
        reply =
            api::ErrorReply("unsupported_version", "this rotad speaks API version " +
                                                       std::to_string(api::kVersion) + ", not " + v->dump());
      } else if (op == request.end() || !op->is_string()) {
        reply = api::ErrorReply("invalid_argument", "the request has no operation \"op\"");
      } else if (setup_.user_mode && caller.uid != ::getuid()) {
        reply = api::ErrorReply("permission_denied", "this rotad runs in user mode for uid " +
                                                         std::to_string(::getuid()) + " only");
      } else {
        reply = Handle(in.conn, caller, request, over_http);
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
  return lines.size();
}

void RequestPipeline::NoteRefusal(const Caller& caller, std::string_view op, const json& reply) {
  if (!reply.is_object() || reply.value("ok", true)) return;
  NoteRefusal(caller, op, api::StatusOfReply(reply));
}

void RequestPipeline::NoteRefusal(const Caller& caller, std::string_view op, const Status& status) {
  if (status.ok()) return;
  const std::string who = caller.name.empty() ? "uid " + std::to_string(caller.uid) : caller.name;
  RefusalLog::Write(refusals_.Note("uid " + std::to_string(caller.uid), who, op, status, Now()),
                    status.code());
}

void RequestPipeline::FlushSubmits() {
  for (Admission::Answer& a : setup_.admission->Flush()) {
    if (a.stored) setup_.submitted();
    Reply(a.conn, a.reply);
  }
}

json RequestPipeline::Handle(ConnId conn, const Caller& caller, const json& request, bool over_http) {
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
      StatusOr<store::JobRecord> rec =
          setup_.admission->Prepare(caller, request, /*interactive=*/false, conn);
      if (!rec.ok()) return api::ErrorReply(rec.status());
      setup_.admission->Batch(conn, request.contains("tag") ? request["tag"] : json(), std::move(*rec));
      return json();  // answered by FlushSubmits with the others of this batch: one disk sync for all
    }
    FlushSubmits();  // replies go out in request order
    setup_.catch_up();
    setup_.admission->Recount();  // any other operation may start, cancel or end jobs
    auto handler = handlers_.find(op);
    if (handler == handlers_.end())
      return api::ErrorReply(Internal("no handler for the operation \"" + op + "\""));
    json reply = handler->second(conn, caller, request);
    // What only reads shows times: the server's zone comes with them (docs/api.md, "Zone"), so that
    // every client shows them as rotad reads them, whatever its own zone.
    if (info->read_only && reply.is_object() && reply.value("ok", false) && !reply.contains("zone")) {
      const Time now = Now();
      reply["zone"] = api::ZoneJson(setup_.config->policy.zone, now - kZoneSpan, now + kZoneSpan);
    }
    return reply;
  } catch (const json::exception& e) {
    return api::ErrorReply(
        "invalid_argument",
        std::string("a field of the request has the wrong type (see docs/api.md): ") + e.what());
  }
}

void RequestPipeline::Reply(ConnId conn, const json& reply) {
  if (auto local = local_waiting_.find(conn); local != local_waiting_.end()) {
    std::function<void(json)> done = std::move(local->second.done);
    local_waiting_.erase(local);
    done(reply);
    return;
  }
  if (HttpDoor::IsHttp(conn)) {
    if (door_) door_->Answer(conn, reply);  // none once stopping: its calls were answered then
  } else {
    setup_.server->Send(conn, reply);
  }
}

Caller RequestPipeline::HttpCaller(const HttpCall& call) const {
  Caller caller;
  if (!call.who) {
    // Anonymous (public_read): nobody, owning nothing, admin of nothing.
    caller.uid = static_cast<uid_t>(-1);
    caller.gid = static_cast<gid_t>(-1);
    return caller;
  }
  StatusOr<UnixAccount> account = setup_.account(call.who->uid);
  caller = Identify(call.who->uid, account.ok() ? account->gid : static_cast<gid_t>(-1), 0,
                    setup_.config->admin_group);
  if (setup_.user_mode) caller.admin = true;  // as on the socket: the user-mode daemon is its user's
  return caller;
}

void RequestPipeline::ProcessHttpCall(ConnId conn, const std::shared_ptr<HttpCall>& shared) {
  HttpCall& call = *shared;
  if (call.metrics) {
    call.reply.set_value(api::OkReply({{"text", setup_.metrics()}}));
    return;
  }
  const json& request = call.request;
  const std::string op = request.value("op", "");
  const Caller caller = HttpCaller(call);
  json reply = Handle(conn, caller, request, /*over_http=*/true);
  if (reply.is_null()) {  // a batched submission, or notify_test waiting for its sends
    door_->Wait(conn, shared);
    return;
  }
  NoteRefusal(caller, op, reply);
  call.reply.set_value(reply);
}

}  // namespace rota::daemon
