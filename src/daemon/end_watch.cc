// A job's end seen from its cgroup: its GPUs go to the next job as soon as its last process is
// gone, without waiting for its shepherd to wake, record the result and tell rotad (design.md,
// "Freeing a job's GPUs when its cgroup empties"). The end itself (state, reason, exit code) is
// still decided from the shepherd's result (OnJobExit). Tested by tests/daemon/test_end_watch.py.
#include <sys/epoll.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include "daemon/clock.h"
#include "daemon/daemon.h"
#include "exec/cgroup.h"

namespace rota::daemon {

void Daemon::WatchEnds(std::vector<JobId>& list) {
  std::vector<JobId> due;
  due.swap(list);
  for (JobId id : due) {
    auto it = jobs_.find(id);
    if (it == jobs_.end()) continue;  // ended already: its shepherd's note came first
    Active& a = it->second;
    if (a.rec.state != store::JobState::kRunning || a.rec.cgroup.empty() || a.events_fd >= 0) continue;
    StatusOr<int> fd = exec::OpenCgroupEvents(a.rec.cgroup);
    if (!fd.ok()) continue;  // the shepherd's note tells its end, as for a job without a cgroup
    // Only a cgroup seen holding the job may say it is gone: an empty one may also be one that
    // its job has not entered yet (a slow start) or has left already (the note is on its way).
    // An empty one is looked at again a little later, a few times: until its job is in, or its
    // shepherd's note has ended it.
    StatusOr<bool> populated = exec::PopulatedAt(*fd, a.rec.cgroup);
    const bool watched = populated.ok() && *populated &&
                         loop_->Add(*fd, EPOLLPRI, [this, id](std::uint32_t) { OnCgroupEvent(id); }).ok();
    if (!watched) {
      ::close(*fd);
      if (populated.ok() && !*populated && ++a.end_watch_looks < kEndWatchLooks)
        end_watch_retry_.push_back(id);
      continue;
    }
    a.events_fd = *fd;
  }
}

void Daemon::OnCgroupEvent(JobId id) {
  auto it = jobs_.find(id);
  if (it == jobs_.end() || it->second.events_fd < 0) return;
  Active& a = it->second;
  StatusOr<bool> populated = exec::PopulatedAt(a.events_fd, a.rec.cgroup);
  if (populated.ok() && *populated) return;  // another change (frozen): still running
  StopWatchingEnd(a);
  if (!populated.ok()) return;  // left to the shepherd's note
  ++activity_;
  a.released_at = Now();
  spdlog::debug("job {}: its cgroup is empty, its GPUs are free", id);
  // What the next pass must see at once, as for an end (EndJob): its GPUs free, its run charged.
  AddRunToUsage(a.rec, a.released_at);
  dirty_ = true;
}

void Daemon::StopWatchingEnd(Active& a) {
  if (a.events_fd < 0) return;
  loop_->Remove(a.events_fd);
  ::close(a.events_fd);
  a.events_fd = -1;
}

}  // namespace rota::daemon
