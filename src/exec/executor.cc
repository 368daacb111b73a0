// Tested by executor_test.cc (real jobs under the real rota-shepherd).
//
// Design: the executor only prepares and collects; everything that happens while the job runs
// is the shepherd's (src/shepherd). The shepherd is started with posix_spawn, which is safe in a
// multithreaded daemon (no code of ours runs between fork and exec), in a new session, with
// /dev/null as stdio, every other fd closed, default signal dispositions, and the forwarding
// signals blocked so that a Signal() right after Launch() cannot kill the shepherd before it has
// set up its signalfd. A shepherd stays our unreaped child until Collect, so its pid cannot be
// reused meanwhile; after a restart pids are checked against /proc/<pid>/cmdline through a pidfd.
#include "exec/executor.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <utility>

#include "exec/cgroup.h"
#include "exec/files.h"
#include "exec/device_filter.h"
#include "exec/process.h"
#include "exec/procfs.h"
#include "exec/spec.h"
#include "exec/spec_lock.h"

extern char** environ;

namespace rota::exec {
namespace {


Status CheckSpec(const LaunchSpec& spec) {
  if (spec.job_id <= 0) return InvalidArgument("job id must be positive");
  if (spec.argv.empty() || spec.argv[0].empty()) return InvalidArgument("empty command");
  if (spec.cwd.empty() || spec.cwd[0] != '/') return InvalidArgument("working directory must be absolute: '" + spec.cwd + "'");
  if (spec.attached) {
    if (spec.container.runtime == ContainerRuntime::kNone) return InvalidArgument("only a container job is attached");
    for (int fd : spec.terminal) {
      if (fd < 0) return InvalidArgument("an attached job needs its terminal's three descriptors");
    }
  } else if (spec.output.empty() || spec.output[0] != '/') {
    return InvalidArgument("output must be an absolute path: '" + spec.output + "'");
  }
  if (spec.memory_limit_bytes < 0) return InvalidArgument("negative memory limit");
  if (spec.max_processes < 0 || spec.max_open_files < 0 || spec.cpu_weight < 0 || spec.cpu_weight > 10000) {
    return InvalidArgument("limits out of range");
  }
  return Status::Ok();
}

Status PrepareRunDir(const std::string& dir) {
  if (dir.empty() || dir[0] != '/') return InvalidArgument("run_dir must be absolute: '" + dir + "'");
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return Internal(ErrnoMessage("cannot create " + dir, errno));
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0) return Internal(ErrnoMessage("cannot stat " + dir, errno));
  if (!S_ISDIR(st.st_mode)) return FailedPrecondition(dir + " is not a directory");
  if (st.st_uid != geteuid()) return FailedPrecondition(dir + " is owned by uid " + std::to_string(st.st_uid));
  if ((st.st_mode & 07777) != 0700 && chmod(dir.c_str(), 0700) != 0) {
    return Internal(ErrnoMessage("cannot chmod 0700 " + dir, errno));
  }
  return Status::Ok();
}

// posix_spawn's attributes and file actions, destroyed on scope exit.
struct SpawnSetup {
  posix_spawnattr_t attr;
  posix_spawn_file_actions_t actions;
  SpawnSetup() {
    posix_spawnattr_init(&attr);
    posix_spawn_file_actions_init(&actions);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
};

// `standby_fd` >= 0 becomes the shepherd's descriptor 3 (a standby reads its job there);
// `stdio` (an attached job's terminal), when given, its 0, 1 and 2 instead of /dev/null.
StatusOr<pid_t> SpawnShepherd(const std::vector<std::string>& args, int standby_fd = -1,
                              const int* stdio = nullptr) {
  SpawnSetup s;
  sigset_t defaults, blocked;
  sigemptyset(&defaults);
  for (int sig = 1; sig < NSIG; ++sig) sigaddset(&defaults, sig);  // glibc-internal ones refuse
  sigemptyset(&blocked);
  for (int sig : {ForwardSignal(), SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2}) sigaddset(&blocked, sig);
  int err = posix_spawnattr_setflags(&s.attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  if (err == 0) err = posix_spawnattr_setsigmask(&s.attr, &blocked);
  if (err == 0) err = posix_spawnattr_setsigdefault(&s.attr, &defaults);
  if (stdio != nullptr) {  // rotad's own 0, 1, 2 are open: the passed descriptors are above them
    for (int i = 0; i < 3 && err == 0; ++i) err = posix_spawn_file_actions_adddup2(&s.actions, stdio[i], i);
  } else {
    if (err == 0) err = posix_spawn_file_actions_addopen(&s.actions, 0, "/dev/null", O_RDONLY, 0);
    if (err == 0) err = posix_spawn_file_actions_addopen(&s.actions, 1, "/dev/null", O_WRONLY, 0);
    if (err == 0) err = posix_spawn_file_actions_adddup2(&s.actions, 1, 2);
  }
  if (err == 0 && standby_fd >= 0) err = posix_spawn_file_actions_adddup2(&s.actions, standby_fd, 3);
  if (err == 0) err = posix_spawn_file_actions_addclosefrom_np(&s.actions, standby_fd >= 0 ? 4 : 3);
  if (err != 0) return Internal(ErrnoMessage("cannot prepare posix_spawn", err));
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  err = posix_spawn(&pid, argv[0], &s.actions, &s.attr, argv.data(), environ);
  if (err != 0) return Internal(ErrnoMessage("cannot start " + args[0], err));
  return pid;
}

// 16 hex digits from the kernel's random source: unique per launch, also across daemon restarts.
std::string NewToken() {
  unsigned char bytes[8] = {};
  ssize_t got;
  do {
    got = getrandom(bytes, sizeof bytes, 0);
  } while (got < 0 && errno == EINTR);
  static unsigned launches = 0;
  if (got != static_cast<ssize_t>(sizeof bytes)) {  // cannot happen on Linux >= 3.17; pid and count then
    std::uint64_t v = (static_cast<std::uint64_t>(getpid()) << 32) | ++launches;
    for (unsigned char& b : bytes) {
      b = static_cast<unsigned char>(v);
      v >>= 8;
    }
  }
  static const char kHex[] = "0123456789abcdef";
  std::string token;
  for (unsigned char b : bytes) {
    token += kHex[b >> 4];
    token += kHex[b & 15];
  }
  return token;
}

std::string DescribeWaitStatus(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "was killed by signal " + std::to_string(WTERMSIG(status));
  return "ended with wait status " + std::to_string(status);
}

// A shepherd runs as the executor does (root, in system mode): a process of a user's with a copied
// command line does not.
bool RunsAsShepherd(pid_t pid) {
  StatusOr<ProcessIdentity> who = ReadProcess(pid);
  return who.ok() && who->uid == geteuid() && who->euid == geteuid();
}

}  // namespace

const char* ExitKindName(ExitInfo::Kind kind) {
  switch (kind) {
    case ExitInfo::Kind::kExited: return "exited";
    case ExitInfo::Kind::kSignalled: return "signalled";
    case ExitInfo::Kind::kStartFailed: return "start_failed";
    case ExitInfo::Kind::kVanished: return "vanished";
  }
  return "vanished";
}

Executor::Executor(const ExecutorOptions& options) : options_(options) {}
// Last chance for cgroups whose processes were still dying when they were collected.
Executor::~Executor() {
  for (Standby& standby : standbys_) DropStandby(standby);
  RemoveEndedCgroups();
  for (const std::string& cgroup : stale_cgroups_) {
    (void)exec::KillCgroup(cgroup);
    WaitCgroupEmpty(cgroup, 1000);
    (void)exec::RemoveCgroup(cgroup);
  }
}

StatusOr<std::unique_ptr<Executor>> Executor::Create(const ExecutorOptions& options) {
  if (access(options.shepherd_path.c_str(), X_OK) != 0) {
    return InvalidArgument(ErrnoMessage("cannot execute shepherd " + options.shepherd_path, errno));
  }
  if (Status s = PrepareRunDir(options.run_dir); !s.ok()) return s;
  std::unique_ptr<Executor> executor(new Executor(options));
  if (options.use_cgroups) {
    CgroupBase base = SetUpCgroupBase(options.cgroup_name);
    executor->base_ = base.path;
    executor->memory_ = base.memory;
    executor->pids_ = base.pids;
    executor->cpu_ = base.cpu;
    executor->device_filter_ = !base.path.empty() && DeviceFilterAvailable();
    executor->note_ = base.note;
  } else {
    executor->note_ = "cgroups disabled by configuration: jobs are tracked by process group";
  }
  return executor;
}

std::string Executor::JobCgroup(JobId job) const {
  return base_.empty() ? "" : JobCgroupPath(base_, job);
}

void Executor::RetryStaleCgroups() {
  std::vector<std::string> still;
  for (const std::string& cgroup : stale_cgroups_) {
    (void)KillCgroup(cgroup);
    if (!exec::RemoveCgroup(cgroup).ok()) still.push_back(cgroup);
  }
  stale_cgroups_ = std::move(still);
}

void Executor::RemoveBaseIfUnused() {
  RemoveEndedCgroups();
  if (!base_.empty()) rmdir(base_.c_str());  // fails (EBUSY) while job cgroups remain: then it is still in use
}

int Executor::RemoveLeftoverCgroups(const std::function<bool(JobId)>& in_use) {
  // The base is this daemon's alone (named after it, SetUpCgroupBase): what is in it is ours.
  if (base_.empty()) return 0;
  int removed = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(base_, ec)) {
    const std::string name = entry.path().filename().string();
    const JobId id = JobOfCgroupName(name);
    if (id == 0 || !entry.is_directory(ec) || in_use(id)) continue;
    StatusOr<bool> populated = CgroupPopulated(entry.path().string());
    if (populated.ok() && !*populated && exec::RemoveCgroup(entry.path().string()).ok()) ++removed;
  }
  return removed;
}

StatusOr<Launched> Executor::Launch(const LaunchSpec& spec) {
  if (Status s = CheckSpec(spec); !s.ok()) return s;
  RetryStaleCgroups();
  JobSpec job{spec, "", NewToken()};
  if (!base_.empty()) {
    StatusOr<std::string> cgroup = NewJobCgroup(
        spec.job_id, {memory_, spec.memory_limit_bytes, pids_, spec.max_processes, cpu_, spec.cpu_weight},
        spec.deny_devices);
    if (!cgroup.ok()) return cgroup.status();
    job.cgroup = *cgroup;
    job.launch.processes_in_cgroup = pids_ && spec.max_processes > 0;
  }
  auto undo = [&] {
    (void)RemoveFile(SpecPath(options_.run_dir, spec.job_id));
    if (!job.cgroup.empty()) (void)exec::RemoveCgroup(job.cgroup);
  };
  std::string spec_path = SpecPath(options_.run_dir, spec.job_id);
  if (Status s = RemoveFile(ResultPath(options_.run_dir, spec.job_id)); !s.ok()) {
    undo();
    return s;
  }
  if (Status s = WriteFileAtomic(spec_path, SpecToJson(job), 0600); !s.ok()) {
    undo();
    return s;
  }
  Launched launched;
  // A standby's descriptors are set: an attached job's shepherd is started with its terminal.
  if (!spec.attached && HandToStandby(spec.job_id, job.token, &launched)) {
    children_.insert(launched.pid);
    shepherds_[spec.job_id] = launched.pid;
    launched.cgroup = job.cgroup;
    return launched;
  }
  StatusOr<pid_t> pid = SpawnShepherd(ShepherdArgs(options_.shepherd_path, spec.job_id, spec_path, options_.run_dir, job.token),
                                      -1, spec.attached ? spec.terminal : nullptr);
  if (!pid.ok()) {
    undo();
    return pid.status();
  }
  StatusOr<int> pidfd = OpenPidfd(*pid);
  if (!pidfd.ok()) {  // cannot happen for an unreaped child short of fd exhaustion
    kill(*pid, SIGKILL);
    while (waitpid(*pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    undo();
    return Internal("cannot watch the shepherd: " + pidfd.status().message());
  }
  children_.insert(*pid);
  shepherds_[spec.job_id] = *pid;
  return Launched{*pid, *pidfd, job.cgroup};
}

Status Executor::PrepareStandbys(std::size_t count) {
  if (standby_failed_) return FailedPrecondition("no standby shepherds: starting one failed before");
  while (standbys_.size() < count) {
    Status s = StartStandby();
    if (!s.ok()) {
      standby_failed_ = true;
      return s;
    }
  }
  return Status::Ok();
}

Status Executor::StartStandby() {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    return Internal(ErrnoMessage("cannot create a socket pair for a standby shepherd", errno));
  }
  UniqueFd ours(sv[0]);
  // Its end goes to descriptor 3 through posix_spawn's dup2; it must not already be 3 (a dup2
  // onto itself would keep close-on-exec).
  UniqueFd theirs(fcntl(sv[1], F_DUPFD_CLOEXEC, 10));
  close(sv[1]);
  if (theirs.get() < 0) return Internal(ErrnoMessage("cannot duplicate a descriptor", errno));
  StatusOr<pid_t> pid = SpawnShepherd(StandbyShepherdArgs(options_.shepherd_path, options_.run_dir), theirs.get());
  if (!pid.ok()) return pid.status();
  StatusOr<int> pidfd = OpenPidfd(*pid);
  if (!pidfd.ok()) {  // fd exhaustion: the standby gets end of file and exits
    close(ours.release());
    while (waitpid(*pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    return pidfd.status();
  }
  standbys_.push_back({*pid, *pidfd, ours.release()});
  return Status::Ok();
}

bool Executor::HandToStandby(JobId job, const std::string& token, Launched* launched) {
  std::string line = std::to_string(job) + " " + token + "\n";
  // sendmsg rather than send: the daemon's only sendmsg, so tests can stop rotad right there
  // (tests/daemon/test_restart.py).
  iovec iov{line.data(), line.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  while (!standbys_.empty()) {
    Standby standby = standbys_.back();
    standbys_.pop_back();
    ssize_t sent;
    do {
      sent = sendmsg(standby.socket, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    } while (sent < 0 && errno == EINTR);
    if (sent != static_cast<ssize_t>(line.size())) {  // it died (EPIPE): try the next
      DropStandby(standby);
      continue;
    }
    launched->pid = standby.pid;
    launched->pidfd = standby.pidfd;
    launched->note_fd = standby.socket;  // kEndedNote comes back on it
    return true;
  }
  return false;
}

void Executor::DropStandby(Standby& standby) {
  close(standby.socket);
  kill(standby.pid, SIGKILL);  // waiting for its job: nothing of anyone's is lost
  while (waitpid(standby.pid, nullptr, 0) < 0 && errno == EINTR) {
  }
  close(standby.pidfd);
  standby = {};
}

StatusOr<FoundLaunch> Executor::FindLaunch(JobId job) {
  const std::string spec_path = SpecPath(options_.run_dir, job);
  FoundLaunch found;
  UniqueFd fd(open(spec_path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW));
  if (fd.get() < 0) {
    if (errno != ENOENT) return Internal(ErrnoMessage("cannot open " + spec_path, errno));
    // No spec, yet the job's cgroup holds processes: a launch withdrawn (its spec removed) whose
    // stop never came, the daemon having died between the two (Withdraw, then the SIGKILL). The
    // job never started as far as the store goes: what runs of it is killed, or it would run on
    // unrecorded and block every new launch of the job.
    const std::string cgroup = JobCgroup(job);
    StatusOr<bool> populated = cgroup.empty() ? StatusOr<bool>(false) : CgroupPopulated(cgroup);
    if (populated.ok() && *populated) {
      (void)KillCgroup(cgroup);
      WaitCgroupEmpty(cgroup, 1000);
      found.withdrawn = true;
    }
    return found;
  }
  StatusOr<std::string> text = ReadFd(fd.get(), spec_path);
  if (text.ok()) {
    StatusOr<JobSpec> spec = SpecFromJson(*text);
    if (spec.ok()) found.note = spec->launch.note;
  }
  // Either a shepherd holds the lock, or we take it; a shepherd can take it between our two
  // questions, hence the few rounds.
  bool locked = false;
  for (int round = 0; round < 3 && !locked; ++round) {
    StatusOr<pid_t> holder = SpecLockHolder(fd.get(), spec_path);
    if (!holder.ok()) return holder.status();
    if (*holder > 0) {
      found.state = FoundLaunch::State::kRunning;
      found.pid = *holder;
      return found;
    }
    StatusOr<bool> got = TryLockSpec(fd.get(), spec_path);
    if (!got.ok()) return got.status();
    locked = *got;
  }
  if (!locked) return Internal("the lock on " + spec_path + " keeps changing hands");
  // Holding the lock: no shepherd runs this launch, and none can start it any more.
  const std::string cgroup = JobCgroup(job);
  StatusOr<bool> populated = cgroup.empty() ? StatusOr<bool>(false) : CgroupPopulated(cgroup);
  if (access(ResultPath(options_.run_dir, job).c_str(), F_OK) == 0 || (populated.ok() && *populated)) {
    found.state = FoundLaunch::State::kEnded;  // Collect reads the result or kills the leftovers
    return found;
  }
  // Unlinked while locked: a shepherd that opened it already sees st_nlink == 0 once it gets the
  // lock; one that has not opened it yet finds no file.
  if (Status s = RemoveFile(spec_path); !s.ok()) return s;
  if (!cgroup.empty()) (void)exec::RemoveCgroup(cgroup);
  found.withdrawn = true;
  return found;
}

StatusOr<Launched> Executor::Adopt(JobId job, pid_t pid, Time started) {
  StatusOr<int> pidfd = OpenPidfd(pid);
  if (!pidfd.ok()) return pidfd.status();
  UniqueFd guard(*pidfd);
  std::string what = "process " + std::to_string(pid);
  const std::vector<std::string> cmdline = ReadCmdline(pid);
  bool ours = IsShepherdCommand(cmdline, options_.shepherd_path, job, options_.run_dir);
  if (!ours && IsStandbyShepherdCommand(cmdline, options_.shepherd_path, options_.run_dir)) {
    // Started as a standby: its job is the one whose spec it holds locked.
    const std::string spec_path = SpecPath(options_.run_dir, job);
    UniqueFd spec(open(spec_path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW));
    StatusOr<pid_t> holder = spec.get() >= 0 ? SpecLockHolder(spec.get(), spec_path) : StatusOr<pid_t>(0);
    ours = holder.ok() && *holder == pid;
  }
  if (!ours) return NotFound(what + " is not the shepherd of job " + std::to_string(job));
  // Shepherds run as this daemon does (root); and one that started after its job did is a
  // process that took the pid since (a start time is one process's for good).
  if (!RunsAsShepherd(pid)) {
    return NotFound(what + " does not run as rota-shepherd does (uid " + std::to_string(geteuid()) + ")");
  }
  if (started > 0) {
    StatusOr<Time> at = ProcessStartedAt(pid);
    if (at.ok() && *at > started + kStartSlack) {
      return NotFound(what + " started after job " + std::to_string(job) + " did: it is not its shepherd");
    }
  }
  // The pidfd was opened before /proc was read: if it is still running, the command line read
  // was its own and not that of a process that reused the pid.
  if (PidfdExited(guard.get())) return NotFound(what + " has exited");
  std::string cgroup = JobCgroup(job);
  if (!cgroup.empty() && access(cgroup.c_str(), F_OK) != 0) cgroup.clear();
  shepherds_[job] = pid;
  return Launched{pid, guard.release(), cgroup};
}

Status Executor::Signal(pid_t shepherd, int signo) {
  if (signo < 1 || signo >= NSIG) return InvalidArgument("bad signal number " + std::to_string(signo));
  StatusOr<int> pidfd = OpenPidfd(shepherd);
  if (!pidfd.ok()) return pidfd.status().code() == StatusCode::kNotFound ? Status::Ok() : pidfd.status();
  UniqueFd guard(*pidfd);
  // A child of ours is known to be a shepherd; others are checked against pid reuse. (Right
  // after posix_spawn returns, the exec may not have set up the new command line yet.)
  if (children_.count(shepherd) == 0 &&
      (!IsShepherdCommand(ReadCmdline(shepherd), options_.shepherd_path, 0, options_.run_dir) ||
       !RunsAsShepherd(shepherd))) {
    return Status::Ok();  // exited (a zombie has no command line) or the pid was reused
  }
  Status s = PidfdQueueSignal(guard.get(), ForwardSignal(), signo);
  return s.code() == StatusCode::kNotFound ? Status::Ok() : s;
}

ExitInfo Executor::Collect(JobId job, pid_t shepherd) {
  ExitInfo info;
  info.kind = ExitInfo::Kind::kVanished;
  std::string shepherd_name = "rota-shepherd " + std::to_string(shepherd);
  int status = 0;
  pid_t reaped = 0;
  if (shepherd > 0) {
    do {
      reaped = waitpid(shepherd, &status, WNOHANG);
    } while (reaped < 0 && errno == EINTR);
  }
  const bool exiting = reaped == 0 && shepherd > 0;  // it sent kEndedNote and is on its way out
  StatusOr<std::string> text = ReadFile(ResultPath(options_.run_dir, job));
  if (text.ok()) {
    StatusOr<ExitInfo> parsed = ResultFromJson(*text);
    if (parsed.ok()) {
      info = *parsed;
    } else {
      info.reason = parsed.status().message();
    }
  } else if (exiting) {
    info.reason = shepherd_name + " is still running (Collect called before its pidfd was readable)";
  } else if (reaped > 0) {
    info.reason = shepherd_name + " " + DescribeWaitStatus(status) + " before recording the job's end";
  } else {
    info.reason = shepherd_name + " ended without recording the job's end (" + text.status().message() + ")";
  }
  if (exiting) return info;  // the shepherd and its cgroup are left to Reap
  children_.erase(shepherd);
  ForgetShepherd(job, shepherd);
  ClearJobCgroup(job);
  return info;
}

void Executor::Reap(JobId job, pid_t shepherd) {
  if (shepherd > 0 && children_.erase(shepherd)) {
    while (waitpid(shepherd, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  // The job may have been launched again since its end was collected (a requeue): the cgroup
  // is the new run's then, and killing what is in it would kill that run.
  if (!ForgetShepherd(job, shepherd)) return;
  ClearJobCgroup(job);
}

bool Executor::ForgetShepherd(JobId job, pid_t shepherd) {
  auto it = shepherds_.find(job);
  if (it == shepherds_.end()) return true;
  if (it->second != shepherd) return false;
  shepherds_.erase(it);
  return true;
}

void Executor::ClearJobCgroup(JobId job) {
  std::string cgroup = JobCgroup(job);
  if (cgroup.empty()) return;
  // What a vanished shepherd (or one that died in its last steps) left. Its shepherd emptied it
  // otherwise: then cgroup.kill, which takes the kernel's cgroup lock too, is not written.
  StatusOr<bool> populated = CgroupPopulated(cgroup);
  if (!populated.ok() && populated.status().code() == StatusCode::kNotFound) return;  // gone already
  if (!populated.ok() || *populated) (void)KillCgroup(cgroup);
  ended_cgroups_.insert(job);
}

void Executor::RemoveEndedCgroups() {
  for (JobId job : ended_cgroups_) {
    std::string cgroup = JobCgroup(job);
    if (!exec::RemoveCgroup(cgroup).ok()) stale_cgroups_.push_back(cgroup);
  }
  ended_cgroups_.clear();
  RetryStaleCgroups();
}

void Executor::Forget(JobId job) {
  const std::string result_path = ResultPath(options_.run_dir, job);
  (void)RemoveFile(result_path);
  (void)RemoveFile(result_path + ".tmp");
  (void)RemoveFile(SpecPath(options_.run_dir, job));
}

Status Executor::Withdraw(JobId job) { return RemoveFile(SpecPath(options_.run_dir, job)); }

StatusOr<std::string> Executor::CreateCgroup(JobId job, std::int64_t memory_limit_bytes,
                                              const std::vector<std::pair<unsigned, unsigned>>& deny_devices) {
  if (base_.empty()) return std::string();
  if (job <= 0) return InvalidArgument("job id must be positive");
  return NewJobCgroup(job, {memory_, memory_limit_bytes, false, 0, false, 0}, deny_devices);
}

StatusOr<std::string> Executor::NewJobCgroup(JobId job, const JobCgroupLimits& limits,
                                              const std::vector<std::pair<unsigned, unsigned>>& deny_devices) {
  StatusOr<std::string> cgroup = CreateJobCgroup(base_, job, limits);
  if (!cgroup.ok()) return cgroup;
  // Before any of the job's processes is in it: the other cards' device nodes are refused.
  if (device_filter_) {
    if (Status s = DenyDevices(*cgroup, deny_devices); !s.ok()) {
      (void)exec::RemoveCgroup(*cgroup);
      return s;
    }
  }
  KeepCgroup(job);
  return cgroup;
}

void Executor::KeepCgroup(JobId job) {
  ended_cgroups_.erase(job);
  std::erase(stale_cgroups_, JobCgroup(job));
}

Status Executor::MoveToCgroup(const std::string& cgroup, pid_t pid) { return exec::MoveToCgroup(cgroup, pid); }
Status Executor::KillCgroup(const std::string& cgroup) { return exec::KillCgroup(cgroup); }
Status Executor::RemoveCgroup(const std::string& cgroup) { return exec::RemoveCgroup(cgroup); }

}  // namespace rota::exec
