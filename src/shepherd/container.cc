// Tested by tests/daemon/test_containers.py (Podman, for real: users, mounts, signals, cancel)
// and src/exec/container_test.cc (the pure parts).
#include "shepherd/container.h"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "exec/container_argv.h"
#include "exec/files.h"
#include "shepherd/job_start.h"

namespace rota::shepherd {
namespace {

constexpr int kImageCheckMs = 30000;

std::vector<gid_t> root_groups;
gid_t root_egid = 0;

// Where NVIDIA's container toolkit writes CDI specs (nvidia-ctk cdi generate).
bool HasNvidiaCdiSpec() {
  for (const char* dir : {"/etc/cdi", "/var/run/cdi"}) {
    DIR* d = opendir(dir);
    if (d == nullptr) continue;
    bool found = false;
    while (dirent* e = readdir(d)) {
      if (std::string(e->d_name).starts_with("nvidia")) found = true;
    }
    closedir(d);
    if (found) return true;
  }
  return false;
}

// The mounts as the user reaches them: realpath with the user's rights (search permission on
// every directory on the way), optional ones that do not exist left out.
std::vector<exec::ContainerMount> Resolve(const exec::LaunchSpec& spec, int error_fd) {
  std::vector<exec::ContainerMount> wanted = {{spec.cwd, spec.cwd, false, true, false}};
  wanted.insert(wanted.end(), spec.container.mounts.begin(), spec.container.mounts.end());
  std::vector<exec::ContainerMount> out;
  for (exec::ContainerMount m : wanted) {
    char buf[PATH_MAX];
    if (realpath(m.source.c_str(), buf) == nullptr) {
      if (m.optional && errno == ENOENT) continue;
      FailStartErrno(error_fd, "cannot mount " + m.source + " in the container", errno);
    }
    m.source = buf;
    out.push_back(m);
  }
  return out;
}

// A user's mount moved up to its MountRoot, as root. The working directory (first) may then be
// mounted at its resolved path: `workdir` follows.
void MoveToRoots(std::vector<exec::ContainerMount>& mounts, std::string& workdir, int error_fd) {
  for (std::size_t i = 0; i < mounts.size(); ++i) {
    exec::ContainerMount& m = mounts[i];
    if (!m.users) continue;
    StatusOr<std::string> root = exec::MountRoot(m.source, [](const std::string& p, struct stat* st) {
      return lstat(p.c_str(), st);
    });
    if (!root.ok()) FailStart(error_fd, "cannot mount " + m.source + " in the container: " + root.status().message());
    const std::string below = m.source.substr(root->size());  // "" or "/exp1"
    m.source = *root;
    if (below.empty()) continue;
    if (m.target.ends_with(below) && m.target.size() > below.size()) {
      m.target.resize(m.target.size() - below.size());
    } else if (i == 0) {
      m.target = m.source;  // its unresolved path cannot be rebuilt: run in the resolved one
      workdir = m.source + below;
    } else {
      FailStart(error_fd, "cannot mount " + m.source + below + " at " + m.target + ": " + m.source + below +
                              " lies in a directory that others than root can change (" + *root +
                              " is the deepest safe one)");
    }
  }
}

void Dedup(std::vector<exec::ContainerMount>& mounts) {
  std::vector<exec::ContainerMount> out;
  for (const exec::ContainerMount& m : mounts) {
    const bool seen = std::any_of(out.begin(), out.end(), [&](const exec::ContainerMount& o) {
      return o.source == m.source && o.target == m.target;
    });
    if (!seen) out.push_back(m);
  }
  mounts = std::move(out);
}

// The job's limits for the runtime's --ulimit: open files as the job asked (else 1024, the
// usual), processes as this process may; never above the hard limits here.
void Limits(const exec::LaunchSpec& spec, exec::ContainerPlace& place) {
  rlimit r{};
  if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_max != RLIM_INFINITY) {
    const long long hard = static_cast<long long>(r.rlim_max);
    place.nofile_hard = hard;
    place.nofile_soft = std::min(hard, spec.max_open_files > 0 ? spec.max_open_files : 1024LL);
  }
  // Processes: this process's limit, but not above the kernel's pid_max, which the runtime's
  // monitor (conmon) lowers its own limit to; setting a higher one back in the container then
  // needs CAP_SYS_RESOURCE, which a root without it (some containers) lacks.
  if (getrlimit(RLIMIT_NPROC, &r) == 0 && r.rlim_max != RLIM_INFINITY) {
    long long hard = static_cast<long long>(r.rlim_max);
    long long soft = r.rlim_cur == RLIM_INFINITY ? hard : static_cast<long long>(r.rlim_cur);
    if (StatusOr<std::string> text = exec::ReadFile("/proc/sys/kernel/pid_max"); text.ok()) {
      const long long pid_max = std::atoll(text->c_str());
      if (pid_max > 0) {
        hard = std::min(hard, pid_max);
        soft = std::min(soft, pid_max);
      }
    }
    place.nproc_hard = hard;
    place.nproc_soft = soft;
  }
}

std::string EnvMemoryFile(const std::map<std::string, std::string>& env, int error_fd) {
  int fd = memfd_create("rota-env", 0);  // inherited by the runtime, which reads it by path
  if (fd < 0) FailStartErrno(error_fd, "cannot hold the container's environment", errno);
  const std::string text = exec::EnvFileText(env);
  std::size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) FailStartErrno(error_fd, "cannot hold the container's environment", errno);
    done += static_cast<std::size_t>(n);
  }
  return "/proc/self/fd/" + std::to_string(fd);
}

}  // namespace

void BecomeUserForFiles(const exec::LaunchSpec& spec, int error_fd) {
  const int n = getgroups(0, nullptr);
  root_groups.resize(static_cast<std::size_t>(std::max(n, 0)));
  if (n > 0 && getgroups(n, root_groups.data()) != n) FailStartErrno(error_fd, "getgroups", errno);
  root_egid = getegid();
  std::string who = "cannot act as user " + spec.user + " (uid " + std::to_string(spec.uid) + ")";
  if (setgroups(spec.groups.size(), spec.groups.data()) != 0) FailStartErrno(error_fd, who + ": setgroups", errno);
  if (setegid(spec.gid) != 0) FailStartErrno(error_fd, who + ": setegid", errno);
  if (seteuid(spec.uid) != 0) FailStartErrno(error_fd, who + ": seteuid", errno);
}

void BackToRoot(int error_fd) {
  if (seteuid(0) != 0) FailStartErrno(error_fd, "cannot return to root", errno);
  if (setegid(root_egid) != 0) FailStartErrno(error_fd, "cannot return to root's group", errno);
  if (setgroups(root_groups.size(), root_groups.data()) != 0) FailStartErrno(error_fd, "cannot return to root's groups", errno);
}

ContainerExec PrepareContainer(const exec::LaunchSpec& spec, int error_fd, bool root_launch) {
  const exec::ContainerSpec& c = spec.container;
  exec::ContainerPlace place;
  place.mounts = Resolve(spec, error_fd);
  std::string workdir = spec.cwd;
  if (root_launch) {
    BackToRoot(error_fd);
    MoveToRoots(place.mounts, workdir, error_fd);
  }
  Dedup(place.mounts);
  // Only what the admins put on this machine runs (--pull never): a missing image is said at
  // once, not as the runtime's exit status 125.
  if (const std::vector<std::string> check = exec::ContainerImageCheckArgv(c); !check.empty()) {
    const int status = RunRuntime(check, kImageCheckMs);
    if (status == 127) FailStart(error_fd, "cannot run the container runtime " + c.program);
    if (status != 0) {
      FailStart(error_fd, "the image " + c.image + " is not on this machine" +
                              (status < 0 ? std::string(" (") + exec::ContainerRuntimeName(c.runtime) +
                                                " did not answer in time)"
                                          : "; the admins load images (podman load, podman pull)"));
    }
  }
  place.cdi = c.gpus == exec::ContainerGpus::kCdi || (c.gpus == exec::ContainerGpus::kAuto && HasNvidiaCdiSpec());
  for (const std::string& node : exec::GpuDeviceNodes(c.gpu_minors)) {
    struct stat st {};
    if (stat(node.c_str(), &st) == 0) place.device_nodes.push_back(node);
  }
  Limits(spec, place);
  place.input = spec.attached;
  place.tty = spec.attached && isatty(0) == 1;
  const std::map<std::string, std::string> env = exec::ContainerEnv(spec.env, place.mounts);
  ContainerExec out;
  if (exec::StartedByRoot(c.runtime)) {
    place.env_file = EnvMemoryFile(env, error_fd);
    out.env = {{"PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}, {"LANG", "C.UTF-8"}};
    // A runtime started by the user (rotad not root): its own configuration and run directory.
    for (const char* name : {"HOME", "XDG_RUNTIME_DIR"}) {
      if (auto it = spec.env.find(name); !root_launch && it != spec.env.end()) out.env[name] = it->second;
    }
    if (root_launch) out.env["HOME"] = "/root";
  } else {
    out.env = exec::ApptainerProcessEnv(env);
  }
  exec::LaunchSpec in_place = spec;
  in_place.cwd = workdir;
  out.argv = exec::ContainerRunArgv(in_place, place);
  return out;
}

int RunRuntime(const std::vector<std::string>& argv, int timeout_ms) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  char path[] = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  char home[] = "HOME=/root";
  char* envp[] = {path, home, nullptr};
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null >= 0) {
      dup2(null, 0);
      dup2(null, 1);
      dup2(null, 2);
    }
    execve(args[0], args.data(), envp);
    _exit(127);
  }
  for (int waited = 0;; waited += 20) {
    int status = 0;
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (r < 0 && errno != EINTR) return -1;
    if (waited >= timeout_ms) break;
    poll(nullptr, 0, 20);
  }
  kill(pid, SIGKILL);
  while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
  return -1;
}

bool RemoveContainer(const exec::ContainerSpec& container, int timeout_ms) {
  const std::vector<std::string> argv = exec::ContainerRemoveArgv(container);
  return argv.empty() || RunRuntime(argv, timeout_ms) == 0;
}

}  // namespace rota::shepherd
