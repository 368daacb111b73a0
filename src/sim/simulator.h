// The trace simulator: replays a job trace through the very same Schedule() that runs the lab,
// in virtual time. It jumps from event to event (arrivals, completions, kill deadlines, the
// core's next wake-up) and never sleeps, so months of a cluster replay in seconds.
//
// What it models and what it does not: jobs run exactly their trace duration; the core sees only
// their time limits, which are the estimates chosen by SimConfig::estimates (exact, noisy or from
// the user's history), as in a real lab where a job's limit is the user's guess. Limits are not
// enforced (a trace duration is the truth), so a job that outlives a low estimate keeps running.
// Preempted jobs keep the progress they had when signalled (they checkpoint on the signal) and
// are requeued with their original submit time when they asked for it; the others end there.
// Jobs that no card of the simulated cluster could ever hold are rejected and counted.
//
// Bookings (SimConfig::bookings) go through the lab's real rules (core/booking.h), as the daemon
// applies them: CheckBooking when a booking is made (refused, no room and needs-an-admin ones are
// counted; the replay has no admin, so those last lapse at their start), StepBookings at every
// event (the replay also wakes at every booking's start, grace end, reminder and end), and
// BookingHolds in the state of every Schedule() call; no-shows and overruns raise the owner's
// penalty as in the daemon. The owner's work: when a booking with `show` starts, the owner
// submits one job of the booked GPUs that runs until `booking_margin` before the end, asking
// for the rest of the booking as its time limit (updated while it waits); it is withdrawn if the
// booking closes before it starts. Like the daemon, the rules count any running job of the owner
// on the booked cards as the booking used, trace jobs of the owner included. Booking jobs are
// not trace jobs: they are left out of the outcomes and of every figure in Metrics (waits,
// utilisation), and show in BookingMetrics instead. A booking with `show` = 0 gets no job.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "core/arrivals.h"
#include "core/booking.h"
#include "core/policy.h"
#include "core/status.h"
#include "sim/bookings.h"
#include "sim/idle.h"
#include "sim/metrics.h"
#include "sim/prediction.h"
#include "sim/trace.h"

namespace rota::sim {

// kRecorded: each job's recorded limit (TraceJob::limit; the run time where none is recorded).
// kModal: limits as people write them (Tsafrir, Etsion and Feitelson, "Modeling user runtime
// estimates", 2005: a few round values, often a habitual one whatever the job): each user has a
// habit of 4 h, 1 d or 3 d (drawn from the user's name and the seed); half of a user's jobs ask
// the habit (or the next round value that covers the run), the others the round value that covers
// the run times U[1, 2]. Round values: 5, 10, 15, 30 min, 1, 2, 4, 8, 12 h, 1, 2, 3, 7 d.
enum class Estimates : std::uint8_t { kExact, kNoisy, kHistory, kRecorded, kModal };
const char* EstimatesName(Estimates e);

struct SimConfig {
  int gpus = 8;
  int gpus_per_node = 8;
  MiB gpu_memory = 80 * 1024;  // memory of each simulated card (shares are fractions of it)
  // Not empty: the cards as they are (a store replay: each card's memory and node, MIG slices),
  // instead of `gpus` cards of `gpu_memory`; `gpus` must then be their number.
  std::vector<Gpu> cards;
  Policy policy;               // algorithm and everything else; enforce_time_limits is forced off
  Estimates estimates = Estimates::kExact;
  double noise_max = 3.0;      // kNoisy: limit = duration * U[1, noise_max] (users overestimate)
  int history_window = 5;      // kHistory: mean of the user's last N finished jobs
  Duration history_default = kHour;  // kHistory: before a user has history
  std::uint64_t seed = 1;
  Time epoch = 1767571200;     // where relative trace times start: Monday 2026-01-05 00:00 UTC
  bool keep_outcomes = false;  // fill SimResult::outcomes (and SimResult::booking_outcomes)
  // Read before each pass: once true, the replay stops and Simulate says so (kUnavailable). For a
  // replay run beside other work (rotad's replay desk), which must not outlive its owner.
  const std::atomic<bool>* stop = nullptr;
  std::vector<SimBooking> bookings;       // sorted by made time; empty: no bookings
  BookingRules booking_rules;             // the rules they go through (the daemon's defaults)
  Duration booking_margin = 5 * kMinute;  // the owner's work ends this long before the booking
  // Start forecasts (issue 29): every Nth trace job (by id) is foreseen when it arrives and its
  // start compared with what was foreseen (SimResult::prediction); 0: none. Decisions are the
  // same either way.
  int predict_every = 0;
  // ... foreseeing the jobs to come as the last period's again (core/arrivals.h), where the policy
  // lets later jobs overtake; a horizon of 0: forecasts know only the jobs queued.
  ArrivalOptions arrivals;
};

struct SimResult {
  std::string policy;
  bool stopped = false;  // SimConfig::stop cut it short: its figures are not a replay's
  Metrics metrics;
  std::int64_t rejected = 0;        // could never fit the simulated cluster
  std::int64_t unfinished = 0;      // still waiting when nothing more could happen
  std::int64_t preemptions = 0;
  std::int64_t schedule_calls = 0;
  IdleGpuSeconds idle;  // idle capacity over the replay, by cause (sim/idle.h)
  std::vector<JobOutcome> outcomes;
  // With bookings only: what became of them, and the same trace replayed without them.
  bool has_bookings = false;
  BookingMetrics bookings;
  std::vector<BookingOutcome> booking_outcomes;  // keep_outcomes only
  // With SimConfig::predict_every only.
  bool has_prediction = false;
  bool foresaw_arrivals = false;  // the forecasts foresaw arrivals (SimConfig::arrivals)
  PredictionMetrics prediction;
};

// With config.bookings, the trace is replayed twice: with the bookings and without them, for
// BookingMetrics' wait comparison; everything else in the result is the replay with them.
StatusOr<SimResult> Simulate(const Trace& trace, const SimConfig& config);

}  // namespace rota::sim
