// The interactive sessions' part of the daemon (`rota run`, `rota shell`): the client runs the
// command itself, as the user it already is; the daemon holds the GPUs for it and talks to it
// over its connection. A session in a container (`--image`) is attached instead: the engine
// runs it like a batch job (JobRunner), on the terminal its client passed; this part keeps its
// connection (allocated, ended, signals passed on, attached again after a restart). This part owns what only sessions have: the client process (held by a
// pidfd proven to be the caller's, moved into the job's cgroup at the start), the connection's
// events (queued, waiting with position and expected start, allocated, signal, kill, cancelled),
// the session's end (said by the client, or its connection closed), the re-adoption of a running
// session's client after a restart (watched through a pidfd), and the cgroups of ended sessions,
// removed once their last process has left. The jobs themselves are the JobTable's; how a job's
// end is decided and recorded is the daemon's (`finish`).
//
// The job runner decides when a session is warned or stopped; this part says it to the client.
//
// Runs on the daemon's loop thread. Tested by session_desk_test.cc and lifecycle_test.cc
// (in-process), tests/daemon/test_sessions.py and test_restart.py (real clients and restarts).
#pragma once

#include <sys/types.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/decisions.h"
#include "core/status.h"
#include "daemon/active_job.h"
#include "daemon/clock.h"
#include "daemon/counters.h"
#include "daemon/engine.h"
#include "daemon/event_loop.h"
#include "daemon/identity.h"
#include "daemon/inventory.h"
#include "daemon/job_table.h"
#include "daemon/server.h"
#include "daemon/usage_ledger.h"
#include "exec/executor.h"
#include "store/job_store.h"

namespace rota::daemon {

class SessionDesk {
 public:
  struct Setup {
    store::JobStore* store = nullptr;  // all must outlive the desk
    const Clock* clock = nullptr;
    const config::Config* config = nullptr;  // the configuration in force
    EventLoop* loop = nullptr;               // where a re-adopted client's exit arrives
    Server* server = nullptr;                // the sessions' connections
    Engine* engine = nullptr;                // the sessions' cgroups
    JobTable* jobs = nullptr;
    const Inventory* cards = nullptr;
    UsageLedger* ledger = nullptr;
    SchedulerCounters* counters = nullptr;
    // A pass is due (a session queued, cancelled or ended).
    std::function<void()> changed;
    // Decides and records how a running session ended (the daemon's EndJob and RecordEnd); it
    // calls Ended below.
    std::function<void(ActiveJob&, const exec::ExitInfo&, Time)> finish;
    // Stops a running session (SIGTERM through its client, SIGKILL a kill wait later).
    std::function<void(ActiveJob&, Time)> stop;
  };
  explicit SessionDesk(Setup setup);
  ~SessionDesk();  // re-adopted clients' pidfds closed; ended sessions' cgroups get a last try

  // ---- Requests ----
  // `run`: a session for `rec` (checked by the daemon: PrepareJob), its client the process that
  // passed a pidfd on `conn`. Queued in the store and in the job table, bound to its connection.
  nlohmann::json Queue(const Caller& caller, ConnId conn, StatusOr<store::JobRecord> rec);
  // `session_end`: the client says its command ended (with its exit code).
  nlohmann::json End(ConnId conn, const nlohmann::json& request);
  // The connection closed: a pending session is cancelled, a running one stopped and ended (an
  // attached one stopped as if its owner cancelled it).
  void Closed(ConnId conn);
  // `session_signal`: an attached session's client passes on a signal it got (Ctrl-C when its
  // input is not a terminal, the terminal's size changing): sent to its job through the engine.
  nlohmann::json PassSignal(ConnId conn, const nlohmann::json& request);
  // `session_attach`: the client of an attached session whose connection was lost (rotad
  // restarted) binds this connection to its job again; a job that has ended meanwhile is
  // answered with its "ended" event.
  nlohmann::json Attach(const Caller& caller, ConnId conn, const nlohmann::json& request);

  // ---- With the scheduler ----
  // The scheduler started session `a` on `start.alloc` (its placement set): the client moved
  // into its cgroup, the start recorded, the client told its cards. A client that exited while it
  // waited cancels it; a start the store cannot record leaves it pending, tried again later.
  void Start(ActiveJob& a, const rota::Start& start, Time now);
  // The waiting sessions' clients told their place and expected start, when they changed.
  void SendWaitingUpdates();
  // Whether a session's client waits for its start (the pass then explains the queue).
  bool AnyWaiting() const;
  // An attached session about to start: false when its client exited while it waited (then it
  // is cancelled here).
  bool StillWaits(ActiveJob& a, Time now);
  // An attached session started by the engine: its client told its cards and limit.
  void Allocated(const ActiveJob& a, const rota::Start& start);
  // An attached session ended as `end` says (its processes as `exit`): its client told, for its
  // exit code, and its connection closed.
  void TellEnded(const ActiveJob& a, const JobEnd& end, const JobExit& exit);
  // Cgroups of ended sessions whose last process has left: removed.
  void RemoveStaleCgroups();

  // ---- The kill sequence, for a session (the job runner decides when) ----
  // Its warning: the client passes `signal` on to the command (kill at `kill_at`).
  void Warn(const ActiveJob& a, int signal, Time kill_at, bool preempted);
  // SIGTERM, then SIGKILL: through the client, or to the client itself when the session was
  // re-adopted after a restart (no connection); SIGKILL also kills what is left in its cgroup.
  void Term(const ActiveJob& a);
  void Kill(const ActiveJob& a);
  // A pending session cancelled (`why`): its client is told (a re-adopted one has no connection).
  void TellCancelled(const ActiveJob& a, const std::string& why);

  // ---- Restarts ----
  // A session that was running when rotad stopped: its client re-adopted (watched through a
  // pidfd, its exit ends the session) when the pid still names it, else the session is ended
  // and taken out of the table. True when re-adopted.
  bool Adopt(ActiveJob& a, Time now);
  // Session `a` ended (EndJob): its client no longer watched, its cgroup removed once empty.
  void Ended(ActiveJob& a);

 private:
  Time Now() const { return clock_->Now(); }
  void CancelOrphaned(ActiveJob& a, Time now);
  // The "allocated" event: where a session runs, for its client.
  nlohmann::json AllocatedEvent(const ActiveJob& a, const rota::Start& start) const;
  // A running session that ends here, not through the daemon's end of a job (its connection
  // closed, its client gone while rotad was away): charged, recorded Cancelled with `why` and
  // `actor` in the commit of its charge, its cgroup removed once empty, out of the table.
  void EndHere(ActiveJob& a, const std::string& why, const std::string& actor, Time now);
  // Whether the process a running session's record names is still its client.
  static bool IsClient(const store::JobRecord& rec);
  void WatchClient(JobId id, int pidfd);
  void OnClientExit(JobId id);
  void StopWatching(ActiveJob& a);

  store::JobStore& store_;
  const Clock* clock_;
  const config::Config& config_;
  Setup setup_;
  JobTable& jobs_;
  std::vector<std::string> stale_cgroups_;  // session cgroups to remove once empty
};

}  // namespace rota::daemon
