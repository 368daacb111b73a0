// Tested by src/exec/executor_test.cc (start failures, users, environment, PATH).
//
// Design: the order matters. The child joins the cgroup and its own session while still
// privileged, then drops privileges (groups, gid, uid; each checked, and verified after), and
// only then opens the log, so root never creates or follows a file in a user-writable place.
#include "shepherd/job_start.h"

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "exec/files.h"
#include "exec/output_rule.h"
#include "shepherd/container.h"

namespace rota::shepherd {

void FailStart(int error_fd, const std::string& message) {
  const char* p = message.data();
  std::size_t left = message.size();
  while (left > 0) {
    ssize_t n = write(error_fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  _exit(127);
}

void FailStartErrno(int error_fd, const std::string& what, int err) {
  FailStart(error_fd, exec::ErrnoMessage(what, err));
}

namespace {

[[noreturn]] void Fail(int error_fd, const std::string& message) { FailStart(error_fd, message); }
[[noreturn]] void FailErrno(int error_fd, const std::string& what, int err) { FailStartErrno(error_fd, what, err); }

void DropPrivileges(const exec::LaunchSpec& spec, int error_fd) {
  if (spec.uid == geteuid()) return;
  std::string who = "cannot switch to user " + spec.user + " (uid " + std::to_string(spec.uid) + ")";
  if (setgroups(spec.groups.size(), spec.groups.data()) != 0) FailErrno(error_fd, who + ": setgroups", errno);
  if (setgid(spec.gid) != 0) FailErrno(error_fd, who + ": setgid", errno);
  if (setuid(spec.uid) != 0) FailErrno(error_fd, who + ": setuid", errno);
  if (getuid() != spec.uid || geteuid() != spec.uid || getgid() != spec.gid || getegid() != spec.gid) {
    Fail(error_fd, who + ": ids did not change");
  }
  if (spec.uid != 0 && setuid(0) == 0) Fail(error_fd, who + ": root privileges could be regained");
}

void ResetSignals() {
  struct sigaction dfl;
  std::memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) sigaction(sig, &dfl, nullptr);  // some refuse: fine
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
}

// execve's view of `strings`, null-terminated; valid while `strings` lives.
std::vector<char*> Pointers(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (const std::string& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

bool KeepSearching(int err) {
  return err == ENOENT || err == ENOTDIR || err == EACCES || err == ELOOP || err == ENAMETOOLONG ||
         err == ESTALE || err == ENODEV || err == ETIMEDOUT;
}

}  // namespace

PreparedJob::PreparedJob(const exec::JobSpec& spec) : spec_(spec) {
  const exec::LaunchSpec& l = spec_.launch;
  for (const auto& [key, value] : l.env) env_strings_.push_back(key + "=" + value);
  argv_ = Pointers(l.argv);
  envp_ = Pointers(env_strings_);

  const std::string& name = l.argv.empty() ? std::string() : l.argv[0];
  if (name.find('/') != std::string::npos) {
    candidates_.push_back(name);
    return;
  }
  auto path = l.env.find("PATH");
  std::string dirs = path == l.env.end() ? "/bin:/usr/bin" : path->second;
  std::size_t start = 0;
  for (;;) {
    std::size_t colon = dirs.find(':', start);
    std::string dir = dirs.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    candidates_.push_back(dir.empty() ? name : dir + "/" + name);
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
}

namespace {

// The job's own resource limits, once it runs as its user (lowering one's limits needs no
// privilege): not root's, and not rotad's raised open-file limit.
void SetLimits(const exec::LaunchSpec& spec, int error_fd) {
  auto set = [&](int resource, std::int64_t value, const char* what) {
    if (value <= 0) return;
    rlimit r{static_cast<rlim_t>(value), static_cast<rlim_t>(value)};
    rlimit now{};
    if (getrlimit(resource, &now) == 0 && now.rlim_max != RLIM_INFINITY && now.rlim_max < r.rlim_max) {
      r.rlim_cur = r.rlim_max = now.rlim_max;  // never above what it may have
    }
    if (setrlimit(resource, &r) != 0) FailErrno(error_fd, std::string("cannot limit the job's ") + what, errno);
  };
  if (!spec.processes_in_cgroup) set(RLIMIT_NPROC, spec.max_processes, "processes");
  set(RLIMIT_NOFILE, spec.max_open_files, "open files");
}

// Standard input from /dev/null, output and error appended to the job's log, opened as its user.
void OpenLog(const exec::LaunchSpec& spec, int error_fd) {
  // O_NONBLOCK: a named pipe there must not hold the job until someone reads it (without a reader
  // the open fails with ENXIO; with one it returns, and is refused below).
  int out =
      open(spec.output.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0644);
  if (out < 0 && errno == ENXIO)
    Fail(error_fd, "the output " + spec.output + " is a named pipe or socket; " + exec::kOutputKinds);
  if (out < 0) FailErrno(error_fd, "cannot open output " + spec.output, errno);
  // What another user may have laid there first (exec/output_rule.h).
  struct stat st {};
  if (fstat(out, &st) != 0) FailErrno(error_fd, "cannot check output " + spec.output, errno);
  switch (const exec::OutputFault fault = exec::JudgeOutput(st, spec.uid)) {
    case exec::OutputFault::kNone:
      break;
    case exec::OutputFault::kOthersFile:
      Fail(error_fd, "the output file " + spec.output + " belongs to uid " + std::to_string(st.st_uid) +
                         ", not to " + spec.user +
                         ": someone else made it; remove it or choose another --output");
    case exec::OutputFault::kWorldWritable:
      Fail(error_fd, "the output file " + spec.output +
                         " is writable by everyone; chmod o-w it or choose another --output");
    default:
      Fail(error_fd,
           "the output " + spec.output + " " + exec::OutputFaultWords(fault) + "; " + exec::kOutputKinds);
  }
  const int flags = fcntl(out, F_GETFL);
  if (flags < 0 || fcntl(out, F_SETFL, flags & ~O_NONBLOCK) != 0) FailErrno(error_fd, "fcntl", errno);
  int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (in < 0) FailErrno(error_fd, "cannot open /dev/null", errno);
  if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0) FailErrno(error_fd, "dup2", errno);
  if (in > 2) close(in);
  if (out > 2) close(out);
}

}  // namespace

void RunJobChild(const PreparedJob& job, int error_fd, bool join_cgroup, std::optional<int> nice) {
  // Lowering one's priority is always allowed: the job never keeps the standby's boost.
  if (nice && setpriority(PRIO_PROCESS, 0, *nice) != 0) {
    FailErrno(error_fd, "cannot set the job's nice value", errno);
  }
  const exec::LaunchSpec& spec = job.spec().launch;
  const std::string& cgroup = job.spec().cgroup;
  if (!cgroup.empty() && join_cgroup) {
    if (Status s = exec::WriteControlFile(cgroup + "/cgroup.procs", "0"); !s.ok()) {
      Fail(error_fd, "cannot join cgroup " + cgroup + ": " + s.message());
    }
  }
  if (setsid() < 0) FailErrno(error_fd, "cannot start a session", errno);
  // Podman and Docker are started by root, which tells them the user (shepherd/container.h):
  // until then the child reaches files only with the user's rights.
  const bool root_launch = exec::StartedByRoot(spec.container.runtime) && geteuid() == 0;
  if (root_launch) {
    BecomeUserForFiles(spec, error_fd);
  } else {
    DropPrivileges(spec, error_fd);
    SetLimits(spec, error_fd);
  }
  if (chdir(spec.cwd.c_str()) != 0) FailErrno(error_fd, "cannot chdir to " + spec.cwd, errno);
  umask(022);
  // An attached job's 0, 1 and 2 are the shepherd's own: its owner's terminal (LaunchSpec::attached).
  if (!spec.attached) OpenLog(spec, error_fd);

  if (spec.container.runtime != exec::ContainerRuntime::kNone) {
    const ContainerExec run = PrepareContainer(spec, error_fd, root_launch);
    std::vector<std::string> env;
    for (const auto& [key, value] : run.env) env.push_back(key + "=" + value);
    std::vector<char*> argv_ptrs = Pointers(run.argv), env_ptrs = Pointers(env);
    ResetSignals();
    execve(run.argv[0].c_str(), argv_ptrs.data(), env_ptrs.data());
    Fail(error_fd, exec::ErrnoMessage("cannot run the container runtime " + run.argv[0], errno));
  }
  ResetSignals();
  int err = ENOENT;
  bool denied = false;
  for (const std::string& candidate : job.candidates()) {
    execve(candidate.c_str(), job.argv(), job.envp());
    err = errno;
    if (err == EACCES) denied = true;
    if (!KeepSearching(err)) break;
  }
  if (KeepSearching(err)) err = denied ? EACCES : ENOENT;
  std::string message = exec::ErrnoMessage("cannot run '" + spec.argv[0] + "'", err);
  std::string line = "rota: " + message + "\n";  // also in the job's log, for its owner
  if (write(2, line.data(), line.size()) < 0) {
    // nothing more to do: the pipe still carries the reason
  }
  Fail(error_fd, message);
}

}  // namespace rota::shepherd
