// Running jobs (job_runner.h): starts, signals, the kill sequence, ends, and what a restart finds.
//
// The kill sequence: the core's Signal sends the job's own signal (default SIGUSR1) `grace`
// seconds before its kill time; its Kill (at the kill time), a cancel of a running job, or a
// lost session sends SIGTERM; SIGKILL follows kill_wait seconds later if the job is still there.
#include "daemon/job_runner.h"

#include <signal.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "api/job_json.h"
#include "api/protocol.h"
#include "daemon/containers.h"
#include "daemon/start_note.h"
#include "exec/container_argv.h"
#include "exec/process.h"

namespace rota::daemon {

using nlohmann::json;

JobRunner::JobRunner(Setup setup)
    : store_(*setup.store),
      config_(*setup.config),
      setup_(std::move(setup)),
      engine_(*setup_.engine),
      jobs_(*setup_.jobs),
      cards_(*setup_.cards) {}

void JobRunner::ApplyStart(const rota::Start& start, Time now) {
  auto it = jobs_.find(start.job);
  if (it == jobs_.end() || it->second.rec.state != store::JobState::kPending) return;
  ActiveJob& a = it->second;
  a.rec.placement = cards_.PlacementOf(start.alloc);
  a.rec.preemptible = start.preemptible;
  a.rec.from_pool = start.from_pool;
  if (a.rec.RunByClient()) {
    setup_.sessions->Start(a, start, now);
    return;
  }
  if (a.rec.Attached() && !setup_.sessions->StillWaits(a, now)) return;  // its client left: cancelled
  const std::string indices = cards_.IndexList(start.alloc);
  store::StartInfo info;
  info.placement = a.rec.placement;
  info.preemptible = start.preemptible;
  info.from_pool = start.from_pool;
  info.reason = "Started on GPU " + indices + (start.preemptible ? " (preemptible)" : "");

  exec::LaunchSpec spec;
  spec.job_id = a.rec.job.id;
  StatusOr<UnixAccount> account = setup_.account(static_cast<uid_t>(a.rec.uid));
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
  if (!a.rec.image.empty() && launch_error.empty()) {
    // The lab may have turned containers off since the job was queued: it cannot start as asked.
    if (config_.containers.runtime == exec::ContainerRuntime::kNone) {
      launch_error = "this server no longer runs containers ([containers] runtime is not set)";
    } else {
      spec.container = ContainerFor(config_.containers, a.rec, spec.user, cards_.OwnMinors(start.alloc));
      spec.env = exec::KeptForContainer(spec.env, config_.containers.env);
    }
  }
  if (a.rec.Attached() && launch_error.empty()) {
    // Its terminal, as its client passed it; gone only if a launch already took it.
    if (!a.terminal || a.terminal->size() != 3) {
      launch_error = "its terminal is gone (start rota run again)";
    } else {
      spec.attached = true;
      for (int i = 0; i < 3; ++i) spec.terminal[i] = (*a.terminal)[static_cast<size_t>(i)].get();
    }
  } else {
    spec.output = api::ExpandOutput(a.rec.output, a.rec.job.id);
  }
  spec.memory_limit_bytes = HostMemoryLimit(a.rec, start.alloc, config_.default_mem_per_gpu);
  const config::LimitsConfig& limits = config_.limits;
  spec.max_processes = limits.job_processes;
  spec.deny_devices = cards_.OtherCardsDevices(start.alloc);
  spec.max_open_files = limits.job_open_files;
  spec.cpu_weight = limits.cpu_weight_per_gpu > 0
                        ? std::min(10000, limits.cpu_weight_per_gpu *
                                              std::max(1, static_cast<int>(start.alloc.gpus.size())))
                        : 0;
  spec.cluster.node = cards_.NodeOf(start.alloc);
  spec.cluster.gpus = static_cast<int>(start.alloc.gpus.size());
  spec.cluster.cards = cards_.ClusterNamesOf(start.alloc);
  spec.cluster.share = start.alloc.memory > 0;
  spec.cluster.slice = start.alloc.mig >= 0;
  spec.cluster.shares = cards_.ClusterSharesOf(start.alloc);
  spec.cluster.time_limit = a.rec.job.time_limit;
  spec.cluster.signal = a.rec.job.signal;
  spec.cluster.grace = a.rec.job.grace;
  spec.note = StartNoteToJson({info, now});  // for a restart before MarkStarted below (JobRunner::RecoverLaunch)

  StatusOr<Started> launched =
      launch_error.empty() ? engine_.Launch(spec) : StatusOr<Started>(Internal(launch_error));
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
    a.terminal.reset();  // the shepherd has it now
  }
  if (Status s = store_.MarkStarted(a.rec.job.id, info, now); !s.ok()) {
    // Not recorded as started: what was launched is stopped, the job stays pending and is
    // tried again later (not in this pass's next round: the store is likely to fail again).
    a.retry_at = jobs_.StartNotRecorded(now);
    if (launched.ok()) WithdrawLaunch(a.rec, start.alloc, now);  // before it is said so
    spdlog::error("job {}: cannot record its start ({}){}; tried again in {} s", a.rec.job.id, s.message(),
                  launched.ok() ? ", its launch is withdrawn" : "", a.retry_at - now);
    a.rec.placement = {};
    return;
  }
  jobs_.StartRecorded();
  a.rec.Started(info, now);
  setup_.counters->JobStarted(a.rec.job.submit_time, now);
  if (!launched.ok()) {
    spdlog::error("job {}: cannot launch: {}", a.rec.job.id, launched.status().message());
    exec::ExitInfo failed;
    failed.kind = exec::ExitInfo::Kind::kStartFailed;
    failed.reason = launched.status().message();
    Finish(a, failed, now);
    return;
  }
  // The local engine's shepherd; an engine with no process here (Slurm) says where the job went.
  spdlog::info("job {} ({}) started on GPU {}{}", a.rec.job.id, a.rec.job.user, indices,
               launched->pid > 0 ? " as shepherd " + std::to_string(launched->pid) : std::string());
  if (a.rec.Attached()) {
    setup_.sessions->Allocated(a, start);  // its client waits on its terminal: no notice
    return;
  }
  setup_.notes->Notify(setup_.notes->JobEvent("job_started", a.rec));
}

void JobRunner::PostponeLaunch(ActiveJob& a, const std::string& why, Time now) {
  a.retry_at = JobTable::RetryAt(a.launch_failures++, now);
  a.rec.placement = {};
  a.rec.preemptible = a.rec.from_pool = false;
  const std::string note =
      "Not started: " + why + "; tried again in " + std::to_string(a.retry_at - now) + " s";
  spdlog::error("job {}: {}", a.rec.job.id, note);
  // A store that fails too (the same full disk) loses only this line of its history.
  (void)store_.NoteJob(a.rec.job.id, note, "rotad", now);
}

void JobRunner::WithdrawLaunch(const store::JobRecord& rec, const Allocation& alloc, Time now) {
  engine_.Withdraw(rec.job.id);
  jobs_.Withdraw(rec, alloc, now);  // its GPUs held until the engine says it is gone
}

void JobRunner::WithdrawnGone(JobId id) {
  if (jobs_.ForgetWithdrawn(id)) setup_.changed();  // its GPUs are free
}

void JobRunner::Named(JobId id, const std::string& engine_job, Time now) {
  auto it = jobs_.find(id);
  if (it == jobs_.end() || it->second.rec.state != store::JobState::kRunning) return;
  if (Status s = store_.SetEngineJob(id, engine_job, now); !s.ok()) {
    // Only `rota show` misses it: the engine finds its jobs by their tag.
    spdlog::error("job {}: cannot record that it runs as {}: {}", id, engine_job, s.message());
    return;
  }
  it->second.rec.engine_job = engine_job;
  spdlog::info("job {}: runs as {}", id, engine_job);
}

void JobRunner::Placed(JobId id, const std::vector<std::string>& cards, Time now) {
  auto it = jobs_.find(id);
  if (it == jobs_.end() || it->second.rec.state != store::JobState::kRunning) return;
  ActiveJob& a = it->second;
  if (a.rec.placement.alloc.mig >= 0 || cards.size() != a.rec.placement.alloc.gpus.size()) return;
  Allocation given = a.rec.placement.alloc;
  given.gpus.clear();
  for (const std::string& uuid : cards) {
    StatusOr<size_t> at = cards_.Find(uuid);
    if (!at.ok()) return;  // a card the inventory does not have: keep what was chosen
    given.gpus.push_back(static_cast<int>(*at));
  }
  std::sort(given.gpus.begin(), given.gpus.end());
  if (given == a.rec.placement.alloc) return;
  store::Placement moved = cards_.PlacementOf(given);
  const std::string reason = "Placed by the cluster on GPU " + cards_.IndexList(given);
  if (Status s = store_.MovePlacement(id, moved, reason, now); !s.ok()) {
    spdlog::error("job {}: cannot record the GPUs the cluster gave it: {}", id, s.message());
    return;
  }
  a.rec.placement = moved;
  spdlog::info("job {}: {}", id, reason);
  setup_.changed();
}

void JobRunner::ApplySignal(const rota::Signal& sig, Time now) {
  auto it = jobs_.find(sig.job);
  if (it == jobs_.end() || it->second.rec.state != store::JobState::kRunning) return;
  ActiveJob& a = it->second;
  const bool preempted = sig.cause == StopCause::kPreempted;
  if (Status s = store_.MarkSignalled(sig.job, sig.kill_at, preempted, now); !s.ok()) {
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
  if (a.rec.RunByClient()) {
    setup_.sessions->Warn(a, sig.signal, sig.kill_at, preempted);
  } else {
    (void)engine_.Signal(sig.job, sig.signal);
  }
  spdlog::info("job {}: signal {} ({}), kill at {}", sig.job, sig.signal, why, sig.kill_at);
}

void JobRunner::ApplyKill(JobId id, Time now) {
  auto it = jobs_.find(id);
  if (it == jobs_.end() || it->second.rec.state != store::JobState::kRunning) return;
  BeginStop(it->second, now);
}

void JobRunner::BeginStop(ActiveJob& a, Time now) {
  if (a.term_sent != 0) return;
  a.term_sent = now;
  if (a.rec.RunByClient()) {
    setup_.sessions->Term(a);
  } else {
    (void)engine_.Signal(a.rec.job.id, SIGTERM);
  }
}

void JobRunner::EscalateKills(Time now) {
  for (auto& [id, a] : jobs_) {
    if (a.term_sent == 0 || now < a.term_sent + setup_.kill_wait || !a.Live()) continue;
    if (a.rec.RunByClient()) {
      setup_.sessions->Kill(a);
      a.term_sent = now;  // again after another kill_wait if the client does not answer
    } else {
      (void)engine_.Signal(id, SIGKILL);
      a.term_sent = now;
    }
  }
}

void JobRunner::Ended(JobId id, const JobExit& info, Time now) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return;
  ActiveJob& a = it->second;
  // Recorded after this batch of events has started the jobs it frees GPUs for (RecordEnds).
  // A job whose processes were seen gone ended then: its run is charged up to that moment.
  Time end = info.end_time > 0 ? std::min(info.end_time, now) : now;
  if (a.released_at != 0) end = a.released_at;
  ends_.push_back(EndJob(a, info, end));
}

void JobRunner::Released(JobId id, Time at) {
  auto it = jobs_.find(id);
  if (it == jobs_.end() || !it->second.Live()) return;
  ActiveJob& a = it->second;
  a.released_at = at;
  // What the next pass must see at once, as for an end (EndJob): its GPUs free, its run charged.
  setup_.ledger->Charge(a.rec, a.released_at);
  setup_.changed();
}

void JobRunner::Finish(ActiveJob& a, const exec::ExitInfo& info, Time now) {
  RecordEnd(EndJob(a, info, now));
}

JobRunner::Ending JobRunner::EndJob(ActiveJob& a, const exec::ExitInfo& info, Time now) {
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
  e.exit = info;
  setup_.counters->JobEnded(e.requeue ? "requeued" : store::JobStateName(e.state));
  // What the next pass must see at once: the job's GPUs free and its run charged to its owner.
  if (a.released_at == 0) setup_.ledger->Charge(a.rec, now);  // else charged when its cgroup emptied
  if (a.rec.RunByClient()) setup_.sessions->Ended(a);
  const JobId id = a.rec.job.id;
  const bool released = a.released_at != 0;
  e.job = jobs_.Take(jobs_.find(id));  // with its session's connection
  // A released job's GPUs were freed, and its run charged, when its cgroup emptied: a pass has
  // something new to see only for the jobs that wait for it (with 1,000 jobs queued, a pass
  // for nothing costs about 0.4 ms).
  if (!released || jobs_.Awaited(id)) setup_.changed();
  return e;
}

void JobRunner::RecordEnds() {
  std::vector<Ending> ends;
  ends.swap(ends_);
  for (Ending& e : ends) RecordEnd(std::move(e));
}

void JobRunner::RecordEnd(Ending e) {
  ActiveJob& a = e.job;
  const JobId id = a.rec.job.id;
  // A requeued job launches again under the same id: its last run's files go before the store
  // says it is pending, or a restart would take them for a launch of the new run (FindLaunch).
  if (e.requeue && !a.rec.interactive) engine_.Forget(id);  // (a session is never requeued)
  Status s = setup_.ledger->SaveWith(a.rec, e.at, [&] {
    setup_.allocs->SaveMeasures(a);
    Status end = e.requeue ? store_.Requeue(id, e.reason, e.at)
                           : store_.MarkEnded(id, e.state, e.code, e.reason, e.at, e.actor);
    // The owner's notice is queued in the same commit as the end: a crash between two commits
    // would record the end and lose the notice, which a restart does not give again.
    if (end.ok() && !a.rec.interactive) {
      setup_.notes->NotifyJobEnd(a.rec, e.state, e.reason, e.actor, e.requeue);
    }
    return end;
  });
  // An attached session's client exits with how its job ended (recorded or not: it ended).
  if (a.rec.Attached()) setup_.sessions->TellEnded(a, e, e.exit);
  if (!s.ok()) {
    // The record stays "running" on disk (a full or broken disk); it has left memory all the
    // same, so its GPUs are not held forever. The next start collects it again from the result
    // its shepherd left (kept: Forget is not called), or records it as vanished (NodeFail,
    // requeued if it asked): not lost, not run twice.
    spdlog::error("job {}: cannot record its end ({}): {}", id, e.reason, s.message());
    return;
  }
  spdlog::info("job {} ({}): {}", id, a.rec.job.user, e.reason);
  if (a.rec.Attached()) engine_.Forget(id);
  if (a.rec.interactive) return;
  setup_.notes->Wake();  // the notice is committed now: the notifier may read it
  if (!e.requeue) {
    engine_.Forget(id);
    return;
  }
  jobs_.Add(JobTable::Requeued(std::move(a), e.launch_failed, e.at));
  setup_.changed();
}

StatusOr<JobEndSeen> JobRunner::EndOf(JobId id) {
  JobEndSeen out;
  for (const Ending& e : ends_) {  // ended in this batch of events, recorded after its pass
    if (e.job.rec.job.id != id) continue;
    out.final = !e.requeue;
    out.completed = e.state == store::JobState::kCompleted && !e.requeue;
    out.reason = e.reason;
    out.user = e.job.rec.job.user;
    return out;
  }
  StatusOr<store::JobRecord> rec = store_.Get(id);
  if (!rec.ok()) return rec.status();
  out.final = rec->state != store::JobState::kPending && rec->state != store::JobState::kRunning;
  out.completed = rec->state == store::JobState::kCompleted;
  out.reason = rec->end_reason.empty() ? store::JobStateName(rec->state) : rec->end_reason;
  out.user = rec->job.user;
  return out;
}

JobRunner::LaunchOutcome JobRunner::RecoverLaunch(ActiveJob& a, Time now) {
  const JobId id = a.rec.job.id;
  StatusOr<exec::FoundLaunch> found = engine_.FindLaunch(id);
  if (!found.ok()) {
    spdlog::error("job {}: cannot tell whether a launch before the restart went ahead: {}", id,
                  found.status().message());
    return LaunchOutcome::kNone;
  }
  if (found->state == exec::FoundLaunch::State::kNone) {
    if (found->withdrawn)
      spdlog::info("job {}: withdrew a launch that rotad did not live to see start; still pending", id);
    return LaunchOutcome::kNone;
  }
  // The job started: record that start as it would have been recorded.
  StatusOr<StartNote> note = StartNoteFromJson(found->note);
  if (!note.ok()) {  // only a damaged spec: the job ran, where is unknown
    spdlog::error("job {}: launched before the restart, but its {}", id, note.status().message());
    note = StartNote{{}, now};
    note->start.reason = "Started";
  }
  store::StartInfo info = note->start;
  info.pid = found->pid;
  info.reason += " (its start recorded after a restart)";
  const Time started = std::min(note->time > 0 ? note->time : now, now);
  StatusOr<Started> again = found->state == exec::FoundLaunch::State::kRunning
                                ? engine_.Adopt(id, found->pid, 0)
                                : StatusOr<Started>(NotFound("ended"));
  if (again.ok()) info.cgroup = again->cgroup;
  if (Status s = store_.MarkStarted(id, info, started); !s.ok()) {
    spdlog::error("job {}: launched before the restart, but its start cannot be recorded: {}", id,
                  s.message());
    if (again.ok()) engine_.Withdraw(id);  // as in ApplyStart: no result left to be taken for its end later
    return LaunchOutcome::kNone;
  }
  a.rec.Started(info, started);
  cards_.Remap(a.rec);
  setup_.counters->JobStarted(a.rec.job.submit_time, started);
  setup_.notes->Notify(setup_.notes->JobEvent("job_started", a.rec));
  if (again.ok()) {
    spdlog::info("job {}: launched before the restart and re-adopted{}", id,
                 again->pid > 0 ? " (shepherd " + std::to_string(again->pid) + ")" : std::string());
    return LaunchOutcome::kAdopted;
  }
  exec::ExitInfo ended = engine_.Collect(id, 0);
  Finish(a, ended, ended.end_time > 0 ? std::min(ended.end_time, now) : now);
  spdlog::info("job {}: launched before the restart and ended while rotad was down", id);
  return LaunchOutcome::kEnded;
}

void JobRunner::StopAfterWarning(ActiveJob& a, Time now) {
  ApplySignal(rota::Signal{a.rec.job.id, a.rec.job.signal, now + a.rec.job.grace, StopCause::kPreempted, 0,
                           a.rec.job.requeue},
              now);
}

Time JobRunner::NextEscalation() const {
  Time next = kNever;
  for (const auto& [id, a] : jobs_) {
    if (a.term_sent != 0) next = std::min(next, a.term_sent + setup_.kill_wait);
  }
  return next;
}

void JobRunner::AddHeld(ClusterState& st) const {
  for (const Ending& e : ends_) {
    if (e.requeue) st.held.push_back(e.job.rec.job.id);  // pending again once its end is recorded
  }
}

bool JobRunner::Adopt(ActiveJob& a, Time now) {
  const JobId id = a.rec.job.id;
  StatusOr<Started> again = engine_.Adopt(id, static_cast<pid_t>(a.rec.pid), a.rec.start_time);
  if (again.ok()) {
    spdlog::info("job {}: re-adopted{}", id,
                 a.rec.pid > 0 ? " (shepherd " + std::to_string(a.rec.pid) + ")" : std::string());
    if (!a.cancelled_by.empty()) BeginStop(a, now);  // a cancel that was under way
    return true;
  }
  // Ended while we were away (the shepherd left a result), or vanished. A process that is not
  // its shepherd but took its pid is said, since someone may have meant it to pass for one.
  if (again.status().message().find("exited") == std::string::npos &&
      again.status().message().find("no process") == std::string::npos) {
    spdlog::warn("job {}: not re-adopted: {}", id, again.status().message());
  }
  exec::ExitInfo info = engine_.Collect(id, static_cast<pid_t>(a.rec.pid));
  Finish(a, info, info.end_time > 0 ? std::min(info.end_time, now) : now);
  return false;
}

}  // namespace rota::daemon
