// Slurm's queue as the Slurm engine reads it: every job not over yet, and Rota's own jobs that
// Slurm still remembers (below), the tag that names a Rota job (its Slurm job name, "rota-<id>"), and
// how a job that Slurm has finished ended, in the terms every engine reports (JobExit), so that
// `rota show` prints the same reasons on Slurm as on the local engine. Pure functions over text.
//
// What 22.05 prints (and 24.x alike): the State field is the long state name ("RUNNING",
// "OUT_OF_MEMORY"); exit_code is the raw wait status of the batch script (768 for "exit 3", 9
// for a kill by SIGKILL); StartTime and EndTime are local times "2026-12-03T13:52:00", or
// "N/A"/"Unknown"; tres-per-node is "gres:gpu:2" or "N/A". Jobs stay listed for MinJobAge
// (300 s by default) after they end; without slurmdbd, nothing else remembers them.
//
// Tested by queue_test.cc.
#pragma once

#include <sys/types.h>

#include <charconv>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/job_end.h"
#include "core/status.h"
#include "core/types.h"
#include "slurm/parsable.h"

namespace rota::slurm {

// One job of the queue.
struct QueuedJob {
  std::string id;    // Slurm's job id as printed ("123"; an array's element "123_4")
  std::string name;  // the job name: Rota's jobs carry their tag here
  uid_t uid = 0;
  std::string state;   // "PENDING", "RUNNING", "COMPLETED", ...
  std::string reason;  // "None", "NonZeroExitCode", "Resources", ...
  int wait_status = 0;
  std::string nodes;           // "vm", "vm[1-2]"; "" while pending
  Time start = 0, end = 0;     // 0 when not known
  std::vector<Gres> per_node;  // the generic resources asked per node (tres-per-node)
};

// The -O argument that ParseQueue reads: each field followed by kQueueDelimiter (a control
// character). Only fields that Slurm writes itself: sbatch takes any bytes in a job's name or
// comment, the delimiter and newlines included (seen on 22.05.8), so one user's job named so
// would make a queue that holds names unreadable, or forge a line in it.
inline constexpr char kQueueDelimiter = '\x1f';
std::string QueueFormat();
// `squeue -h -a -t ... -O <QueueFormat()>`'s output, names left empty. A line that cannot be
// read fails it all: a queue read wrong could hide a running job.
StatusOr<std::vector<QueuedJob>> ParseQueue(std::string_view text);
// Everyone's jobs are read in the states of a job not over yet only (`squeue -h -a -t
// <ActiveStates()> -O <QueueFormat()>`): a busy cluster lists thousands of jobs ended within
// MinJobAge, and reading them all at every poll made each read, and so each hand-over, slower
// (docs/benchmarks.md). Rota's own jobs are read in every state, with their names, apart:
// `squeue -h -a -t all <NamesFilter(tag, ids)> -O <OursFormat()>` lists only jobs whose name is
// exactly one of those tags (Slurm filters), so no line holds a name a user made up. ParseOurs
// reads that (names never empty); MergeOurs names the queue's entries it lists (ParseQueue leaves
// the rest "": not Rota's) and adds Rota's jobs that are over.
std::string ActiveStates();
std::string OursFormat();
std::string NamesFilter(std::string_view tag, const std::vector<JobId>& ids);
StatusOr<std::vector<QueuedJob>> ParseOurs(std::string_view text);
void MergeOurs(std::vector<QueuedJob>& queue, std::vector<QueuedJob> ours);

// `text` is exactly a number of type T (no sign for unsigned T, no spaces, nothing after it).
template <typename T>
bool WholeNumber(std::string_view text, T& out) {
  if (text.empty()) return false;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc() && p == end;
}

// "2026-12-03T13:52:00" (local time, as Slurm prints for the reader's zone) -> Unix seconds;
// 0 for "N/A", "Unknown", "None" or "".
StatusOr<Time> ParseSlurmTime(std::string_view text);
// And back: a local time as Slurm reads it ("2026-12-04T10:00:00").
std::string SlurmTime(Time t);
// A job's start and end as Slurm's tools print them, into `j` (its id names it in an error).
Status ReadTimes(std::string_view start, std::string_view end, QueuedJob& j);

// The tag of a Rota job in Slurm (its job name) and back: "<tag>-42" <-> 42, where `tag` is the
// installation's ([engine] tag, "rota" by default: two Rotas in front of one Slurm need two).
// RotaJobOf is 0 for any other name.
inline constexpr std::string_view kDefaultTag = "rota";
std::string TagOf(std::string_view tag, JobId id);
JobId RotaJobOf(std::string_view tag, std::string_view name);

// Whether Slurm still holds the job's resources or may run it (pending, configuring, running,
// completing, suspended, requeued, ...): not yet ended.
bool Active(std::string_view state);

// How a job that Slurm ended ended, for DecideJobEnd; nullopt while Active. COMPLETED and
// FAILED give the script's exit or signal; CANCELLED, TIMEOUT, PREEMPTED, OUT_OF_MEMORY and
// DEADLINE a signal with Slurm's reason; NODE_FAIL and BOOT_FAIL a vanished run on its node; a
// FAILED job that never started its script (a launch failure, no exit status) a failed start.
std::optional<JobExit> ExitOf(const QueuedJob& job);

}  // namespace rota::slurm
