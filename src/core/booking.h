// Bookings: the lab's GPU calendar, made true. Pure rules (no clock, no I/O): whether a booking
// may be made and where it goes, what conflicts with it and which nearby slots are free, how an
// open booking moves through its life as time passes and its owner's work runs (or does not),
// how many GPU-hours it held, and how no-shows and overruns lower the owner's priority.
//
// States (docs/design.md, Bookings):
//   requested --confirm (rule or admin)--> confirmed --start--> active --end--> ended
//   requested --reject--> rejected;  requested|confirmed --cancel--> cancelled
//   requested --start passes unapproved--> rejected ("not approved before its start")
//   active --owner releases--> released;  active --nothing of the owner's runs within the grace--> no_show
//   active --the owner's work outlives the end--> overrun
// The daemon owns the truth (the store) and applies what these functions return.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/cluster.h"
#include "core/policy.h"
#include "core/types.h"

namespace rota {

enum class BookingState : std::uint8_t {
  kRequested,
  kConfirmed,
  kActive,
  kEnded,
  kReleased,
  kNoShow,
  kOverrun,
  kRejected,
  kCancelled,
};
// "requested", "confirmed", "active", "ended", "released", "no_show", "overrun", "rejected",
// "cancelled".
const char* BookingStateName(BookingState s);
std::optional<BookingState> ParseBookingState(std::string_view name);
// Requested, confirmed and active bookings claim capacity (requested ones only in conflict
// checks: two requests for one slot are a conflict the admin must see).
bool IsOpen(BookingState s);

struct BookingRules {
  Duration slot = 30 * kMinute;     // starts and ends on multiples of this, in local time
  Duration max_ahead = 14 * kDay;   // a booking starts at most this far from now
  // "Book the day before": a booking that starts on the day it is made (local time) needs an admin.
  bool same_day_needs_admin = true;
  Duration max_length = 12 * kHour;  // longest booking; longer ones are refused
  int max_per_week = 0;              // bookings per user per quota week (by start); 0 = no limit
  // Booked GPU-hours per user per quota week (GPU-equivalents x hours held or planned); negative
  // = the user's weekly quota (Policy::quota), and unlimited when that is.
  double max_gpu_hours_per_week = -1;
  bool auto_confirm = true;          // within the rules, no conflict, not thesis: confirmed at once
  Duration no_show_grace = 15 * kMinute;
  Duration reminder = 10 * kMinute;  // before the end
  // No-shows and overruns: each adds `penalty_step` to the owner's penalty, decaying with
  // `penalty_half_life`; `penalty_alert` of them within `penalty_window` tell the admins.
  double penalty_step = 0.25;
  Duration penalty_half_life = 7 * kDay;
  int penalty_alert = 3;
  Duration penalty_window = 30 * kDay;
};

// What a user asks for.
struct BookingSpec {
  std::string user;
  std::string project;
  std::string note;                 // the spreadsheet's purpose column
  Tier tier = Tier::kRegular;
  Request request;                  // N whole GPUs, a memory share, or a MIG profile
  std::vector<int> cards;           // specific cards (indices into the GPU list); empty = any
  Time start = 0;
  Time end = 0;                     // exclusive
};

// A booking as the rules see it.
struct BookingEntry {
  std::int64_t id = 0;
  BookingSpec spec;
  Allocation alloc;                 // the capacity it holds (indices into the GPU list)
  BookingState state = BookingState::kRequested;
  Time actual_end = 0;              // when it ended, was released or lapsed; 0 while open
  bool reminded = false;            // the end reminder went out
  bool used = false;                // the owner's work ran on it at some point
};

// The verdict on a new booking (or on moving an existing one: pass its id as `ignore`).
struct BookingCheck {
  // Refusals, each a full sentence that says what would be accepted: start in the past, end not
  // after start, times not on the slot grid, beyond max_ahead, longer than max_length, an unknown
  // card, a request no card can hold, cards that do not match the request.
  std::vector<std::string> errors;
  // Reasons it may only be confirmed by an admin: starts today, over the weekly count or hours,
  // thesis tier over an existing booking, auto_confirm off.
  std::vector<std::string> needs_admin;
  // Open bookings in the way (ids, ascending): those overlapping [start, end) on capacity the
  // request would need, when no placement avoids them.
  std::vector<std::int64_t> conflicts;
  // Where it goes when it fits: whole cards best packed next to other bookings (any N), the
  // named cards, a card for the share, or a slice of the profile.
  std::optional<Allocation> alloc;
  // When it does not fit: up to 3 free starts of the same length, nearest to the asked start
  // first (earlier ones not in the past, nor beyond max_ahead), on the slot grid.
  std::vector<Time> alternatives;
  // GPU-equivalents x hours of the booking (a share or a slice counts its fraction of the largest
  // card), what counts against max_gpu_hours_per_week.
  double gpu_hours = 0;
};

// Checks `spec` against `gpus` (drained cards cannot be booked), the other bookings (`existing`,
// any state; only open ones matter; `ignore` is skipped), the rules and the policy (its
// zone for "today" and the slot grid, its quota week and the user's quota). `by_admin`:
// the caller is an admin (needs_admin then lists nothing; an admin's booking may displace
// a lower tier only through an explicit decision, which is the daemon's to make).
BookingCheck CheckBooking(const BookingSpec& spec, const std::vector<BookingEntry>& existing,
                          const std::vector<Gpu>& gpus, const BookingRules& rules, const Policy& policy, Time now,
                          bool by_admin, std::int64_t ignore = 0);

// What the daemon sees of an active booking at `now`.
struct BookingObservation {
  bool owner_running = false;   // a job or session of the owner runs on the booked capacity
  bool others_waiting = false;  // someone else's job waits for capacity the booking holds
};

struct BookingTransition {
  std::int64_t id = 0;
  BookingState from = BookingState::kConfirmed;
  BookingState to = BookingState::kActive;
  std::string reason;  // "Started", "No-show: nothing ran within 15m", "Ended", "Overrun: ...", ...
};

struct BookingStep {
  std::vector<BookingTransition> transitions;
  std::vector<std::int64_t> reminders;       // send the end reminder now (then set `reminded`)
  std::vector<std::int64_t> stop_owner_jobs; // overrun while others wait: stop the owner's work there
  std::vector<std::int64_t> mark_used;       // the owner's work runs on it now (set `used`)
  Time next_wakeup = kNever;                 // the next time something is due
};

// Advances every open booking to `now`. Observations are by booking id (missing = nothing runs,
// nobody waits). Rules, in order:
//  - requested, start reached: rejected, "not approved before its start";
//  - confirmed, start reached: active ("Started");
//  - active, owner's work runs: mark_used;
//  - active, never used and start + no_show_grace reached: no_show;
//  - active, end - reminder reached, not reminded: reminders;
//  - active, end reached: nothing of the owner's runs -> ended; it runs and others wait ->
//    overrun, stop_owner_jobs; it runs and nobody waits -> stays active (extended while nobody
//    needs the capacity; checked again at every step);
// next_wakeup: the earliest start, grace end, reminder or end still ahead (an active booking
// past its end asks to be looked at again after one slot).
BookingStep StepBookings(const std::vector<BookingEntry>& bookings,
                         const std::unordered_map<std::int64_t, BookingObservation>& seen, const BookingRules& rules,
                         Time now);

// GPU-hours a booking holds against the owner's weekly booking allowance: planned hours while
// open, the hours actually held once ended early (released, no-show: from start to actual_end),
// the full span for ended and overrun ones, nothing for rejected or cancelled ones.
double HeldGpuHours(const BookingEntry& b, const std::vector<Gpu>& gpus);

// A user's booking penalty at `now` in [0, 1]: each no_show or overrun booking (by actual_end)
// adds rules.penalty_step, halved every penalty_half_life. The daemon adds it to
// ClusterState::penalty (clamped to 1).
double BookingPenalty(const std::vector<BookingEntry>& bookings, std::string_view user, const BookingRules& rules,
                      Time now);

// No-shows and overruns of `user` with actual_end in (now - penalty_window, now]: at
// rules.penalty_alert or more the admins are told.
int BookingStrikes(const std::vector<BookingEntry>& bookings, std::string_view user, const BookingRules& rules,
                   Time now);

// The holds the scheduler must respect: one core Booking per confirmed or active booking over
// [start, end); an active one past its end (extended while nobody waits) holds [start, now + slot).
std::vector<Booking> BookingHolds(const std::vector<BookingEntry>& bookings, const BookingRules& rules, Time now);

// Puts the bookings into the state the scheduler plans on, as the daemon and the simulator both
// do before every pass: their holds (BookingHolds), and for every user with a no-show or an
// overrun, the booking penalty (clamped to 1) in state.penalty, replacing what was there.
void AddBookingsToState(ClusterState& state, const std::vector<BookingEntry>& bookings, const BookingRules& rules,
                        Time now);

// The booking slot grid, in wall time (a 30 m grid starts bookings at :00 and :30 local, whatever
// the offset of the day; the hour skipped in spring has no grid points, the hour repeated in
// autumn has its own). OnGrid: `t` is a grid point. GridFloor: the last grid point at or before
// `t`. GridCeil: the first at or after it.
bool OnGrid(Time t, Duration slot, const Zone& zone);
Time GridFloor(Time t, Duration slot, const Zone& zone);
Time GridCeil(Time t, Duration slot, const Zone& zone);

}  // namespace rota
