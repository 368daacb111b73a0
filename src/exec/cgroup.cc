// Tested by cgroup_test.cc (parsers always; the rest when a writable cgroup v2 exists).
//
// Design: the base is chosen once, at daemon start. The "no internal processes" rule of cgroup
// v2 forbids enabling controllers for children of a cgroup that holds processes, so a daemon
// started in its own (delegated) cgroup moves itself into a "daemon" leaf first. Failing to
// enable the memory controller only disables memory limits.
#include "exec/cgroup.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <sstream>
#include <thread>

#include "exec/files.h"

namespace rota::exec {
namespace {

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string Unescape(std::string_view s) {
  auto octal = [](char c) { return c >= '0' && c <= '7'; };
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && octal(s[i + 1]) && octal(s[i + 2]) && octal(s[i + 3])) {
      out.push_back(static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0')));
      i += 3;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

bool HasWord(const std::string& text, const std::string& word) {
  std::istringstream in(text);
  std::string w;
  while (in >> w) {
    if (w == word) return true;
  }
  return false;
}

std::string Parent(const std::string& path) {
  std::size_t slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

std::string Join(const std::string& mount, const std::string& cgroup) {
  return cgroup == "/" ? mount : mount + cgroup;
}

CgroupBase NoCgroups(const std::string& why) {
  return {"", false, false, false, "no writable cgroup v2 (" + why + "): jobs are tracked by process group"};
}

Status MakeDir(const std::string& path) {
  if (mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
    return Internal(ErrnoMessage("mkdir " + path, errno));
  }
  return Status::Ok();
}

// Makes the memory controller available to the children of `dir`.
Status EnableController(const std::string& dir, const std::string& name) {
  StatusOr<std::string> controllers = ReadFile(dir + "/cgroup.controllers");
  if (!controllers.ok() || !HasWord(*controllers, name)) return FailedPrecondition("controller not available");
  StatusOr<std::string> enabled = ReadFile(dir + "/cgroup.subtree_control");
  if (enabled.ok() && HasWord(*enabled, name)) return Status::Ok();
  return WriteControlFile(dir + "/cgroup.subtree_control", "+" + name);
}

Status EnableMemory(const std::string& dir) { return EnableController(dir, "memory"); }

}  // namespace

std::optional<Cgroup2Mount> FindCgroup2Mount(std::string_view mountinfo) {
  std::istringstream in{std::string(mountinfo)};
  std::string line;
  while (std::getline(in, line)) {
    // id parent major:minor root mount-point options [optional fields] - fstype source super
    std::istringstream fields(line);
    std::string id, parent, dev, root, mount_point, word;
    if (!(fields >> id >> parent >> dev >> root >> mount_point)) continue;
    while (fields >> word && word != "-") {
    }
    std::string fstype;
    if (word == "-" && fields >> fstype && fstype == "cgroup2") {
      return Cgroup2Mount{Unescape(mount_point), Unescape(root)};
    }
  }
  return std::nullopt;
}

std::optional<std::string> ParseOwnCgroup(std::string_view proc_cgroup) {
  std::istringstream in{std::string(proc_cgroup)};
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("0::", 0) == 0) {
      std::string path = line.substr(3);
      if (path.empty() || path[0] != '/') return std::nullopt;
      // " (deleted)" is appended for a removed cgroup; treat it as unusable.
      if (path.find(" (deleted)") != std::string::npos) return std::nullopt;
      return path;
    }
  }
  return std::nullopt;
}

CgroupBase SetUpCgroupBase(const std::string& name) {
  StatusOr<std::string> mountinfo = ReadFile("/proc/self/mountinfo");
  if (!mountinfo.ok()) return NoCgroups(mountinfo.status().message());
  std::optional<Cgroup2Mount> mount = FindCgroup2Mount(*mountinfo);
  if (!mount) return NoCgroups("no cgroup2 mount in /proc/self/mountinfo");
  StatusOr<std::string> self = ReadFile("/proc/self/cgroup");
  if (!self.ok()) return NoCgroups(self.status().message());
  std::optional<std::string> own = ParseOwnCgroup(*self);
  if (!own) return NoCgroups("no cgroup v2 entry in /proc/self/cgroup");
  // A bind mount of a subtree: paths in /proc/self/cgroup are relative to the hierarchy's root.
  if (mount->root != "/") {
    if (own->rfind(mount->root, 0) != 0) return NoCgroups("own cgroup " + *own + " is outside the mount");
    *own = own->substr(mount->root.size());
    if (own->empty()) *own = "/";
  }

  std::string base;
  if (*own == "/") {
    base = mount->mount_point + "/" + name;
  } else {
    // A cgroup of its own (a service's, with Delegate=yes): the daemon moves into <own>/daemon,
    // as no process may stay in a cgroup that hands controllers to its children, and its jobs
    // go under <own>/<name>, so that two daemons started from one cgroup keep apart.
    const bool moved = own->size() > 7 && own->substr(own->size() - 7) == "/daemon";  // by an earlier start
    const std::string mine = Join(mount->mount_point, moved ? Parent(*own) : *own);
    if (!moved) {
      std::string leaf = mine + "/daemon";
      if (Status s = MakeDir(leaf); !s.ok()) return NoCgroups(s.message());
      if (Status s = WriteControlFile(leaf + "/cgroup.procs", std::to_string(getpid())); !s.ok()) {
        rmdir(leaf.c_str());
        return NoCgroups(s.message());
      }
    }
    // For the base's own memory controller below. It fails where other processes stay in
    // <own> (a shell that started this daemon): then jobs get no memory limit.
    (void)EnableMemory(mine);
    (void)EnableController(mine, "pids");
    (void)EnableController(mine, "cpu");
    base = mine + "/" + name;
  }
  if (Status s = MakeDir(base); !s.ok()) return NoCgroups(s.message());

  // Can we create job cgroups here? (An existing base may belong to someone else.)
  const std::string probe = base + "/probe-" + std::to_string(getpid());
  if (mkdir(probe.c_str(), 0755) != 0 && errno != EEXIST) {
    return NoCgroups(ErrnoMessage("cannot create cgroups under " + base, errno));
  }
  rmdir(probe.c_str());

  CgroupBase result{base, false, false, false, ""};
  Status memory = EnableMemory(base);
  result.memory = memory.ok();
  result.pids = EnableController(base, "pids").ok();
  result.cpu = EnableController(base, "cpu").ok();
  result.note = "cgroup v2 at " + base + " (memory limits: " + (result.memory ? "yes" : "no: " + memory.message()) +
                "; process limits: " + (result.pids ? "pids.max" : "RLIMIT_NPROC") +
                "; CPU weights: " + (result.cpu ? "yes" : "no") + ")";
  return result;
}

namespace {
constexpr char kJobPrefix[] = "job-";
}  // namespace

std::string JobCgroupPath(const std::string& base, JobId job) { return base + "/" + kJobPrefix + std::to_string(job); }

JobId JobOfCgroupName(const std::string& name) {
  if (name.rfind(kJobPrefix, 0) != 0) return 0;
  const char* digits = name.c_str() + sizeof kJobPrefix - 1;
  if (*digits < '1' || *digits > '9') return 0;  // strtoll would take "+3", " 3" and "03"
  char* end = nullptr;
  const long long id = std::strtoll(digits, &end, 10);
  return *end != '\0' || id <= 0 ? 0 : id;
}

StatusOr<std::string> CreateJobCgroup(const std::string& base, JobId job, const JobCgroupLimits& limits) {
  std::string path = JobCgroupPath(base, job);
  if (mkdir(path.c_str(), 0755) != 0) {
    if (errno != EEXIST) return Internal(ErrnoMessage("cannot create cgroup " + path, errno));
    // The job's last run left it (a requeue comes before the delayed removal). It is made anew,
    // not reused: the device programs attached for the last run's cards would stay attached
    // (BPF_F_ALLOW_MULTI) and refuse the new run the cards it is given now.
    StatusOr<bool> populated = CgroupPopulated(path);
    if (!populated.ok()) return populated.status();
    if (*populated) return FailedPrecondition("cgroup " + path + " already holds processes");
    if (Status s = RemoveCgroup(path); !s.ok()) return s;
    if (mkdir(path.c_str(), 0755) != 0) return Internal(ErrnoMessage("cannot create cgroup " + path, errno));
  }
  auto write = [&](bool enabled, const char* file, std::int64_t value, const char* none) -> Status {
    if (!enabled) return Status::Ok();
    return WriteControlFile(path + "/" + file, value > 0 ? std::to_string(value) : none);
  };
  for (Status s : {write(limits.memory, "memory.max", limits.memory_bytes, "max"),
                   write(limits.pids, "pids.max", limits.pids_max, "max"),
                   write(limits.cpu, "cpu.weight", limits.cpu_weight, "100")}) {
    if (!s.ok()) {
      rmdir(path.c_str());
      return s;
    }
  }
  return path;
}

Status MoveToCgroup(const std::string& cgroup, pid_t pid) {
  return WriteControlFile(cgroup + "/cgroup.procs", std::to_string(pid));
}

Status KillCgroup(const std::string& cgroup) {
  Status s = WriteControlFile(cgroup + "/cgroup.kill", "1");
  if (s.ok()) return s;
  if (access(cgroup.c_str(), F_OK) != 0) return Status::Ok();  // gone: nothing to kill
  // Kernels before 5.14: signal each process; repeat for what forked meanwhile.
  for (int pass = 0; pass < 5; ++pass) {
    StatusOr<std::string> procs = ReadFile(cgroup + "/cgroup.procs");
    if (!procs.ok()) return procs.status().code() == StatusCode::kNotFound ? Status::Ok() : procs.status();
    std::istringstream in(*procs);
    long pid;
    bool any = false;
    while (in >> pid) {
      if (pid > 0) kill(static_cast<pid_t>(pid), SIGKILL);
      any = true;
    }
    if (!any) break;
  }
  return Status::Ok();
}

Status RemoveCgroup(const std::string& cgroup) {
  if (cgroup.empty() || rmdir(cgroup.c_str()) == 0 || errno == ENOENT) return Status::Ok();
  if (errno == EBUSY) return FailedPrecondition("cgroup " + cgroup + " still has processes");
  return Internal(ErrnoMessage("cannot remove cgroup " + cgroup, errno));
}

namespace {

StatusOr<bool> ParsePopulated(const std::string& events, const std::string& cgroup) {
  std::istringstream in(events);
  std::string key;
  int value;
  while (in >> key >> value) {
    if (key == "populated") return value != 0;
  }
  return Internal("no 'populated' in " + cgroup + "/cgroup.events");
}

}  // namespace

StatusOr<bool> CgroupPopulated(const std::string& cgroup) {
  StatusOr<std::string> events = ReadFile(cgroup + "/cgroup.events");
  if (!events.ok()) return events.status();
  return ParsePopulated(*events, cgroup);
}

StatusOr<int> OpenCgroupEvents(const std::string& cgroup) {
  const std::string path = cgroup + "/cgroup.events";
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    std::string message = ErrnoMessage("cannot open " + path, err);
    return err == ENOENT ? StatusOr<int>(NotFound(message)) : StatusOr<int>(Internal(message));
  }
  return fd;
}

StatusOr<bool> PopulatedAt(int events_fd, const std::string& cgroup) {
  char buf[256];
  ssize_t n;
  do {
    n = pread(events_fd, buf, sizeof buf, 0);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return Internal(ErrnoMessage("cannot read " + cgroup + "/cgroup.events", errno));
  return ParsePopulated(std::string(buf, static_cast<std::size_t>(n)), cgroup);
}

bool WaitCgroupEmpty(const std::string& cgroup, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    StatusOr<bool> populated = CgroupPopulated(cgroup);
    if (!populated.ok() || !*populated) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::int64_t CgroupOomKills(const std::string& cgroup) {
  StatusOr<std::string> events = ReadFile(cgroup + "/memory.events");
  if (!events.ok()) return 0;
  std::istringstream in(*events);
  std::string key;
  std::int64_t value;
  while (in >> key >> value) {
    if (key == "oom_kill") return value;
  }
  return 0;
}

}  // namespace rota::exec
