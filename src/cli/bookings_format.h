// How `rota bookings`, `rota book` and the booking actions print the daemon's Booking objects
// (docs/api.md, "Booking (object)", ops "book", "bookings", "release", "extend").
// Pure: no clock reads (now comes in as an option), no time-zone lookups: local time is the
// `zone` the command passes, the server's as its reply carries it (ZoneOfReply), with its
// daylight saving. Every accessor tolerates a missing field or a wrong type.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "core/types.h"
#include "core/zone.h"

namespace rota::cli {

struct BookingsFormat {
  Zone zone;             // the zone of the local times shown
  Time now = 0;          // marks today in the week view; 0: no mark
  bool pending = false;  // list: the admin's to-do columns (TIER, WHY) instead of STATE
  int note_width = 30;   // list: notes are cut to this many columns ("…" when cut)
};

// `rota bookings`: one line per booking, earliest start first (then by id), columns
//   ID USER PROJECT GPUS START END HOURS STATE NOTE
// aligned by display width (CJK text takes two columns; ID and HOURS align right). GPUS is
// "0,1" (whole cards), "3:20G" (a memory share on card 3), "2:3g.40gb" (a MIG slice on card 2),
// "any 2" / "any 20G" / "any 3g.40gb" while not placed. END gives only the time when it is on
// START's day. STATE adds the time of a release or overrun ("released 15:30").
// With options.pending: ID USER PROJECT TIER GPUS START END HOURS WHY NOTE, WHY being the
// booking's reason (why it needs an admin). `bookings` is the reply's array or the reply itself.
// No bookings: one line saying so.
std::string FormatBookingsList(const nlohmann::json& bookings, const BookingsFormat& options);

// `rota bookings --week`: a calendar of the 7 local days from `week_start` (a local Monday 00:00).
//   - a title line with the week's dates and the zone (both offsets when daylight saving
//     begins or ends that week);
//   - a day header (today's day in brackets: "[Tue 12-02]") and an hour ruler;
//   - one row per card of `gpus` (op status's "gpus": index, uuid, mig [{uuid, profile}]), plus
//     one row per MIG slice that has a booking this week ("└ mig1 3g.40gb" under its card), one
//     per card a booking names that `gpus` lacks, and "no card" for bookings not placed yet;
//   - per day 12 cells of two hours of the wall clock (7 x 12 cells and separators: about 110
//     columns; the cell of the hour skipped in spring is an hour long, that of the hour
//     repeated in autumn three): "." free,
//     a booking's marker (A-Z, a-z, 0-9 in order of start; "#" past 62) where one booking holds
//     any part of the cell, "+" where several do (shares of one card, or a requested booking
//     over another);
//   - a legend: marker, id, user, project, cards, dates and times, state, note.
// A booking shows what it holds: [start, end), to its actual end once released or a no-show,
// past its end when it overran; parts outside the week are cut off (the legend gives the full
// times). Cancelled and rejected bookings are left out (a count line says how many).
// The time ahead, when `bookings` is a reply with "ahead" (op bookings, "ahead": true): a running
// job marks its cards (or its slice) "=" until its end, a waiting job marks a row "expected"
// with "~" from its expected start ("+" where a booking shares the cell), and a second legend
// lists them: marker, job id, user, name, cards, times, running or expected.
std::string FormatBookingsWeek(const nlohmann::json& bookings, const nlohmann::json& gpus, Time week_start,
                               const BookingsFormat& options);

// The zone a booking reply's times are in: its "zone" (api/zone_json.h), else `fallback`.
Zone ZoneOfReply(const nlohmann::json& reply, const Zone& fallback);

// "2026-12-01 14:00" in local time; "-" for 0.
std::string FormatBookingTime(Time t, const Zone& zone);
// "2026-12-01 14:00-18:00", or "2026-12-01 22:00 - 2026-12-02 02:00" across midnight.
std::string FormatBookingSpan(Time start, Time end, const Zone& zone);
// What a booking holds, in words: "GPU 0,1", "GPU 3 (20G share)", "GPU 2 (3g.40gb slice)";
// "2 GPUs, not placed yet" (likewise for a share or a slice) while it has no cards.
std::string BookingWhat(const nlohmann::json& booking);

// The line `rota book` prints for its reply ({"booking", "check"}):
//   "Booked 12: GPU 0,1 2026-12-01 14:00-18:00 (4h, 8.0 GPU-hours), confirmed"
//   "Booked 13: ... (4h, 8.0 GPU-hours), requested: needs an admin: REASON; REASON"
std::string FormatBooked(const nlohmann::json& reply, const BookingsFormat& options);
// What `rota book --dry-run` prints for a reply (or for the Check of a refusal's details):
// the booking as it would be, whether it would be confirmed, requested (and why) or refused (each
// error on its own line), the bookings in the way and the nearest free starts. *refused is set
// when it would be refused (errors or conflicts).
std::string FormatBookCheck(const nlohmann::json& reply, const BookingsFormat& options, bool* refused);
// `rota release`: "Released booking 12 (held 1.5 of 4 GPU-hours)" for the booking after release.
std::string FormatReleased(const nlohmann::json& booking);
// `rota extend`: "Extended booking 12 to 19:00" (the date too when the end is not on the start's day).
std::string FormatExtended(const nlohmann::json& booking, const BookingsFormat& options);

}  // namespace rota::cli
