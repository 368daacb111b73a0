// Tested through executor_test.cc (Adopt, Signal).
#include "exec/process.h"

#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "exec/files.h"
#include "exec/procfs.h"

namespace rota::exec {
namespace {

std::string BaseName(const std::string& path) {
  std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

StatusOr<int> OpenPidfd(pid_t pid) {
  if (pid <= 0) return NotFound("no process " + std::to_string(pid));
  long fd = syscall(SYS_pidfd_open, pid, 0);
  if (fd < 0) {
    if (errno == ESRCH) return NotFound("no process " + std::to_string(pid));
    return Internal(ErrnoMessage("pidfd_open(" + std::to_string(pid) + ")", errno));
  }
  return static_cast<int>(fd);
}

bool PidfdExited(int pidfd) {
  pollfd p{pidfd, POLLIN, 0};
  int n;
  do {
    n = poll(&p, 1, 0);
  } while (n < 0 && errno == EINTR);
  return n > 0;
}

Status PidfdQueueSignal(int pidfd, int sig, int value) {
  siginfo_t info;
  std::memset(&info, 0, sizeof info);
  info.si_signo = sig;
  info.si_code = SI_QUEUE;
  info.si_pid = getpid();
  info.si_uid = getuid();
  info.si_value.sival_int = value;
  if (syscall(SYS_pidfd_send_signal, pidfd, sig, &info, 0) != 0) {
    if (errno == ESRCH) return NotFound("process has exited");
    return Internal(ErrnoMessage("pidfd_send_signal", errno));
  }
  return Status::Ok();
}

StatusOr<pid_t> PidfdProcessOf(int pidfd, uid_t uid) {
  if (pidfd < 0) return InvalidArgument("no process handle");
  StatusOr<std::string> info = ReadFile("/proc/self/fdinfo/" + std::to_string(pidfd));
  if (!info.ok()) return InvalidArgument("not a process handle (pidfd)");
  // "Pid:\t<pid>": -1 once the process has exited, 0 when it is in a pid namespace not ours.
  const std::size_t at = info->find("\nPid:\t");
  if (at == std::string::npos) return InvalidArgument("not a process handle (pidfd)");
  const long pid = std::strtol(info->c_str() + at + 6, nullptr, 10);
  if (pid <= 0 || PidfdExited(pidfd)) return NotFound("the process has exited");
  StatusOr<ProcessIdentity> p = ReadProcess(static_cast<pid_t>(pid));
  if (!p.ok()) return NotFound("the process has exited");
  if (p->uid != uid || p->euid != uid) {
    return PermissionDenied("process " + std::to_string(pid) + " runs as uid " + std::to_string(p->uid) +
                            ", not as the caller (uid " + std::to_string(uid) + ")");
  }
  // Alive after /proc was read: the pid still named this process then, and still does.
  if (PidfdExited(pidfd)) return NotFound("the process has exited");
  return static_cast<pid_t>(pid);
}

std::vector<std::string> ReadCmdline(pid_t pid) {
  std::vector<std::string> args;
  StatusOr<std::string> text = ReadFile("/proc/" + std::to_string(pid) + "/cmdline");
  if (!text.ok()) return args;
  std::size_t start = 0;
  while (start < text->size()) {
    std::size_t end = text->find('\0', start);
    if (end == std::string::npos) end = text->size();
    args.push_back(text->substr(start, end - start));
    start = end + 1;
  }
  return args;
}

std::vector<std::string> ShepherdArgs(const std::string& shepherd_path, JobId job, const std::string& spec_path,
                                      const std::string& run_dir, const std::string& token) {
  return {shepherd_path, "--job", std::to_string(job), "--spec", spec_path, "--run-dir", run_dir, "--token", token};
}

std::vector<std::string> StandbyShepherdArgs(const std::string& shepherd_path, const std::string& run_dir) {
  return {shepherd_path, "--standby", "--run-dir", run_dir};
}

bool IsStandbyShepherdCommand(const std::vector<std::string>& cmdline, const std::string& shepherd_path,
                              const std::string& run_dir) {
  if (cmdline.size() != 4 || BaseName(cmdline[0]) != BaseName(shepherd_path)) return false;
  if (cmdline[1] != "--standby" || cmdline[2] != "--run-dir") return false;
  return run_dir.empty() || cmdline[3] == run_dir;
}

bool IsShepherdCommand(const std::vector<std::string>& cmdline, const std::string& shepherd_path,
                       JobId job, const std::string& run_dir) {
  if (job == 0 && IsStandbyShepherdCommand(cmdline, shepherd_path, run_dir)) return true;
  if (cmdline.size() != 9 || BaseName(cmdline[0]) != BaseName(shepherd_path)) return false;
  if (cmdline[1] != "--job" || cmdline[3] != "--spec" || cmdline[5] != "--run-dir" || cmdline[7] != "--token") {
    return false;
  }
  if (job != 0 && cmdline[2] != std::to_string(job)) return false;
  return run_dir.empty() || cmdline[6] == run_dir;
}

int ForwardSignal() { return SIGRTMIN + 1; }

}  // namespace rota::exec
