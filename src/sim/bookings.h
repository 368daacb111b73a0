// Bookings for a replay: a list read from a CSV file or made up at a rate, in the simulator's
// time. The replay puts each one through the lab's real booking rules (core/booking.h); see
// simulator.h for how, and docs/design.md, "The simulator", for the model.
//
// The CSV file has a header and the columns user,gpus,start,end,show (any order; more columns
// are ignored) and optionally made:
//   user   who books (a user of the trace, or anyone: a booker with no jobs of their own)
//   gpus   whole GPUs, >= 1
//   start, end  the booked span [start, end); in the trace's time base: seconds on the scale of
//          the trace's submit column when it holds seconds (0 = --start), Unix seconds when it
//          holds dates; a date "YYYY-MM-DD HH:MM[:SS]" (UTC) is accepted either way
//   show   1: the owner runs work in it; 0: a no-show
//   made   when it is asked for (same time base); empty or absent: `ahead` before the start
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "core/types.h"
#include "core/zone.h"
#include "sim/trace.h"

namespace rota::sim {

struct SimBooking {
  std::string user;
  int gpus = 1;           // whole GPUs (unless memory or mig_profile says otherwise)
  rota::Time made = 0;    // when it is asked for: CheckBooking runs then
  rota::Time start = 0;   // simulator time (Unix seconds)
  rota::Time end = 0;     // exclusive
  bool show = true;       // the owner runs work in it
  std::int64_t line = 0;  // line in the CSV file; 0 when generated
  // Where set, it books a share of `memory` on one card or a MIG slice of `mig_profile` instead of
  // whole GPUs (a store replay's; booking files and generated bookings book cards).
  rota::MiB memory = 0;
  std::string mig_profile;
};

// The user a trace job runs as in the replay: its user, else its project, else "user".
std::string TraceUserName(const TraceJob& job);

// Who books in generated bookings: the trace's distinct users when there are at least two (in
// order of first appearance); otherwise (a trace without users, such as Philly's, where every job
// runs as one user, whose bookings would bind nobody) four lab members "booker-1".."booker-4"
// whose only work is what they run in their bookings.
std::vector<std::string> BookingUsers(const Trace& trace);

struct BookingGenOptions {
  double per_day = 0;                 // bookings per day of the trace (first to last submit)
  double no_show = 0.2;               // fraction of bookings whose owner does not come
  rota::Duration ahead = rota::kDay;  // made this long before the start (then up to the next slot)
  rota::Duration min_length = 2 * rota::kHour;
  rota::Duration max_length = 8 * rota::kHour;
  int max_gpus = 2;                          // 1..max_gpus whole GPUs, uniformly
  rota::Duration slot = 30 * rota::kMinute;  // starts and lengths on this grid (the rules' slot)
  rota::Zone zone;                           // the grid is in local time, as the rules see it
  std::uint64_t seed = 1;
};

// round(per_day x days) bookings, days = (last submit - first submit) / 1 day: made at uniform
// times over that span, starting `ahead` later rounded up to the slot grid, lengths uniform over
// the slot multiples in [min_length, max_length], owners uniform over BookingUsers, no-shows with
// probability no_show. Deterministic in the seed. Sorted by made time. `epoch` places relative
// trace times (SimConfig::epoch).
std::vector<SimBooking> GenerateBookings(const Trace& trace, const BookingGenOptions& options,
                                         rota::Time epoch);

// Parses a booking CSV (see the top). `absolute`: the trace's times are Unix seconds (else
// numbers are relative to `epoch`). Rows sorted by made time (file order kept at ties). Errors
// name the input and line.
rota::StatusOr<std::vector<SimBooking>> ParseBookings(std::string_view csv_text, const std::string& name,
                                                      bool absolute, rota::Time epoch, rota::Duration ahead);
rota::StatusOr<std::vector<SimBooking>> LoadBookings(const std::string& path, bool absolute, rota::Time epoch,
                                                     rota::Duration ahead);

}  // namespace rota::sim
