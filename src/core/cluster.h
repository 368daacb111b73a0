// The cluster as the scheduling core sees it: GPUs (whole cards and MIG slices), jobs waiting
// and running, accumulated usage, bookings. A ClusterState is a plain value; whoever owns the
// truth (the daemon with its store, the simulator with its trace) builds or maintains one and
// hands it to Schedule() by const reference.
#pragma once

#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/types.h"

namespace rota {

struct MigSlice {
  std::string uuid;
  std::string profile;  // e.g. "3g.40gb"
  MiB memory = 0;
  bool drained = false;  // held outside Rota (a cluster's job): no new work on it, as Gpu::drained
};

struct Gpu {
  std::string uuid;
  int index = 0;           // the device index as the driver reports it
  std::string model;       // "NVIDIA A100-SXM4-80GB"
  MiB memory = 0;          // total memory
  int node = 0;            // host; the local daemon has one node, the simulator several
  std::vector<MigSlice> mig;  // non-empty: the card is in MIG mode; only its slices are schedulable
  std::vector<int> nvlink;    // indices into ClusterState::gpus of NVLink peers
  MiB reported_free = -1;     // free memory the device reports; -1 when unknown (simulation)
  bool drained = false;       // drained cards get no new work
};

// The MIG profiles the cards offer, each once, in the order the cards list them (drained cards
// left out with `in_service_only`): what to suggest when a request names none of them.
inline std::vector<std::string> MigProfiles(const std::vector<Gpu>& gpus, bool in_service_only) {
  std::vector<std::string> profiles;
  for (const Gpu& g : gpus) {
    if (in_service_only && g.drained) continue;
    for (const MigSlice& s : g.mig) {
      if (std::find(profiles.begin(), profiles.end(), s.profile) == profiles.end()) profiles.push_back(s.profile);
    }
  }
  return profiles;
}

enum class RequestKind : std::uint8_t {
  kWholeGpus,  // `gpus` whole cards
  kMemShare,   // `memory` MiB on one card that is not whole-allocated, co-located with others
  kMig,        // one MIG slice of profile `mig_profile`
};

struct Request {
  RequestKind kind = RequestKind::kWholeGpus;
  int gpus = 1;             // kWholeGpus only
  MiB memory = 0;           // kMemShare only
  std::string mig_profile;  // kMig only
};

// What a job holds. Indices refer to ClusterState::gpus of the state they were made for.
struct Allocation {
  std::vector<int> gpus;  // whole cards; or the one card of a share; or the card of the slice
  int mig = -1;           // index into Gpu::mig of gpus[0] for a MIG slice, else -1
  MiB memory = 0;         // the share's memory for kMemShare, else 0
  bool operator==(const Allocation&) const = default;
};

// The fields every scheduling pass reads of every waiting job come first, within one cache line:
// a long queue is walked every pass, and the rest of a job is read only for the few it reaches.
struct Job {
  JobId id = 0;
  Time submit_time = 0;         // original submit time; kept on requeue
  Duration time_limit = kHour;  // the user's estimate; jobs are stopped when it runs out
  Tier tier = Tier::kRegular;
  Request request;
  std::string user;
  std::string project;
  std::string name;
  std::vector<JobId> after;     // start only after these jobs have ended, however (`--after`)
  std::vector<JobId> after_ok;  // and after these have ended; the daemon cancels the job when one
                                // of them ends other than Completed (`--after-ok`)
  int signal = 10;              // SIGUSR1: sent `grace` seconds before a kill
  Duration grace = 120;
  bool requeue = false;         // back to pending when preempted
  MiB host_mem_per_gpu = 0;     // 0: the policy's default
  // What the lab's history says the job will run (core/runtime_model.h), set by the daemon and the
  // simulator where Policy::size_by_prediction asks for it; 0: not known (the limit is used).
  // Only the size factor reads it: plans and reservations stay on time_limit.
  Duration predicted_run = 0;
  // The start first come first served would have promised it at arrival (core/promise.h), set by
  // the simulator and the daemon where Policy::promise_slack asks for it; kNever: none.
  Time promise = kNever;
};

struct RunningJob {
  Job job;
  Allocation alloc;
  Time start_time = 0;
  bool preemptible = false;  // started in the explore tier, or over quota as explore
  bool signalled = false;    // the warning signal has been sent (time limit or preemption)
  Time kill_at = kNever;     // a stop is under way: the job is killed at this time
  bool preempted = false;    // the stop under way is a preemption (else the time limit)
  bool from_pool = false;    // hybrid mode: runs on its project's elastic pool
};

// Usage of one account (a user or a project), maintained by UsageLedger (usage.h).
struct Usage {
  double decayed_gpu_seconds = 0;  // fair-share usage, decayed to `as_of`
  Time as_of = 0;
  double week_gpu_seconds = 0;     // GPU-seconds charged in the week that starts at `week_start`
  double pool_gpu_seconds = 0;     // of which drawn from a project's elastic pool (hybrid mode)
  Time week_start = 0;
};

// Capacity held for one user over [start, end): other users' jobs must not use it then, except
// preemptible ones (rota, preemption on), which may borrow it while nothing else holds it and are
// preempted when the owner's work needs it (docs/design.md, "How a decision is made", step 4).
struct Booking {
  std::int64_t id = 0;
  std::string user;
  Allocation alloc;  // the booked cards, slice or share
  Time start = 0;
  Time end = 0;
};

struct ClusterState {
  std::vector<Gpu> gpus;
  std::vector<Job> pending;       // in any order
  std::vector<RunningJob> running;
  std::unordered_map<std::string, Usage> user_usage;
  std::unordered_map<std::string, Usage> project_usage;
  std::unordered_map<std::string, double> penalty;  // per user, in [0, 1]: overtime, no-shows
  std::vector<Booking> bookings;
  // Jobs still to run that this pass may not start (a start being retried later, a requeue not
  // yet recorded): not scheduled, but the jobs that run `after` them keep waiting.
  std::vector<JobId> held;
};

}  // namespace rota
