// The lab's own history as a trace (issue 29), for `rota simulate --from-store`, `rota tune` and
// the page's replays (rotad's op `replay`). The jobs that ran,
// as rotad recorded them (op `history`, everyone's, as the queue is everyone's): submit time, run
// time, request, user, project, tier and time limit; the replayed cluster is this server's cards
// (op `gpus`; the command line asks rotad for both, rotad's replay desk asks itself). Also the waits as they
// were, to set beside the replays. Tested by store_trace_test.cc (the conversion) and
// tests/daemon/test_simulate_store.py (a real rotad).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/status.h"
#include "sim/bookings.h"
#include "sim/metrics.h"
#include "sim/trace.h"

namespace rota::replay {

struct StoreTrace {
  sim::Trace trace;                       // absolute times, recorded limits
  int gpus = 0;                           // the server's cards
  MiB gpu_memory = 0;                     // of its first card
  std::vector<Gpu> cards;                 // as they are: memory, node, MIG slices (the replay's cluster)
  std::vector<sim::JobOutcome> recorded;  // the replayed jobs as they really waited and ran
  Time first_end = 0;                     // the earliest end among the jobs read
  // Whole days between the window's start and its first end, where said in the notes (0: not
  // said): the page says it in the reader's language (docs/api.md, `replay`).
  int late_days = 0;
  std::vector<sim::SimBooking> bookings;  // the bookings of the same days, by when they were made
};

// From the replies of `gpus` and the pages of `history`. Jobs that never ran (cancelled while
// waiting) are left out and counted in the trace's `skipped`. Shares ask their memory and MIG
// jobs their profile, on the cards as they are now (a job whose profile no card offers any more
// cannot be replayed and is counted as rejected by the replay).
// `since`: the start of the window as rotad read it (0: unknown); a window that begins well before
// its first job's end is said in the trace's notes.
StatusOr<StoreTrace> StoreTraceFromJson(const nlohmann::json& gpus, const std::vector<nlohmann::json>& jobs,
                                        Time since = 0);

// The MIG slices among `cards` (the replay's cluster as `rota simulate` and the page say it).
int MigSlices(const std::vector<Gpu>& cards);

// The bookings of a `bookings` reply (everyone's) as the replay takes them: bookings of whole
// cards, of a memory share or of a MIG slice that were asked for and held (neither rejected nor
// cancelled), made when they were created,
// with `show` false for a no-show, starting before `until` (the replayed days' end: a booking
// still to come is no part of the history); the others are left out.
std::vector<sim::SimBooking> StoreBookingsFromJson(const nlohmann::json& reply, Time until);

}  // namespace rota::replay
