// Interactive sessions (session_desk.h): the client runs the command itself; the daemon holds
// the GPUs for it and talks to it over its connection.
#include "daemon/session_desk.h"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "api/job_json.h"
#include "api/protocol.h"
#include "exec/cgroup.h"
#include "exec/process.h"
#include "exec/procfs.h"

namespace rota::daemon {

using nlohmann::json;

SessionDesk::SessionDesk(Setup setup)
    : store_(*setup.store),
      clock_(setup.clock),
      config_(*setup.config),
      setup_(std::move(setup)),
      jobs_(*setup_.jobs) {}

SessionDesk::~SessionDesk() {
  for (auto& [id, a] : jobs_) StopWatching(a);
  // Ended sessions' cgroups whose client was still leaving at the last pass: a last try, so
  // that the base can go too (what is still in one stays: it is a user's terminal process).
  for (const std::string& cgroup : stale_cgroups_) {
    exec::WaitCgroupEmpty(cgroup, 200);
    (void)setup_.engine->RemoveCgroup(cgroup);
  }
}

json SessionDesk::Queue(const Caller& caller, ConnId conn, StatusOr<store::JobRecord> rec) {
  if (!rec.ok()) return api::ErrorReply(rec.status());
  // The session's client is moved into the job's cgroup and killed with it: it must be a process
  // proven to be the caller's, held by a pidfd, never a bare pid that another process may have
  // by the time the GPUs are free (docs/security.md, "Sessions").
  auto process = std::make_shared<exec::UniqueFd>(setup_.server->TakeProcessHandle(conn));
  if (process->get() < 0) {
    return api::ErrorReply(
        FailedPrecondition("rotad cannot tell which process this session is: `rota run` passes a "
                           "handle on itself (a pidfd, Linux 5.3 or later); see docs/api.md, op "
                           "\"run\""));
  }
  StatusOr<pid_t> pid = exec::PidfdProcessOf(process->get(), static_cast<uid_t>(caller.uid));
  if (!pid.ok()) {
    return api::ErrorReply(Status(pid.status().code(), "the session's process: " + pid.status().message()));
  }
  std::shared_ptr<std::vector<exec::UniqueFd>> terminal;
  if (rec->Attached()) {
    // Nothing is read from them here: the runtime, started as root, reads and writes them with
    // the rights the client opened them with (docs/security.md, "Containers").
    std::vector<int> fds = setup_.server->TakeTerminal(conn);
    terminal = std::make_shared<std::vector<exec::UniqueFd>>();
    for (int fd : fds) terminal->emplace_back(fd);
    if (terminal->size() != 3) {
      return api::ErrorReply(FailedPrecondition(
          "a session in a container runs on the client's terminal: `rota run --image` passes its standard "
          "input, output and error after the pidfd (docs/api.md, op \"run\"); this client did not"));
    }
  }
  const Time now = Now();
  StatusOr<JobId> id = store_.Submit(*rec, now);
  if (!id.ok()) {
    spdlog::error("session for {}: {}", caller.name, id.status().message());
    return api::ErrorReply(id.status());
  }
  rec->job.id = *id;
  rec->job.submit_time = now;
  ActiveJob a;
  a.rec = std::move(*rec);
  a.session = conn;
  a.session_pid = *pid;
  a.session_process = std::move(process);
  a.terminal = std::move(terminal);
  jobs_.Add(std::move(a));             // bound to its connection
  setup_.server->SetHeld(conn, true);  // a session's connection is quiet while the command runs
  setup_.changed();
  return api::OkReply({{"job_id", *id}, {"event", "queued"}});
}

void SessionDesk::Start(ActiveJob& a, const rota::Start& start, Time now) {
  const JobId id = a.rec.job.id;
  // The client that asked may have exited while it waited, leaving its connection to a child and
  // its pid free for another process, another user's or root's: that pid is never moved or killed.
  if (!a.session_process || exec::PidfdExited(a.session_process->get())) {
    CancelOrphaned(a, now);
    return;
  }
  const Inventory& cards = *setup_.cards;
  Engine& engine = *setup_.engine;
  store::StartInfo info;
  info.placement = a.rec.placement;
  info.preemptible = start.preemptible;
  info.from_pool = start.from_pool;
  info.pid = a.session_pid;
  const std::string gpus = cards.IndexList(start.alloc);
  info.reason = "Session started on GPU " + gpus;
  // How its client runs the command: as it is, or under the engine's command (Slurm's srun).
  Engine::SessionStart ask;
  ask.id = id;
  ask.uid = static_cast<uid_t>(a.rec.uid);
  ask.user = a.rec.job.user;
  ask.node = cards.NodeOf(start.alloc);
  ask.gpus = static_cast<int>(start.alloc.gpus.size());
  ask.cards = cards.ClusterNamesOf(start.alloc);
  ask.shares = cards.ClusterSharesOf(start.alloc);
  ask.memory_bytes = HostMemoryLimit(a.rec, start.alloc, config_.default_mem_per_gpu);
  ask.time_limit = a.rec.job.time_limit;
  StatusOr<Engine::SessionWrap> wrap = engine.WrapSession(ask, cards.Env(a.rec));
  if (!wrap.ok()) {
    a.retry_at = JobTable::RetryAt(a.launch_failures++, now);
    spdlog::warn("job {}: the session cannot start yet ({}); tried again in {} s", id, wrap.status().message(),
                 a.retry_at - now);
    a.rec.placement = {};
    return;
  }
  // Account the session's processes to the job where cgroups allow: the client's children
  // (the command) inherit its cgroup.
  StatusOr<std::string> cgroup =
      engine.CreateSessionCgroup(id, ask.memory_bytes, cards.OtherCardsDevices(start.alloc));
  if (cgroup.ok() && !cgroup->empty()) {
    Status s = engine.MoveToCgroup(*cgroup, a.session_pid);
    // Alive after the move: the pid still named the client when it was written. (Gone, its pid
    // could in principle have been taken between the check and the write: the cgroup is then
    // never killed, only removed once empty.)
    if (s.ok() && exec::PidfdExited(a.session_process->get())) {
      spdlog::warn(
          "job {}: the session's client {} exited as it was moved into its cgroup; the cgroup is "
          "removed once empty, never killed",
          id, a.session_pid);
      stale_cgroups_.push_back(*cgroup);
    } else if (s.ok()) {
      info.cgroup = *cgroup;
    } else {
      spdlog::warn("job {}: session process {} stays outside its cgroup: {}", id, a.session_pid, s.message());
      (void)engine.RemoveCgroup(*cgroup);
    }
  }
  if (Status s = store_.MarkStarted(id, info, now); !s.ok()) {
    a.retry_at = jobs_.StartNotRecorded(now);
    spdlog::error("job {}: cannot record the session's start ({}); tried again in {} s", id, s.message(),
                  a.retry_at - now);
    a.rec.placement = {};
    if (!info.cgroup.empty()) (void)engine.RemoveCgroup(info.cgroup);
    engine.EndSession(id, ask.uid);
    return;
  }
  jobs_.StartRecorded();
  a.rec.Started(info, now);
  setup_.counters->JobStarted(a.rec.job.submit_time, now);
  json env = json::object();
  for (auto& [k, v] : wrap->env) env[k] = v;
  json allocated = AllocatedEvent(a, start);
  allocated["env"] = env;
  if (!wrap->argv.empty()) {
    allocated["wrap"] = wrap->argv;
    allocated["wrap_tty"] = wrap->tty_argv;
    allocated["unset_prefixes"] = wrap->unset_prefixes;
  }
  setup_.server->Send(a.session, allocated);
  spdlog::info("job {} ({}): session started on GPU {}", id, a.rec.job.user, gpus);
}

json SessionDesk::AllocatedEvent(const ActiveJob& a, const rota::Start& start) const {
  json indices = json::array();
  for (int g : start.alloc.gpus) indices.push_back(setup_.cards->gpus()[static_cast<size_t>(g)].index);
  json event = {{"v", api::kVersion},
                {"ok", true},
                {"event", "allocated"},
                {"job_id", a.rec.job.id},
                {"gpus", indices},
                {"request", api::RequestToJson(a.rec.job.request)},
                {"mig_index", a.rec.placement.alloc.mig},
                {"gpu_mem", a.rec.placement.alloc.memory},
                {"time_limit", a.rec.job.time_limit},
                {"preemptible", start.preemptible}};
  if (const std::string& node = setup_.cards->NodeOf(start.alloc); !node.empty()) event["node"] = node;
  return event;
}

bool SessionDesk::StillWaits(ActiveJob& a, Time now) {
  // As in Start: a client that exited while it waited leaves its connection to no one of its own.
  if (a.session_process && !exec::PidfdExited(a.session_process->get())) return true;
  CancelOrphaned(a, now);
  return false;
}

void SessionDesk::Allocated(const ActiveJob& a, const rota::Start& start) {
  json allocated = AllocatedEvent(a, start);
  allocated["attached"] = true;
  setup_.server->Send(a.session, allocated);
}

namespace {

// The "ended" event of an attached session: how its job ended, and the exit code its client
// exits with (the command's own; 128 + the signal that killed it; 1 when it did not run).
json EndedEvent(const store::JobRecord& rec, const JobEnd& end, const JobExit& exit) {
  const bool exited = exit.kind == JobExit::Kind::kExited;
  const int code = exited                                  ? exit.exit_code
                   : exit.kind == JobExit::Kind::kSignalled ? 128 + exit.signal
                                                            : 1;
  return {{"v", api::kVersion},   {"ok", true},          {"event", "ended"},
          {"job_id", rec.job.id}, {"state", store::JobStateName(end.state)},
          {"reason", end.reason}, {"exit_code", code},   {"exited", exited}};
}

}  // namespace

void SessionDesk::TellEnded(const ActiveJob& a, const JobEnd& end, const JobExit& exit) {
  if (a.session == 0) return;  // attached again or not: a client without a connection asks (Attach)
  setup_.server->Send(a.session, EndedEvent(a.rec, end, exit));
  setup_.server->CloseAfterWrite(a.session);
}

json SessionDesk::PassSignal(ConnId conn, const json& request) {
  const JobId id = jobs_.SessionOf(conn);
  auto it = jobs_.find(id);
  if (id == 0 || it == jobs_.end() || !it->second.rec.Attached() || !it->second.Live()) {
    return api::ErrorReply("failed_precondition", "this connection holds no running session in a container");
  }
  const auto field = request.find("signal");
  const int sig = field != request.end() && field->is_number_integer() && field->get<std::int64_t>() > 0 &&
                          field->get<std::int64_t>() < 65
                      ? field->get<int>()
                      : 0;
  // What a terminal or its user sends a foreground program; never SIGKILL or SIGSTOP.
  if (sig != SIGINT && sig != SIGQUIT && sig != SIGTERM && sig != SIGHUP && sig != SIGWINCH) {
    return api::ErrorReply("invalid_argument", "\"signal\" must be SIGINT, SIGQUIT, SIGTERM, SIGHUP or SIGWINCH");
  }
  if (Status s = setup_.engine->Signal(id, sig); !s.ok()) return api::ErrorReply(s);
  return api::OkReply();
}

json SessionDesk::Attach(const Caller& caller, ConnId conn, const json& request) {
  if (jobs_.SessionOf(conn) != 0) return api::ErrorReply("failed_precondition", "this connection holds a session already");
  const auto field = request.find("job_id");
  if (field == request.end() || !field->is_number_integer() || field->get<std::int64_t>() <= 0) {
    return api::ErrorReply("invalid_argument", "\"job_id\" must be a job id");
  }
  const JobId id = field->get<JobId>();
  const std::string missing = "no session in a container " + std::to_string(id) + " of yours";
  auto it = jobs_.find(id);
  if (it == jobs_.end()) {
    // Ended while its client was away: its record says how (the exit code is the recorded one).
    StatusOr<store::JobRecord> rec = store_.Get(id);
    if (!rec.ok() || rec->uid != caller.uid || !rec->Attached() || rec->state == store::JobState::kPending ||
        rec->state == store::JobState::kRunning) {
      return api::ErrorReply("not_found", missing);
    }
    JobEnd end;
    end.state = rec->state;
    end.reason = rec->end_reason;
    JobExit exit;
    exit.kind = rec->exit_code ? JobExit::Kind::kExited : JobExit::Kind::kStartFailed;
    exit.exit_code = rec->exit_code.value_or(0);
    return EndedEvent(*rec, end, exit);
  }
  ActiveJob& a = it->second;
  if (a.rec.uid != caller.uid || !a.rec.Attached() || a.rec.state != store::JobState::kRunning) {
    return api::ErrorReply("not_found", missing);
  }
  if (a.session != 0) return api::ErrorReply("failed_precondition", "job " + std::to_string(id) + " is attached already");
  jobs_.Bind(conn, id);
  setup_.server->SetHeld(conn, true);
  spdlog::info("job {} ({}): its client attached again", id, a.rec.job.user);
  return api::OkReply({{"job_id", id}, {"event", "attached"}});
}

void SessionDesk::CancelOrphaned(ActiveJob& a, Time now) {
  const JobId id = a.rec.job.id;
  const ConnId conn = a.session;
  const std::string why = "Session cancelled: its client process exited before the allocation";
  spdlog::warn("job {} ({}): {} (a process that keeps its connection open is not the session)", id,
               a.rec.job.user, why);
  if (Status st = store_.Cancel(id, a.rec.job.user, now, why); !st.ok()) {
    spdlog::error("job {}: {}", id, st.message());
    a.retry_at = JobTable::RetryAt(jobs_.start_record_failures(), now);
    return;
  }
  if (conn != 0) {
    setup_.server->Send(conn, api::ErrorReply("failed_precondition", why));
    setup_.server->CloseAfterWrite(conn);
  }
  jobs_.Take(jobs_.find(id));  // with its connection
  setup_.changed();
}

bool SessionDesk::AnyWaiting() const {
  for (const auto& [conn, id] : jobs_.sessions()) {
    auto it = jobs_.find(id);
    if (it != jobs_.end() && it->second.rec.state == store::JobState::kPending) return true;
  }
  return false;
}

void SessionDesk::SendWaitingUpdates() {
  for (const auto& [conn, id] : jobs_.sessions()) {
    auto it = jobs_.find(id);
    if (it == jobs_.end() || it->second.rec.state != store::JobState::kPending) continue;
    const PendingInfo* info = jobs_.Waiting(id);
    if (info == nullptr) continue;
    const Time expected = info->expected_start == kNever ? 0 : info->expected_start;
    json update = {{"v", api::kVersion},
                   {"ok", true},
                   {"event", "waiting"},
                   {"job_id", id},
                   {"position", jobs_.PositionOf(id)},
                   {"reason", api::WaitReasonWire(info->reason)},
                   {"expected_start", expected}};
    std::string key = update.dump();
    if (key == it->second.last_waiting) continue;
    it->second.last_waiting = key;
    setup_.server->Send(conn, update);
  }
}

void SessionDesk::Warn(const ActiveJob& a, int signal, Time kill_at, bool preempted) {
  setup_.server->Send(a.session, {{"v", api::kVersion},
                                  {"ok", true},
                                  {"event", "signal"},
                                  {"signal", signal},
                                  {"kill_at", kill_at},
                                  {"reason", preempted ? "preempted" : "time_limit"}});
}

void SessionDesk::Term(const ActiveJob& a) {
  setup_.server->Send(a.session,
                      {{"v", api::kVersion}, {"ok", true}, {"event", "signal"}, {"signal", SIGTERM}});
  if (a.session == 0 && a.rec.pid > 0) ::kill(static_cast<pid_t>(a.rec.pid), SIGTERM);  // re-adopted
}

void SessionDesk::Kill(const ActiveJob& a) {
  setup_.server->Send(a.session, {{"v", api::kVersion}, {"ok", true}, {"event", "kill"}});
  if (!a.rec.cgroup.empty()) (void)setup_.engine->KillCgroup(a.rec.cgroup);
  setup_.engine->EndSession(a.rec.job.id, static_cast<uid_t>(a.rec.uid));
  if (a.session == 0 && a.rec.pid > 0) ::kill(static_cast<pid_t>(a.rec.pid), SIGKILL);  // re-adopted
}

void SessionDesk::TellCancelled(const ActiveJob& a, const std::string& why) {
  if (a.session == 0) return;
  setup_.server->Send(a.session, {{"v", api::kVersion},
                                  {"ok", false},
                                  {"event", "cancelled"},
                                  {"error", {{"code", "failed_precondition"}, {"message", why}}}});
}

void SessionDesk::RemoveStaleCgroups() {
  for (auto it = stale_cgroups_.begin(); it != stale_cgroups_.end();) {
    it = setup_.engine->RemoveCgroup(*it).ok() ? stale_cgroups_.erase(it) : std::next(it);
  }
}

json SessionDesk::End(ConnId conn, const json& request) {
  const JobId id = jobs_.SessionOf(conn);
  if (id == 0) return api::ErrorReply("failed_precondition", "this connection holds no session");
  auto it = jobs_.find(id);
  if (it == jobs_.end()) {
    jobs_.Unbind(conn);
    return api::OkReply();
  }
  ActiveJob& a = it->second;
  const Time now = Now();
  if (a.rec.Attached() && a.rec.state == store::JobState::kRunning) {
    return api::ErrorReply("failed_precondition", "a session in a container ends when its command does");
  }
  if (a.rec.state == store::JobState::kPending) {
    if (Status st = store_.Cancel(a.rec.job.id, a.rec.job.user, now, "Session ended before its allocation");
        !st.ok()) {
      return api::ErrorReply(st);
    }
    jobs_.Take(it);  // with its connection
    setup_.changed();
    return api::OkReply();
  }
  exec::ExitInfo info;
  info.kind = exec::ExitInfo::Kind::kExited;
  if (auto code = request.find("exit_code"); code != request.end() && code->is_number_integer()) {
    const int c = code->get<int>();
    if (c > 128 && c < 128 + 65) {
      info.kind = exec::ExitInfo::Kind::kSignalled;
      info.signal = c - 128;
    } else {
      info.exit_code = c;
    }
  }
  a.session = 0;  // the reply to this request is the last message of this session
  jobs_.Unbind(conn);
  setup_.finish(a, info, now);
  return api::OkReply();
}

void SessionDesk::Closed(ConnId conn) {
  const JobId id = jobs_.SessionOf(conn);
  if (id == 0) return;
  jobs_.Unbind(conn);
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return;
  ActiveJob& a = it->second;
  const Time now = Now();
  setup_.changed();
  if (a.rec.state == store::JobState::kPending) {
    if (Status st = store_.Cancel(id, a.rec.job.user, now, "Session closed"); !st.ok()) {
      spdlog::error("job {}: {}", id, st.message());
      return;
    }
    jobs_.Take(it);
    return;
  }
  if (a.rec.Attached()) {
    a.session = 0;  // a client that attaches again binds another connection
    // Its client is gone (killed, its terminal closed): stopped as its owner's cancel would, so
    // a restart finishes the stop. The runtime stays on the terminal until then.
    if (!a.Live() || !a.cancelled_by.empty()) return;
    if (Status s = store_.MarkCancelRequested(id, a.rec.job.user, now); !s.ok()) {
      spdlog::error("job {}: its client left, but its cancel cannot be recorded: {}", id, s.message());
    }
    a.cancelled_by = a.rec.job.user;
    spdlog::info("job {} ({}): its client left; stopping the container", id, a.rec.job.user);
    setup_.stop(a, now);
    return;
  }
  // The terminal closed with the command still holding the allocation: stop what is left.
  if (!a.rec.cgroup.empty()) (void)setup_.engine->KillCgroup(a.rec.cgroup);
  EndHere(a, "Session closed", a.rec.job.user, now);
}

void SessionDesk::EndHere(ActiveJob& a, const std::string& why, const std::string& actor, Time now) {
  const JobId id = a.rec.job.id;
  setup_.ledger->Charge(a.rec, now);
  if (Status st = setup_.ledger->SaveWith(
          a.rec, now,
          [&] { return store_.MarkEnded(id, store::JobState::kCancelled, std::nullopt, why, now, actor); });
      !st.ok()) {
    spdlog::error("job {}: {}", id, st.message());
  }
  if (!a.rec.cgroup.empty()) stale_cgroups_.push_back(a.rec.cgroup);  // its client may still be leaving
  setup_.engine->EndSession(id, static_cast<uid_t>(a.rec.uid));
  jobs_.Take(jobs_.find(id));
}

// The process a session's record names is still its client: it runs as the session's owner (real
// and effective uid: `rota` is not set-user-ID, and SO_PEERCRED gave the effective one) and,
// where the session got a cgroup, inside it. A pid reused while rotad was down by another
// user's process, or by one outside the session's cgroup, is not adopted. (Called with a pidfd
// open, so the process read here is the one that will be watched.)
bool SessionDesk::IsClient(const store::JobRecord& rec) {
  StatusOr<exec::ProcessIdentity> p = exec::ReadProcess(static_cast<pid_t>(rec.pid));
  if (!p.ok()) return false;
  if (static_cast<std::int64_t>(p->uid) != rec.uid || static_cast<std::int64_t>(p->euid) != rec.uid)
    return false;
  return rec.cgroup.empty() || exec::InCgroup(p->cgroup, rec.cgroup);
}

bool SessionDesk::Adopt(ActiveJob& a, Time now) {
  const JobId id = a.rec.job.id;
  StatusOr<int> fd = exec::OpenPidfd(static_cast<pid_t>(a.rec.pid));
  if (!fd.ok() && fd.status().code() != StatusCode::kNotFound) {
    spdlog::error("job {}: cannot watch the session's client process {}: {}", id, a.rec.pid,
                  fd.status().message());
  }
  if (fd.ok() && !IsClient(a.rec)) {
    spdlog::warn("job {}: process {} is not the session's client any more (its pid was reused)", id,
                 a.rec.pid);
    ::close(*fd);
    fd = NotFound("reused pid");
  }
  if (fd.ok()) {
    a.session_pid = static_cast<pid_t>(a.rec.pid);
    WatchClient(id, *fd);
    spdlog::info("job {}: session re-adopted (client process {})", id, a.rec.pid);
    if (!a.cancelled_by.empty()) setup_.stop(a, now);
    return true;
  }
  EndHere(a, "Session ended while rotad was down", "rotad", now);
  return false;
}

void SessionDesk::Ended(ActiveJob& a) {
  StopWatching(a);
  if (!a.rec.cgroup.empty()) stale_cgroups_.push_back(a.rec.cgroup);
  setup_.engine->EndSession(a.rec.job.id, static_cast<uid_t>(a.rec.uid));
}

void SessionDesk::WatchClient(JobId id, int pidfd) {
  jobs_.at(id).client_pidfd = pidfd;
  (void)setup_.loop->Add(pidfd, EPOLLIN, [this, id](std::uint32_t) { OnClientExit(id); });
}

void SessionDesk::OnClientExit(JobId id) {
  auto it = jobs_.find(id);
  if (it == jobs_.end() || it->second.client_pidfd < 0) return;
  // An adopted session whose client exited while rotad was away (Ended stops the watch).
  exec::ExitInfo info;
  info.kind = exec::ExitInfo::Kind::kExited;
  setup_.finish(it->second, info, Now());
}

void SessionDesk::StopWatching(ActiveJob& a) {
  if (a.client_pidfd < 0) return;
  setup_.loop->Remove(a.client_pidfd);
  ::close(a.client_pidfd);
  a.client_pidfd = -1;
}

}  // namespace rota::daemon
