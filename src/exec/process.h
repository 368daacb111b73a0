// Process handles for the executor: pidfds, queued signals through a pidfd, and recognising a
// rota-shepherd by its command line (which is how pid reuse is told apart after a restart).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "core/status.h"
#include "core/types.h"

namespace rota::exec {

// pidfd_open(2); the fd is O_CLOEXEC. NotFound (ESRCH) when no such process.
StatusOr<int> OpenPidfd(pid_t pid);

// True when the process behind pidfd has exited (the pidfd polls readable). Does not block.
bool PidfdExited(int pidfd);

// Queues signal `sig` with si_value.sival_int = value to the process behind pidfd, like
// sigqueue(3) but immune to pid reuse. NotFound (ESRCH) when it has exited.
Status PidfdQueueSignal(int pidfd, int sig, int value);

// The process behind `pidfd`, checked to be alive and to run as `uid` (real and effective): the
// way to name a caller's process that a recycled pid cannot fake (a bare pid may, by the time it
// is used, belong to another user's process). Its pid is read from /proc/self/fdinfo; the process
// is read from /proc and the pidfd polled again afterwards, so what was read was that process.
// InvalidArgument when `pidfd` is not a pidfd; NotFound when the process has exited (or lives in
// another pid namespace); PermissionDenied when it is another user's.
StatusOr<pid_t> PidfdProcessOf(int pidfd, uid_t uid);

// The NUL-separated /proc/<pid>/cmdline; empty for a zombie or a vanished process.
std::vector<std::string> ReadCmdline(pid_t pid);

// The arguments rota-shepherd is started with:
//   <shepherd_path> --job <job> --spec <spec_path> --run-dir <run_dir> --token <token>
// IsShepherdCommand recognises them. job 0 matches any job, and then also a standby shepherd's
// command line; an empty run_dir any run directory.
std::vector<std::string> ShepherdArgs(const std::string& shepherd_path, JobId job, const std::string& spec_path,
                                      const std::string& run_dir, const std::string& token);
bool IsShepherdCommand(const std::vector<std::string>& cmdline, const std::string& shepherd_path,
                       JobId job, const std::string& run_dir);
// A standby shepherd, started before its job was known (it reads the job from descriptor 3):
//   <shepherd_path> --standby --run-dir <run_dir>
// Its command line does not name its job: the spec's launch lock does (Executor::Adopt).
std::vector<std::string> StandbyShepherdArgs(const std::string& shepherd_path, const std::string& run_dir);
bool IsStandbyShepherdCommand(const std::vector<std::string>& cmdline, const std::string& shepherd_path,
                              const std::string& run_dir);

// The signal the executor uses to ask a shepherd to forward a signal (its value) to the job.
int ForwardSignal();  // SIGRTMIN + 1

}  // namespace rota::exec
