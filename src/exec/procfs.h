// What /proc says about a process: its parent, its real uid and its cgroup (v2). Used to tell
// whose GPU process is whose (docs/design.md, GPU layer: attribution).
#pragma once

#include <sys/types.h>

#include <string>

#include "core/status.h"
#include "core/types.h"

namespace rota::exec {

struct ProcessIdentity {
  pid_t pid = 0;
  pid_t ppid = 0;
  uid_t uid = 0;       // real uid
  uid_t euid = 0;      // effective uid (what SO_PEERCRED reports of a client)
  std::string cgroup;  // the cgroup v2 path relative to its mount ("/rota/job-17"), "" without v2
};

// NotFound when the process is gone; other errors when /proc cannot be read.
StatusOr<ProcessIdentity> ReadProcess(pid_t pid, const std::string& proc = "/proc");

// The process's start time (clock ticks after boot, /proc/PID/stat field 22): with the pid, it
// names one process for good (pids are reused, start times of a reused pid differ).
StatusOr<unsigned long long> ProcessStartTime(pid_t pid, const std::string& proc = "/proc");

// When the process started, in Unix seconds (its start time after boot, plus the boot time of
// /proc/stat); to the second at best.
StatusOr<Time> ProcessStartedAt(pid_t pid, const std::string& proc = "/proc");

// True when `cgroup` (a path as /proc/PID/cgroup gives it) is the job cgroup `job_cgroup` (an
// absolute path under the cgroup mount, as the executor keeps it) or lies below it.
bool InCgroup(const std::string& cgroup, const std::string& job_cgroup);

}  // namespace rota::exec
