// The server's time zone as data: its offset from UTC at every instant, daylight saving
// included. The core stays clock-free and I/O-free: an adapter (config/tzdb.h) reads the
// system's tz database and hands the core a Zone, and everything the core does in local time
// (days, weeks, peak hours, the booking grid, messages) goes through it. A fixed offset is a
// Zone without transitions. Local time is counted like Unix time, in seconds since 1970-01-01
// 00:00 of the local calendar, so that local days are FloorDiv(local, kDay).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/types.h"

namespace rota {

class Zone {
 public:
  // From `at` on, local time is UTC + `offset` seconds.
  struct Transition {
    Time at = 0;
    int offset = 0;
    bool operator==(const Transition&) const = default;
  };

  Zone() = default;  // UTC
  // A fixed offset, seconds east of UTC (implicit: where an offset was, a Zone now goes).
  Zone(int fixed_offset) : offset_(fixed_offset) {}  // NOLINT(google-explicit-constructor)
  // A named zone: `initial` before the first transition, then each transition's offset.
  // REQUIRES: transitions sorted by `at`.
  Zone(std::string name, int initial, std::vector<Transition> transitions);

  // Seconds east of UTC at instant `t`.
  int OffsetAt(Time t) const;
  // Local wall time of instant `t`.
  std::int64_t ToLocal(Time t) const { return t + OffsetAt(t); }
  // The instant of local wall time `local`. A wall time that occurs twice (the hour repeated when
  // clocks go back) is its first instant; one that never occurs (the hour skipped when clocks go
  // forward) is read with the offset before the change, so 02:30 on that day is 03:30 after it,
  // as a wall clock would show.
  Time FromLocal(std::int64_t local) const;
  // The first instant of the local day that holds `t`.
  Time DayStart(Time t) const;
  // The local day (days since 1970-01-01 of the local calendar) of `t`.
  std::int64_t Day(Time t) const;

  // The first transition after `t` (kNever: none), and the last at or before it (-kNever: none).
  // Between the two the offset is constant: arithmetic in local time is plain there.
  Time NextChange(Time t) const;
  Time LastChange(Time t) const;
  // The first instant after `after` at which the wall clock shows `second_of_day` (0 to 86399).
  // A time of day skipped when clocks go forward is not shown that day: a caller for whom
  // passing it counts (a peak-hour rule at 02:30) also looks at NextChange.
  Time NextWallTime(Time after, std::int64_t second_of_day) const;

  // "Europe/Berlin" for a named zone, "" for a fixed offset.
  const std::string& name() const { return name_; }
  bool fixed() const { return transitions_ == nullptr || transitions_->empty(); }
  // How a message names the zone at `t`: "+08:00", "UTC", or "Europe/Berlin, +01:00".
  std::string Label(Time t) const;
  // The transitions in [from, to): for tests and `rota config`.
  std::vector<Transition> TransitionsIn(Time from, Time to) const;

  bool operator==(const Zone& other) const;

 private:
  // The first transition after `t` (end() when none). REQUIRES: !fixed().
  std::vector<Transition>::const_iterator FirstAfter(Time t) const;

  std::string name_;
  int offset_ = 0;  // fixed, or before the first transition
  // Shared between copies: Policy (and so the zone) is copied into every simulated run.
  std::shared_ptr<const std::vector<Transition>> transitions_;
};

// "+08:00", "-05:30"; "UTC" for 0.
std::string FormatOffset(int utc_offset);

}  // namespace rota
