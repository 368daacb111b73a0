// Tested by booking_test.cc.
//
// CheckBooking works in three stages, each cheap enough to run for every keystroke of a form:
// refusals (times, cards, the request itself), then placement on the calendar of open bookings
// (booking_place.cc) with conflicts and alternatives when it does not fit, then what only an
// admin may confirm. Alternatives are searched outward from the asked start one slot at a time,
// the later start before the earlier at equal distance (someone who cannot start at 14:00 can
// more often start at 14:30 than at 13:30, having planned for 14:00); they are listed in that
// order, so the nearest come first. StepBookings is a state machine driven only by `now` and
// what the daemon observes; it returns what to do and never does it.
#include "core/booking.h"

#include <algorithm>
#include <unordered_set>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <utility>

#include "core/booking_place.h"
#include "core/civil_date.h"
#include "core/quota.h"
#include "core/usage.h"

namespace rota {

namespace {

// "30m", "12h", "1h30m", "14d": spans as people write them in a message.
std::string Span(Duration d) {
  std::string out;
  static constexpr std::pair<Duration, const char*> kUnits[] = {{kDay, "d"}, {kHour, "h"}, {kMinute, "m"}, {1, "s"}};
  for (auto [unit, suffix] : kUnits) {
    if (d >= unit) out += std::to_string(d / unit) + suffix;
    d %= unit;
  }
  return out.empty() ? "0m" : out;
}

std::string Hours(double h) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", h);
  return buf;
}

Duration SlotOf(const BookingRules& rules) { return std::max<Duration>(rules.slot, 1); }

// What a time on the grid looks like: "use :00 or :30".
std::string GridHint(Duration slot) {
  if (slot % kMinute != 0 || kHour % slot != 0) return "use local midnight plus a multiple of " + Span(slot);
  if (kHour / slot > 6) return "use a multiple of " + Span(slot) + " past the hour";
  std::string out = "use ";
  for (Duration m = 0; m < kHour; m += slot) {
    char mark[32];
    std::snprintf(mark, sizeof mark, ":%02lld", static_cast<long long>(m / kMinute));
    if (m > 0) out += m + slot >= kHour ? " or " : ", ";
    out += mark;
  }
  return out;
}

// GPU-equivalents of bookings on one cluster. A share counts its memory over the largest card (as
// a job's quota check does, so where it lands does not change what it costs), a placed slice its
// own memory over its card's, whole cards one each.
class Equivalents {
 public:
  explicit Equivalents(const std::vector<Gpu>& gpus) : state_(WithGpus(gpus)), table_(state_) {}

  double Of(const Request& r, const Allocation* a) const {
    if (r.kind == RequestKind::kMig && a && ValidSlice(*a)) return AllocationGpus(state_, *a);
    if (r.kind == RequestKind::kWholeGpus && a && !a->gpus.empty()) return static_cast<double>(a->gpus.size());
    return std::max(0.0, table_.Of(r));
  }

  double HeldHours(const BookingEntry& b) const {
    const BookingSpec& s = b.spec;
    Time until = s.end;
    switch (b.state) {
      case BookingState::kRejected:
      case BookingState::kCancelled: return 0;
      // Ended early: what was actually held, never more than the span (an extension past the
      // end, while nobody needed the cards, is not charged: ended ones are not charged for it).
      case BookingState::kReleased:
      case BookingState::kNoShow: until = std::clamp(b.actual_end, s.start, std::max(s.start, s.end)); break;
      default: break;
    }
    if (until <= s.start) return 0;
    return Of(s.request, b.alloc.gpus.empty() ? nullptr : &b.alloc) * static_cast<double>(until - s.start) / kHour;
  }

 private:
  static ClusterState WithGpus(const std::vector<Gpu>& gpus) {
    ClusterState s;
    s.gpus = gpus;
    return s;
  }
  bool ValidSlice(const Allocation& a) const {
    if (a.gpus.empty() || a.gpus[0] < 0 || static_cast<size_t>(a.gpus[0]) >= state_.gpus.size()) return false;
    return a.mig >= 0 && static_cast<size_t>(a.mig) < state_.gpus[a.gpus[0]].mig.size();
  }

  ClusterState state_;
  RequestGpuTable table_;
};

void CheckTimes(const BookingSpec& spec, const BookingRules& rules, const Zone& zone, Time now,
                std::vector<std::string>& errors) {
  const Duration slot = SlotOf(rules);
  auto at = [&zone](Time t) { return FormatLocal(t, zone); };
  if (spec.start < now) {
    errors.push_back("the start " + at(spec.start) + " is in the past (it is " + at(now) + "): book from " +
                     at(GridCeil(now, slot, zone)) + " on");
  }
  if (spec.end <= spec.start) {
    errors.push_back("the end " + at(spec.end) + " is not after the start " + at(spec.start) +
                     ": a booking lasts at least one " + Span(slot) + " slot");
  }
  const std::pair<Time, const char*> ends[] = {{spec.start, "start"}, {spec.end, "end"}};
  for (auto [t, what] : ends) {
    if (!OnGrid(t, slot, zone)) {
      errors.push_back(std::string("the ") + what + " " + at(t) + " is not on the " + Span(slot) + " slot grid (" +
                       GridHint(slot) + ")");
    }
  }
  if (spec.start > now + rules.max_ahead) {
    errors.push_back("the start " + at(spec.start) + " is more than " + Span(rules.max_ahead) +
                     " ahead: bookings may start until " + at(GridFloor(now + rules.max_ahead, slot, zone)));
  }
  if (spec.end > spec.start && spec.end - spec.start > rules.max_length) {
    errors.push_back("the booking lasts " + Span(spec.end - spec.start) + ": at most " + Span(rules.max_length) +
                     " can be booked at once");
  }
}

bool HasProfile(const Gpu& g, const std::string& profile) {
  return std::any_of(g.mig.begin(), g.mig.end(), [&](const MigSlice& s) { return s.profile == profile; });
}

// Cards that can be booked with a profile, or the profiles on offer: what to say instead.
std::string ProfileHint(const std::vector<Gpu>& gpus, const std::string& profile) {
  std::vector<std::int64_t> cards;
  for (size_t gi = 0; gi < gpus.size(); ++gi) {
    if (!gpus[gi].drained && HasProfile(gpus[gi], profile)) cards.push_back(static_cast<std::int64_t>(gi));
  }
  if (!cards.empty()) return "cards with it: " + JoinInts(cards, ", ");
  const std::vector<std::string> profiles = MigProfiles(gpus, /*in_service_only=*/true);
  if (profiles.empty()) return "no card in service is in MIG mode";
  return "profiles on offer: " + Join(profiles, ", ");
}

void CheckCards(const BookingSpec& spec, const std::vector<Gpu>& gpus, std::vector<std::string>& errors) {
  const Request& r = spec.request;
  std::vector<int> seen;
  for (int gi : spec.cards) {
    const std::string card = "card " + std::to_string(gi);
    if (gi < 0 || static_cast<size_t>(gi) >= gpus.size()) {
      errors.push_back(
          card + " does not exist (" +
          (gpus.empty() ? std::string("there are no cards") : "cards are 0-" + std::to_string(gpus.size() - 1)) + ")");
      continue;
    }
    if (std::find(seen.begin(), seen.end(), gi) != seen.end()) {
      errors.push_back(card + " is named twice: name each card once");
      continue;
    }
    seen.push_back(gi);
    const Gpu& g = gpus[gi];
    if (g.drained) {
      errors.push_back(card + " is drained (out of service): it cannot be booked until an admin resumes it");
    }
    if (r.kind != RequestKind::kMig && !g.mig.empty()) {
      errors.push_back(card + " is in MIG mode: book one of its slices (a MIG profile), not the card or a share of it");
    } else if (r.kind == RequestKind::kMig && !HasProfile(g, r.mig_profile)) {
      errors.push_back(card + " has no " + r.mig_profile + " slice (" + ProfileHint(gpus, r.mig_profile) + ")");
    } else if (r.kind == RequestKind::kMemShare && r.memory > g.memory) {
      errors.push_back("a " + FormatMemory(r.memory) + " share does not fit " + card + " (" + FormatMemory(g.memory) +
                       ")");
    }
  }
  if (spec.cards.empty()) return;
  if (r.kind == RequestKind::kWholeGpus && r.gpus >= 1 && spec.cards.size() != static_cast<size_t>(r.gpus)) {
    errors.push_back(std::to_string(spec.cards.size()) + " cards named for " + std::to_string(r.gpus) +
                     " whole GPUs: name exactly " + std::to_string(r.gpus) + ", or none to let Rota choose");
  } else if (r.kind != RequestKind::kWholeGpus && spec.cards.size() != 1) {
    errors.push_back(std::string(r.kind == RequestKind::kMig ? "a MIG slice" : "a memory share") +
                     " is on one card: name one card, or none to let Rota choose");
  }
}

// The request itself: well formed, and (cards not named) something the cards in service could hold.
void CheckRequest(const BookingSpec& spec, const std::vector<Gpu>& gpus, std::vector<std::string>& errors) {
  const Request& r = spec.request;
  int whole = 0, in_service = 0;
  MiB largest = 0;
  std::vector<std::int64_t> drained;
  for (size_t gi = 0; gi < gpus.size(); ++gi) {
    if (!gpus[gi].mig.empty()) continue;
    ++whole;
    if (gpus[gi].drained) {
      drained.push_back(static_cast<std::int64_t>(gi));
    } else {
      ++in_service;
      largest = std::max(largest, gpus[gi].memory);
    }
  }
  const bool any = spec.cards.empty();
  switch (r.kind) {
    case RequestKind::kWholeGpus:
      if (r.gpus < 1) {
        errors.push_back("a booking of whole GPUs takes at least 1");
      } else if (any && r.gpus > whole) {
        errors.push_back(CountOf(r.gpus, "whole GPU", "whole GPUs") + " is more than this server has: " +
                         (whole == 0 ? std::string("every card is in MIG mode; book a slice with --mig")
                                     : CountOf(whole, "card", "cards") + " can be booked whole"));
      } else if (any && r.gpus > in_service) {
        errors.push_back(std::to_string(r.gpus) + " whole GPUs: only " + std::to_string(in_service) + " of the " +
                         std::to_string(whole) + " cards are in service (drained: " + JoinInts(drained, ", ") + ")");
      }
      break;
    case RequestKind::kMemShare:
      if (r.memory <= 0) {
        errors.push_back("a memory share needs a size, such as 20G");
      } else if (any && r.memory > largest) {
        errors.push_back("a " + FormatMemory(r.memory) + " share fits no card: " +
                         (largest > 0 ? "the largest card in service has " + FormatMemory(largest)
                                      : std::string("no card in service takes shares")));
      }
      break;
    case RequestKind::kMig:
      if (r.mig_profile.empty()) {
        errors.push_back("a MIG booking names a profile, such as 3g.40gb (" + ProfileHint(gpus, "") + ")");
      } else if (any && !std::any_of(gpus.begin(), gpus.end(),
                                     [&](const Gpu& g) { return !g.drained && HasProfile(g, r.mig_profile); })) {
        errors.push_back("no card in service offers MIG profile " + r.mig_profile + " (" +
                         ProfileHint(gpus, r.mig_profile) + ")");
      }
      break;
  }
}

// Up to 3 free starts of the same length, searched outward from the asked start (see the top).
std::vector<Time> Alternatives(const BookingSpec& spec, const BookingCalendar& cal, const BookingRules& rules,
                               const Policy& policy, Time now) {
  std::vector<Time> out;
  const Duration slot = SlotOf(rules), length = spec.end - spec.start;
  const Time first = GridCeil(now, slot, policy.zone), last = now + rules.max_ahead;
  const Time steps = std::max<Time>(1, rules.max_ahead / slot);
  for (Time k = 1; k <= steps && out.size() < 3; ++k) {
    const Time later = spec.start + k * slot, earlier = spec.start - k * slot;
    if (later > last && earlier < first) break;
    for (Time s : {later, earlier}) {
      if (s < first || s > last || out.size() == 3) continue;
      if (cal.Place(spec, s, s + length)) out.push_back(s);
    }
  }
  return out;
}

bool Strike(BookingState s) { return s == BookingState::kNoShow || s == BookingState::kOverrun; }

std::vector<std::string> AdminReasons(const BookingSpec& spec, const BookingCheck& check,
                                      const std::vector<BookingEntry>& existing, const Equivalents& eq,
                                      const BookingRules& rules, const Policy& policy, Time now, std::int64_t ignore) {
  std::vector<std::string> why;
  const Zone& zone = policy.zone;
  if (rules.same_day_needs_admin && LocalMidnight(spec.start, zone) == LocalMidnight(now, zone)) {
    why.push_back("starts today: same-day bookings need an admin (book the day before)");
  }
  // The quota week of the start: a booking counts where it starts, like a job's full request.
  const Time week = WeekStart(spec.start, policy);
  int count = 1;
  double hours = check.gpu_hours;
  for (const BookingEntry& b : existing) {
    if (b.id == ignore || b.spec.user != spec.user || b.state == BookingState::kRejected ||
        b.state == BookingState::kCancelled || WeekStart(b.spec.start, policy) != week) {
      continue;
    }
    ++count;
    hours += eq.HeldHours(b);
  }
  const std::string week_name = "the week from " + FormatLocalDate(week, zone);
  if (rules.max_per_week > 0 && count > rules.max_per_week) {
    why.push_back("over the weekly count: this would be " + spec.user + "'s booking number " + std::to_string(count) +
                  " in " + week_name + " (" + std::to_string(rules.max_per_week) + " a week without an admin)");
  }
  const double allowed =
      rules.max_gpu_hours_per_week >= 0 ? rules.max_gpu_hours_per_week : UserQuotaHours(policy.quota, spec.user);
  if (allowed >= 0 && hours > allowed + 1e-9) {
    why.push_back("over the weekly hours: " + Hours(hours) + " GPU-hours booked in " + week_name + " with this one (" +
                  Hours(allowed) + " without an admin)");
  }
  if (spec.tier == Tier::kThesis && !check.conflicts.empty()) {
    why.push_back("a thesis booking over existing bookings (" + JoinInts(check.conflicts, ", ") + "): an admin decides");
  }
  if (!rules.auto_confirm) why.push_back("bookings are confirmed by an admin (automatic confirmation is off)");
  return why;
}

}  // namespace

const char* BookingStateName(BookingState s) {
  static constexpr const char* kNames[] = {"requested", "confirmed", "active",   "ended",    "released",
                                           "no_show",   "overrun",   "rejected", "cancelled"};
  size_t i = static_cast<size_t>(s);
  return i < std::size(kNames) ? kNames[i] : "unknown";
}

std::optional<BookingState> ParseBookingState(std::string_view name) {
  for (int i = 0; i <= static_cast<int>(BookingState::kCancelled); ++i) {
    BookingState s = static_cast<BookingState>(i);
    if (name == BookingStateName(s)) return s;
  }
  return std::nullopt;
}

bool IsOpen(BookingState s) {
  return s == BookingState::kRequested || s == BookingState::kConfirmed || s == BookingState::kActive;
}

BookingCheck CheckBooking(const BookingSpec& spec, const std::vector<BookingEntry>& existing,
                          const std::vector<Gpu>& gpus, const BookingRules& rules, const Policy& policy, Time now,
                          bool by_admin, std::int64_t ignore) {
  BookingCheck out;
  const Equivalents eq(gpus);
  CheckTimes(spec, rules, policy.zone, now, out.errors);
  CheckRequest(spec, gpus, out.errors);
  CheckCards(spec, gpus, out.errors);
  const double hours = spec.end > spec.start ? static_cast<double>(spec.end - spec.start) / kHour : 0.0;
  if (!out.errors.empty()) {
    out.gpu_hours = eq.Of(spec.request, nullptr) * hours;
    return out;
  }
  const BookingCalendar cal(existing, gpus, ignore);
  out.alloc = cal.Place(spec, spec.start, spec.end);
  if (!out.alloc) {
    out.conflicts = cal.Conflicts(spec, spec.start, spec.end);
    out.alternatives = Alternatives(spec, cal, rules, policy, now);
  }
  out.gpu_hours = eq.Of(spec.request, out.alloc ? &*out.alloc : nullptr) * hours;
  if (!by_admin) out.needs_admin = AdminReasons(spec, out, existing, eq, rules, policy, now, ignore);
  return out;
}

namespace {

// One open booking's step (see StepBookings in booking.h for the rules and their order).
void StepOne(const BookingEntry& b, const BookingObservation& seen, const BookingRules& rules, Time now,
             BookingStep& out) {
  BookingState state = b.state;
  auto move = [&](BookingState to, std::string reason) {
    out.transitions.push_back({b.id, state, to, std::move(reason)});
    state = to;
  };
  auto wake = [&](Time t) {
    if (t > now) out.next_wakeup = std::min(out.next_wakeup, t);
  };
  const BookingSpec& s = b.spec;
  if (state == BookingState::kRequested) {
    if (now >= s.start) return move(BookingState::kRejected, "Not approved before its start");
    return wake(s.start);
  }
  if (state == BookingState::kConfirmed) {
    if (now < s.start) return wake(s.start);
    // A step that comes late (the daemon was down) goes on with the active rules at once.
    move(BookingState::kActive, "Started");
  }
  if (state != BookingState::kActive) return;
  bool used = b.used;
  if (seen.owner_running && !used) {  // once is enough: `used` never goes back
    out.mark_used.push_back(b.id);
    used = true;
  }
  const Time grace_end = s.start + rules.no_show_grace;
  if (!used && now >= grace_end) {
    return move(BookingState::kNoShow, "No-show: nothing of " + s.user + "'s ran within " + Span(rules.no_show_grace));
  }
  if (now >= s.end) {
    if (!seen.owner_running) return move(BookingState::kEnded, "Ended");
    if (seen.others_waiting) {
      out.stop_owner_jobs.push_back(b.id);
      return move(BookingState::kOverrun, "Overrun: " + s.user + "'s work outlived the booking and others wait");
    }
    // Extended: the owner's work runs and nobody needs the capacity; looked at again each slot.
    wake(now + SlotOf(rules));
  }
  bool reminded = b.reminded;
  if (!reminded && now >= s.end - rules.reminder) {
    out.reminders.push_back(b.id);
    reminded = true;
  }
  if (!used) wake(grace_end);
  if (!reminded) wake(s.end - rules.reminder);
  wake(s.end);
}

}  // namespace

BookingStep StepBookings(const std::vector<BookingEntry>& bookings,
                         const std::unordered_map<std::int64_t, BookingObservation>& seen, const BookingRules& rules,
                         Time now) {
  BookingStep out;
  const BookingObservation nothing;
  for (const BookingEntry& b : bookings) {
    if (!IsOpen(b.state)) continue;
    auto it = seen.find(b.id);
    StepOne(b, it == seen.end() ? nothing : it->second, rules, now, out);
  }
  return out;
}

double HeldGpuHours(const BookingEntry& b, const std::vector<Gpu>& gpus) { return Equivalents(gpus).HeldHours(b); }

double BookingPenalty(const std::vector<BookingEntry>& bookings, std::string_view user, const BookingRules& rules,
                      Time now) {
  double sum = 0;
  for (const BookingEntry& b : bookings) {
    if (b.spec.user != user || !Strike(b.state) || b.actual_end > now) continue;
    // A half-life of zero or less means no decay: the admin wants strikes to stay.
    const double age = static_cast<double>(now - b.actual_end);
    sum += rules.penalty_step *
           (rules.penalty_half_life > 0 ? std::exp2(-age / static_cast<double>(rules.penalty_half_life)) : 1.0);
  }
  return std::clamp(sum, 0.0, 1.0);
}

int BookingStrikes(const std::vector<BookingEntry>& bookings, std::string_view user, const BookingRules& rules,
                   Time now) {
  int n = 0;
  for (const BookingEntry& b : bookings) {
    n += b.spec.user == user && Strike(b.state) && b.actual_end <= now && b.actual_end > now - rules.penalty_window;
  }
  return n;
}

std::vector<Booking> BookingHolds(const std::vector<BookingEntry>& bookings, const BookingRules& rules, Time now) {
  std::vector<Booking> holds;
  for (const BookingEntry& b : bookings) {
    if (b.state != BookingState::kConfirmed && b.state != BookingState::kActive) continue;
    Time end = b.spec.end;
    if (b.state == BookingState::kActive && now >= end) end = now + SlotOf(rules);  // extended
    holds.push_back({b.id, b.spec.user, b.alloc, b.spec.start, end});
  }
  return holds;
}

void AddBookingsToState(ClusterState& state, const std::vector<BookingEntry>& bookings, const BookingRules& rules,
                        Time now) {
  state.bookings = BookingHolds(bookings, rules, now);
  std::unordered_set<std::string_view> done;
  for (const BookingEntry& b : bookings) {
    if (b.state != BookingState::kNoShow && b.state != BookingState::kOverrun) continue;
    if (!done.insert(b.spec.user).second) continue;
    state.penalty[b.spec.user] = std::min(1.0, BookingPenalty(bookings, b.spec.user, rules, now));
  }
}

// Grid points are wall times. Design: segment by segment, as Zone::NextWallTime: within a
// segment the offset is constant and the grid is plain arithmetic; where the grid point falls
// past the segment, the next (or previous) segment is looked at. So the hour skipped in spring
// has no grid points, and the hour repeated in autumn has its own.
bool OnGrid(Time t, Duration slot, const Zone& zone) {
  const std::int64_t local = zone.ToLocal(t);
  return local - FloorDiv(local, slot) * slot == 0;
}
Time GridFloor(Time t, Duration slot, const Zone& zone) {
  for (Time u = t;;) {
    const int o = zone.OffsetAt(u);
    const Time point = FloorDiv(u + o, slot) * slot - o, start = zone.LastChange(u);
    if (point >= start) return point;
    u = start - 1;
  }
}
Time GridCeil(Time t, Duration slot, const Zone& zone) {
  for (Time u = t;;) {
    const int o = zone.OffsetAt(u);
    const std::int64_t local = u + o;
    const std::int64_t floor = FloorDiv(local, slot) * slot;
    const Time point = (floor == local ? local : floor + slot) - o, end = zone.NextChange(u);
    if (point < end) return point;
    u = end;
  }
}

}  // namespace rota
