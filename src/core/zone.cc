// Tested by zone_test.cc.
#include "core/zone.h"

#include <algorithm>
#include <cstdio>

namespace rota {

Zone::Zone(std::string name, int initial, std::vector<Transition> transitions)
    : name_(std::move(name)),
      offset_(initial),
      transitions_(std::make_shared<const std::vector<Transition>>(std::move(transitions))) {}

std::vector<Zone::Transition>::const_iterator Zone::FirstAfter(Time t) const {
  return std::upper_bound(transitions_->begin(), transitions_->end(), t,
                          [](Time v, const Transition& x) { return v < x.at; });
}

int Zone::OffsetAt(Time t) const {
  if (fixed()) return offset_;
  auto it = FirstAfter(t);
  return it == transitions_->begin() ? offset_ : std::prev(it)->offset;
}

// Design: offsets stay within a day of UTC, so the instants that can show wall time `local` lie
// within a day of `local` read as UTC, and only the offsets in force in that span are candidates.
// An offset `o` is the answer when the instant `local - o` really has offset `o`; of two such
// instants (an overlap) the earlier. None (a gap): the transition that skipped `local`, read with
// the offset before it.
Time Zone::FromLocal(std::int64_t local) const {
  if (fixed()) return local - offset_;
  const std::vector<Transition>& tr = *transitions_;
  auto first = FirstAfter(local - kDay);
  int prev = first == tr.begin() ? offset_ : std::prev(first)->offset;  // in force at local - kDay
  Time best = kNever;
  auto consider = [&](int o) {
    const Time t = local - o;
    if (OffsetAt(t) == o) best = std::min(best, t);
  };
  consider(prev);
  for (auto it = first; it != tr.end() && it->at <= local + kDay; ++it) consider(it->offset);
  if (best != kNever) return best;
  for (auto it = first; it != tr.end() && it->at <= local + kDay; ++it) {
    if (local >= it->at + prev && local < it->at + it->offset) return local - prev;
    prev = it->offset;
  }
  return local - OffsetAt(local);  // not reached for sorted transitions
}

Time Zone::NextChange(Time t) const {
  if (fixed()) return kNever;
  auto it = FirstAfter(t);
  return it == transitions_->end() ? kNever : it->at;
}

Time Zone::LastChange(Time t) const {
  if (fixed()) return -kNever;
  auto it = FirstAfter(t);
  return it == transitions_->begin() ? -kNever : std::prev(it)->at;
}

// Design: segment by segment (the offset is constant up to NextChange), so that an hour repeated
// in autumn shows its times of day twice and none is missed.
Time Zone::NextWallTime(Time after, std::int64_t second_of_day) const {
  for (Time u = after + 1;;) {
    const int o = OffsetAt(u);
    const Time end = NextChange(u);
    const std::int64_t local = u + o;
    std::int64_t wall = FloorDiv(local, kDay) * kDay + second_of_day;
    if (wall < local) wall += kDay;
    if (wall - o < end) return wall - o;
    u = end;
  }
}

std::int64_t Zone::Day(Time t) const { return FloorDiv(ToLocal(t), kDay); }

Time Zone::DayStart(Time t) const { return FromLocal(Day(t) * kDay); }

std::string Zone::Label(Time t) const {
  if (fixed()) return FormatOffset(offset_);
  return name_ + ", " + FormatOffset(OffsetAt(t));
}

std::vector<Zone::Transition> Zone::TransitionsIn(Time from, Time to) const {
  std::vector<Transition> out;
  if (fixed()) return out;
  for (const Transition& x : *transitions_) {
    if (x.at >= from && x.at < to) out.push_back(x);
  }
  return out;
}

bool Zone::operator==(const Zone& other) const {
  if (name_ != other.name_ || offset_ != other.offset_ || fixed() != other.fixed()) return false;
  return fixed() || transitions_ == other.transitions_ || *transitions_ == *other.transitions_;
}

std::string FormatOffset(int utc_offset) {
  if (utc_offset == 0) return "UTC";
  const int a = utc_offset < 0 ? -utc_offset : utc_offset;
  char buf[16];
  std::snprintf(buf, sizeof buf, "%c%02d:%02d", utc_offset < 0 ? '-' : '+', a / 3600, a % 3600 / 60);
  return buf;
}

}  // namespace rota
