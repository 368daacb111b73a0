// The end of a job's run: what it is recorded as, given what rotad had begun doing to it (a
// cancel, a preemption, its time limit, its card failing) and how its processes ended. Pure, like
// the rest of the core: the daemon asks it whenever an engine reports an end, and the ladder's
// order is tested here rather than through real processes (job_end_test.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/types.h"

namespace rota {

// Job states as stored (column jobs.state; store/job_record.h names them). Pending and running
// are active; the rest are final. "Stopping" (design.md) is running with kill_at set.
enum class JobState : std::uint8_t {
  kPending,
  kRunning,
  kCompleted,  // exit 0
  kFailed,     // non-zero exit, or could not start (missing command, vanished cwd)
  kCancelled,
  kTimeout,    // killed at its time limit
  kPreempted,  // killed for a higher tier and not requeued
  kNodeFail,   // processes vanished (e.g. found gone after a daemon restart) and not requeued
};

// How a job's processes ended, as the engine that ran them saw it.
struct JobExit {
  enum class Kind { kExited, kSignalled, kStartFailed, kVanished };
  Kind kind = Kind::kVanished;
  int exit_code = 0;  // kExited
  int signal = 0;     // kSignalled
  // kStartFailed: e.g. "cannot run 'nosuchcmd': No such file or directory",
  //   "cannot chdir to /x: No such file or directory",
  //   "cannot open output /x/rota-5.out: Permission denied".
  // kVanished: why, e.g. "rota-shepherd 123 was killed by signal 9 before recording the job's end".
  // kSignalled: "out of memory (memory.max reached)" when the cgroup saw an OOM kill, else "".
  std::string reason;
  std::int64_t end_time = 0;  // Unix seconds when the job ended, as its engine saw it; 0 unknown
  // kStartFailed because of the machine, not of the job: no process could be made for it (fork
  // failed for want of memory or processes). The job never ran; a later try may well work.
  bool machine_fault = false;
};

// What rotad had begun doing to a running job when it ended. All empty: nothing, it ended on
// its own.
struct StopContext {
  std::string cancelled_by;  // being cancelled, by whom
  std::string node_fail;     // being stopped because its card failed: why
  bool stopping = false;     // it had been signalled and has a kill time (its record's kill_at)
  bool preempted = false;    // ... for a preemption, not its time limit
  JobId preempted_by = 0;    // ... for this job (0: for a reason of rotad's own)
  // Stopped for a reason of rotad's own (its booking ended and others wait, it was reclaimed as
  // idle): the end reason it gets instead of "Preempted".
  std::string stop_reason;
  bool term_sent = false;   // the kill sequence had begun (SIGTERM sent)
  int warning_signal = 0;   // the signal the job asked to be warned with (0: none)
  bool requeue = false;     // the job asked to be requeued when preempted or its card fails
  bool interactive = false;  // a session: never requeued
};

// What the end is recorded as.
struct JobEnd {
  JobState state = JobState::kCompleted;
  std::optional<int> code;  // the exit code, when it exited
  std::string reason = "Completed";
  std::string actor = "rotad";  // who ended it: the canceller, else rotad
  bool requeue = false;         // pending again (same id, original submit time), not final
  bool launch_failed = false;   // requeued because the machine could not start it (tried later)
};

// The ladder, first match wins: cancelled; its card failed; preempted (killed, or ended on its
// own after the warning); killed at its time limit; ended by its own warning signal (a program
// that did not catch it: recorded as its time limit); exit 0; another exit; a signal; a start
// the machine could not make (requeued whatever --requeue says); a start that failed; vanished.
JobEnd DecideJobEnd(const StopContext& stop, const JobExit& exit);

}  // namespace rota
