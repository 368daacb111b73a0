// Expected starts on predicted run times (issue 29). The scheduler's plan runs on time limits,
// which is what its promises must rest on (a backfilled job may never delay a reservation, and a
// job may run to its limit); as a forecast it is late by as much as users overstate their limits.
// ForecastStarts plays the scheduler forward instead: the running jobs end when the lab's history
// predicts (core/runtime_model.h), and at each end the very same Schedule() decides on time
// limits what starts, as the daemon will; each started job then runs its predicted time. No job
// arrives meanwhile but the jobs foreseen to arrive (core/arrivals.h), where given; what else
// comes is the range's business (core/start_range.h). Nothing in it is a decision. Pure. Tested by
// forecast_test.cc.
#pragma once

#include <unordered_map>
#include <vector>

#include "core/cluster.h"
#include "core/policy.h"
#include "core/runtime_model.h"

namespace rota {

struct ForecastOptions {
  // Stop once these jobs have a start (empty: every pending job).
  std::vector<JobId> targets;
  // Passes played forward at most; the jobs still waiting then get the plan's estimate on
  // predicted run times at that point.
  int max_passes = 2000;
  // Jobs foreseen to arrive (core/arrivals.h), sorted by submit time: each joins the queue at its
  // submit time and competes as a queued job would. Their ids must be new to the state; they get
  // no forecast of their own.
  std::vector<Job> arrivals;
};

// Where fifo's play stops, its plan covers this many waiting jobs in line (the rest are spread over
// the cards): fifo's plan of every job is fifo itself, and costs about 24 ms for 10,000 jobs on 64
// GPUs, but two seconds for 100,000 on 1,024 (bench/schedule_bench.cc, BM_FifoPlanOfEveryJob).
inline constexpr int kFifoPlanDepth = 10'000;

// When a running job that started at `start` with `limit` and is predicted to run `predicted` is
// likely to end, at `now`: its predicted end; once it has outrun that, a quarter of its time so far
// again (at least five minutes); never past its limit, never before `now`.
Time LikelyEnd(Time start, Duration limit, Duration predicted, Time now);

// Every pending job's forecast start (`now` for those the next pass starts); kNever where none can
// be foreseen. Running jobs end at their LikelyEnd (or at their preemption's kill). Jobs are keyed
// by Job::name for the prediction.
std::unordered_map<JobId, Time> ForecastStarts(const ClusterState& state, const Policy& policy, Time now,
                                               const RuntimeModel& model,
                                               const ForecastOptions& options = {});

}  // namespace rota
