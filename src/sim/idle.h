// Why GPUs sit idle in a replay: after each pass, the capacity nobody holds is put down to one
// cause until the next event, so that a replay can say how much of its lost utilisation comes
// from reservations, bookings, quotas, fragmentation across nodes, or draining for a large job,
// and how much from there being no work. Measured before any policy change (issue 28): a policy
// that keeps cards idle while jobs that would fit wait shows it here.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/cluster.h"
#include "core/decisions.h"

namespace rota::sim {

// GPU-seconds (GPU-equivalents for memory shares) idle for each cause over a replay.
struct IdleGpuSeconds {
  // A waiting job fits on the idle capacity now (on one node when it fits in one) but is held
  // back for capacity promised to jobs ahead of it: reservations (WaitReason Priority, Resources
  // or PeakHours).
  double held = 0;
  double booking = 0;  // ... held back by someone else's booking (and nothing else fits)
  double quota = 0;    // ... held back by its owner's quota (and nothing else fits)
  // No waiting job fits, but one would by the number of idle cards: they are spread over nodes.
  double fragmented = 0;
  // Every waiting job needs more than is idle: the cards wait for a larger job to gather.
  double draining = 0;
  double no_work = 0;  // nothing waits but jobs whose dependencies have not ended
  double Total() const { return held + booking + quota + fragmented + draining + no_work; }
};

enum class IdleCause : std::uint8_t { kHeld, kBooking, kQuota, kFragmented, kDraining, kNoWork };

// The cause of the idle capacity of `state` (after the pass's starts were applied), given the
// jobs still waiting and why. A request of no more cards than the largest node must fit on one
// node, as CapacityPlan places it. Returns the cause and the idle GPU-equivalents (whole cards
// nobody holds plus the unheld part of shared cards). MIG slices are not simulated.
std::pair<IdleCause, double> ClassifyIdle(const ClusterState& state,
                                          const std::vector<std::pair<const Job*, WaitReason>>& waiting);

// The same where every waiting job waits for capacity (WaitReason::kPriority), from the shapes
// of what they ask for alone: jobs by whole cards asked for, by memory share, by MIG profile (as
// QueueIndex counts them), without visiting the queue.
std::pair<IdleCause, double> ClassifyIdle(const ClusterState& state, const std::map<int, int>& whole,
                                          const std::map<MiB, int>& shares,
                                          const std::map<std::string, int>& mig);

void AddIdle(IdleGpuSeconds& into, IdleCause cause, double gpu_seconds);

}  // namespace rota::sim
