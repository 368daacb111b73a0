// What the store keeps about one job: the core's Job plus everything the daemon needs to run,
// re-adopt and report it (owner uid, command, environment, state, times, the allocation with
// GPU UUIDs, the processes, the end).
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/cluster.h"
#include "core/job_end.h"
#include "core/types.h"

namespace rota::store {

// Job states as stored (column jobs.state): the core's (core/job_end.h), named here.
using JobState = ::rota::JobState;

const char* JobStateName(JobState state);  // "pending", ..., "node_fail"
std::optional<JobState> ParseJobState(std::string_view name);
const char* RequestKindName(RequestKind kind);  // "gpus", "mem_share", "mig" (the store's names)
std::optional<RequestKind> ParseRequestKind(std::string_view name);
bool IsFinal(JobState state);

// Where a running job runs. `alloc` indices refer to the ClusterState the daemon built when it
// started the job; the UUIDs are the durable identity (indices may change across restarts or
// reconfiguration, UUIDs do not).
struct Placement {
  Allocation alloc;
  std::vector<std::string> gpu_uuids;  // one per alloc.gpus entry, same order
  std::string mig_uuid;                // the slice's UUID when alloc.mig >= 0
  bool operator==(const Placement&) const = default;
  // Whether the job holds the card `uuid` (whole, a share of it, or a slice on it).
  bool OnCard(const std::string& uuid) const {
    return std::find(gpu_uuids.begin(), gpu_uuids.end(), uuid) != gpu_uuids.end();
  }
};

// What MarkStarted records.
struct StartInfo {
  Placement placement;
  bool preemptible = false;
  bool from_pool = false;
  std::int64_t pid = 0;   // the job's leader process; 0 when not known yet
  std::int64_t pgid = 0;  // its process group (== pid after setsid)
  std::string cgroup;     // cgroup v2 path, "" when the process group is the fallback
  std::string reason = "Started";  // the audit trail's reason, e.g. "Started on GPU 0,1"
};

struct JobRecord {
  Job job;  // job.id is assigned by Submit; job.submit_time is Submit's `now`

  // Submission context, captured by the client and checked by the daemon.
  std::int64_t uid = -1;
  std::vector<std::string> command;        // argv; command[0] is the program
  std::string cwd;                         // submit directory
  std::map<std::string, std::string> env;  // environment captured at submit
  std::string output;                      // log file path ("%j" stands for the job id)
  // `rota run`/`rota shell`: a session, whose output goes to its owner's terminal. On the host the
  // client runs the command (RunByClient); in a container (`--image`) the engine does, as for
  // a batch job, attached to the terminal the client passed.
  bool interactive = false;
  std::string image;                       // the container image it runs in ("" = none: on the host)
  // When its owner needs it done (`--deadline`), Unix seconds; 0 = none. Advice only: it changes
  // no priority (the tiers do that).
  Time deadline = 0;
  // Its first start forecast (daemon/foresight.h): when it was made and the start it foresaw,
  // Unix seconds; 0 = none yet (cleared by a requeue). Past forecasts against real starts
  // calibrate the ranges of new ones.
  Time forecast_at = 0;
  Time forecast_start = 0;

  // Lifecycle.
  JobState state = JobState::kPending;
  Time start_time = 0;  // 0 while never started (or after a requeue)
  Time end_time = 0;    // 0 until final
  std::optional<int> exit_code;
  std::string end_reason;  // "Completed", "Failed(exit 3)", "Cancelled by alice", ...

  // While running (cleared by Requeue).
  Placement placement;
  bool preemptible = false;
  bool from_pool = false;
  bool signalled = false;
  Time kill_at = kNever;
  bool preempted = false;
  std::int64_t pid = 0;
  std::int64_t pgid = 0;
  std::string cgroup;
  std::string engine_job;  // where a cluster engine runs it ("Slurm job 123"); "" on this machine

  // The core's view of a running job. REQUIRES: state == kRunning.
  RunningJob ToRunningJob() const;
  // What JobStore::MarkStarted wrote, applied to this in-memory copy.
  void Started(const StartInfo& start, Time now);
  // A session whose command its client runs (on the host), not the engine.
  bool RunByClient() const { return interactive && image.empty(); }
  // A session in a container: the engine runs it attached to its owner's terminal.
  bool Attached() const { return interactive && !image.empty(); }
};

// One line of the audit trail: a state change (or a signal, from running to running).
struct JobEvent {
  JobId job_id = 0;
  Time time = 0;
  std::optional<JobState> from;  // empty for the submission
  JobState to = JobState::kPending;
  std::string reason;
  std::string actor;  // the user who asked, or "rotad"
  bool operator==(const JobEvent&) const = default;
};

// One line of the combined audit trail (`rota events`): a job's, a booking's or a GPU's event.
struct AuditEvent {
  Time time = 0;
  std::string kind;     // "job", "booking", "gpu"
  std::int64_t id = 0;  // the job id, booking id or GPU index
  std::string owner;    // the job's or booking's user; "" for GPUs
  std::string from;     // "" when there is none
  std::string to;
  std::string reason;
  std::string actor;
};

// A card taken out of scheduling: by an admin (`rota drain`) or by its health.
struct GpuDrain {
  enum class Kind : std::uint8_t { kAdmin, kHealth };
  std::string uuid;
  Kind kind = Kind::kAdmin;
  std::string actor;  // the admin, or "rotad"
  std::string reason;
  Time since = 0;
  bool operator==(const GpuDrain&) const = default;
};

// One entry of a GPU's audit trail: "suspect", "drained", "healthy", "drain", "resume".
struct GpuEvent {
  Time time = 0;
  std::string uuid;
  int gpu_index = 0;
  std::string event;
  std::string reason;
  std::string actor;
  bool operator==(const GpuEvent&) const = default;
};

}  // namespace rota::store
