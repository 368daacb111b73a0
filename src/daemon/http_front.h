// The HTTP front end of rotad (docs/http.md): the JSON API at /api/<op>, sign-in (/auth/...), the
// page's static files and /metrics, served by cpp-httplib on its own worker threads.
//
// Threads: httplib's listener thread and its pool of workers run every handler. They read only
// what is theirs (this object's options, the thread-safe AuthState, the rate limiters and the
// request counters) and reach the daemon's state only through the HttpBridge, which runs the
// request on the event loop with the same Dispatch as the Unix socket.
//
// Identity: a credential minted over the Unix socket (a `rota web` link, an API token) or, where
// rotad runs as root, a PAM password check. Never anything the client merely claims.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "config/config.h"
#include "core/status.h"
#include "daemon/agent_board.h"
#include "daemon/clock.h"
#include "daemon/http_bridge.h"
#include "daemon/refusal_log.h"
#include "web/auth_state.h"
#include "web/metrics_text.h"
#include "web/rate_limit.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace rota::daemon {

struct HttpFrontOptions {
  config::WebConfig web;
  std::string static_dir;       // resolved ([web] static_dir or the build's ROTA_WEB_DIR)
  bool password_login = false;  // POST /auth/password offered (rotad runs as root, system mode)
  const Clock* clock = &SystemClock();  // the daemon's; must outlive the front end
  AgentBoard* agents = nullptr;         // POST /agent/readings (agent_board.h); none: 404
};

class HttpFront {
 public:
  // `auth` and `bridge` must outlive this object.
  HttpFront(HttpFrontOptions options, web::AuthState& auth, HttpBridge& bridge);
  ~HttpFront();  // Stop()
  HttpFront(const HttpFront&) = delete;
  HttpFront& operator=(const HttpFront&) = delete;

  // Binds the listen address and starts serving on a thread of its own. REQUIRES: the calling
  // thread blocks the signals the daemon handles (the workers inherit the mask).
  Status Start();
  // Stops accepting and joins the threads; requests in flight finish first.
  void Stop();

  int port() const { return port_; }
  // "http://host:port" as a browser on this machine reaches it (for `rota web` links).
  std::string BaseUrl() const;

 private:
  struct Auth;
  void Routes();
  void Api(const httplib::Request& req, httplib::Response& res, const std::string& op);
  void Login(const httplib::Request& req, httplib::Response& res);
  void ConfirmLogin(const httplib::Request& req, httplib::Response& res);
  void Logout(const httplib::Request& req, httplib::Response& res);
  void Password(const httplib::Request& req, httplib::Response& res);
  void Metrics(const httplib::Request& req, httplib::Response& res);
  // POST /agent/readings: a node agent's GPU readings, with its node's token (agent_board.h).
  void AgentReadings(const httplib::Request& req, httplib::Response& res);
  // POST /agent/poke: a node agent's token; answered once the engine settled (op poke, "wait").
  void AgentPoke(const httplib::Request& req, httplib::Response& res);
  // The bearer token of an agent's request ("" none), or nullopt when this rotad takes no agents
  // (answered 404 then).
  std::optional<std::string> AgentToken(const httplib::Request& req, httplib::Response& res);
  // Answers an agent's request refused for `why` (401 without a token, else 403), logged.
  void RefuseAgent(const httplib::Request& req, httplib::Response& res, const std::string& token, const Status& why);
  void Calendar(const httplib::Request& req, httplib::Response& res);
  void Static(const httplib::Request& req, httplib::Response& res, const std::string& path);
  Auth Authenticate(const httplib::Request& req) const;
  void SetSessionCookies(httplib::Response& res, const web::NewSession& s) const;
  // A plain-HTTP request from another machine where the admin has not said the network is trusted
  // ([web] insecure_http): no credential may be set up over it. True when `res` says so (403).
  bool RefusedAsExposed(const httplib::Request& req, httplib::Response& res) const;
  // Logs a refused request within the per-address budget (refusal_log.h). Any thread.
  void NoteRefusal(const std::string& address, const Status& why);
  void Record(int status, double seconds);

  HttpFrontOptions options_;
  web::AuthState& auth_;
  HttpBridge& bridge_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
  std::string host_;
  bool tls_ = false;  // HTTPS ([web] tls_cert)
  std::mutex refusals_mu_;
  RefusalLog refusals_;  // GUARDED_BY(refusals_mu_)
  web::RateLimiter limiter_;
  web::RateLimiter password_failures_;  // per address and per user name: failed password sign-ins
  uid_t first_user_uid_ = 1000;         // below it (and root): no web sign-in (login.defs UID_MIN)
  Status pam_ready_;                    // whether the PAM service file is there (Start)

  mutable std::mutex metrics_mu_;
  std::map<int, std::uint64_t> requests_by_code_;  // GUARDED_BY(metrics_mu_)
  web::Histogram latency_{{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5}};  // GUARDED_BY(metrics_mu_)
};

}  // namespace rota::daemon
