// Replies, and the daemon's side of an HTTP call (the door, its threads and the credentials are
// http_door.h's): the call's caller, and its way through the one request pipeline with the
// socket's requests (Handle: the same dispatch and group commit). Tested by
// tests/daemon/test_http.py.
//
// Design: an HTTP call carries a Principal (the uid a credential was minted for); the caller is
// resolved here, on the loop, with Identify, exactly as for a socket peer, so the admin rule
// (uid 0, admin_group, the user-mode daemon's own user) is one rule.
#include "api/protocol.h"
#include "daemon/daemon.h"
#include "daemon/http_bridge.h"

namespace rota::daemon {

using nlohmann::json;

void Daemon::Reply(ConnId conn, const json& reply) {
  if (auto local = local_waiting_.find(conn); local != local_waiting_.end()) {
    std::function<void(json)> done = std::move(local->second.done);
    local_waiting_.erase(local);
    done(reply);
    return;
  }
  if (HttpDoor::IsHttp(conn)) {
    if (door_) door_->Answer(conn, reply);  // none once stopping: its calls were answered then
  } else {
    server_->Send(conn, reply);
  }
}

Caller Daemon::HttpCaller(const HttpCall& call) const {
  Caller caller;
  if (!call.who) {
    // Anonymous (public_read): nobody, owning nothing, admin of nothing.
    caller.uid = static_cast<uid_t>(-1);
    caller.gid = static_cast<gid_t>(-1);
    return caller;
  }
  StatusOr<UnixAccount> account = Account(call.who->uid);
  caller = Identify(call.who->uid, account.ok() ? account->gid : static_cast<gid_t>(-1), 0, config_.admin_group);
  if (options_.user_mode) caller.admin = true;  // as on the socket: the user-mode daemon is its user's
  return caller;
}

void Daemon::ProcessHttpCall(ConnId conn, const std::shared_ptr<HttpCall>& shared) {
  HttpCall& call = *shared;
  if (call.metrics) {
    call.reply.set_value(api::OkReply({{"text", MetricsText()}}));
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
