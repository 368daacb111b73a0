#include "daemon/http_door.h"

#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "api/protocol.h"
#include "api/request_fields.h"
#include "daemon/http_front.h"
#include "daemon/shipped.h"
#include "web/credentials.h"

#ifndef ROTA_WEB_DIR
#define ROTA_WEB_DIR "/usr/share/rota/web"
#endif

namespace rota::daemon {

using nlohmann::json;

HttpDoor::HttpDoor(Setup setup) : setup_(std::move(setup)) {}

HttpDoor::~HttpDoor() { Stop(); }

Status HttpDoor::Start(EventLoop& loop) {
  loop_ = &loop;
  const config::Config& config_ = *setup_.config;
  if (config_.web.listen.empty()) {
    error_ = "the HTTP front end is off ([web] listen = \"\")";
    spdlog::info("HTTP: off ([web] listen = \"\")");
    return Status();
  }
  if (Status s = LoadTokens(); !s.ok()) return s;
  StatusOr<std::unique_ptr<HttpBridge>> bridge = HttpBridge::Create();
  if (!bridge.ok()) return bridge.status();
  bridge_ = std::move(*bridge);
  if (Status s = loop.Add(bridge_->fd(), EPOLLIN, [this](std::uint32_t) { OnCalls(); }); !s.ok()) return s;
  HttpFrontOptions o;
  o.web = config_.web;
  o.static_dir = config_.web.static_dir.empty() ? ShippedPath(ROTA_WEB_DIR, "web") : config_.web.static_dir;
  o.password_login = config_.web.password_login && !setup_.user_mode && ::geteuid() == 0;
  o.clock = setup_.clock;
  o.agents = setup_.agents;
  front_ = std::make_unique<HttpFront>(std::move(o), *auth_, *bridge_);
  if (Status s = front_->Start(); !s.ok()) {
    // The Unix socket and the scheduling do not depend on the page: serve them all the same,
    // and say why there is no page (also to `rota web`).
    error_ = s.message();
    spdlog::error("HTTP: {}; serving without the web page and HTTP API", error_);
    front_.reset();
  }
  return Status();
}

void HttpDoor::Stop() {
  if (bridge_) bridge_->Close();  // waiting handlers return "unavailable" at once
  if (front_) front_->Stop();
  front_.reset();
  if (bridge_) {
    if (loop_) loop_->Remove(bridge_->fd());
    bridge_.reset();
  }
  for (auto& [conn, call] : waiting_)
    call->reply.set_value(api::ErrorReply("unavailable", "rotad is stopping"));
  waiting_.clear();
}

void HttpDoor::OnCalls() {
  for (std::shared_ptr<HttpCall>& call : bridge_->Take()) setup_.take(next_conn_++, std::move(call));
}

void HttpDoor::Answer(ConnId conn, const json& reply) {
  auto it = waiting_.find(conn);
  if (it == waiting_.end()) return;
  it->second->reply.set_value(reply);
  waiting_.erase(it);
}

json HttpDoor::WebLogin(const Caller& caller) {
  if (!front_) return api::ErrorReply("failed_precondition", error_);
  if (caller.name.empty()) {
    return api::ErrorReply("permission_denied",
                           "uid " + std::to_string(caller.uid) + " has no user name on this server");
  }
  const std::string token =
      auth_->MintLink(caller.uid, caller.name, setup_.clock->Now(), setup_.config->web.login_ttl);
  spdlog::info("HTTP: sign-in link minted for {}", caller.name);
  return api::OkReply({{"url", front_->BaseUrl() + "/auth/login?token=" + token},
                       {"expires", setup_.clock->Now() + setup_.config->web.login_ttl},
                       {"user", caller.name}});
}

Status HttpDoor::LoadTokens() {
  StatusOr<std::vector<store::ApiToken>> tokens = setup_.store->Tokens("");
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

json HttpDoor::TokenCreate(const Caller& caller, const json& request) {
  if (caller.name.empty()) {
    return api::ErrorReply("permission_denied",
                           "uid " + std::to_string(caller.uid) + " has no user name on this server");
  }
  const Time now = setup_.clock->Now();
  store::ApiToken t;
  t.user = caller.name;
  t.uid = caller.uid;
  StatusOr<std::string> name = api::fields::Text(request, "name");
  if (!name.ok()) return api::ErrorReply(name.status());
  t.name = *name;
  if (t.name.size() > 200) return api::ErrorReply("invalid_argument", "\"name\" is longer than 200 bytes");
  // A token meant for a calendar app's address (where anyone who sees the address has it) may
  // read the calendar feed and nothing else; one named "calendar" is such a token unless told.
  StatusOr<std::string> scope_field =
      api::fields::Text(request, "scope", t.name == "calendar" ? "calendar" : "full");
  if (!scope_field.ok()) return api::ErrorReply(scope_field.status());
  const std::string scope_name = *scope_field;
  std::optional<web::Scope> scope = web::ParseScope(scope_name);
  if (!scope) {
    return api::ErrorReply("invalid_argument",
                           "\"scope\" must be \"calendar\" (the calendar feed only), \"read\" or "
                           "\"full\", not \"" +
                               scope_name + "\"");
  }
  t.scope = web::ScopeName(*scope);
  t.created = now;
  if (auto e = request.find("expires"); e != request.end() && !e->is_null()) {
    std::optional<Duration> d;
    if (e->is_number_integer()) d = e->get<Duration>();
    if (e->is_string()) d = ParseDuration(e->get<std::string>());
    if (!d || *d <= 0)
      return api::ErrorReply("invalid_argument", "\"expires\" must be a duration such as \"30d\" or seconds");
    t.expires = now + *d;
  }
  const std::string secret = "rota_" + web::RandomToken();
  t.hash = web::HashToken(secret);
  StatusOr<std::int64_t> id = setup_.store->AddToken(t);
  if (!id.ok()) return api::ErrorReply(id.status());
  auth_->AddToken(web::TokenEntry{*id, t.hash, caller.uid, caller.name, t.expires, *scope});
  spdlog::info("HTTP: API token {} ({}) created for {}", *id, t.scope, caller.name);
  return api::OkReply(
      {{"id", *id}, {"token", secret}, {"name", t.name}, {"expires", t.expires}, {"scope", t.scope}});
}

json HttpDoor::TokenList(const Caller& caller, const json& request) {
  StatusOr<std::string> user_field = api::fields::Text(request, "user", caller.name);
  if (!user_field.ok()) return api::ErrorReply(user_field.status());
  StatusOr<bool> all = api::fields::Bool(request, "all");
  if (!all.ok()) return api::ErrorReply(all.status());
  std::string user = *all ? std::string() : *user_field;
  if (user != caller.name && !caller.admin) {
    return api::ErrorReply("permission_denied", "only admins see other users' tokens");
  }
  if (caller.name.empty() && !caller.admin) return api::ErrorReply("permission_denied", "no user name");
  StatusOr<std::vector<store::ApiToken>> tokens = setup_.store->Tokens(user);
  if (!tokens.ok()) return api::ErrorReply(tokens.status());
  json out = json::array();
  for (const store::ApiToken& t : *tokens) {
    out.push_back({{"id", t.id},
                   {"user", t.user},
                   {"name", t.name},
                   {"created", t.created},
                   {"expires", t.expires},
                   {"revoked_at", t.revoked_at},
                   {"revoked_by", t.revoked_by},
                   {"scope", t.scope}});
  }
  return api::OkReply({{"tokens", out}});
}

json HttpDoor::TokenRevoke(const Caller& caller, const json& request) {
  auto it = request.find("id");
  if (it == request.end() || !it->is_number_integer() || it->get<std::int64_t>() <= 0) {
    return api::ErrorReply("invalid_argument", "\"id\" must be a token id (see `rota token list`)");
  }
  const std::int64_t id = it->get<std::int64_t>();
  StatusOr<std::vector<store::ApiToken>> tokens = setup_.store->Tokens("");
  if (!tokens.ok()) return api::ErrorReply(tokens.status());
  const store::ApiToken* found = nullptr;
  for (const store::ApiToken& t : *tokens) {
    if (t.id == id) found = &t;
  }
  if (!found || (found->user != caller.name && !caller.admin)) {
    // Another user's token is reported as missing: its existence is theirs.
    return api::ErrorReply("not_found", "no token " + std::to_string(id) + " of yours");
  }
  if (Status s = setup_.store->RevokeToken(id, caller.name, setup_.clock->Now()); !s.ok())
    return api::ErrorReply(s);
  auth_->RemoveToken(id);
  spdlog::info("HTTP: API token {} of {} revoked by {}", id, found->user, caller.name);
  return api::OkReply({{"id", id}});
}

}  // namespace rota::daemon
