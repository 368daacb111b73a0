// Replay statistics: waiting times, completion times, utilisation and fairness of one replay.
//
// Computed from the outcome of every job once a replay is over. All times are in seconds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/booking.h"
#include "core/types.h"

namespace rota::sim {

// What happened to one job in a replay.
struct JobOutcome {
  std::int64_t id = 0;
  std::string user;
  rota::Time submit = 0;
  rota::Time start = 0;  // REQUIRES: start >= submit
  rota::Time end = 0;    // REQUIRES: end >= start
  double gpus = 0;       // GPU equivalents held while running, fractional for shares
  rota::Duration limit = 0;  // the time limit the scheduler saw (SimConfig::estimates)
};

struct Metrics {
  std::int64_t jobs = 0;
  double avg_wait = 0;  // wait = start - submit
  double p50_wait = 0;  // percentiles by nearest rank on the sorted values
  double p99_wait = 0;
  double max_wait = 0;
  double avg_jct = 0;  // job completion time = end - submit
  double p99_jct = 0;
  rota::Duration makespan = 0;  // last end - first submit
  double utilisation = 0;       // busy GPU-seconds / (total_gpus * makespan); 0 when either is 0
  // Jain's index J = (sum x)^2 / (n * sum x^2) over users, x being each user's mean wait
  // (jain_wait) or mean bounded slowdown (wait + run) / max(run, 10 s) (jain_slowdown).
  // 1 when all x are 0; -1 when there are fewer than 2 users.
  double jain_wait = -1;
  double jain_slowdown = -1;
  int users = 0;  // distinct user names (the empty name counts as one user)
};

// One user's waits in a replay (or as recorded).
struct UserWaits {
  std::string user;
  std::int64_t jobs = 0;
  double avg_wait = 0;
  double p99_wait = 0;
};
// Each user's, by name.
std::vector<UserWaits> PerUserWaits(const std::vector<JobOutcome>& outcomes);

// Summarises a replay on a cluster of `total_gpus` GPUs. Empty input gives all zeros and -1 for
// the Jain indexes.
Metrics ComputeMetrics(const std::vector<JobOutcome>& outcomes, double total_gpus);

// Nearest-rank percentile (p in (0, 100]) of `sorted` (ascending): the value at rank ceil(p/100*n).
// 0 for an empty vector.
double NearestRankPercentile(const std::vector<double>& sorted, double p);

// Jain's fairness index of `x` as defined above; -1 for fewer than 2 values.
double JainIndex(const std::vector<double>& x);

// ---- Bookings ----

// How a booking's request fared when it was made (CheckBooking at its creation time).
enum class BookingVerdict : std::uint8_t {
  kConfirmed,   // placed and confirmed by the rules
  kRefused,     // the rules refused it (past, off the slot grid, too long, too many GPUs, ...)
  kNoRoom,      // no placement: other bookings hold the capacity then
  kNeedsAdmin,  // only an admin could confirm it; the replay has none, so it lapses at its start
};
const char* BookingVerdictName(BookingVerdict v);  // "confirmed", "refused", "no_room", "needs_admin"

// One booking as a replay saw it.
struct BookingOutcome {
  std::int64_t id = 0;
  std::string user;
  std::vector<int> cards;  // the booked cards (empty unless placed)
  rota::Time made = 0;
  rota::Time start = 0;
  rota::Time end = 0;
  bool show = true;  // the owner meant to come
  BookingVerdict verdict = BookingVerdict::kConfirmed;
  rota::BookingState state = rota::BookingState::kConfirmed;  // at the end of the replay
  rota::Time closed = 0;         // when it ended, was released or lapsed (actual_end); 0 while open
  bool used = false;             // the owner's work ran on it (the rules' `used`)
  bool owner_blocked = false;    // released as a no-show while the owner's job was still waiting
  bool owner_elsewhere = false;  // the owner's booked work started on cards other than the booked ones
  double per_card = 1;           // of each card it holds: 1 for whole cards, a share's or slice's fraction
  int mig = -1;                  // the booked slice of cards[0], or -1
};

// One run of a job on the simulated cluster: from a start to its end, kill or preemption.
struct RunSpan {
  std::int64_t job = 0;
  std::string user;
  std::vector<int> cards;  // the cards it held
  double per_card = 1;     // GPU-equivalents on each card: 1 for whole cards, the share's fraction
  rota::Time start = 0;
  rota::Time end = 0;
  rota::Time planned_end = 0;  // start + its time limit: where the scheduler expected it to end
  std::int64_t booking = 0;    // the booking whose owner's work this is; 0 for a trace job
  int mig = -1;                // the slice of cards[0] it ran on, or -1
};

// What became of the booked capacity, in GPU-hours over the confirmed bookings' planned spans
// [start, end) on their cards (a share or a slice: its fraction of the card). A booking holds from
// its start until it closes early (no-show, release) or its end; over that hold, a card-second is
//   used     by a run of the owner,
//   lent     to a run of someone else that the scheduler started knowing of the booking (after it
//            was made) with a planned end after the booking's start: backfill onto the booking;
//   in_way   to a run of someone else that was already there (started before the booking was made,
//            or outliving its time limit): the booking could not have its cards;
//   idle     otherwise;
// and from an early close to the planned end it is `released`. The five add up to `booked`. A
// share of a card holds only part of it: the owner's runs on the card fill the booked part first
// (up to it); others' runs count against it only for what they hold beyond the rest of the card
// (in proportion to each one's part). A slice counts only the runs on that slice.
// Apart from them, `elsewhere` is the owner's work for a booking that ran on other cards during
// its planned span (the scheduler does not steer an owner's job onto the booked cards).
struct BookingMetrics {
  std::int64_t requested = 0;
  std::int64_t confirmed = 0;
  std::int64_t refused = 0;  // all that were not confirmed: rules + no_room + needs_admin
  std::int64_t refused_rules = 0;
  std::int64_t refused_no_room = 0;
  std::int64_t needs_admin = 0;
  std::int64_t shows = 0;                  // confirmed bookings whose owner meant to come
  std::int64_t used = 0;                   // confirmed bookings the owner's work ran on
  std::int64_t no_shows = 0;               // released by the rules as a no-show
  std::int64_t no_show_owner_blocked = 0;  // of which the owner came but their job had not started
  std::int64_t owner_elsewhere = 0;        // the owner's booked work started off the booked cards
  std::int64_t overruns = 0;
  double booked_gpu_hours = 0;
  double used_gpu_hours = 0;
  double released_gpu_hours = 0;
  double lent_gpu_hours = 0;
  double in_way_gpu_hours = 0;
  double idle_gpu_hours = 0;
  double elsewhere_gpu_hours = 0;
  // The effect on everyone else (filled by Simulate, which replays the trace again without the
  // bookings): the trace jobs' mean wait with and without them, and of the jobs of users who
  // made no booking ("others"; all trace jobs when the bookers have no trace jobs).
  double avg_wait_with = 0;
  double avg_wait_without = 0;
  double others_avg_wait_with = 0;
  double others_avg_wait_without = 0;
  std::int64_t others_jobs = 0;
};

// Counts and GPU-hours as defined above, from every booking and every run of a replay.
BookingMetrics ComputeBookingMetrics(const std::vector<BookingOutcome>& bookings,
                                     const std::vector<RunSpan>& runs);

}  // namespace rota::sim
