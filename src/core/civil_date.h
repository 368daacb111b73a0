// Calendar arithmetic on the proleptic Gregorian calendar (Howard Hinnant's civil-date
// algorithms): days since 1970-01-01 to and from year, month and day, and instants written in the
// server's zone. Pure and clock-free, so the core's messages, the API's time parsing, the
// daemon's usage periods and the simulator's trace reader share one copy, and the server's TZ
// variable and C library never matter. Local time is the server's zone (core/zone.h, with its
// daylight saving).
#pragma once

#include <cstdint>
#include <string>

#include "core/types.h"
#include "core/zone.h"

namespace rota {

struct CivilDate {
  std::int64_t year = 1970;
  int month = 1;  // 1..12
  int day = 1;    // 1..31
};

// Days since 1970-01-01 of a proleptic Gregorian date (negative: before). REQUIRES: a valid date.
std::int64_t DaysFromCivil(std::int64_t year, int month, int day);
// The date `days` after 1970-01-01 (negative: before).
CivilDate CivilFromDays(std::int64_t days);
// 28 to 31. REQUIRES: 1 <= month <= 12.
int DaysInMonth(std::int64_t year, int month);

// "2026-12-01 14:00": the local date and time, seconds dropped (rounded down to the minute).
std::string FormatLocal(Time t, const Zone& zone);
// "2026-12-01": the local date alone.
std::string FormatLocalDate(Time t, const Zone& zone);

}  // namespace rota
