// Design: the watches are those rotad kept itself before the Engine seam (design.md, "Engines"):
// a shepherd's pidfd, a standby's note, and from kEndWatchDelayNs after the launch the job's
// cgroup.events. A job's end is reported once, from its shepherd's result; the cgroup emptying
// before it is reported as a release, so that its GPUs go to the next job at once.
#include "daemon/local_engine.h"

#include <signal.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <spdlog/spdlog.h>

#include "exec/cgroup.h"
#include "exec/process.h"

namespace rota::daemon {

StatusOr<std::unique_ptr<LocalEngine>> LocalEngine::Create(const exec::ExecutorOptions& options, EventLoop& loop,
                                                           EngineEvents& events, const Clock& clock) {
  StatusOr<std::unique_ptr<exec::Executor>> executor = exec::Executor::Create(options);
  if (!executor.ok()) return executor.status();
  std::unique_ptr<LocalEngine> engine(new LocalEngine(std::move(*executor), loop, events, clock));
  if (Status s = engine->MakeTimers(); !s.ok()) return s;
  return engine;
}

Status LocalEngine::MakeTimers() {
  struct Spec {
    std::unique_ptr<OneShotTimer>* timer;
    std::function<void()> fired;
  };
  for (Spec& t : std::vector<Spec>{
           {&standby_timer_, [this] { TopUpStandbys(); }},
           {&cgroup_timer_, [this] { executor_->RemoveEndedCgroups(); }},
           {&end_watch_timer_, [this] { WatchEnds(end_watch_due_); }},
           {&end_watch_retry_timer_, [this] { WatchEnds(end_watch_retry_); }},
       }) {
    StatusOr<std::unique_ptr<OneShotTimer>> made = OneShotTimer::Create(loop_, std::move(t.fired));
    if (!made.ok()) return made.status();
    *t.timer = std::move(*made);
  }
  return Status();
}

LocalEngine::~LocalEngine() {
  for (auto& [id, j] : jobs_) CloseJob(j);
  for (auto& [id, w] : withdrawn_) {
    loop_.Remove(w.pidfd);
    ::close(w.pidfd);
  }
}

void LocalEngine::CloseJob(Job& j) {
  for (int* fd : {&j.pidfd, &j.note_fd, &j.events_fd}) {
    if (*fd < 0) continue;
    loop_.Remove(*fd);
    ::close(*fd);
    *fd = -1;
  }
}

StatusOr<Started> LocalEngine::Launch(const exec::LaunchSpec& spec) {
  StatusOr<exec::Launched> launched = executor_->Launch(spec);
  if (!launched.ok()) return launched.status();
  Watch(spec.job_id, *launched);
  return Started{launched->pid, launched->cgroup};
}

StatusOr<Started> LocalEngine::Adopt(JobId id, pid_t pid, Time started) {
  StatusOr<exec::Launched> again = executor_->Adopt(id, pid, started);
  if (!again.ok()) return again.status();
  Watch(id, *again);
  return Started{again->pid, again->cgroup};
}

void LocalEngine::Watch(JobId id, const exec::Launched& launched) {
  Job& j = jobs_[id];
  j.pid = launched.pid;
  j.cgroup = launched.cgroup;
  j.pidfd = launched.pidfd;
  (void)loop_.Add(j.pidfd, EPOLLIN, [this, id](std::uint32_t) { OnExit(id); });
  j.note_fd = launched.note_fd;
  if (j.note_fd >= 0) (void)loop_.Add(j.note_fd, EPOLLIN, [this, id](std::uint32_t) { OnNote(id); });
  if (!j.cgroup.empty()) end_watch_due_.push_back(id);
}

void LocalEngine::OnNote(JobId id) {
  auto it = jobs_.find(id);
  if (it == jobs_.end() || it->second.note_fd < 0) return;
  Job& j = it->second;
  char buf[64];
  const ssize_t n = ::recv(j.note_fd, buf, sizeof buf, MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
  if (n > 0) {
    // The shepherd's one message (exec::kEndedNote): the result is written, it is cleaning up.
    OnExit(id);
    return;
  }
  // End of file without the note (it died, or failed to write the result): its pidfd tells.
  loop_.Remove(j.note_fd);
  ::close(j.note_fd);
  j.note_fd = -1;
}

void LocalEngine::OnExit(JobId id) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return;
  Job j = it->second;
  jobs_.erase(it);
  loop_.Remove(j.pidfd);
  if (exec::PidfdExited(j.pidfd)) {
    ::close(j.pidfd);
  } else {
    ReapLater(id, j.pid, j.pidfd);  // its note came first: Collect reads the result it wrote
  }
  j.pidfd = -1;
  CloseJob(j);  // the note and the cgroup watch
  events_.JobEnded(id, executor_->Collect(id, j.pid));
}

void LocalEngine::ReapLater(JobId id, pid_t shepherd, int pidfd) {
  (void)loop_.Add(pidfd, EPOLLIN, [this, id, shepherd, pidfd](std::uint32_t) {
    loop_.Remove(pidfd);
    ::close(pidfd);
    executor_->Reap(id, shepherd);
  });
}

Status LocalEngine::Signal(JobId id, int signo) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return Status();  // ended, or never launched here
  return executor_->Signal(it->second.pid, signo);
}

void LocalEngine::Withdraw(JobId id) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return;
  Job j = it->second;
  jobs_.erase(it);
  // Its spec removed first, so that a restart before the shepherd's exit finds no launch and
  // the job pending (Executor::Withdraw); then SIGKILL forwarded: the shepherd kills what it
  // started (the cgroup, else the process group) and exits without a result. Its note is not
  // needed.
  if (Status s = executor_->Withdraw(id); !s.ok()) {
    spdlog::error("job {}: cannot remove the withdrawn launch's spec: {}", id, s.message());
  }
  (void)executor_->Signal(j.pid, SIGKILL);
  loop_.Remove(j.pidfd);
  const int pidfd = j.pidfd;
  j.pidfd = -1;
  CloseJob(j);
  withdrawn_[id] = {j.pid, pidfd};
  (void)loop_.Add(pidfd, EPOLLIN, [this, id](std::uint32_t) { OnWithdrawnExit(id); });
}

void LocalEngine::OnWithdrawnExit(JobId id) {
  auto it = withdrawn_.find(id);
  if (it == withdrawn_.end()) return;
  loop_.Remove(it->second.pidfd);
  ::close(it->second.pidfd);
  executor_->Reap(id, it->second.pid);
  executor_->Forget(id);  // its spec and result: the next launch of the job writes its own
  spdlog::info("job {}: withdrawn launch ended (shepherd {})", id, it->second.pid);
  withdrawn_.erase(it);
  events_.WithdrawnGone(id);
}

void LocalEngine::WatchEnds(std::vector<JobId>& list) {
  std::vector<JobId> due;
  due.swap(list);
  for (JobId id : due) {
    auto it = jobs_.find(id);
    if (it == jobs_.end()) continue;  // ended already: its shepherd's note came first
    Job& j = it->second;
    if (j.cgroup.empty() || j.events_fd >= 0) continue;
    StatusOr<int> fd = exec::OpenCgroupEvents(j.cgroup);
    if (!fd.ok()) continue;  // the shepherd's note tells its end, as for a job without a cgroup
    // Only a cgroup seen holding the job may say it is gone: an empty one may also be one that
    // its job has not entered yet (a slow start) or has left already (the note is on its way).
    // An empty one is looked at again a little later, a few times: until its job is in, or its
    // shepherd's note has ended it.
    StatusOr<bool> populated = exec::PopulatedAt(*fd, j.cgroup);
    const bool watched = populated.ok() && *populated &&
                         loop_.Add(*fd, EPOLLPRI, [this, id](std::uint32_t) { OnCgroupEvent(id); }).ok();
    if (!watched) {
      ::close(*fd);
      if (populated.ok() && !*populated && ++j.looks < kEndWatchLooks) end_watch_retry_.push_back(id);
      continue;
    }
    j.events_fd = *fd;
  }
}

void LocalEngine::OnCgroupEvent(JobId id) {
  auto it = jobs_.find(id);
  if (it == jobs_.end() || it->second.events_fd < 0) return;
  Job& j = it->second;
  StatusOr<bool> populated = exec::PopulatedAt(j.events_fd, j.cgroup);
  if (populated.ok() && *populated) return;  // another change (frozen): still running
  StopWatchingEnd(j);
  if (!populated.ok()) return;  // left to the shepherd's note
  spdlog::debug("job {}: its cgroup is empty, its GPUs are free", id);
  events_.JobReleased(id, clock_.Now());
}

void LocalEngine::StopWatchingEnd(Job& j) {
  if (j.events_fd < 0) return;
  loop_.Remove(j.events_fd);
  ::close(j.events_fd);
  j.events_fd = -1;
}

void LocalEngine::AfterEvents() {
  // Standby shepherds for the next launches: topped up a moment after launches rather than at
  // once, so that starting them does not delay a job that ends in the same burst.
  if (executor_->standbys() < kStandbys && !executor_->standbys_failed()) standby_timer_->Arm(kStandbyDelayNs);
  if (executor_->ended_cgroups() > 0) cgroup_timer_->Arm(kCgroupRemovalDelayNs);
  if (!end_watch_due_.empty()) end_watch_timer_->Arm(kEndWatchDelayNs);
  if (!end_watch_retry_.empty()) end_watch_retry_timer_->Arm(kEndWatchRetryNs);
}

void LocalEngine::TopUpStandbys() {
  if (standby_retry_ns_ > 0) executor_->RetryStandbys();  // the wait after a failure is over
  Status up = executor_->PrepareStandbys(kStandbys);
  if (up.ok()) {
    if (standby_retry_ns_ > 0) spdlog::info("standby shepherds started again");
    standby_retry_ns_ = 0;
    return;
  }
  if (standby_retry_ns_ == 0) {  // said once, not at every retry
    spdlog::warn("cannot start standby shepherds ({}); a shepherd is started for each job until they can be",
                 up.message());
  }
  standby_retry_ns_ = standby_retry_ns_ == 0 ? kStandbyRetryFirstNs : std::min(2 * standby_retry_ns_, kStandbyRetryMaxNs);
  standby_timer_->Arm(standby_retry_ns_);
}

}  // namespace rota::daemon
