// The HTTP door of the daemon: the front end's threads (http_front.h) and their hand-over to the
// loop (http_bridge.h), the calls waiting for a reply that comes later (a batched submission, a
// notify test), and the credentials the web page and the API use: sign-in links, sessions and
// API tokens (web/auth_state.h, kept in the store). Each call goes to the daemon's one request
// pipeline with an id above kConnBase; the daemon resolves its caller, as for a socket peer.
//
// Runs on the daemon's loop thread (the front end's threads only touch the bridge and the auth
// state, which are thread-safe). Tested by http_door_test.cc (the credentials) and
// tests/daemon/test_http.py (real HTTP, the browser).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>

#include "config/config.h"
#include "daemon/agent_board.h"
#include "core/status.h"
#include "daemon/clock.h"
#include "daemon/event_loop.h"
#include "daemon/http_bridge.h"
#include "daemon/identity.h"
#include "daemon/server.h"
#include "store/job_store.h"
#include "web/auth_state.h"

namespace rota::daemon {

class HttpFront;

class HttpDoor {
 public:
  // HTTP calls have connection ids from here on (socket connections and in-process calls below).
  static constexpr ConnId kConnBase = ConnId{1} << 62;
  static bool IsHttp(ConnId conn) { return conn >= kConnBase; }

  struct Setup {
    store::JobStore* store = nullptr;        // the tokens; must outlive the door
    const Clock* clock = nullptr;            // must outlive the door
    const config::Config* config = nullptr;  // the configuration in force
    bool user_mode = false;                  // no password sign-in for a user's own rotad
    AgentBoard* agents = nullptr;            // where node agents post (POST /agent/readings), or none
    // A call handed over by the front end, with its id: for the daemon's pipeline.
    std::function<void(ConnId, std::shared_ptr<HttpCall>)> take;
  };
  explicit HttpDoor(Setup setup);
  ~HttpDoor();  // Stop
  HttpDoor(const HttpDoor&) = delete;
  HttpDoor& operator=(const HttpDoor&) = delete;

  // Loads the tokens and starts serving [web] listen, its calls watched on `loop`. A front end
  // that cannot start (a port in use) is said in the log and in `error()`, and the daemon serves
  // its socket all the same; only a failure of the loop or the store is an error.
  Status Start(EventLoop& loop);
  // Stops the front end; the calls still waiting are answered "unavailable".
  void Stop();
  // Why there is no front end ("" while it serves).
  const std::string& error() const { return error_; }

  // Call `conn` is answered later (Answer).
  void Wait(ConnId conn, std::shared_ptr<HttpCall> call) { waiting_[conn] = std::move(call); }
  // Answers waiting call `conn`; nothing when it is not waiting.
  void Answer(ConnId conn, const nlohmann::json& reply);

  // ---- Credentials (docs/api.md) ----
  nlohmann::json WebLogin(const Caller& caller);
  nlohmann::json TokenCreate(const Caller& caller, const nlohmann::json& request);
  nlohmann::json TokenList(const Caller& caller, const nlohmann::json& request);
  nlohmann::json TokenRevoke(const Caller& caller, const nlohmann::json& request);

 private:
  Status LoadTokens();
  void OnCalls();

  Setup setup_;
  EventLoop* loop_ = nullptr;
  std::shared_ptr<web::AuthState> auth_ = std::make_shared<web::AuthState>();
  std::unique_ptr<HttpBridge> bridge_;
  std::unique_ptr<HttpFront> front_;
  std::string error_;
  std::unordered_map<ConnId, std::shared_ptr<HttpCall>> waiting_;
  ConnId next_conn_ = kConnBase;
};

}  // namespace rota::daemon
