#include "testing/daemon/fake_engine.h"

#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>
#include <utility>

namespace rota::testing {

FakeEngine::FakeEngine(daemon::EventLoop& loop, daemon::EngineEvents& events)
    : loop_(loop), events_(events), fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  (void)loop_.Add(fd_, EPOLLIN, [this](std::uint32_t) { Deliver(); });
}

FakeEngine::~FakeEngine() {
  loop_.Remove(fd_);
  ::close(fd_);
}

void FakeEngine::Queue(Report r) {
  reports_.push_back(std::move(r));
  const std::uint64_t one = 1;
  (void)!::write(fd_, &one, sizeof one);
}

void FakeEngine::Deliver() {
  std::uint64_t n;
  while (::read(fd_, &n, sizeof n) > 0) {
  }
  std::vector<Report> reports;
  reports.swap(reports_);
  for (const Report& r : reports) {
    switch (r.kind) {
      case Report::Kind::kEnded:
        events_.JobEnded(r.id, r.exit);
        break;
      case Report::Kind::kReleased:
        events_.JobReleased(r.id, r.at);
        break;
      case Report::Kind::kWithdrawn:
        events_.WithdrawnGone(r.id);
        break;
    }
  }
}

StatusOr<daemon::Started> FakeEngine::Launch(const exec::LaunchSpec& spec) {
  if (!fail_next_.ok()) {
    Status why = std::move(fail_next_);
    fail_next_ = Status();
    return why;
  }
  jobs_[spec.job_id] = Job{spec, {}, false};
  launches_.push_back(spec.job_id);
  return daemon::Started{next_pid_++, ""};
}

void FakeEngine::Withdraw(JobId id) {
  if (jobs_.erase(id) == 0) return;
  Queue({Report::Kind::kWithdrawn, id, {}, 0});
}

Status FakeEngine::Signal(JobId id, int signo) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return Status();
  it->second.signals.push_back(signo);
  auto kept = kept_.find(id);
  const bool kept_alive = kept != kept_.end() && kept->second.count(signo) > 0;
  const bool deadly = signo == SIGKILL || (signo == SIGTERM && !kept_alive);
  if (deadly) DieOf(id, signo);
  return Status();
}

void FakeEngine::End(JobId id, JobExit exit) {
  jobs_.erase(id);
  Queue({Report::Kind::kEnded, id, std::move(exit), 0});
}

void FakeEngine::Exit(JobId id, int code) {
  JobExit exit;
  exit.kind = JobExit::Kind::kExited;
  exit.exit_code = code;
  End(id, std::move(exit));
}

void FakeEngine::DieOf(JobId id, int signo) {
  JobExit exit;
  exit.kind = JobExit::Kind::kSignalled;
  exit.signal = signo;
  End(id, std::move(exit));
}

void FakeEngine::Release(JobId id, Time at) {
  auto it = jobs_.find(id);
  if (it == jobs_.end() || it->second.released) return;
  it->second.released = true;
  Queue({Report::Kind::kReleased, id, {}, at});
}

JobExit FakeEngine::Collect(JobId, pid_t) {
  JobExit exit;
  exit.kind = JobExit::Kind::kVanished;
  exit.reason = "the fake engine keeps nothing across restarts";
  return exit;
}

}  // namespace rota::testing
