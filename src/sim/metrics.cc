// Tested by metrics_test.cc.
//
// Design: one pass collects waits and completion times into vectors (sorted afterwards for the
// percentiles) and per-user sums into a map keyed by user name, so the result does not depend on
// the order of `outcomes`. Bounded slowdown uses a 10 s floor on the run time so that very short
// jobs do not dominate the fairness index. Sums are in double: a year of 82k jobs stays far below
// the range where double loses whole seconds.
//
// Bookings: each confirmed booking is checked against every run that overlaps its hold in time
// (runs are sorted by start once, so a booking looks only at runs that started before its hold
// ends); a run's share of a booked card-second goes to exactly one of used, lent or in the way.
#include "sim/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <map>

namespace rota::sim {
namespace {

constexpr double kSlowdownFloorSeconds = 10;

struct UserSums {
  double wait = 0;
  double slowdown = 0;
  std::int64_t jobs = 0;
};

}  // namespace

double NearestRankPercentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const double n = static_cast<double>(sorted.size());
  auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * n - 1e-9));
  rank = std::clamp<std::size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

double JainIndex(const std::vector<double>& x) {
  if (x.size() < 2) return -1;
  double sum = 0;
  double sum_sq = 0;
  for (double v : x) {
    sum += v;
    sum_sq += v * v;
  }
  if (sum_sq == 0) return 1;
  return sum * sum / (static_cast<double>(x.size()) * sum_sq);
}

Metrics ComputeMetrics(const std::vector<JobOutcome>& outcomes, double total_gpus) {
  Metrics m;
  if (outcomes.empty()) return m;
  m.jobs = static_cast<std::int64_t>(outcomes.size());
  std::vector<double> waits;
  std::vector<double> jcts;
  waits.reserve(outcomes.size());
  jcts.reserve(outcomes.size());
  std::map<std::string, UserSums> users;
  rota::Time first_submit = outcomes.front().submit;
  rota::Time last_end = outcomes.front().end;
  double busy = 0;
  for (const JobOutcome& o : outcomes) {
    const auto wait = static_cast<double>(o.start - o.submit);
    const auto run = static_cast<double>(o.end - o.start);
    waits.push_back(wait);
    jcts.push_back(static_cast<double>(o.end - o.submit));
    first_submit = std::min(first_submit, o.submit);
    last_end = std::max(last_end, o.end);
    busy += o.gpus * run;
    UserSums& u = users[o.user];
    u.wait += wait;
    u.slowdown += (wait + run) / std::max(run, kSlowdownFloorSeconds);
    ++u.jobs;
  }
  std::sort(waits.begin(), waits.end());
  std::sort(jcts.begin(), jcts.end());
  double wait_sum = 0;
  for (double w : waits) wait_sum += w;
  double jct_sum = 0;
  for (double j : jcts) jct_sum += j;
  const auto n = static_cast<double>(outcomes.size());
  m.avg_wait = wait_sum / n;
  m.p50_wait = NearestRankPercentile(waits, 50);
  m.p99_wait = NearestRankPercentile(waits, 99);
  m.max_wait = waits.back();
  m.avg_jct = jct_sum / n;
  m.p99_jct = NearestRankPercentile(jcts, 99);
  m.makespan = std::max<rota::Duration>(0, last_end - first_submit);
  if (total_gpus > 0 && m.makespan > 0) {
    m.utilisation = busy / (total_gpus * static_cast<double>(m.makespan));
  }
  m.users = static_cast<int>(users.size());
  std::vector<double> mean_wait;
  std::vector<double> mean_slowdown;
  for (const auto& [name, u] : users) {
    const auto k = static_cast<double>(u.jobs);
    mean_wait.push_back(u.wait / k);
    mean_slowdown.push_back(u.slowdown / k);
  }
  m.jain_wait = JainIndex(mean_wait);
  m.jain_slowdown = JainIndex(mean_slowdown);
  return m;
}

const char* BookingVerdictName(BookingVerdict v) {
  switch (v) {
    case BookingVerdict::kConfirmed:
      return "confirmed";
    case BookingVerdict::kRefused:
      return "refused";
    case BookingVerdict::kNoRoom:
      return "no_room";
    case BookingVerdict::kNeedsAdmin:
      return "needs_admin";
  }
  return "confirmed";
}

namespace {

// Whether `r`'s card `c` is one `b` holds (for a slice: that slice of it).
bool OnBookedCard(const BookingOutcome& b, const RunSpan& r, int c) {
  if (std::find(b.cards.begin(), b.cards.end(), c) == b.cards.end()) return false;
  return b.mig < 0 || r.mig == b.mig;
}

struct HeldTime {
  double used = 0, lent = 0, in_way = 0;  // GPU-seconds
};

// Over [b.start, hold_end), card by card: at each moment the owner's runs fill the booked part
// (b.per_card) first; the others' runs take the rest of the card first (a slice has no rest), and
// what they hold beyond it is in the booked part, lent or in the way in proportion to each run's.
HeldTime HeldOnBooking(const BookingOutcome& b, rota::Time hold_end,
                       const std::vector<const RunSpan*>& by_start) {
  HeldTime out;
  const double part = b.per_card;
  const double rest = b.mig >= 0 ? 0.0 : std::max(0.0, 1.0 - part);
  std::vector<const RunSpan*> during;  // the runs over the hold
  for (const RunSpan* r : by_start) {
    if (r->start >= hold_end) break;
    if (r->end > b.start) during.push_back(r);
  }
  for (int c : b.cards) {
    std::vector<const RunSpan*> on;
    std::vector<rota::Time> times = {b.start, hold_end};
    for (const RunSpan* r : during) {
      if (std::find(r->cards.begin(), r->cards.end(), c) == r->cards.end() || !OnBookedCard(b, *r, c))
        continue;
      on.push_back(r);
      times.push_back(std::max(r->start, b.start));
      times.push_back(std::min(r->end, hold_end));
    }
    if (on.empty()) continue;
    std::sort(times.begin(), times.end());
    times.erase(std::unique(times.begin(), times.end()), times.end());
    for (size_t i = 0; i + 1 < times.size(); ++i) {
      const rota::Time t0 = times[i], t1 = times[i + 1];
      if (t0 < b.start || t1 > hold_end) continue;
      double owner = 0, lent = 0, in_way = 0;
      for (const RunSpan* r : on) {
        if (r->start > t0 || r->end < t1) continue;
        if (r->user == b.user) {
          owner += r->per_card;
        } else if (r->start >= b.made && r->planned_end > b.start) {
          lent += r->per_card;
        } else {
          in_way += r->per_card;
        }
      }
      const double dt = static_cast<double>(t1 - t0);
      const double use = std::min(part, owner);
      const double others = lent + in_way;
      const double inside = std::min(part - use, std::max(0.0, others + std::max(0.0, owner - part) - rest));
      out.used += use * dt;
      if (others > 0 && inside > 0) {
        out.lent += inside * lent / others * dt;
        out.in_way += inside * in_way / others * dt;
      }
    }
  }
  return out;
}

}  // namespace

BookingMetrics ComputeBookingMetrics(const std::vector<BookingOutcome>& bookings,
                                     const std::vector<RunSpan>& runs) {
  BookingMetrics m;
  std::vector<const RunSpan*> by_start;
  by_start.reserve(runs.size());
  for (const RunSpan& r : runs) by_start.push_back(&r);
  std::sort(by_start.begin(), by_start.end(),
            [](const RunSpan* a, const RunSpan* b) { return a->start < b->start; });
  constexpr double kHourSeconds = 3600;
  for (const BookingOutcome& b : bookings) {
    ++m.requested;
    switch (b.verdict) {
      case BookingVerdict::kConfirmed:
        ++m.confirmed;
        break;
      case BookingVerdict::kRefused:
        ++m.refused_rules;
        break;
      case BookingVerdict::kNoRoom:
        ++m.refused_no_room;
        break;
      case BookingVerdict::kNeedsAdmin:
        ++m.needs_admin;
        break;
    }
    if (b.verdict != BookingVerdict::kConfirmed || b.end <= b.start) continue;
    m.shows += b.show;
    m.used += b.used;
    m.no_shows += b.state == rota::BookingState::kNoShow;
    m.no_show_owner_blocked += b.state == rota::BookingState::kNoShow && b.owner_blocked;
    m.owner_elsewhere += b.owner_elsewhere;
    m.overruns += b.state == rota::BookingState::kOverrun;
    const auto cards = static_cast<double>(b.cards.size());
    const double booked = cards * b.per_card * static_cast<double>(b.end - b.start);
    // Closed early (no-show, release): held until then, the rest released.
    rota::Time hold_end = b.end;
    if ((b.state == rota::BookingState::kNoShow || b.state == rota::BookingState::kReleased) &&
        b.closed < b.end) {
      hold_end = std::max(b.start, b.closed);
    }
    const double released = cards * b.per_card * static_cast<double>(b.end - hold_end);
    const HeldTime held = HeldOnBooking(b, hold_end, by_start);
    const double used = held.used, lent = held.lent, in_way = held.in_way;
    double elsewhere = 0;
    for (const RunSpan* r : by_start) {
      if (r->start >= b.end) break;
      if (r->booking != b.id) continue;
      int apart = 0;
      for (int c : r->cards) apart += !OnBookedCard(b, *r, c);
      const rota::Time from = std::max(r->start, b.start), to = std::min(r->end, b.end);
      if (apart > 0 && to > from) elsewhere += apart * r->per_card * static_cast<double>(to - from);
    }
    m.booked_gpu_hours += booked / kHourSeconds;
    m.used_gpu_hours += used / kHourSeconds;
    m.released_gpu_hours += released / kHourSeconds;
    m.lent_gpu_hours += lent / kHourSeconds;
    m.in_way_gpu_hours += in_way / kHourSeconds;
    m.idle_gpu_hours += std::max(0.0, booked - released - used - lent - in_way) / kHourSeconds;
    m.elsewhere_gpu_hours += elsewhere / kHourSeconds;
  }
  m.refused = m.refused_rules + m.refused_no_room + m.needs_admin;
  return m;
}

std::vector<UserWaits> PerUserWaits(const std::vector<JobOutcome>& outcomes) {
  std::map<std::string, std::vector<double>> waits;
  for (const JobOutcome& o : outcomes) waits[o.user].push_back(static_cast<double>(o.start - o.submit));
  std::vector<UserWaits> out;
  for (auto& [user, w] : waits) {
    std::sort(w.begin(), w.end());
    UserWaits u;
    u.user = user;
    u.jobs = static_cast<std::int64_t>(w.size());
    double sum = 0;
    for (double x : w) sum += x;
    u.avg_wait = sum / static_cast<double>(w.size());
    u.p99_wait = NearestRankPercentile(w, 99);
    out.push_back(std::move(u));
  }
  return out;
}

}  // namespace rota::sim
