// Times as people type them ("tomorrow 14:00", "12-01 14:00", "明天 14点") read into Unix seconds,
// and the zone's offset written for people. Pure: `now` and the zone come in as values,
// and the calendar arithmetic is core/civil_date.h's (which also writes times back in the
// server's zone: FormatLocal), so the server's TZ variable and C library never matter.
//
// Local time is the server's zone (Policy::zone, daylight saving included): a wall time the
// clocks skip in spring is read past the gap (02:30 is 03:30), one they repeat in autumn as its
// first instant.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/civil_date.h"
#include "core/status.h"
#include "core/types.h"

namespace rota::api {

// Reads `text` as an instant. Case-insensitive; surrounding spaces, full-width spaces and
// full-width colons (what Chinese input methods type) are fine. Accepted forms, all in local time:
//   2026-12-01 14:00   2026-12-01T14:00   2026/12/01 14:00   2026-12-01 14:00:30   2026年12月1日 14:00
//   12-01 14:00   12/01 14:00   12月1日 14:00   the next such date not before today (this year,
//                                              else the next year that has it: 02-29 waits)
//   today 14:00   tomorrow 14:00   今天 14:00   明天 14:00   后天 14:00
//   mon 09:00   monday 09:00   周一 09:00   星期一 09:00   the next such weekday strictly after
//                                                         today (on a Monday, "mon" is in 7 days)
//   14:00   14点   14点30   14点半             today, or the local day of `base_day` when it is
//                                              not 0 (an end time given without a date is on the
//                                              start's day); a past time of today is returned as
//                                              is: the caller decides whether the past is allowed
//   1764576000                                 Unix seconds (any integer >= 1e9)
// Times of day are 24-hour H:MM, HH:MM or HH:MM:SS; 24:00 is the midnight that ends the day.
// Chinese day words may be followed by the time without a space ("明天14点").
// Errors (InvalidArgument): a form not listed ("cannot read "next week" as a time; use ..."),
// naming the zone; an impossible date or time naming what is wrong ("2026-02 has 28 days",
// "25:00 is not a time of day (00:00 to 24:00)"); a date with no time of day.
StatusOr<Time> ParseWhen(std::string_view text, Time now, const Zone& zone, Time base_day = 0);

// Reads the start of a period that ends now, as `rota history --since` takes it: how long ago
// ("7d", "12h", "90m": a number and a unit, core's ParseDuration) or an instant in ParseWhen's
// forms, where a day without a time of day ("2026-11-01", "today") means that day's 00:00. So
// "--since" and a booking's times are read in the same zone, the server's. Errors as
// ParseWhen's (the list of forms being these), and an instant after `now` (ParseWhen reads
// "11-01", "mon" and "tomorrow" as days to come) is refused, naming the instant it was read as.
StatusOr<Time> ParseSince(std::string_view text, Time now, const Zone& zone);

// Reads a job's deadline (`rota submit --deadline TEXT`) in ParseWhen's forms, where a day given
// without a time of day ("2026-12-10", "12-10", "fri", "明天") means the end of that day (its
// 24:00): work due on the 10th may run through the 10th. Errors as ParseWhen's; whether the
// instant has passed is the caller's to say.
StatusOr<Time> ParseDeadline(std::string_view text, Time now, const Zone& zone);

// The week `rota bookings --week TEXT` shows, as its Monday 00:00 in the zone: "" or "this" (the
// week of now), "next", "last", or any day of it as ParseWhen reads days ("2026-12-01", "12-01"
// (the next such day), "today", "tomorrow", "mon", "12月1日"). The week after it starts at
// zone.FromLocal(zone.ToLocal(start) + kWeek): 167 or 169 hours across a daylight saving change.
// Errors (InvalidArgument): text that is not one of these, an impossible date.
StatusOr<Time> ParseWeek(std::string_view text, Time now, const Zone& zone);

using ::rota::FormatOffset;  // core/zone.h

}  // namespace rota::api
