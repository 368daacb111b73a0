// The scheduling pass and applying its decisions: starting batch jobs through the executor,
// signals and the kill sequence, and recording how each job ended.
//
// The kill sequence: the core's Signal sends the job's own signal (default SIGUSR1) `grace`
// seconds before its kill time; its Kill (at the kill time), a cancel of a running job, or a
// lost session sends SIGTERM; SIGKILL follows kill_wait seconds later if the job is still there.
#include <signal.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <spdlog/spdlog.h>

#include "api/job_json.h"
#include "api/protocol.h"
#include "core/quota.h"
#include "core/scheduler.h"
#include "core/usage.h"
#include "daemon/clock.h"
#include "daemon/daemon.h"
#include "daemon/start_note.h"
#include "exec/process.h"

namespace rota::daemon {

using nlohmann::json;

ClusterState Daemon::BuildState() const {
  ClusterState st;
  st.gpus = cards_.gpus();
  st.user_usage = ledger_->maps().users;
  st.project_usage = ledger_->maps().projects;
  const Time now = Now();
  jobs_.AddTo(st, after_ok_, now);
  for (const Ending& e : ends_) {
    if (e.requeue) st.held.push_back(e.job.rec.job.id);  // pending again once its end is recorded
  }
  AddBookingsToState(st, desk_->book().Entries(), config_.bookings, now);
  return st;
}

void Daemon::RunPasses() {
  // A pass that started or signalled jobs asks for another; a few rounds always settle (each
  // round starts only jobs that were pending), the limit guards against a bug looping. The
  // simulated cards' loads follow the running jobs, which change only in a pass (starts, and
  // the pass that follows every job's end).
  const bool any = dirty_;
  for (int round = 0; dirty_ && round < 4; ++round) SchedulePass();
  if (any) card_desk_->FollowJobs();
}

void Daemon::CatchUpOnSubmissions() {
  if (!submissions_waiting_) return;
  dirty_ = true;
  RunPasses();
}

void Daemon::SchedulePass() {
  const auto began = std::chrono::steady_clock::now();
  dirty_ = false;
  submissions_waiting_ = false;  // this pass considers them; a batch timer still armed finds nothing
  const Time now = Now();
  EscalateKills(now);
  const Time bookings_due = BookingPass(now);
  CancelNeverSatisfied(now);
  ClusterState state = BuildState();
  Decisions d = Schedule(state, config_.policy, now);
  for (const rota::Start& s : d.starts) ApplyStart(s, now);
  for (const Signal& s : d.signals) ApplySignal(s, now);
  // Starts and signals change the state this pass was computed on (a started job's time-limit
  // warning is a new deadline): run another pass before sleeping.
  if (!d.starts.empty() || !d.signals.empty()) dirty_ = true;
  for (const Kill& k : d.kills) ApplyKill(k.job, now);
  const Time retry = jobs_.NoteWaiting(d.pending, after_ok_, now);
  Time wake = std::min({d.next_wakeup, bookings_due, retry, notes_->RemindTimeLimits(jobs_.all(), now)});
  sessions_->SendWaitingUpdates();
  sessions_->RemoveStaleCgroups();
  for (const auto& [id, a] : jobs_) {
    if (a.term_sent != 0) wake = std::min(wake, a.term_sent + options_.kill_wait);
  }
  ArmTimer(wake);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  counters_.PassTook(took);
}

void Daemon::ArmTimer(Time next_wakeup) { deps_.clock->WakeAt(next_wakeup); }

void Daemon::ApplyStart(const rota::Start& start, Time now) {
  auto it = jobs_.find(start.job);
  if (it == jobs_.end() || it->second.rec.state != store::JobState::kPending) return;
  Active& a = it->second;
  a.rec.placement = cards_.PlacementOf(start.alloc);
  a.rec.preemptible = start.preemptible;
  a.rec.from_pool = start.from_pool;
  if (a.rec.interactive) {
    sessions_->Start(a, start, now);
    return;
  }
  const std::string indices = cards_.IndexList(start.alloc);
  store::StartInfo info;
  info.placement = a.rec.placement;
  info.preemptible = start.preemptible;
  info.from_pool = start.from_pool;
  info.reason = "Started on GPU " + indices + (start.preemptible ? " (preemptible)" : "");

  exec::LaunchSpec spec;
  spec.job_id = a.rec.job.id;
  StatusOr<UnixAccount> account = Account(static_cast<uid_t>(a.rec.uid));
  std::string launch_error;
  if (!account.ok()) {
    launch_error = account.status().message();
  } else {
    spec.uid = account->uid;
    spec.gid = account->gid;
    spec.groups = account->groups;
    spec.user = account->name;
  }
  spec.argv = a.rec.command;
  spec.cwd = a.rec.cwd;
  spec.env = a.rec.env;
  for (auto& [k, v] : cards_.Env(a.rec)) spec.env[k] = v;
  spec.output = api::ExpandOutput(a.rec.output, a.rec.job.id);
  spec.memory_limit_bytes = HostMemoryLimit(a.rec, start.alloc, config_.default_mem_per_gpu);
  const config::LimitsConfig& limits = config_.limits;
  spec.max_processes = limits.job_processes;
  spec.deny_devices = cards_.OtherCardsDevices(start.alloc);
  spec.max_open_files = limits.job_open_files;
  spec.cpu_weight = limits.cpu_weight_per_gpu > 0
                        ? std::min(10000, limits.cpu_weight_per_gpu * std::max(1, static_cast<int>(start.alloc.gpus.size())))
                        : 0;
  spec.note = StartNoteToJson({info, now});  // for a restart before MarkStarted below (recovery.cc)

  StatusOr<Started> launched = launch_error.empty() ? engine_->Launch(spec) : StatusOr<Started>(Internal(launch_error));
  // Not launched for a reason of this machine's (a full disk for its spec, no process for its
  // shepherd, a cgroup that cannot be made): the job is not at fault and did not start. Only a
  // spec the executor refuses (kInvalidArgument) or an owner who is gone fails the job.
  if (!launched.ok() && launch_error.empty() && launched.status().code() != StatusCode::kInvalidArgument) {
    PostponeLaunch(a, "cannot launch: " + launched.status().message(), now);
    return;
  }
  if (launched.ok()) {
    info.pid = launched->pid;
    info.cgroup = launched->cgroup;
  }
  if (Status s = store_->MarkStarted(a.rec.job.id, info, now); !s.ok()) {
    // Not recorded as started: what was launched is stopped, the job stays pending and is
    // tried again later (not in this pass's next round: the store is likely to fail again).
    a.retry_at = jobs_.StartNotRecorded(now);
    spdlog::error("job {}: cannot record its start ({}){}; tried again in {} s", a.rec.job.id, s.message(),
                  launched.ok() ? ", its launch is withdrawn" : "", a.retry_at - now);
    if (launched.ok()) WithdrawLaunch(a.rec, start.alloc, now);
    a.rec.placement = {};
    return;
  }
  jobs_.StartRecorded();
  a.rec.Started(info, now);
  counters_.JobStarted(a.rec.job.submit_time, now);
  if (!launched.ok()) {
    spdlog::error("job {}: cannot launch: {}", a.rec.job.id, launched.status().message());
    exec::ExitInfo failed;
    failed.kind = exec::ExitInfo::Kind::kStartFailed;
    failed.reason = launched.status().message();
    FinishJob(a, failed, now);
    return;
  }
  spdlog::info("job {} ({}) started on GPU {} as shepherd {}", a.rec.job.id, a.rec.job.user, indices,
               launched->pid);
  notes_->Notify(notes_->JobEvent("job_started", a.rec));
}

void Daemon::PostponeLaunch(Active& a, const std::string& why, Time now) {
  a.retry_at = JobTable::RetryAt(a.launch_failures++, now);
  a.rec.placement = {};
  a.rec.preemptible = a.rec.from_pool = false;
  const std::string note = "Not started: " + why + "; tried again in " + std::to_string(a.retry_at - now) + " s";
  spdlog::error("job {}: {}", a.rec.job.id, note);
  // A store that fails too (the same full disk) loses only this line of its history.
  (void)store_->NoteJob(a.rec.job.id, note, "rotad", now);
}

void Daemon::WithdrawLaunch(const store::JobRecord& rec, const Allocation& alloc, Time now) {
  engine_->Withdraw(rec.job.id);
  jobs_.Withdraw(rec, alloc, now);  // its GPUs held until the engine says it is gone
}

void Daemon::WithdrawnGone(JobId id) {
  if (jobs_.ForgetWithdrawn(id)) dirty_ = true;  // its GPUs are free
}

void Daemon::ApplySignal(const Signal& sig, Time now) {
  auto it = jobs_.find(sig.job);
  if (it == jobs_.end() || it->second.rec.state != store::JobState::kRunning) return;
  Active& a = it->second;
  const bool preempted = sig.cause == StopCause::kPreempted;
  if (Status s = store_->MarkSignalled(sig.job, sig.kill_at, preempted, now); !s.ok()) {
    spdlog::error("job {}: cannot record its signal: {}", sig.job, s.message());
    return;
  }
  a.rec.signalled = true;
  a.rec.kill_at = sig.kill_at;
  a.rec.preempted = preempted;
  a.preempted_by = sig.preempted_by;
  const std::string why = preempted ? "preempted by job " + std::to_string(sig.preempted_by) : "time limit";
  if (sig.signal == 0) {
    // The job asked for no warning: it is stopped at kill_at (SIGTERM, then SIGKILL), nothing before.
    spdlog::info("job {}: {}, stopped at {} (it asked for no warning signal)", sig.job, why, sig.kill_at);
    return;
  }
  if (a.rec.interactive) {
    server_->Send(a.session, {{"v", api::kVersion}, {"ok", true}, {"event", "signal"}, {"signal", sig.signal},
                              {"kill_at", sig.kill_at}, {"reason", preempted ? "preempted" : "time_limit"}});
  } else {
    (void)engine_->Signal(sig.job, sig.signal);
  }
  spdlog::info("job {}: signal {} ({}), kill at {}", sig.job, sig.signal, why, sig.kill_at);
}

void Daemon::ApplyKill(JobId id, Time now) {
  auto it = jobs_.find(id);
  if (it == jobs_.end() || it->second.rec.state != store::JobState::kRunning) return;
  BeginStop(it->second, now);
}

void Daemon::BeginStop(Active& a, Time now) {
  if (a.term_sent != 0) return;
  a.term_sent = now;
  if (a.rec.interactive) {
    if (server_) server_->Send(a.session, {{"v", api::kVersion}, {"ok", true}, {"event", "signal"}, {"signal", SIGTERM}});
    if (a.session == 0 && a.rec.pid > 0) ::kill(static_cast<pid_t>(a.rec.pid), SIGTERM);  // adopted session
  } else {
    (void)engine_->Signal(a.rec.job.id, SIGTERM);
  }
}

void Daemon::EscalateKills(Time now) {
  for (auto& [id, a] : jobs_) {
    if (a.term_sent == 0 || now < a.term_sent + options_.kill_wait || !a.Live()) continue;
    if (a.rec.interactive) {
      server_->Send(a.session, {{"v", api::kVersion}, {"ok", true}, {"event", "kill"}});
      if (!a.rec.cgroup.empty()) (void)engine_->KillCgroup(a.rec.cgroup);
      if (a.session == 0 && a.rec.pid > 0) ::kill(static_cast<pid_t>(a.rec.pid), SIGKILL);  // adopted session
      a.term_sent = now;  // again after another kill_wait if the client does not answer
    } else {
      (void)engine_->Signal(id, SIGKILL);
      a.term_sent = now;
    }
  }
}

void Daemon::JobEnded(JobId id, const JobExit& info) {
  ++activity_;
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return;
  Active& a = it->second;
  const Time now = Now();
  // Recorded after this batch of events has started the jobs it frees GPUs for (RecordEnds).
  // A job whose processes were seen gone ended then: its run is charged up to that moment.
  Time end = info.end_time > 0 ? std::min(info.end_time, now) : now;
  if (a.released_at != 0) end = a.released_at;
  ends_.push_back(EndJob(a, info, end));
}

void Daemon::JobReleased(JobId id, Time at) {
  auto it = jobs_.find(id);
  if (it == jobs_.end() || !it->second.Live()) return;
  Active& a = it->second;
  ++activity_;
  a.released_at = at;
  // What the next pass must see at once, as for an end (EndJob): its GPUs free, its run charged.
  ledger_->Charge(a.rec, a.released_at);
  dirty_ = true;
}

void Daemon::FinishJob(Active& a, const exec::ExitInfo& info, Time now) { RecordEnd(EndJob(a, info, now)); }

Daemon::Ending Daemon::EndJob(Active& a, const exec::ExitInfo& info, Time now) {
  StopContext stop;
  stop.cancelled_by = a.cancelled_by;
  stop.node_fail = a.node_fail;
  stop.stopping = a.rec.kill_at != kNever;
  stop.preempted = a.rec.preempted;
  stop.preempted_by = a.preempted_by;
  stop.stop_reason = a.stop_reason;
  stop.term_sent = a.term_sent != 0;
  stop.warning_signal = a.rec.job.signal;
  stop.requeue = a.rec.job.requeue;
  stop.interactive = a.rec.interactive;
  Ending e;
  static_cast<JobEnd&>(e) = DecideJobEnd(stop, info);
  e.at = now;
  counters_.JobEnded(e.requeue ? "requeued" : store::JobStateName(e.state));
  // What the next pass must see at once: the job's GPUs free and its run charged to its owner.
  if (a.released_at == 0) ledger_->Charge(a.rec, now);  // else charged when its cgroup emptied
  if (a.rec.interactive) sessions_->Ended(a);
  const JobId id = a.rec.job.id;
  const bool released = a.released_at != 0;
  e.job = jobs_.Take(jobs_.find(id));  // with its session's connection
  // A released job's GPUs were freed, and its run charged, when its cgroup emptied: a pass has
  // something new to see only for the jobs that wait for it (with 1,000 jobs queued, a pass
  // for nothing costs about 0.4 ms).
  if (!released || Awaited(id)) dirty_ = true;
  return e;
}

void Daemon::RecordEnds() {
  std::vector<Ending> ends;
  ends.swap(ends_);
  for (Ending& e : ends) RecordEnd(std::move(e));
}

void Daemon::RecordEnd(Ending e) {
  Active& a = e.job;
  const JobId id = a.rec.job.id;
  // A requeued job launches again under the same id: its last run's files go before the store
  // says it is pending, or a restart would take them for a launch of the new run (FindLaunch).
  if (e.requeue && !a.rec.interactive) engine_->Forget(id);
  Status s = ledger_->SaveWith(a.rec, e.at, [&] {
    allocs_->SaveMeasures(a);
    return e.requeue ? store_->Requeue(id, e.reason, e.at)
                     : store_->MarkEnded(id, e.state, e.code, e.reason, e.at, e.actor);
  });
  if (!s.ok()) {
    // The record stays "running" on disk (a full or broken disk); it has left memory all the
    // same, so its GPUs are not held forever. The next start collects it again from the result
    // its shepherd left (kept: Forget is not called), or records it as vanished (NodeFail,
    // requeued if it asked): not lost, not run twice.
    spdlog::error("job {}: cannot record its end ({}): {}", id, e.reason, s.message());
    return;
  }
  spdlog::info("job {} ({}): {}", id, a.rec.job.user, e.reason);
  if (a.rec.interactive) return;
  if (!e.requeue) {
    engine_->Forget(id);
    notes_->NotifyJobEnd(a.rec, e.state, e.reason, e.actor, false);
    return;
  }
  notes_->NotifyJobEnd(a.rec, e.state, e.reason, e.actor, true);
  jobs_.Add(JobTable::Requeued(std::move(a), e.launch_failed, e.at));
  dirty_ = true;
}

}  // namespace rota::daemon
