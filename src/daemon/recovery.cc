// Start-up recovery: rebuild the active jobs from the store and re-adopt what kept running while
// rotad was down. Batch jobs are found through their shepherds (which record the exit status
// even with no daemon listening); interactive sessions through their client processes.
#include <sys/syscall.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include "daemon/clock.h"
#include "daemon/daemon.h"

namespace rota::daemon {

Status Daemon::Recover() {
  StatusOr<std::vector<store::JobRecord>> active = store_->LoadActive();
  if (!active.ok()) return active.status();
  int pending = 0, adopted = 0, ended = 0;
  const Time now = Now();
  for (store::JobRecord& rec : *active) {
    const JobId id = rec.job.id;
    Active& a = jobs_[id];
    a.rec = std::move(rec);
    if (a.rec.state == store::JobState::kPending) {
      ++pending;
      continue;
    }
    RemapPlacement(a.rec);
    StatusOr<std::string> cancel = store_->CancelRequestedBy(id);
    if (cancel.ok()) a.cancelled_by = *cancel;
    if (a.rec.interactive) {
      int fd = a.rec.pid > 0 ? static_cast<int>(::syscall(SYS_pidfd_open, static_cast<pid_t>(a.rec.pid), 0)) : -1;
      if (fd >= 0) {
        a.session_pid = static_cast<pid_t>(a.rec.pid);
        Watch(id, fd);
        ++adopted;
        spdlog::info("job {}: session re-adopted (client process {})", id, a.rec.pid);
        if (!a.cancelled_by.empty()) BeginStop(a, now);
      } else {
        ChargeUsage(a.rec, now);
        (void)store_->MarkEnded(id, store::JobState::kCancelled, std::nullopt,
                                "Session ended while rotad was down", now);
        jobs_.erase(id);
        ++ended;
      }
      continue;
    }
    StatusOr<exec::Launched> again = executor_->Adopt(id, static_cast<pid_t>(a.rec.pid));
    if (again.ok()) {
      Watch(id, again->pidfd);
      ++adopted;
      spdlog::info("job {}: re-adopted (shepherd {})", id, a.rec.pid);
      if (!a.cancelled_by.empty()) BeginStop(a, now);  // a cancel that was under way
      continue;
    }
    // Ended while we were away (the shepherd left a result), or vanished.
    exec::ExitInfo info = executor_->Collect(id, static_cast<pid_t>(a.rec.pid));
    FinishJob(a, info, info.end_time > 0 ? std::min(info.end_time, now) : now);
    ++ended;
  }
  spdlog::info("recovered {} pending, {} running re-adopted, {} ended while rotad was down", pending, adopted, ended);
  return Status();
}

}  // namespace rota::daemon
