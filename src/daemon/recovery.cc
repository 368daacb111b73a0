// Start-up recovery: rebuild the active jobs from the store and re-adopt what kept running while
// rotad was down. Batch jobs are found through their shepherds (which record the exit status
// even with no daemon listening: JobRunner::Adopt), and so are sessions in a container, whose
// clients attach again (`session_attach`); sessions on the host through their client
// processes (SessionDesk::Adopt). A pending batch job may have been launched by a daemon that
// died before recording the start: its spec's launch lock tells (Executor::FindLaunch), and the
// start is recorded from the launch's note (JobRunner::RecoverLaunch).
#include <spdlog/spdlog.h>

#include "daemon/daemon.h"

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
      switch (a.rec.RunByClient() ? JobRunner::LaunchOutcome::kNone : runner_->RecoverLaunch(a, now)) {
        case JobRunner::LaunchOutcome::kNone: ++pending; break;
        case JobRunner::LaunchOutcome::kAdopted: ++adopted; break;
        case JobRunner::LaunchOutcome::kEnded: ++ended; break;
      }
      continue;
    }
    cards_.Remap(a.rec);
    StatusOr<std::string> cancel = store_->CancelRequestedBy(id);
    if (cancel.ok()) a.cancelled_by = *cancel;
    // Not adopted: ended, recorded and out of the table.
    if (a.rec.RunByClient() ? sessions_->Adopt(a, now) : runner_->Adopt(a, now)) {
      ++adopted;
    } else {
      ++ended;
    }
  }
  spdlog::info("recovered {} pending, {} running re-adopted, {} ended while rotad was down", pending, adopted, ended);
  const int swept = engine_->RemoveLeftovers([this](JobId id) {
    auto it = jobs_.find(id);
    return it != jobs_.end() && it->second.rec.state == store::JobState::kRunning;
  });
  if (swept > 0) spdlog::info("removed {} empty job cgroup(s) left by an earlier run", swept);
  return Status();
}

}  // namespace rota::daemon
