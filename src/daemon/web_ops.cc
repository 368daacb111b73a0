// The daemon's side of the HTTP front end: starting it, taking HTTP calls into the inbox (so they
// run through the same Dispatch and group commit as socket requests), and the credential
// operations web_login and token_* (docs/api.md). Tested by tests/daemon/test_http.py.
//
// Design: an HTTP call carries a Principal (the uid a credential was minted for); the caller is
// resolved here, on the loop, with Identify, exactly as for a socket peer, so the admin rule
// (uid 0, admin_group, the user-mode daemon's own user) is one rule.
#include <sys/epoll.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include "api/protocol.h"
#include "api/request_fields.h"
#include "daemon/clock.h"
#include "daemon/daemon.h"
#include "daemon/http_bridge.h"
#include "daemon/http_front.h"
#include "web/api_map.h"
#include "web/credentials.h"

#ifndef ROTA_WEB_DIR
#define ROTA_WEB_DIR "/usr/share/rota/web"
#endif

namespace rota::daemon {

using nlohmann::json;

Status Daemon::StartHttp() {
  if (config_.web.listen.empty()) {
    http_error_ = "the HTTP front end is off ([web] listen = \"\")";
    spdlog::info("HTTP: off ([web] listen = \"\")");
    return Status();
  }
  if (Status s = LoadTokens(); !s.ok()) return s;
  StatusOr<std::unique_ptr<HttpBridge>> bridge = HttpBridge::Create();
  if (!bridge.ok()) return bridge.status();
  http_bridge_ = std::move(*bridge);
  if (Status s = loop_->Add(http_bridge_->fd(), EPOLLIN, [this](std::uint32_t) { OnHttpCalls(); }); !s.ok()) return s;
  HttpFrontOptions o;
  o.web = config_.web;
  o.static_dir = config_.web.static_dir.empty() ? ROTA_WEB_DIR : config_.web.static_dir;
  o.password_login = config_.web.password_login && !options_.user_mode && ::geteuid() == 0;
  o.clock = deps_.clock;
  http_ = std::make_unique<HttpFront>(std::move(o), *auth_, *http_bridge_);
  if (Status s = http_->Start(); !s.ok()) {
    // The Unix socket and the scheduling do not depend on the page: serve them all the same,
    // and say why there is no page (also to `rota web`).
    http_error_ = s.message();
    spdlog::error("HTTP: {}; serving without the web page and HTTP API", http_error_);
    http_.reset();
  }
  return Status();
}

void Daemon::StopHttp() {
  if (http_bridge_) http_bridge_->Close();  // waiting handlers return "unavailable" at once
  if (http_) http_->Stop();
  http_.reset();
  if (http_bridge_) {
    loop_->Remove(http_bridge_->fd());
    http_bridge_.reset();
  }
  for (auto& [conn, call] : http_waiting_) call->reply.set_value(api::ErrorReply("unavailable", "rotad is stopping"));
  http_waiting_.clear();
}

void Daemon::OnHttpCalls() {
  for (std::shared_ptr<HttpCall>& call : http_bridge_->Take()) {
    const ConnId conn = next_http_conn_++;
    inbox_.push_back(InboxLine{conn, std::string(), std::move(call)});
  }
}

void Daemon::Reply(ConnId conn, const json& reply) {
  if (auto local = local_waiting_.find(conn); local != local_waiting_.end()) {
    std::function<void(json)> done = std::move(local->second.done);
    local_waiting_.erase(local);
    done(reply);
    return;
  }
  if (conn < kHttpConnBase) {
    server_->Send(conn, reply);
    return;
  }
  auto it = http_waiting_.find(conn);
  if (it == http_waiting_.end()) return;
  it->second->reply.set_value(reply);
  http_waiting_.erase(it);
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
    http_waiting_[conn] = shared;
    return;
  }
  NoteRefusal(caller, op, reply);
  call.reply.set_value(reply);
}

json Daemon::WebLogin(const Caller& caller) {
  if (!http_) return api::ErrorReply("failed_precondition", http_error_);
  if (caller.name.empty()) {
    return api::ErrorReply("permission_denied", "uid " + std::to_string(caller.uid) + " has no user name on this server");
  }
  const std::string token = auth_->MintLink(caller.uid, caller.name, Now(), config_.web.login_ttl);
  spdlog::info("HTTP: sign-in link minted for {}", caller.name);
  return api::OkReply({{"url", http_->BaseUrl() + "/auth/login?token=" + token},
             {"expires", Now() + config_.web.login_ttl},
             {"user", caller.name}});
}

Status Daemon::LoadTokens() {
  StatusOr<std::vector<store::ApiToken>> tokens = store_->Tokens("");
  if (!tokens.ok()) return tokens.status();
  std::vector<web::TokenEntry> entries;
  for (const store::ApiToken& t : *tokens) {
    if (t.revoked_at != 0) continue;
    entries.push_back(web::TokenEntry{t.id, t.hash, static_cast<uid_t>(t.uid), t.user, t.expires,
                                      web::ParseScope(t.scope).value_or(web::Scope::kCalendar)});
  }
  auth_->SetTokens(std::move(entries));
  return Status();
}

json Daemon::TokenCreate(const Caller& caller, const json& request) {
  if (caller.name.empty()) {
    return api::ErrorReply("permission_denied", "uid " + std::to_string(caller.uid) + " has no user name on this server");
  }
  const Time now = Now();
  store::ApiToken t;
  t.user = caller.name;
  t.uid = caller.uid;
  StatusOr<std::string> name = api::fields::Text(request, "name");
  if (!name.ok()) return api::ErrorReply(name.status());
  t.name = *name;
  if (t.name.size() > 200) return api::ErrorReply("invalid_argument", "\"name\" is longer than 200 bytes");
  // A token meant for a calendar app's address (where anyone who sees the address has it) may
  // read the calendar feed and nothing else; one named "calendar" is such a token unless told.
  StatusOr<std::string> scope_field = api::fields::Text(request, "scope", t.name == "calendar" ? "calendar" : "full");
  if (!scope_field.ok()) return api::ErrorReply(scope_field.status());
  const std::string scope_name = *scope_field;
  std::optional<web::Scope> scope = web::ParseScope(scope_name);
  if (!scope) {
    return api::ErrorReply("invalid_argument", "\"scope\" must be \"calendar\" (the calendar feed only), \"read\" or "
                                               "\"full\", not \"" + scope_name + "\"");
  }
  t.scope = web::ScopeName(*scope);
  t.created = now;
  if (auto e = request.find("expires"); e != request.end() && !e->is_null()) {
    std::optional<Duration> d;
    if (e->is_number_integer()) d = e->get<Duration>();
    if (e->is_string()) d = ParseDuration(e->get<std::string>());
    if (!d || *d <= 0) return api::ErrorReply("invalid_argument", "\"expires\" must be a duration such as \"30d\" or seconds");
    t.expires = now + *d;
  }
  const std::string secret = "rota_" + web::RandomToken();
  t.hash = web::HashToken(secret);
  StatusOr<std::int64_t> id = store_->AddToken(t);
  if (!id.ok()) return api::ErrorReply(id.status());
  auth_->AddToken(web::TokenEntry{*id, t.hash, caller.uid, caller.name, t.expires, *scope});
  spdlog::info("HTTP: API token {} ({}) created for {}", *id, t.scope, caller.name);
  return api::OkReply({{"id", *id}, {"token", secret}, {"name", t.name}, {"expires", t.expires}, {"scope", t.scope}});
}

json Daemon::TokenList(const Caller& caller, const json& request) {
  StatusOr<std::string> user_field = api::fields::Text(request, "user", caller.name);
  if (!user_field.ok()) return api::ErrorReply(user_field.status());
  StatusOr<bool> all = api::fields::Bool(request, "all");
  if (!all.ok()) return api::ErrorReply(all.status());
  std::string user = *all ? std::string() : *user_field;
  if (user != caller.name && !caller.admin) {
    return api::ErrorReply("permission_denied", "only admins see other users' tokens");
  }
  if (caller.name.empty() && !caller.admin) return api::ErrorReply("permission_denied", "no user name");
  StatusOr<std::vector<store::ApiToken>> tokens = store_->Tokens(user);
  if (!tokens.ok()) return api::ErrorReply(tokens.status());
  json out = json::array();
  for (const store::ApiToken& t : *tokens) {
    out.push_back({{"id", t.id}, {"user", t.user}, {"name", t.name}, {"created", t.created}, {"expires", t.expires},
                   {"revoked_at", t.revoked_at}, {"revoked_by", t.revoked_by}, {"scope", t.scope}});
  }
  return api::OkReply({{"tokens", out}});
}

json Daemon::TokenRevoke(const Caller& caller, const json& request) {
  auto it = request.find("id");
  if (it == request.end() || !it->is_number_integer() || it->get<std::int64_t>() <= 0) {
    return api::ErrorReply("invalid_argument", "\"id\" must be a token id (see `rota token list`)");
  }
  const std::int64_t id = it->get<std::int64_t>();
  StatusOr<std::vector<store::ApiToken>> tokens = store_->Tokens("");
  if (!tokens.ok()) return api::ErrorReply(tokens.status());
  const store::ApiToken* found = nullptr;
  for (const store::ApiToken& t : *tokens) {
    if (t.id == id) found = &t;
  }
  if (!found || (found->user != caller.name && !caller.admin)) {
    // Another user's token is reported as missing: its existence is theirs.
    return api::ErrorReply("not_found", "no token " + std::to_string(id) + " of yours");
  }
  if (Status s = store_->RevokeToken(id, caller.name, Now()); !s.ok()) return api::ErrorReply(s);
  auth_->RemoveToken(id);
  spdlog::info("HTTP: API token {} of {} revoked by {}", id, found->user, caller.name);
  return api::OkReply({{"id", id}});
}

}  // namespace rota::daemon
