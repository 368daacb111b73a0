// Decisions: what Schedule() tells the executor to do now, and what it knows about every job
// that waits. Plain values; applying them is the caller's business.
#pragma once

#include <string>
#include <vector>

#include "core/cluster.h"
#include "core/types.h"

namespace rota {

// Why a pending job is not running yet.
enum class WaitReason : std::uint8_t {
  kResources,       // not enough free capacity now
  kPriority,        // capacity is promised to higher-priority jobs
  kQuotaExhausted,  // the owner's weekly GPU-hours would be exceeded
  kDependency,      // an `after` job has not ended
  kBooking,         // the capacity is booked by someone else
  kPeakHours,       // a heavy job deferred by the time-of-day table
  kImpossible,      // no GPU of this cluster can ever satisfy the request
  // Never from Schedule: the daemon could not record the job's start (its store failed) and
  // holds it back until a retry time.
  kStartRetry,
};
const char* WaitReasonName(WaitReason r);

// The factors of a job's priority, each in [0, 1] unless noted, as `rota show` prints them.
struct PriorityFactors {
  double tier = 0;
  double fairshare = 0;
  double age = 0;
  double size = 0;
  double penalty = 0;
  double time_of_day = 1;  // multiplier, not normalised
  double priority = 0;     // the weighted sum
  // The size was computed on the job's predicted run, not its limit (Policy::size_by_prediction).
  bool sized_on_prediction = false;
  // Waited Policy::protect_after, or promise_slack past its promise (rota): first in line within
  // its tier, whatever its priority; nothing that comes later may delay its reservation.
  bool is_protected = false;
};

struct Start {
  JobId job = 0;
  Allocation alloc;
  bool preemptible = false;  // runs in the explore tier (explore job, or over quota)
  bool from_pool = false;    // hybrid mode: charged to the project's elastic pool
};

enum class StopCause : std::uint8_t { kTimeLimit, kPreempted };

// Send the job its signal now; it will be killed at kill_at unless it ends first.
struct Signal {
  JobId job = 0;
  int signal = 10;
  Time kill_at = kNever;
  StopCause cause = StopCause::kTimeLimit;
  JobId preempted_by = 0;  // kPreempted only
  bool requeue = false;    // kPreempted only: goes back to pending, original submit time
};

// Kill the job now (SIGTERM, then SIGKILL after the executor's short kill wait).
struct Kill {
  JobId job = 0;
  StopCause cause = StopCause::kTimeLimit;
};

struct PendingInfo {
  JobId job = 0;
  WaitReason reason = WaitReason::kResources;
  Time expected_start = kNever;  // kNever: unknown
  bool estimated = false;        // expected_start is an estimate, not a reservation
  PriorityFactors factors;
};

struct Decisions {
  std::vector<Start> starts;
  std::vector<Signal> signals;
  std::vector<Kill> kills;
  std::vector<PendingInfo> pending;  // every job that stays pending, in priority order
  // Call Schedule() again at this time at the latest, even if nothing else happens.
  Time next_wakeup = kNever;
};

}  // namespace rota
