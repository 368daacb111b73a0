// The local engine: runs rotad's batch jobs on this machine through exec::Executor (a
// rota-shepherd per job, a cgroup per job where there is cgroup v2), and watches them on the
// daemon's loop: the shepherd's pidfd for its exit, a standby shepherd's note of the job's end,
// and the job's cgroup for the moment its last process is gone (design.md, "Freeing a job's GPUs
// when its cgroup empties"). Keeps standby shepherds ready and removes ended jobs' cgroups a
// moment after the launches that the ends allowed. Tested by the daemon's integration tests
// (tests/daemon: real shepherds, cgroups and restarts) and exec's executor_test.
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "daemon/clock.h"
#include "daemon/engine.h"
#include "daemon/event_loop.h"
#include "exec/executor.h"

namespace rota::daemon {

class LocalEngine final : public Engine {
 public:
  // `loop`, `events` and `clock` must outlive the engine.
  static StatusOr<std::unique_ptr<LocalEngine>> Create(const exec::ExecutorOptions& options, EventLoop& loop,
                                                       EngineEvents& events, const Clock& clock);
  // Leaves the jobs running; stops watching them.
  ~LocalEngine() override;

  std::string Describe() const override { return executor_->cgroup_note(); }
  bool DeviceFilter() const override { return executor_->device_filter(); }
  bool Cgroups() const override { return !executor_->cgroup_base().empty(); }

  StatusOr<Started> Launch(const exec::LaunchSpec& spec) override;
  void Withdraw(JobId id) override;
  Status Signal(JobId id, int signo) override;

  StatusOr<exec::FoundLaunch> FindLaunch(JobId id) override { return executor_->FindLaunch(id); }
  StatusOr<Started> Adopt(JobId id, pid_t pid, Time started) override;
  JobExit Collect(JobId id, pid_t pid) override { return executor_->Collect(id, pid); }
  int RemoveLeftovers(const std::function<bool(JobId)>& in_use) override {
    return executor_->RemoveLeftoverCgroups(in_use);
  }
  void Forget(JobId id) override { executor_->Forget(id); }

  void AfterEvents() override;
  void Shutdown() override { executor_->RemoveBaseIfUnused(); }

  StatusOr<std::string> CreateSessionCgroup(JobId id, std::int64_t memory_limit_bytes,
                                            const std::vector<std::pair<unsigned, unsigned>>& deny) override {
    return executor_->CreateCgroup(id, memory_limit_bytes, deny);
  }
  Status MoveToCgroup(const std::string& cgroup, pid_t pid) override { return executor_->MoveToCgroup(cgroup, pid); }
  Status KillCgroup(const std::string& cgroup) override { return executor_->KillCgroup(cgroup); }
  Status RemoveCgroup(const std::string& cgroup) override { return executor_->RemoveCgroup(cgroup); }

 private:
  // A job being watched: its shepherd and what tells of its end.
  struct Job {
    pid_t pid = 0;
    std::string cgroup;
    int pidfd = -1;    // the shepherd's: readable when it has exited
    int note_fd = -1;  // a standby shepherd's socket: kEndedNote once the result is written
    // The cgroup's cgroup.events, watched for its last process's exit; -1 while not watched.
    int events_fd = -1;
    int looks = 0;  // how often its cgroup was found empty before it was watched
  };
  struct Withdrawn {
    pid_t pid = 0;
    int pidfd = -1;
  };

  LocalEngine(std::unique_ptr<exec::Executor> executor, EventLoop& loop, EngineEvents& events, const Clock& clock)
      : executor_(std::move(executor)), loop_(loop), events_(events), clock_(clock) {}
  Status MakeTimers();

  void Watch(JobId id, const exec::Launched& launched);
  void OnExit(JobId id);
  void OnNote(JobId id);
  void ReapLater(JobId id, pid_t shepherd, int pidfd);
  void OnWithdrawnExit(JobId id);
  // Starts watching the cgroups of the jobs in `list` (end_watch_due_: launched since the last
  // call; end_watch_retry_: found empty before) for their last process's exit, and empties it.
  void WatchEnds(std::vector<JobId>& list);
  void OnCgroupEvent(JobId id);
  void StopWatchingEnd(Job& j);
  void CloseJob(Job& j);
  // Starts standby shepherds up to kStandbys; after a failure, again later.
  void TopUpStandbys();

  std::unique_ptr<exec::Executor> executor_;
  EventLoop& loop_;
  EngineEvents& events_;
  const Clock& clock_;
  std::map<JobId, Job> jobs_;
  std::map<JobId, Withdrawn> withdrawn_;

  // Standby shepherds kept waiting (exec::Executor::PrepareStandbys): enough for the jobs that
  // end together on a full server of four cards; topped up kStandbyDelayNs after they are used.
  static constexpr std::size_t kStandbys = 4;
  static constexpr long kStandbyDelayNs = 20'000'000;
  // When starting them fails (the shepherd's binary replaced or unreadable for a moment, no
  // process free), tried again after 5 s, doubling up to 10 minutes: until then every launch
  // starts its own shepherd.
  static constexpr long long kStandbyRetryFirstNs = 5'000'000'000;
  static constexpr long long kStandbyRetryMaxNs = 600'000'000'000;
  long long standby_retry_ns_ = 0;  // the wait before the next try; 0 while standbys start fine
  std::unique_ptr<OneShotTimer> standby_timer_;
  // Ended jobs' cgroups are removed this long after the first end that left one
  // (exec::Executor::RemoveEndedCgroups): after the launches of a burst of ends, not among them.
  static constexpr long kCgroupRemovalDelayNs = 20'000'000;
  std::unique_ptr<OneShotTimer> cgroup_timer_;
  // Running jobs' cgroups are watched for their end from this long after their launch, once
  // their processes are in: a watch made at the launch would wake rotad when the job's first
  // process enters.
  static constexpr long kEndWatchDelayNs = 20'000'000;
  std::vector<JobId> end_watch_due_;
  std::unique_ptr<OneShotTimer> end_watch_timer_;
  // A job whose cgroup was still empty then (its shepherd slow to start it: a loaded machine, a
  // shepherd started for it rather than a standby) is looked at again every kEndWatchRetryNs,
  // kEndWatchLooks times in all; after that its shepherd's note tells its end.
  static constexpr long kEndWatchRetryNs = 100'000'000;
  static constexpr int kEndWatchLooks = 50;
  std::vector<JobId> end_watch_retry_;
  std::unique_ptr<OneShotTimer> end_watch_retry_timer_;
};

}  // namespace rota::daemon
