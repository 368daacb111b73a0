// cgroup v2 helpers: finding the hierarchy, choosing the base for job cgroups, and the
// operations on one job's cgroup. Used by the Executor (daemon side) and by rota-shepherd.
//
// Paths are absolute directories under the cgroup2 mount, e.g. /sys/fs/cgroup/rota/job-5.
// Every function returns errors as values and none blocks for long: WaitCgroupEmpty is bounded.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "core/types.h"

namespace rota::exec {

struct Cgroup2Mount {
  std::string mount_point;  // e.g. /sys/fs/cgroup or /sys/fs/cgroup/unified
  std::string root;         // the mounted subtree ("/" unless bind-mounted from inside)
};

// Parses /proc/self/mountinfo text; the first cgroup2 mount, if any. Unescapes \040 and friends.
std::optional<Cgroup2Mount> FindCgroup2Mount(std::string_view mountinfo);

// Parses /proc/<pid>/cgroup text; the path on the "0::" line (cgroup v2), e.g. "/" or
// "/system.slice/rotad.service".
std::optional<std::string> ParseOwnCgroup(std::string_view proc_cgroup);

// Where job cgroups go, as chosen by SetUpCgroupBase.
struct CgroupBase {
  std::string path;     // "" when cgroups are not used
  bool memory = false;  // the memory controller is enabled for children of path
  bool pids = false;    // ... the pids controller (pids.max)
  bool cpu = false;     // ... the cpu controller (cpu.weight)
  std::string note;     // the line for Executor::cgroup_note()
};

// Probes cgroup v2 and prepares the base (docs/design.md, Executor):
//   own cgroup "/":          base = <mount>/<name> (created; `name` is unique per daemon, so
//                            two daemons on one machine, e.g. in tests, never share a base);
//   own cgroup X/daemon:     base = <mount>X/<name> (a restarted daemon already moved there);
//   other own cgroup X:      the process moves itself into <mount>X/daemon, base = <mount>X/<name>
//                            (created, as is "+memory" in X's subtree_control where it can be).
// Then "+memory" is written to the base's cgroup.subtree_control when the controller is
// available to it. Never fails: without a writable cgroup v2 the result has an empty path and
// a note that says why. A base in which this process cannot create a child (an ordinary user
// under a root-owned base) counts as not writable.
CgroupBase SetUpCgroupBase(const std::string& name = "rota");

// A job's cgroup: <base>/job-<id>.
std::string JobCgroupPath(const std::string& base, JobId job);
// The job a cgroup directory's name (not path) names: "job-17" -> 17; 0 for any other name.
JobId JobOfCgroupName(const std::string& name);

// Creates <base>/job-<id> (an existing empty one, a last run's, is removed and made anew, so
// that nothing attached to it stays) and writes the limits. FailedPrecondition if it exists and
// holds processes.
// What a job cgroup is limited to; each only where its controller is enabled (CgroupBase).
struct JobCgroupLimits {
  bool memory = false;
  std::int64_t memory_bytes = 0;  // memory.max; 0 = max
  bool pids = false;
  std::int64_t pids_max = 0;  // pids.max; 0 = max
  bool cpu = false;
  int cpu_weight = 0;  // cpu.weight (1..10000); 0 = the default
};
StatusOr<std::string> CreateJobCgroup(const std::string& base, JobId job, const JobCgroupLimits& limits);

Status MoveToCgroup(const std::string& cgroup, pid_t pid);  // writes pid to cgroup.procs
// Kills every process in the cgroup: cgroup.kill, or SIGKILL to each pid in cgroup.procs
// (a few passes) when the kernel lacks cgroup.kill. A missing cgroup is OK.
Status KillCgroup(const std::string& cgroup);
// rmdir; a missing cgroup is OK; FailedPrecondition (EBUSY) while it has processes.
Status RemoveCgroup(const std::string& cgroup);
// From cgroup.events; NotFound when the cgroup is gone.
StatusOr<bool> CgroupPopulated(const std::string& cgroup);
// A cgroup's cgroup.events, opened (O_CLOEXEC) to be watched: poll() reports POLLPRI once
// "populated" (or "frozen") changed since the last read through this descriptor. The kernel
// sends at most one such notice per 10 ms per cgroup; a later change waits out the rest of
// the 10 ms, it is not lost. NotFound when the cgroup is gone.
StatusOr<int> OpenCgroupEvents(const std::string& cgroup);
// Reads "populated" through such a descriptor (from the start of the file), which also
// acknowledges the notice. `cgroup` is for messages.
StatusOr<bool> PopulatedAt(int events_fd, const std::string& cgroup);
// Polls cgroup.events until "populated 0" (or the cgroup is gone), at most timeout_ms.
bool WaitCgroupEmpty(const std::string& cgroup, int timeout_ms);
// The oom_kill count of memory.events; 0 when unknown.
std::int64_t CgroupOomKills(const std::string& cgroup);

}  // namespace rota::exec
