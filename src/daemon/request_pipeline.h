// The one request pipeline (docs/design.md, "The daemon's parts"; docs/api.md, "Operations"):
// every request, from the socket, from HTTP (through the door, http_door.h) or from inside the
// process (Call, the in-process tests), takes the same way. Lines are collected during a batch
// of events and handled after it (Process), so that submissions arriving together share one disk
// sync: each line is parsed with a bound on its depth, checked (an object, a scalar tag, the API
// version, an operation, the user-mode daemon's one user), looked up in the table of operations
// (api/ops.h: unknown ones refused, listing them; socket-only ones refused over HTTP; admins'
// refused to others), and handed to its handler; a submission goes to Admission and is answered
// with the others of its batch after their group commit. A handler's exception on a field of the
// wrong type is the caller's mistake, answered as such. Read-only replies carry the server's zone.
// Refusals are logged within each caller's budget (refusal_log.h).
//
// The handlers are registered by the daemon (its wiring: which part answers which operation).
// Runs on the daemon's loop thread. Tested by request_pipeline_test.cc, dispatch_test.cc
// (in-process) and tests/daemon/test_protocol.py, test_http.py (real processes).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "config/config.h"
#include "core/status.h"
#include "daemon/admission.h"
#include "daemon/clock.h"
#include "daemon/http_door.h"
#include "daemon/identity.h"
#include "daemon/refusal_log.h"
#include "daemon/server.h"

namespace rota::daemon {

class RequestPipeline {
 public:
  // An operation's handler: its reply, or null when it is answered later through Reply.
  using Handler =
      std::function<nlohmann::json(ConnId conn, const Caller& caller, const nlohmann::json& request)>;
  struct Setup {
    const Clock* clock = nullptr;            // all must outlive the pipeline
    const config::Config* config = nullptr;  // the configuration in force
    bool user_mode = false;          // a rotad of one user's own: theirs alone, and they administer it
    Server* server = nullptr;        // the socket's connections
    Admission* admission = nullptr;  // submissions
    CallerCache* callers = nullptr;  // socket peers' names and admin flags
    // An account (for an HTTP credential's uid: its gid).
    std::function<StatusOr<UnixAccount>(uid_t)> account;
    // Before any operation but a submission: the pass the waiting submissions need.
    std::function<void()> catch_up;
    // Submissions were stored: a pass is due within the batch window.
    std::function<void()> submitted;
    // GET /metrics: the daemon's text.
    std::function<std::string()> metrics;
  };
  explicit RequestPipeline(Setup setup);

  // `op`'s handler (an operation of api/ops.h, not submit, which is Admission's).
  void Register(std::string_view op, Handler handler);
  // Every operation of the table but submit has a handler (checked at start).
  Status CheckComplete() const;
  // The HTTP front end, once started (null again when it stops: its calls were answered then).
  void Attach(HttpDoor* door) { door_ = door; }

  // ---- Requests in: handled by the next Process ----
  void TakeLine(ConnId conn, std::string line);
  void TakeHttp(ConnId conn, std::shared_ptr<HttpCall> call);
  // A request from inside this process, from `caller`; `done` gets the reply on the loop's
  // thread, at the latest after the batch of events that handles it.
  void Call(const Caller& caller, const nlohmann::json& request, std::function<void(nlohmann::json)> done);
  // The same for a line as it came (any bytes: the fuzz targets, fuzz/request_line.cc).
  void CallLine(const Caller& caller, std::string line, std::function<void(nlohmann::json)> done);
  // A request as the HTTP front end hands it over (an object, "op" and "v" set, its strings
  // as the query decoded them, fuzz/http_request.cc): handled as over HTTP (socket-only
  // operations refused), from `caller`, as the front end resolves a credential's user.
  void CallHttp(const Caller& caller, nlohmann::json request, std::function<void(nlohmann::json)> done);
  // Handles every request taken since the last call; how many there were.
  std::size_t Process();

  // ---- Replies out ----
  // To a socket connection, an HTTP call's promise or an in-process caller.
  void Reply(ConnId conn, const nlohmann::json& reply);
  // Whether `conn` is an in-process caller's (Call), and whether it still waits for its reply.
  static bool IsLocal(ConnId conn) { return conn >= kLocalConnBase; }
  bool Waiting(ConnId conn) const { return local_waiting_.count(conn) > 0; }
  // Logs a refused request (or a refused part of one) with its caller, within the caller's
  // budget of log lines.
  void NoteRefusal(const Caller& caller, std::string_view op, const Status& status);

 private:
  Time Now() const { return setup_.clock->Now(); }
  // One request from `caller` (the socket's checks of framing and version done). Null: answered
  // later through Reply (a submission, notify_test).
  nlohmann::json Handle(ConnId conn, const Caller& caller, const nlohmann::json& request, bool over_http);
  void ProcessHttpCall(ConnId conn, const std::shared_ptr<HttpCall>& call);
  // An HTTP call's caller, resolved as a socket peer's is (Identify).
  Caller HttpCaller(const HttpCall& call) const;
  // Answers the batch's submissions once they are stored (Admission::Flush).
  void FlushSubmits();
  void NoteRefusal(const Caller& caller, std::string_view op, const nlohmann::json& reply);

  Setup setup_;
  std::unordered_map<std::string_view, Handler> handlers_;
  HttpDoor* door_ = nullptr;
  struct Line {
    ConnId conn;
    std::string line;
    std::shared_ptr<HttpCall> http;  // an HTTP request (conn is then an id of the door's)
    std::optional<nlohmann::json> object;  // CallHttp's request, taken as it is (not from `line`)
  };
  std::vector<Line> inbox_;  // request lines read in this batch of events
  RefusalLog refusals_;      // what refused requests are logged
  // In-process calls (Call) awaiting their reply, by an id above kLocalConnBase.
  static constexpr ConnId kLocalConnBase = ConnId{1} << 61;
  struct LocalCall {
    Caller caller;
    std::function<void(nlohmann::json)> done;
  };
  std::unordered_map<ConnId, LocalCall> local_waiting_;
  ConnId next_local_conn_ = kLocalConnBase;
};

}  // namespace rota::daemon
