// Start-up recovery: rebuild the active jobs from the store and re-adopt what kept running while
// rotad was down. Batch jobs are found through their shepherds (which record the exit status
// even with no daemon listening); interactive sessions through their client processes. A pending
// batch job may have been launched by a daemon that died before recording the start: its spec's
// launch lock tells (Executor::FindLaunch), and the start is recorded from the launch's note.
#include <signal.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include "daemon/clock.h"
#include "daemon/daemon.h"
#include "daemon/start_note.h"
#include "exec/process.h"
#include "exec/procfs.h"

namespace rota::daemon {

Status Daemon::Recover() {
  StatusOr<std::vector<store::JobRecord>> active = store_->LoadActive();
  if (!active.ok()) return active.status();
  int pending = 0, adopted = 0, ended = 0;
  const Time now = Now();
  for (store::JobRecord& rec : *active) {
    const JobId id = rec.job.id;
    Active fresh;
    fresh.rec = std::move(rec);
    Active& a = jobs_.Add(std::move(fresh));
    if (a.rec.state == store::JobState::kPending) {
      switch (a.rec.interactive ? LaunchOutcome::kNone : RecoverLaunch(a, now)) {
        case LaunchOutcome::kNone: ++pending; break;
        case LaunchOutcome::kAdopted: ++adopted; break;
        case LaunchOutcome::kEnded: ++ended; break;
      }
      continue;
    }
    cards_.Remap(a.rec);
    StatusOr<std::string> cancel = store_->CancelRequestedBy(id);
    if (cancel.ok()) a.cancelled_by = *cancel;
    if (a.rec.interactive) {
      (sessions_->Adopt(a, now) ? adopted : ended)++;  // not adopted: ended, out of the table
      continue;
    }
    StatusOr<Started> again = engine_->Adopt(id, static_cast<pid_t>(a.rec.pid), a.rec.start_time);
    if (again.ok()) {
      ++adopted;
      spdlog::info("job {}: re-adopted (shepherd {})", id, a.rec.pid);
      if (!a.cancelled_by.empty()) BeginStop(a, now);  // a cancel that was under way
      continue;
    }
    // Ended while we were away (the shepherd left a result), or vanished. A process that is not
    // its shepherd but took its pid is said, since someone may have meant it to pass for one.
    if (again.status().message().find("exited") == std::string::npos &&
        again.status().message().find("no process") == std::string::npos) {
      spdlog::warn("job {}: not re-adopted: {}", id, again.status().message());
    }
    exec::ExitInfo info = engine_->Collect(id, static_cast<pid_t>(a.rec.pid));
    FinishJob(a, info, info.end_time > 0 ? std::min(info.end_time, now) : now);
    ++ended;
  }
  spdlog::info("recovered {} pending, {} running re-adopted, {} ended while rotad was down", pending, adopted, ended);
  const int swept = engine_->RemoveLeftovers([this](JobId id) {
    auto it = jobs_.find(id);
    return it != jobs_.end() && it->second.rec.state == store::JobState::kRunning;
  });
  if (swept > 0) spdlog::info("removed {} empty job cgroup(s) left by an earlier run", swept);
  return Status();
}

Daemon::LaunchOutcome Daemon::RecoverLaunch(Active& a, Time now) {
  const JobId id = a.rec.job.id;
  StatusOr<exec::FoundLaunch> found = engine_->FindLaunch(id);
  if (!found.ok()) {
    spdlog::error("job {}: cannot tell whether a launch before the restart went ahead: {}", id, found.status().message());
    return LaunchOutcome::kNone;
  }
  if (found->state == exec::FoundLaunch::State::kNone) {
    if (found->withdrawn) spdlog::info("job {}: withdrew a launch that rotad did not live to see start; still pending", id);
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
                                ? engine_->Adopt(id, found->pid, 0)
                                : StatusOr<Started>(NotFound("ended"));
  if (again.ok()) info.cgroup = again->cgroup;
  if (Status s = store_->MarkStarted(id, info, started); !s.ok()) {
    spdlog::error("job {}: launched before the restart, but its start cannot be recorded: {}", id, s.message());
    if (again.ok()) engine_->Withdraw(id);  // as in ApplyStart: no result left to be taken for its end later
    return LaunchOutcome::kNone;
  }
  a.rec.Started(info, started);
  cards_.Remap(a.rec);
  counters_.JobStarted(a.rec.job.submit_time, started);
  notes_->Notify(notes_->JobEvent("job_started", a.rec));
  if (again.ok()) {
    spdlog::info("job {}: launched before the restart and re-adopted (shepherd {})", id, again->pid);
    return LaunchOutcome::kAdopted;
  }
  exec::ExitInfo ended = engine_->Collect(id, 0);
  FinishJob(a, ended, ended.end_time > 0 ? std::min(ended.end_time, now) : now);
  spdlog::info("job {}: launched before the restart and ended while rotad was down", id);
  return LaunchOutcome::kEnded;
}

}  // namespace rota::daemon
