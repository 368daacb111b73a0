// The reference scheduler: a slow, obviously correct checker of Schedule()'s decisions.
//
//   Decisions d = Schedule(state, policy, now);
//   CheckResult r = CheckDecisions(state, policy, now, d);
//   if (!r.ok()) ... r.violations are human-readable, one per broken invariant
//
// It never calls Schedule() or CapacityPlan: capacity is recomputed on a plain explicit timeline
// (per unit, a list of [start, end) intervals with an amount; every candidate time is tried),
// quota and priority factors are recomputed from their definitions. It does use PriorityModel,
// but only to learn the priority value the scheduler gave a job that STARTED (started jobs get
// no PendingInfo), so that it can rebuild the order the scheduler considered the jobs in; the
// values themselves are checked against an independent recomputation with a tolerance.
//
// What is verified (each item is a separate check with its own message):
//
//  Structure
//   - starts name pending jobs, none twice; every pending job that did not start has exactly one
//     PendingInfo, no PendingInfo names a started or unknown job; PendingInfo is in the order the
//     scheduler considered jobs (see "Order" below).
//  Allocations of starts
//   - the allocation matches the request: N distinct whole non-MIG cards for N GPUs (all on one
//     node when N <= the largest node's number of non-MIG cards); one non-MIG card with exactly
//     the requested memory for a share; one slice of the requested profile on a MIG card;
//     indices in range; no drained card or slice.
//  Capacity now (running jobs plus starts)
//   - a whole card is held by at most one job and never together with a share; shares on a
//     card sum to at most its memory; shares only on non-MIG cards; new shares on a card sum to at
//     most its reported free memory when known; no MIG slice is held twice.
//  Dependencies, feasibility, quota
//   - no job starts while one of its `after` jobs (other than itself) is pending or running; a
//     job waits with reason Dependency exactly when that is so;
//   - reason Impossible exactly when no card of the cluster (drained or not) could ever hold the
//     request (N > number of non-MIG cards, share larger than every non-MIG card, unknown MIG
//     profile, N < 1, memory <= 0);
//   - quota, replayed in the scheduler's order from an independent computation of what each
//     account spent this week (usage records plus running jobs' limits in the week; in hybrid
//     mode what ran on a project's pool is the pool's, not the user's): a job waits with
//     QuotaExhausted exactly when its need (GPU-equivalents x limit) does not fit what is left
//     and it may not overflow as explore; its expected start is the next week start; a started
//     job's `preemptible` and `from_pool` flags follow from its tier and the quota verdict.
//  Priority factors
//   - every factor in range and equal (1e-9) to an independent recomputation from the state;
//     the priority is the weighted sum of the factors (left at their defaults, display only,
//     for fifo and backfill without Policy::estimate_starts).
//  Stops
//   - kills exactly for the running jobs whose kill_at <= now, with the right cause;
//   - a time-limit signal exactly for the running jobs that are due (limits enforced, no stop
//     under way, not yet signalled, now >= max(start, start + limit - grace)), killing at the
//     limit or, for a job found past it, after its grace;
//   - at most one signal per job; no signal for a job whose stop is already under way;
//   - preemption signals only with algorithm rota and preemption on; the victim is preemptible
//     (started preemptible or in a preemptible tier) and, unless the preemption is a booking
//     claim, of a lower effective tier than the preemptor, which is not running over quota as
//     explore; a booking claim is a victim of another user holding a unit of a booking of the
//     preemptor's user that has not ended and begins before now + the preemptor's limit (any
//     tiers, over quota or not); the preemptor is a pending job that did not start and waits with
//     reason Resources; kill_at = now + grace, requeue as the victim asks.
//  The timeline (conservative / EASY backfill), the key property
//   Let O be the order in which the scheduler considered the pending jobs (submit time then id
//   for fifo and backfill; for rota tier, then the protected jobs by submit time (of the due ones
//   the protect_max longest waiting; under Policy::protect_foreseen, in the room left, those the
//   same pass without it reserved past their due time: CheckOptions::unforeseen), then priority,
//   submit time, id). Replay O on an explicit timeline
//   that starts with the running jobs (until their expected end: kill_at when a stop is under
//   way, else start + limit; a job past that ends within a second, or after overdue_grace when
//   limits are not enforced) and the bookings (which bind every user but their owner, except a
//   job that borrows: see below). Each job X, in turn, is checked against what is on the timeline
//   at that point (the jobs AHEAD of it), then added to it:
//     - a started X must fit at now for its whole limit on its actual allocation (capacity,
//       bookings of others, reported free memory for shares); with fifo, nothing may start after
//       the first blocked job. X borrows (no booking binds its start) when it would start
//       preemptible under rota with preemption on: explore tier (or another preemptible tier) or
//       over quota as explore. Nothing else ever starts on capacity booked by someone else;
//     - a blocked X (not started, not Dependency/Impossible/QuotaExhausted) must not fit now
//       (with no booking binding it if it borrows), except behind fifo's head of line; its reason
//       is the one the definition gives (Resources / Priority / Booking / PeakHours, Resources for
//       a preemptor; never Booking for a borrower, which fits with no booking binding);
//     - a preemptor's victims end at their kill time from its turn on; the preemption must be
//       needed (without it X could not start by the victims' kill time, nor by the end of the
//       preemptions already under way) and sufficient (with it X fits by the victims' kill time,
//       or by the time-limit kill of a job warned in this decision that it could have preempted,
//       which the scheduler may count on without signalling it twice);
//     - the first `plan_depth` blocked jobs (1 for backfill: EASY; at most 1 for fifo without
//       Policy::estimate_starts) hold reservations: X's expected_start must be exactly the
//       earliest time >= now (>= the previous reservation for fifo) at which X fits on the
//       timeline with the bookings of others binding (a borrower's too: a reservation is a
//       promise, and the booking is its owner's), found by trying every candidate time (now and
//       every end of an interval), or never if it fits at no time; X is then added to the
//       timeline at that time. Later blocked jobs are estimates: for backfill with
//       estimate_starts (up to plan_depth) exactly the earliest fit on the timeline, otherwise
//       only >= now. For a share on a card whose device reports too little free memory now, the
//       "earliest" may be read anywhere between "the report binds at now only" and "the card
//       takes no such share before the next end of an interval on it" (see DeviceRule in the
//       .cc); a reservation placed at now (behind fifo's head of line) holds the device's memory
//       like a start.
//   Because the timeline of X holds only running jobs, bookings and jobs ahead of X, a
//   lower-priority job that starts now (a backfilled one) can never have delayed X's
//   reservation; and because a started job must fit on a timeline that holds every
//   reservation ahead of it, no backfilled start overlaps a reservation it must respect.
//   Decisions do not say on which units a reservation was placed, so the replay searches for
//   one: at each reservation it tries every placement at the expected start (up to symmetry of
//   interchangeable units) and backtracks; the check fails only if NO choice of placements makes
//   every step hold. A search that exceeds CheckOptions::max_search_steps is reported as
//   inconclusive, never as a violation.
//  Wake-up
//   - now <= next_wakeup (equal only when a signal kills at now), and next_wakeup is no later
//     than any kill time, reservation, warning time, booking change or quota week end that is
//     still ahead.
#pragma once

#include <string>
#include <vector>

#include "core/cluster.h"
#include "core/decisions.h"
#include "core/policy.h"
#include "core/types.h"

namespace rota::testing {

struct CheckOptions {
  // Budget of the reservation-placement search (steps of the backtracking replay).
  long max_search_steps = 200000;
  // Record every failed step of the timeline search in CheckResult::trace (for debugging).
  bool trace = false;
  // Under Policy::protect_foreseen: the decisions of the same pass with it off and explained, so
  // that the jobs it must protect early can be read off their reservations (the caller makes them
  // with Schedule() and checks them too). Without them, the jobs the decisions say are protected
  // early are only checked to be ones the rule may protect, within protect_max.
  const Decisions* unforeseen = nullptr;
};

struct CheckResult {
  std::vector<std::string> violations;  // empty: the decisions are consistent
  bool inconclusive = false;            // the timeline search ran out of budget (not a failure)
  long search_steps = 0;
  std::vector<std::string> trace;  // with CheckOptions::trace: "depth k: why" per failed step
  bool ok() const { return violations.empty(); }
};

// Checks `d`, which Schedule(state, policy, now) is supposed to have returned. `state` must
// itself be valid (see CheckState).
CheckResult CheckDecisions(const ClusterState& state, const Policy& policy, Time now, const Decisions& d,
                           const CheckOptions& options = {});

// Invariants of a state itself (generator output; states advanced step by step): unique job
// ids across pending and running, valid allocations of running jobs (indices, MIG slices,
// shares on non-MIG cards within memory), no card, share memory or slice held twice.
std::vector<std::string> CheckState(const ClusterState& state);

// Readable dumps for failure messages; times are shown relative to `now`.
std::string DescribeCase(const ClusterState& state, const Policy& policy, Time now);
std::string DescribeDecisions(const Decisions& d, Time now);

}  // namespace rota::testing
