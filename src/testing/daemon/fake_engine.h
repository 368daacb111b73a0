// An Engine that runs nothing: it records what the daemon launches and signals, and a test says
// when and how each job ends. Its reports reach the daemon as the local engine's do, from the
// daemon's loop (an eventfd made readable), never from inside a call the daemon made. A job dies
// of SIGTERM and SIGKILL unless the test made it keep running (KeepRunningOn); other signals (a
// job's warning) are recorded and change nothing, as for a job that catches them.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "daemon/engine.h"
#include "daemon/event_loop.h"

namespace rota::testing {

class FakeEngine final : public daemon::Engine {
 public:
  // `loop` and `events` must outlive the engine.
  FakeEngine(daemon::EventLoop& loop, daemon::EngineEvents& events);
  ~FakeEngine() override;

  // ---- What the test sees and does ----
  struct Job {
    exec::LaunchSpec spec;
    std::vector<int> signals;  // in the order delivered
    bool released = false;
  };
  // The jobs launched (or adopted) that have not ended, by id.
  const std::map<JobId, Job>& jobs() const { return jobs_; }
  bool Running(JobId id) const { return jobs_.count(id) > 0; }
  // Every launch so far, in order (a requeued job appears again).
  const std::vector<JobId>& launches() const { return launches_; }
  // The next Launch fails with `why` (InvalidArgument: the spec is refused; else the machine).
  void FailNextLaunch(Status why) { fail_next_ = std::move(why); }
  // Job `id` keeps running when sent `signo` (a job that traps SIGTERM); SIGKILL always kills.
  void KeepRunningOn(JobId id, int signo) { kept_[id].insert(signo); }
  // Job `id` exits with `code` / dies of `signo` / its processes are gone (reported at the
  // daemon's next turn). REQUIRES: Running(id).
  void Exit(JobId id, int code);
  void DieOf(JobId id, int signo);
  void Release(JobId id, Time at);

  // ---- daemon::Engine ----
  std::string Describe() const override { return "fake engine (tests)"; }
  bool DeviceFilter() const override { return false; }
  bool Cgroups() const override { return false; }
  StatusOr<daemon::Started> Launch(const exec::LaunchSpec& spec) override;
  void Withdraw(JobId id) override;
  Status Signal(JobId id, int signo) override;
  StatusOr<exec::FoundLaunch> FindLaunch(JobId) override { return exec::FoundLaunch{}; }
  StatusOr<daemon::Started> Adopt(JobId, pid_t, Time) override { return NotFound("the fake engine adopts nothing"); }
  JobExit Collect(JobId id, pid_t pid) override;
  int RemoveLeftovers(const std::function<bool(JobId)>&) override { return 0; }
  void Forget(JobId id) override { forgotten_.push_back(id); }
  void AfterEvents() override {}
  void Shutdown() override {}

  const std::vector<JobId>& forgotten() const { return forgotten_; }

 private:
  struct Report {
    enum class Kind { kEnded, kReleased, kWithdrawn } kind;
    JobId id = 0;
    JobExit exit;
    Time at = 0;
  };
  void Queue(Report r);
  void End(JobId id, JobExit exit);  // forgets the job, reports its end
  void Deliver();

  daemon::EventLoop& loop_;
  daemon::EngineEvents& events_;
  int fd_;
  std::map<JobId, Job> jobs_;
  std::vector<JobId> launches_;
  std::vector<JobId> forgotten_;
  std::map<JobId, std::set<int>> kept_;
  Status fail_next_;
  std::vector<Report> reports_;
  pid_t next_pid_ = 100000;
};

}  // namespace rota::testing
