// Tested by src/exec/executor_test.cc (signals, stragglers, exit statuses).
//
// Design: one poll loop over a signalfd and the start-error pipe; no signal handlers. The job's
// leader is observed with waitid(WNOWAIT) and reaped only after its stragglers are killed, so
// its pid (= its process group id) cannot be reused while kill(-pgid) is still aimed at it. A
// signal that arrives before the child has called setsid() goes to the child itself (kill(-pgid)
// fails with ESRCH); the child keeps signals blocked until just before exec, so it is not lost.
#include "shepherd/supervisor.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <linux/sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <ctime>

#include "exec/cgroup.h"
#include "exec/files.h"
#include "exec/process.h"
#include "shepherd/container.h"
#include "shepherd/job_start.h"

namespace rota::shepherd {
namespace {

constexpr int kStragglerWaitMs = 2000;
constexpr int kRemoveWaitMs = 30000;  // podman rm of a container that ignores its stop

// fork() into the cgroup open at `cgroup_fd`; -1 (errno set) when the kernel cannot.
pid_t CloneIntoCgroup(int cgroup_fd) {
#if defined(SYS_clone3) && defined(CLONE_INTO_CGROUP)
  clone_args args{};
  args.flags = CLONE_INTO_CGROUP;
  args.exit_signal = SIGCHLD;
  args.cgroup = static_cast<std::uint64_t>(cgroup_fd);
  return static_cast<pid_t>(syscall(SYS_clone3, &args, sizeof args));
#else
  (void)cgroup_fd;
  errno = ENOSYS;
  return -1;
#endif
}

class Supervisor {
 public:
  Supervisor(const exec::JobSpec& spec, std::optional<int> job_nice)
      : spec_(spec), job_(spec), job_nice_(job_nice) {}

  exec::ExitInfo Run() {
    exec::ExitInfo info;
    info.kind = exec::ExitInfo::Kind::kStartFailed;
    sigset_t set;
    ShepherdSignals(&set);
    sigprocmask(SIG_BLOCK, &set, nullptr);
    signal(SIGPIPE, SIG_IGN);
    int sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    // Failures before the job's process exists are this machine's (out of memory, processes or
    // descriptors), not the job's: the daemon tries the job again later.
    info.machine_fault = true;
    if (sfd < 0) return Failed(info, "shepherd: signalfd", errno);
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) != 0) return Failed(info, "shepherd: pipe", errno);
    // Straight into the job's cgroup (clone3 with CLONE_INTO_CGROUP, Linux 5.7): moving a process
    // into a fresh cgroup afterwards waits for an RCU grace period, about 14 ms here, on every
    // job start. Older kernels: fork, and the child joins the cgroup itself.
    bool in_cgroup = false;
    child_ = -1;
    if (!spec_.cgroup.empty()) {
      int cgroup_fd = open(spec_.cgroup.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (cgroup_fd >= 0) {
        child_ = CloneIntoCgroup(cgroup_fd);
        in_cgroup = child_ >= 0;
        close(cgroup_fd);
      }
    }
    // A container's own processes (under conmon, which daemonises) are this shepherd's
    // descendants still: found as the job's by their parents (daemon/card_watch.h), reaped here.
    if (container()) prctl(PR_SET_CHILD_SUBREAPER, 1);
    if (!in_cgroup) child_ = fork();
    if (child_ < 0) return Failed(info, "cannot fork", errno);
    info.machine_fault = false;
    if (child_ == 0) {
      close(pipefd[0]);
      close(sfd);
      RunJobChild(job_, pipefd[1], /*join_cgroup=*/!in_cgroup, job_nice_);
    }
    if (job_nice_) setpriority(PRIO_PROCESS, 0, *job_nice_);  // its job is started: back to its nice value
    close(pipefd[1]);
    int status = Loop(sfd, pipefd[0]);
    close(pipefd[0]);
    info.end_time = static_cast<std::int64_t>(time(nullptr));
    std::string oom = KillStragglers();
    while (waitpid(child_, nullptr, 0) < 0 && errno == EINTR) {
    }
    while (container() && waitpid(-1, nullptr, WNOHANG) > 0) {
    }  // a container's monitor, orphaned to this subreaper
    close(sfd);  // the caller removes the (empty) cgroup once the result is written
    if (!start_error_.empty()) {
      info.reason = start_error_;
    } else if (status_kind_ == CLD_EXITED) {
      info.kind = exec::ExitInfo::Kind::kExited;
      info.exit_code = status;
    } else {
      info.kind = exec::ExitInfo::Kind::kSignalled;
      info.signal = status;
      info.reason = oom;
    }
    return info;
  }

 private:
  exec::ExitInfo& Failed(exec::ExitInfo& info, const std::string& what, int err) {
    info.reason = exec::ErrnoMessage(what, err);
    info.end_time = static_cast<std::int64_t>(time(nullptr));
    return info;
  }

  // Until the leader has exited and the start pipe is closed; returns the exit code or signal.
  int Loop(int sfd, int pipe_fd) {
    bool pipe_open = true;
    bool exited = false;
    int status = 0;
    while (!exited || pipe_open) {
      pollfd fds[2] = {{sfd, POLLIN, 0}, {pipe_open ? pipe_fd : -1, POLLIN, 0}};
      if (poll(fds, 2, -1) < 0 && errno != EINTR) break;
      if (pipe_open && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) {
        char buf[512];
        ssize_t n = read(pipe_fd, buf, sizeof buf);
        if (n > 0) start_error_.append(buf, static_cast<std::size_t>(n));
        if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) pipe_open = false;
      }
      signalfd_siginfo si;
      while (read(sfd, &si, sizeof si) == static_cast<ssize_t>(sizeof si)) {
        if (exited) continue;
        if (static_cast<int>(si.ssi_signo) == exec::ForwardSignal()) {
          Forward(si.ssi_int);
        } else if (si.ssi_signo != SIGCHLD) {
          Forward(static_cast<int>(si.ssi_signo));
        }
      }
      if (!exited) {
        siginfo_t wi;
        wi.si_pid = 0;
        if (waitid(P_PID, static_cast<id_t>(child_), &wi, WEXITED | WNOHANG | WNOWAIT) == 0 && wi.si_pid == child_) {
          exited = true;
          status_kind_ = wi.si_code;
          status = wi.si_status;
        }
      }
    }
    return status;
  }

  bool container() const { return spec_.launch.container.runtime != exec::ContainerRuntime::kNone; }

  // Other signals reach a container through its runtime's client (which passes them on); a
  // SIGKILL would only kill the client.
  void Forward(int sig) {
    if (sig < 1 || sig >= NSIG) return;
    signalled_ = true;
    if (sig == SIGKILL && container()) (void)RemoveContainer(spec_.launch.container, kRemoveWaitMs);
    if (sig == SIGKILL && !spec_.cgroup.empty()) (void)exec::KillCgroup(spec_.cgroup);
    if (kill(-child_, sig) != 0 && errno == ESRCH) kill(child_, sig);  // before its setsid()
  }

  // With the leader a zombie (its pgid still reserved): kills the rest of the job. Returns a
  // note when the cgroup saw an OOM kill.
  std::string KillStragglers() {
    std::string oom;
    // The client exits with the container, which --rm removes; a client that was killed leaves
    // the container running. One that was sent a signal (a stop, a time limit, its client gone)
    // may exit before its --rm has removed the container: seen under the sanitizers on a loaded
    // machine, the container then stayed for good. Removing it again costs one `rm --ignore`.
    if (container() && (status_kind_ != CLD_EXITED || signalled_))
      (void)RemoveContainer(spec_.launch.container, kRemoveWaitMs);
    if (!spec_.cgroup.empty()) {
      if (exec::CgroupOomKills(spec_.cgroup) > 0) oom = "out of memory (memory.max reached)";
      StatusOr<bool> populated = exec::CgroupPopulated(spec_.cgroup);
      if (populated.ok() && *populated) {
        (void)exec::KillCgroup(spec_.cgroup);
        exec::WaitCgroupEmpty(spec_.cgroup, kStragglerWaitMs);
      }
    }
    kill(-child_, SIGKILL);
    return oom;
  }

  const exec::JobSpec& spec_;
  PreparedJob job_;
  const std::optional<int> job_nice_;
  pid_t child_ = -1;
  int status_kind_ = 0;
  bool signalled_ = false;  // a signal was passed on to the job (Forward)
  std::string start_error_;
};

}  // namespace

void ShepherdSignals(sigset_t* set) {
  sigemptyset(set);
  for (int sig : {exec::ForwardSignal(), SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2, SIGCHLD}) sigaddset(set, sig);
}

exec::ExitInfo SuperviseJob(const exec::JobSpec& spec, std::optional<int> job_nice) {
  return Supervisor(spec, job_nice).Run();
}

}  // namespace rota::shepherd
