// Tested by tests/daemon/test_http.py (every endpoint against a real rotad) and, for its pure
// parts, src/web/*_test.cc.
//
// Design: every request passes, in order, the per-address rate limit, the Host check (DNS
// rebinding), then its route. /api/<op> authenticates (API token, cookie session, or anonymous
// for public_read), checks CSRF for cookie sessions on POST, and hands the request to the event
// loop through the bridge; the loop's reply is the body, its error code the HTTP status.
#include "daemon/http_front.h"

#include <httplib.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "api/protocol.h"
#include "daemon/clock.h"
#include "daemon/http_replies.h"
#include "daemon/http_server.h"
#include "daemon/identity.h"
#include "web/api_map.h"
#include "web/guard.h"
#include "web/pam_auth.h"

namespace rota::daemon {

using nlohmann::json;

namespace {

constexpr std::chrono::seconds kLoopDeadline{15};
// A node's waiting poke: the engine answers within its own bound (3 s, SlurmEngine::kPokeWaitMs).
constexpr std::chrono::seconds kAgentPokeDeadline{4};

// Set by the pre-routing handler, read by the logger: both run on the worker thread that serves
// the request.
thread_local std::chrono::steady_clock::time_point request_start{};

// What a sign-in over plain HTTP from another machine is told ([web] insecure_http).
constexpr const char* kPlainHttp =
    "this page is plain HTTP, and signing in from another machine would send your session (and password) across "
    "the network in the clear; ask the admin to serve it over HTTPS ([web] tls_cert and tls_key, or a TLS proxy in "
    "front: docs/http.md), or to set [web] insecure_http = true on a network they trust";

bool Loopback(const std::string& address) {
  return address == "127.0.0.1" || address == "::1" || address.rfind("127.", 0) == 0 ||
         address == "::ffff:127.0.0.1";
}

const char* ContentType(const std::string& path) {
  static const std::pair<const char*, const char*> kTypes[] = {
      {".html", "text/html; charset=utf-8"},   {".js", "text/javascript; charset=utf-8"},
      {".mjs", "text/javascript; charset=utf-8"}, {".css", "text/css; charset=utf-8"},
      {".svg", "image/svg+xml"},               {".png", "image/png"},
      {".json", "application/json"},           {".woff2", "font/woff2"},
      {".ico", "image/x-icon"},                {".txt", "text/plain; charset=utf-8"},
      {".map", "application/json"},            {".webmanifest", "application/manifest+json"},
  };
  for (const auto& [ext, type] : kTypes) {
    const size_t n = std::strlen(ext);
    if (path.size() >= n && path.compare(path.size() - n, n, ext) == 0) return type;
  }
  return "application/octet-stream";
}

// A path under the static directory that is safe to open: no "..", no dotfiles, no backslashes.
bool SafePath(const std::string& path) {
  if (path.find('\\') != std::string::npos || path.find('\0') != std::string::npos) return false;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t end = path.find('/', pos);
    if (end == std::string::npos) end = path.size();
    const std::string seg = path.substr(pos, end - pos);
    if (seg.empty() && end != path.size()) return false;  // "//"
    if (!seg.empty() && seg[0] == '.') return false;       // "..", ".git", ".env"
    pos = end + 1;
  }
  return true;
}

}  // namespace

struct HttpFront::Auth {
  std::optional<web::Principal> who;
  bool cookie = false;       // who came from the session cookie
  std::string bad;           // a credential was presented but is not valid: why
};

HttpFront::HttpFront(HttpFrontOptions options, web::AuthState& auth, HttpBridge& bridge)
    : options_(std::move(options)),
      auth_(auth),
      bridge_(bridge),
      limiter_(options_.web.rate, options_.web.burst),
      password_failures_(1.0 / 60, 5) {}

HttpFront::~HttpFront() { Stop(); }

std::string HttpFront::BaseUrl() const {
  std::string host = host_;
  if (host == "0.0.0.0" || host == "::" || host.empty()) {
    host = HostName();
    if (host.empty()) host = "127.0.0.1";
  } else if (host.find(':') != std::string::npos) {
    host = "[" + host + "]";
  }
  return std::string(tls_ ? "https://" : "http://") + host + ":" + std::to_string(port_);
}

Status HttpFront::Start() {
  const std::string& listen = options_.web.listen;
  const size_t colon = listen.rfind(':');
  host_ = listen.substr(0, colon);
  if (!host_.empty() && host_.front() == '[') host_ = host_.substr(1, host_.size() - 2);
  const int want_port = std::stoi(listen.substr(colon + 1));

  SSL_CTX* tls = nullptr;
  if (!options_.web.tls_cert.empty()) {
    StatusOr<SSL_CTX*> loaded = HttpServer::LoadTls(options_.web.tls_cert, options_.web.tls_key);
    if (!loaded.ok()) return loaded.status();
    tls = *loaded;
  }
  tls_ = tls != nullptr;
  first_user_uid_ = web::FirstUserUid();
  pam_ready_ = web::PamServiceReady(options_.web.pam_service, options_.web.pam_dir);
  if (options_.password_login && web::PamAvailable() && !pam_ready_.ok()) {
    spdlog::warn("HTTP: password sign-in is off: {}", pam_ready_.message());
  }
  HttpServerLimits limits;
  limits.per_address = options_.web.connections_per_address;
  limits.request_ms = static_cast<int>(options_.web.request_timeout * 1000);
  auto server = std::make_unique<HttpServer>(limits, tls);
  server->SetRefusedHook(
      [this](const std::string& address, const std::string& why) { NoteRefusal(address, ResourceExhausted(why)); });
  server_ = std::move(server);
  const int threads = options_.web.threads;
  server_->new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  server_->set_payload_max_length(static_cast<size_t>(options_.web.max_body));

  // Headers and body go out in separate writes: without TCP_NODELAY, Nagle's algorithm and the
  // client's delayed ACK hold each reply about 40 ms (docs/benchmarks.md).
  server_->set_tcp_nodelay(true);
  Routes();
  port_ = want_port == 0 ? server_->bind_to_any_port(host_) : (server_->bind_to_port(host_, want_port) ? want_port : -1);
  if (port_ <= 0) {
    return Unavailable("[web] listen = \"" + listen + "\": cannot listen there (address in use or not this machine's)");
  }
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  // stop() is a no-op until the listener runs: wait for it, so that Stop() always stops it.
  for (int i = 0; i < 5000 && !server_->is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  spdlog::info("HTTP: serving {} (page from {})", BaseUrl(), options_.static_dir);
  if (!tls_ && !Loopback(host_) && !options_.web.insecure_http) {
    spdlog::warn("HTTP: {} is plain HTTP off loopback: sign-in from other machines is refused (sessions and "
                 "passwords would cross the network in the clear); set [web] tls_cert and tls_key, put a TLS proxy "
                 "in front (docs/http.md), or set [web] insecure_http = true on a network you trust",
                 BaseUrl());
  }
  return Status();
}

void HttpFront::Stop() {
  if (!server_) return;
  server_->stop();
  if (thread_.joinable()) thread_.join();
  server_.reset();
}

void HttpFront::Record(int status, double seconds) {
  std::lock_guard<std::mutex> lock(metrics_mu_);
  ++requests_by_code_[status];
  if (seconds >= 0) latency_.Observe(seconds);
}

void HttpFront::Routes() {
  httplib::Server& s = *server_;
  s.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    request_start = std::chrono::steady_clock::now();
    // A refusal here is sent before the body is read: the connection closes after it, or the
    // body would be read as the next request (a 400 for each request after a 429).
    auto refuse_and_close = [&] {
      res.set_header("Connection", "close");
      HttpServer::CloseAfterReply();
      return httplib::Server::HandlerResponse::Handled;
    };
    if (!limiter_.Allow(req.remote_addr, Seconds())) {
      res.set_header("Retry-After", "1");
      SendError(res, 429, "resource_exhausted", "too many requests from " + req.remote_addr + "; slow down");
      return refuse_and_close();
    }
    if (!web::HostAllowed(req.get_header_value("Host"), options_.web.listen, options_.web.allowed_hosts)) {
      NoteRefusal(req.remote_addr, PermissionDenied("Host \"" + req.get_header_value("Host") + "\" is not this server's"));
      SendError(res, 421, "permission_denied",
                "this server does not answer to Host \"" + req.get_header_value("Host") +
                    "\" (add it to [web] allowed_hosts)");
      return refuse_and_close();
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  s.set_error_handler([this](const httplib::Request&, httplib::Response& res) {
    if (!res.body.empty()) return;
    if (res.status == 413) {
      HttpServer::CloseAfterReply();  // the body was not read
      SendError(res, 413, "invalid_argument",
                "the request is larger than " + std::to_string(options_.web.max_body) + " bytes");
    } else if (res.status == 404) {
      SendError(res, 404, "not_found", "no such page");
    } else if (res.status == 405) {
      SendError(res, 405, "invalid_argument", "method not allowed here");
    } else {
      SendError(res, res.status, "invalid_argument", "bad HTTP request");
    }
  });
  s.set_logger([this](const httplib::Request&, const httplib::Response& res) {
    double seconds = -1;
    if (request_start != std::chrono::steady_clock::time_point{}) {
      seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - request_start).count();
      request_start = {};
    }
    Record(res.status, seconds);
  });
  s.Get("/metrics", [this](const httplib::Request& req, httplib::Response& res) { Metrics(req, res); });
  s.Get("/auth/login", [this](const httplib::Request& req, httplib::Response& res) { Login(req, res); });
  s.Post("/auth/login", [this](const httplib::Request& req, httplib::Response& res) { ConfirmLogin(req, res); });
  s.Post("/auth/logout", [this](const httplib::Request& req, httplib::Response& res) { Logout(req, res); });
  s.Post("/auth/password", [this](const httplib::Request& req, httplib::Response& res) { Password(req, res); });
  s.Post("/agent/readings", [this](const httplib::Request& req, httplib::Response& res) { AgentReadings(req, res); });
  s.Post("/agent/poke", [this](const httplib::Request& req, httplib::Response& res) { AgentPoke(req, res); });
  s.Get("/calendar.ics", [this](const httplib::Request& req, httplib::Response& res) { Calendar(req, res); });
  s.Get(R"(/api/([A-Za-z0-9_]+))",
        [this](const httplib::Request& req, httplib::Response& res) { Api(req, res, req.matches[1]); });
  s.Post(R"(/api/([A-Za-z0-9_]+))",
         [this](const httplib::Request& req, httplib::Response& res) { Api(req, res, req.matches[1]); });
  s.Get(R"(/api/.*)", [](const httplib::Request&, httplib::Response& res) {
    SendError(res, 404, "not_found", "no such operation");
  });
  s.Get(R"(/(.*))",
        [this](const httplib::Request& req, httplib::Response& res) { Static(req, res, req.matches[1]); });
}

HttpFront::Auth HttpFront::Authenticate(const httplib::Request& req) const {
  Auth a;
  const Time now = options_.clock->Now();
  const std::string authorization = req.get_header_value("Authorization");
  if (!authorization.empty()) {
    if (authorization.rfind("Bearer ", 0) != 0) {
      a.bad = "the Authorization header is not \"Bearer <token>\"";
      return a;
    }
    a.who = auth_.FindToken(authorization.substr(7), now);
    if (!a.who) a.bad = "the API token is unknown, revoked or expired (see `rota token list`)";
    return a;
  }
  const std::string session = CookieValue(req, "rota_session");
  if (!session.empty()) {
    a.who = auth_.FindSession(session, now);
    a.cookie = a.who.has_value();
    // An expired session is simply no session: the page then offers to sign in again.
  }
  return a;
}

void HttpFront::Api(const httplib::Request& req, httplib::Response& res, const std::string& op) {
  const bool get = req.method == "GET";
  web::ApiCall mapped = web::MapApiCall(get, op, req.params, req.body);
  if (mapped.status != 200) {
    SendError(res, mapped.status, mapped.code.c_str(), mapped.message);
    return;
  }
  json request = std::move(mapped.request);

  Auth auth = Authenticate(req);
  if (!auth.bad.empty()) {
    NoteRefusal(req.remote_addr, PermissionDenied("/api/" + op + ": " + auth.bad));
    SendError(res, 401, "unauthenticated", auth.bad);
    return;
  }
  if (auth.who && auth.who->scope != web::Scope::kFull &&
      (auth.who->scope == web::Scope::kCalendar || !web::ReadOnlyOp(op))) {
    // A calendar token sits in a calendar app's address: it reads the feed and nothing else.
    NoteRefusal(req.remote_addr, PermissionDenied(std::string("a ") + web::ScopeName(auth.who->scope) + " token of " +
                                                  auth.who->user + " used for /api/" + op));
    SendError(res, 403, "permission_denied",
              std::string("this API token is for ") +
                  (auth.who->scope == web::Scope::kCalendar ? "the calendar feed only (/calendar.ics)"
                                                            : "reading only") +
                  "; make one that may do this with `rota token create --scope full`");
    return;
  }
  if (!auth.who && !(options_.web.public_read && web::PublicOp(op))) {
    NoteRefusal(req.remote_addr, InvalidArgument("/api/" + op + " without a credential"));
    SendError(res, 401, "unauthenticated",
              "sign in first: run `rota web` on the server and open the link it prints");
    return;
  }
  if (auth.cookie && !get &&
      !web::CsrfAllowed(req.get_header_value("X-Rota-CSRF"), auth.who->csrf, req.get_header_value("Origin"),
                        req.get_header_value("Host"))) {
    NoteRefusal(req.remote_addr, PermissionDenied("/api/" + op + " by " + auth.who->user +
                                                  "'s session without its CSRF token or from another site"));
    SendError(res, 403, "permission_denied", "cross-site request refused");
    return;
  }
  auto call = std::make_shared<HttpCall>();
  call->who = auth.who;
  call->request = std::move(request);
  json reply = bridge_.Call(call, kLoopDeadline);
  int status = web::HttpStatusOfReply(reply);
  // The daemon answers an unknown operation as invalid_argument on the socket; over HTTP that is
  // a missing resource.
  if (status == 400) {
    const std::string message = reply["error"].value("message", "");
    if (message.rfind("unknown operation", 0) == 0) status = 404;
  }
  if (op == "hello" && auth.cookie && reply.value("ok", false)) reply["csrf"] = auth.who->csrf;
  SendJson(res, status, reply);
}

void HttpFront::NoteRefusal(const std::string& address, const Status& why) {
  std::vector<std::string> lines;
  {
    std::lock_guard<std::mutex> lock(refusals_mu_);
    lines = refusals_.Note(address, address, "an HTTP request", why, options_.clock->Now());
  }
  RefusalLog::Write(lines, why.code(), "HTTP: ");
}

bool HttpFront::RefusedAsExposed(const httplib::Request& req, httplib::Response& res) const {
  if (tls_ || Loopback(req.remote_addr) || options_.web.insecure_http) return false;
  SendError(res, 403, "permission_denied", kPlainHttp);
  return true;
}

void HttpFront::Calendar(const httplib::Request& req, httplib::Response& res) {
  const bool lab = req.has_param("lab") && req.get_param_value("lab") != "0";
  std::optional<web::Principal> who;
  if (req.has_param("token")) {
    who = auth_.FindToken(req.get_param_value("token"), options_.clock->Now());
    if (!who) {
      SendError(res, 401, "unauthenticated", "the token is unknown, revoked or expired (see `rota token list`)");
      return;
    }
  } else {
    Auth auth = Authenticate(req);
    if (!auth.bad.empty()) {
      SendError(res, 401, "unauthenticated", auth.bad);
      return;
    }
    who = auth.who;
  }
  if (!who && !(options_.web.public_read && lab)) {
    SendError(res, 401, "unauthenticated",
              "add ?token=... to the address (make one with `rota token create --name calendar`)");
    return;
  }
  auto call = std::make_shared<HttpCall>();
  call->who = who;
  call->request = {{"v", api::kVersion}, {"op", "bookings_export"}, {"format", "ics"}, {"all", lab}};
  json reply = bridge_.Call(call, kLoopDeadline);
  if (!reply.value("ok", false)) {
    SendJson(res, web::HttpStatusOfReply(reply), reply);
    return;
  }
  res.set_header("Cache-Control", "no-store");
  res.set_content(reply.value("text", ""), "text/calendar; charset=utf-8");
}

std::optional<std::string> HttpFront::AgentToken(const httplib::Request& req, httplib::Response& res) {
  if (options_.agents == nullptr) {
    SendError(res, 404, "not_found", "this rotad takes no node agents ([engine] agent_tokens is not set)");
    return std::nullopt;
  }
  const std::string authorization = req.get_header_value("Authorization");
  return authorization.rfind("Bearer ", 0) == 0 ? authorization.substr(7) : "";
}

void HttpFront::RefuseAgent(const httplib::Request& req, httplib::Response& res, const std::string& token,
                            const Status& why) {
  NoteRefusal(req.remote_addr, why);
  SendError(res, token.empty() ? 401 : 403, token.empty() ? "unauthenticated" : "permission_denied", why.message());
}

void HttpFront::AgentReadings(const httplib::Request& req, httplib::Response& res) {
  const std::optional<std::string> token = AgentToken(req, res);
  if (!token) return;
  std::vector<device::StopOrder> orders;
  Status s = options_.agents->Post(*token, req.body, &orders);
  if (s.code() == StatusCode::kPermissionDenied) {
    RefuseAgent(req, res, *token, s);
    return;
  }
  if (!s.ok()) {
    SendError(res, 400, "invalid_argument", s.message());
    return;
  }
  json reply = api::OkReply();
  if (!orders.empty()) reply["stop"] = device::StopOrdersToJson(orders);
  SendJson(res, 200, reply);
}

void HttpFront::AgentPoke(const httplib::Request& req, httplib::Response& res) {
  const std::optional<std::string> token = AgentToken(req, res);
  if (!token) return;
  if (token->empty() || options_.agents->NodeOfToken(*token).empty()) {
    RefuseAgent(req, res, *token, PermissionDenied("not a node agent's token"));
    return;
  }
  // The node's Epilog, waiting (`rotad --agent URL --poke`): op poke with "wait", as nobody in
  // particular (a poke touches no one's jobs). Its worker waits no longer than the engine's bound.
  auto call = std::make_shared<HttpCall>();
  call->request = {{"v", api::kVersion}, {"op", "poke"}, {"wait", true}};
  json reply = bridge_.Call(call, kAgentPokeDeadline);
  SendJson(res, web::HttpStatusOfReply(reply), reply);
}

void HttpFront::Metrics(const httplib::Request& req, httplib::Response& res) {
  if (!options_.web.metrics_public && !Loopback(req.remote_addr)) {
    Auth auth = Authenticate(req);
    if (!auth.who || auth.who->scope == web::Scope::kCalendar) {
      SendError(res, 401, "unauthenticated",
                "/metrics is open to loopback only; use an API token (read or full) or set [web] metrics_public = true");
      return;
    }
  }
  auto call = std::make_shared<HttpCall>();
  call->metrics = true;
  json reply = bridge_.Call(call, kLoopDeadline);
  if (!reply.value("ok", false)) {
    SendJson(res, web::HttpStatusOfReply(reply), reply);
    return;
  }
  web::MetricsWriter w;
  {
    std::lock_guard<std::mutex> lock(metrics_mu_);
    w.Family("rota_http_requests_total", "counter", "HTTP requests answered, by status code.");
    for (const auto& [code, n] : requests_by_code_) {
      w.Sample("rota_http_requests_total", {{"code", std::to_string(code)}}, static_cast<double>(n));
    }
    w.Family("rota_http_request_duration_seconds", "histogram", "Time to answer an HTTP request.");
    w.HistogramSamples("rota_http_request_duration_seconds", {}, latency_);
  }
  res.status = 200;
  res.set_header("Cache-Control", "no-store");
  res.set_content(reply.value("text", "") + w.text(), "text/plain; version=0.0.4; charset=utf-8");
}

void HttpFront::Static(const httplib::Request& req, httplib::Response& res, const std::string& path) {
  (void)req;
  std::string rel = path.empty() ? "index.html" : path;
  if (!rel.empty() && rel.back() == '/') rel += "index.html";
  if (!SafePath(rel)) {
    SendError(res, 404, "not_found", "no such page");
    return;
  }
  const std::string file = options_.static_dir + "/" + rel;
  std::error_code ec;
  std::ifstream in;
  if (std::filesystem::is_regular_file(file, ec)) in.open(file, std::ios::binary);
  if (!in.is_open() || !in) {
    SendError(res, 404, "not_found", "no such page: /" + rel);
    return;
  }
  std::string body((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  res.status = 200;
  // Files keep their names across releases, so browsers revalidate rather than trust a copy.
  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Content-Type-Options", "nosniff");
  if (rel.size() >= 5 && rel.compare(rel.size() - 5, 5, ".html") == 0) {
    res.set_header("X-Frame-Options", "DENY");
    res.set_header("Referrer-Policy", "no-referrer");
  }
  // httplib compresses text types on the fly (gzip, or brotli) when the client accepts it.
  res.set_content(body, ContentType(rel));
}

}  // namespace rota::daemon
