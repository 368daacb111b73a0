// The scheduling decision: one pure function from the cluster state, the policy and the time to
// what should happen now. No I/O, no clock, no randomness: the same inputs give the same
// decisions, which is what lets the simulator replay traces with the daemon's own code.
//
//   Decisions d = Schedule(state, policy, now);
//
// returns the jobs to start (with their exact cards, share or MIG slice), the signals to send
// (time limits, preemptions: kill at the given time unless the job ends first), the kills that
// are due, and for every pending job its priority factors, why it waits and when it is expected
// to start. See docs/design.md, "How a decision is made".
#pragma once

#include "core/cluster.h"
#include "core/decisions.h"
#include "core/policy.h"

namespace rota {

Decisions Schedule(const ClusterState& state, const Policy& policy, Time now);

class QueueIndex;
// The same decisions, the pass's order taken from `index` where it serves (core/queue_index.h):
// for a caller that schedules the same queue again and again (the simulator).
Decisions Schedule(const ClusterState& state, const Policy& policy, Time now, const QueueIndex* index);

class CapacityPlan;
// The same decisions again, the capacity plan kept between passes in `plan` where it serves
// (CapacityPlan::Keeps; core/capacity.h, "Kept between passes"): for the same caller, which tells
// the plan of every run it removes (CapacityPlan::RunningTaken).
Decisions Schedule(const ClusterState& state, const Policy& policy, Time now, const QueueIndex* index,
                   CapacityPlan* plan);

}  // namespace rota
