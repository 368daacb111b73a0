// Tested by bookings_format_test.cc.
//
// Design: local time is the zone the command passes (the server's, from its reply), and its
// arithmetic is core/zone.h's, so the output depends only on the arguments. The week view first
// turns bookings into spans on rows (a card, a slice, "no card"), then paints each row's 84
// cells from the spans: a cell is two hours of the wall clock, and a span marks every cell it
// overlaps. Widths are measured with DisplayWidth, never bytes.
#include "cli/bookings_format.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <map>
#include <tuple>
#include <vector>

#include "api/zone_json.h"
#include "cli/gpus_format.h"
#include "cli/json_fields.h"
#include "cli/text.h"

namespace rota::cli {

namespace {

using nlohmann::json;
using fields::Arr;
using fields::Int;
using fields::Ints;
using fields::Num;
using fields::Obj;
using fields::Str;

constexpr int kCellsPerDay = 12;  // two hours a cell
constexpr Duration kCell = kDay / kCellsPerDay;
constexpr int kUserWidth = 16;
constexpr int kProjectWidth = 16;
constexpr int kWhyWidth = 60;
constexpr const char* kMarkers = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
constexpr char kManyMarker = '#';     // past the 62nd booking of the week
constexpr char kSeveralMarker = '+';  // several bookings in one cell
constexpr char kFreeMarker = '.';
constexpr char kRunningMarker = '=';   // a running job, to its time limit
constexpr char kExpectedMarker = '~';  // a waiting job at its expected start (any card)

// One decimal, without a trailing ".0": "1.5", "4".
std::string Compact(double v) {
  std::string s = Fixed(v, 1);
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  return s;
}

std::string Local(Time t, const Zone& zone, const char* format) { return FormatTimeIn(t, zone, format); }

// "4h", "1h30m", "45m".
std::string ShortDuration(Duration d) {
  if (d < 0) d = 0;
  const long long hours = d / kHour;
  const long long minutes = d % kHour / kMinute;
  if (hours == 0) return std::to_string(minutes) + "m";
  return std::to_string(hours) + "h" + (minutes ? std::to_string(minutes) + "m" : "");
}

// The request as a short cell: "2", "20G", "3g.40gb".
std::string RequestText(const json& request) {
  const std::string kind = Str(request, "kind");
  if (kind == "gpu_mem") return FormatMemory(Int(request, "memory"));
  if (kind == "mig") return Str(request, "profile", "?");
  return std::to_string(Int(request, "gpus", 1));
}

std::string GpusCell(const json& b) {
  const json& request = Obj(b, "request");
  const std::string kind = Str(request, "kind");
  const std::vector<long long> cards = Ints(b, "gpus");
  if (cards.empty()) return "any " + RequestText(request);
  if (kind == "gpu_mem" || kind == "mig") return JoinInts(cards, ",") + ":" + RequestText(request);
  return JoinInts(cards, ",");
}

// "18:00" when `t` is on `base`'s local day, else the date too.
std::string TimeOnDay(Time t, Time base, const Zone& zone) {
  if (zone.Day(t) == zone.Day(base)) return Local(t, zone, "%H:%M");
  return FormatBookingTime(t, zone);
}

std::string StateCell(const json& b, const Zone& zone) {
  const std::string state = Str(b, "state", "-");
  const Time actual_end = Int(b, "actual_end");
  if ((state == "released" || state == "overrun") && actual_end > 0) {
    return state + " " + TimeOnDay(actual_end, Int(b, "end"), zone);
  }
  return state;
}

std::vector<json> Bookings(const json& bookings) {
  const json& list = bookings.is_array() ? bookings : Arr(bookings, "bookings");
  std::vector<json> out;
  for (const json& b : list) {
    if (b.is_object()) out.push_back(b);
  }
  std::stable_sort(out.begin(), out.end(), [](const json& a, const json& b) {
    if (Int(a, "start") != Int(b, "start")) return Int(a, "start") < Int(b, "start");
    return Int(a, "id") < Int(b, "id");
  });
  return out;
}

// ---- The week view ----

// The interval a booking holds on the calendar; empty (end <= start) for none.
std::pair<Time, Time> HeldSpan(const json& b) {
  const std::string state = Str(b, "state");
  const Time start = Int(b, "start");
  Time end = Int(b, "end");
  const Time actual_end = Int(b, "actual_end");
  if (state == "cancelled" || state == "rejected") return {0, 0};
  if ((state == "released" || state == "no_show") && actual_end > 0) end = std::min(end, actual_end);
  if (state == "overrun" && actual_end > end) end = actual_end;
  return {start, end};
}

struct WeekRow {
  std::string label;
  std::vector<std::vector<size_t>> cells;  // per cell, the markers' indices of the bookings there
  std::string jobs;                        // per cell, kRunningMarker, kExpectedMarker or ' ' (none)
};

// Where rows go: card index, then slice position (-1 the card itself; a large value for a slice
// the card list does not know). The "no card" row sorts last.
using RowKey = std::tuple<long long, long long, std::string>;

struct SliceRef {
  long long card = -1;
  long long position = -1;
  std::string profile;
};

std::string DayHeader(Time day, bool today, const Zone& zone) {
  std::string text = Local(day, zone, "%a %m-%d");
  return today ? "[" + text + "]" : text;
}

// "0  6  12 18 ": the hours at the cells where 0, 6, 12 and 18 o'clock begin.
std::string HourRuler() {
  std::string ruler(kCellsPerDay, ' ');
  for (int hour = 0; hour < 24; hour += 6) {
    const std::string label = std::to_string(hour);
    ruler.replace(static_cast<size_t>(hour / 2), label.size(), label);
  }
  return ruler;
}

std::string OffsetText(int utc_offset) {
  const int minutes = (utc_offset < 0 ? -utc_offset : utc_offset) / 60;
  char buf[32];
  std::snprintf(buf, sizeof buf, "UTC%c%02d:%02d", utc_offset < 0 ? '-' : '+', minutes / 60, minutes % 60);
  return buf;
}

// "UTC+08:00"; "Europe/Berlin, UTC+01:00"; across a change, "Europe/Berlin, UTC+01:00, UTC+02:00
// from Sun 03-29 03:00".
std::string ZoneText(const Zone& zone, Time from, Time to) {
  std::string out = (zone.name().empty() ? "" : zone.name() + ", ") + OffsetText(zone.OffsetAt(from));
  for (Time t = zone.NextChange(from); t < to; t = zone.NextChange(t)) {
    out += ", " + OffsetText(zone.OffsetAt(t)) + " from " + Local(t, zone, "%a %m-%d %H:%M");
  }
  return out;
}

// "Mon 12-01 14:00-18:00", "Sun 11-30 22:00 - Mon 12-01 02:00".
std::string LegendSpan(Time start, Time end, const Zone& zone) {
  const std::string from = Local(start, zone, "%a %m-%d %H:%M");
  if (end <= start) return from;
  if (zone.Day(end - 1) == zone.Day(start)) return from + "-" + Local(end, zone, "%H:%M");
  return from + " - " + Local(end, zone, "%a %m-%d %H:%M");
}

}  // namespace

Zone ZoneOfReply(const json& reply, const Zone& fallback) {
  if (!reply.is_object()) return fallback;
  auto it = reply.find("zone");
  if (it == reply.end()) return fallback;
  std::optional<Zone> zone = api::ZoneFromJson(*it);
  return zone ? *zone : fallback;
}

std::string FormatBookingTime(Time t, const Zone& zone) {
  if (t == 0) return "-";
  return Local(t, zone, "%Y-%m-%d %H:%M");
}

std::string FormatBookingSpan(Time start, Time end, const Zone& zone) {
  const std::string from = FormatBookingTime(start, zone);
  if (end <= start) return from;
  // An end at midnight closes the start's day: "2026-12-01 20:00-00:00".
  if (zone.Day(end - 1) == zone.Day(start)) return from + "-" + Local(end, zone, "%H:%M");
  return from + " - " + FormatBookingTime(end, zone);
}

std::string BookingWhat(const json& b) {
  const json& request = Obj(b, "request");
  const std::string kind = Str(request, "kind");
  const std::vector<long long> cards = Ints(b, "gpus");
  if (cards.empty()) {
    if (kind == "gpu_mem") return "a " + RequestText(request) + " share, not placed yet";
    if (kind == "mig") return "a " + RequestText(request) + " slice, not placed yet";
    const long long n = Int(request, "gpus", 1);
    return CountOf(n, "GPU", "GPUs") + ", not placed yet";
  }
  std::string what = "GPU " + JoinInts(cards, ",");
  if (kind == "gpu_mem") what += " (" + RequestText(request) + " share)";
  if (kind == "mig") what += " (" + RequestText(request) + " slice)";
  return what;
}

std::string FormatBookingsList(const json& bookings, const BookingsFormat& options) {
  const std::vector<json> list = Bookings(bookings);
  if (list.empty()) return options.pending ? "No bookings wait for an admin.\n" : "No bookings.\n";
  std::vector<std::vector<std::string>> rows;
  if (options.pending) {
    rows.push_back({"ID", "USER", "PROJECT", "TIER", "GPUS", "START", "END", "HOURS", "WHY", "NOTE"});
  } else {
    rows.push_back({"ID", "USER", "PROJECT", "GPUS", "START", "END", "HOURS", "STATE", "NOTE"});
  }
  for (const json& b : list) {
    const Time start = Int(b, "start");
    const Time end = Int(b, "end");
    std::vector<std::string> row = {std::to_string(Int(b, "id")), CutToWidth(Str(b, "user", "-"), kUserWidth),
                                    CutToWidth(Str(b, "project", "-"), kProjectWidth)};
    if (row[2].empty()) row[2] = "-";
    if (options.pending) row.push_back(Str(b, "tier", "-"));
    row.push_back(GpusCell(b));
    row.push_back(FormatBookingTime(start, options.zone));
    row.push_back(end > 0 ? TimeOnDay(end, start, options.zone) : "-");
    row.push_back(Fixed(Num(b, "gpu_hours"), 1));
    if (options.pending) {
      std::string why = CutToWidth(Str(b, "reason"), kWhyWidth);
      row.push_back(why.empty() ? "-" : why);
    } else {
      row.push_back(StateCell(b, options.zone));
    }
    row.push_back(CutToWidth(Str(b, "note"), options.note_width));
    rows.push_back(std::move(row));
  }
  std::vector<bool> right(rows[0].size(), false);
  right[0] = true;                   // ID
  right[rows[0].size() - 3] = true;  // HOURS
  return RenderColumns(rows, right);
}

std::string FormatBookingsWeek(const json& bookings, const json& gpus, Time week_start,
                               const BookingsFormat& options) {
  const Zone& zone = options.zone;
  const int cells = 7 * kCellsPerDay;
  // Where each cell begins, on the wall clock: 12 two-hour cells a local day (a cell of the hour
  // skipped in spring is an hour long; one of the hour repeated in autumn, three).
  const std::int64_t first_day = zone.Day(week_start);
  std::vector<Time> edges(static_cast<size_t>(cells) + 1);
  for (int c = 0; c <= cells; ++c) edges[static_cast<size_t>(c)] = zone.FromLocal(first_day * kDay + c * kCell);
  const Time week_end = edges.back();

  // Cards and their slices, from the card list.
  std::map<RowKey, WeekRow> rows;
  std::map<std::string, SliceRef> slices;  // by MIG uuid
  const json& cards = gpus.is_array() ? gpus : Arr(gpus, "gpus");
  for (const json& g : cards) {
    const long long index = Int(g, "index", -1);
    if (index < 0) continue;
    rows[{index, -1, ""}].label = "GPU " + std::to_string(index);
    long long position = 0;
    for (const json& m : Arr(g, "mig")) {
      if (m.is_object()) slices[Str(m, "uuid")] = {index, position, Str(m, "profile", "?")};
      ++position;
    }
  }

  // The bookings this week, in order of start; each gets a marker.
  std::vector<json> shown;
  int hidden = 0;
  for (const json& b : Bookings(bookings)) {
    auto [start, end] = HeldSpan(b);
    if (end <= start) {
      const std::string state = Str(b, "state");
      if ((state == "cancelled" || state == "rejected") && Int(b, "start") < week_end &&
          Int(b, "end") > week_start) {
        ++hidden;
      }
      continue;
    }
    if (start < week_end && end > week_start) shown.push_back(b);
  }

  auto row_for = [&](const RowKey& key, const std::string& label) -> WeekRow& {
    WeekRow& row = rows[key];
    if (row.label.empty()) row.label = label;
    return row;
  };
  for (size_t i = 0; i < shown.size(); ++i) {
    const json& b = shown[i];
    std::vector<WeekRow*> targets;
    const std::vector<long long> booked_cards = Ints(b, "gpus");
    const std::string mig_uuid = Str(b, "mig_uuid");
    if (!mig_uuid.empty()) {
      auto it = slices.find(mig_uuid);
      if (it != slices.end()) {
        const SliceRef& s = it->second;
        row_for({s.card, -1, ""}, "GPU " + std::to_string(s.card));
        targets.push_back(
            &row_for({s.card, s.position, ""}, " \u2514 mig" + std::to_string(s.position) + " " + s.profile));
      } else {
        // A slice the card list does not know: under its card when the booking names one.
        const long long card = booked_cards.empty() ? -1 : booked_cards.front();
        const std::string profile = Str(Obj(b, "request"), "profile", "?");
        if (card >= 0) {
          row_for({card, -1, ""}, "GPU " + std::to_string(card));
          targets.push_back(&row_for({card, 1LL << 40, mig_uuid}, " \u2514 " + profile));
        } else {
          targets.push_back(&row_for({1LL << 40, 0, ""}, "no card"));
        }
      }
    } else if (booked_cards.empty()) {
      targets.push_back(&row_for({1LL << 40, 0, ""}, "no card"));
    } else {
      for (long long card : booked_cards)
        targets.push_back(&row_for({card, -1, ""}, "GPU " + std::to_string(card)));
    }
    auto [start, end] = HeldSpan(b);
    for (WeekRow* row : targets) {
      if (row->cells.empty()) row->cells.resize(static_cast<size_t>(cells));
      for (int c = 0; c < cells; ++c) {
        if (start < edges[static_cast<size_t>(c) + 1] && end > edges[static_cast<size_t>(c)]) {
          row->cells[static_cast<size_t>(c)].push_back(i);
        }
      }
    }
  }

  // The time ahead (the reply's "ahead", rota bookings --week): running jobs on their cards to
  // their time limits, waiting ones at their expected starts on a row of their own.
  static const json kNone = json::array();
  const json& ahead = bookings.is_object() ? Arr(bookings, "ahead") : kNone;
  std::vector<json> jobs;
  for (const json& j : ahead) {
    const Time start = Int(j, "start"), end = Int(j, "end");
    if (!j.is_object() || end <= start || start >= week_end || end <= week_start) continue;
    const bool running = Str(j, "state") == "running";
    std::vector<WeekRow*> targets;
    if (!running) {
      targets.push_back(&row_for({1LL << 40, 1, ""}, "expected"));
    } else if (auto s = slices.find(Str(j, "mig_uuid")); !Str(j, "mig_uuid").empty() && s != slices.end()) {
      targets.push_back(&row_for({s->second.card, s->second.position, ""},
                                 " \u2514 mig" + std::to_string(s->second.position) + " " + s->second.profile));
    } else {
      for (long long card : Ints(j, "gpus")) targets.push_back(&row_for({card, -1, ""}, "GPU " + std::to_string(card)));
    }
    if (targets.empty()) continue;
    jobs.push_back(j);
    for (WeekRow* row : targets) {
      if (row->jobs.empty()) row->jobs.assign(static_cast<size_t>(cells), ' ');
      for (int c = 0; c < cells; ++c) {
        char& here = row->jobs[static_cast<size_t>(c)];
        if (start < edges[static_cast<size_t>(c) + 1] && end > edges[static_cast<size_t>(c)] && here != kRunningMarker)
          here = running ? kRunningMarker : kExpectedMarker;
      }
    }
  }

  auto marker = [](size_t i) { return i < 62 ? kMarkers[i] : kManyMarker; };
  const bool this_week = options.now >= week_start && options.now < week_end;
  const long long today = this_week ? zone.Day(options.now) - first_day : -1;

  int label_width = DisplayWidth("no card");  // also "expected"
  for (const auto& [key, row] : rows) label_width = std::max(label_width, DisplayWidth(row.label));

  std::string out = "Bookings, week of " + Local(week_start, zone, "%Y-%m-%d") + " to " +
                    Local(week_end - 1, zone, "%Y-%m-%d") + " (" + ZoneText(zone, week_start, week_end) +
                    "; a cell is two hours)\n";
  const std::string bar = "\u2502";
  std::string header = PadToWidth("", label_width) + bar;
  std::string ruler = PadToWidth("", label_width) + bar;
  for (int d = 0; d < 7; ++d) {
    header += PadToWidth(DayHeader(edges[static_cast<size_t>(d * kCellsPerDay)], d == today, zone), kCellsPerDay) + bar;
    ruler += HourRuler() + bar;
  }
  out += header + "\n" + ruler + "\n";
  for (const auto& [key, row] : rows) {
    std::string line = PadToWidth(row.label, label_width) + bar;
    for (int c = 0; c < cells; ++c) {
      const std::vector<size_t> empty;
      const std::vector<size_t>& here = row.cells.empty() ? empty : row.cells[static_cast<size_t>(c)];
      const char job = row.jobs.empty() ? ' ' : row.jobs[static_cast<size_t>(c)];
      if (job != ' ') {
        line += here.empty() ? job : kSeveralMarker;  // a booking and a job in one cell: see both legends
      } else {
        line += here.empty() ? kFreeMarker : here.size() == 1 ? marker(here.front()) : kSeveralMarker;
      }
      if (c % kCellsPerDay == kCellsPerDay - 1) line += bar;
    }
    out += line + "\n";
  }
  if (rows.empty()) out += "no GPUs\n";

  out += "\n";
  if (shown.empty()) {
    out += "No bookings this week.\n";
  } else {
    std::vector<std::vector<std::string>> legend;
    for (size_t i = 0; i < shown.size(); ++i) {
      const json& b = shown[i];
      std::string project = Str(b, "project");
      legend.push_back({std::string(1, marker(i)), std::to_string(Int(b, "id")),
                        CutToWidth(Str(b, "user", "-"), kUserWidth),
                        project.empty() ? "-" : CutToWidth(project, kProjectWidth), GpusCell(b),
                        LegendSpan(Int(b, "start"), Int(b, "end"), zone), StateCell(b, zone),
                        CutToWidth(Str(b, "note"), options.note_width)});
    }
    out += RenderColumns(legend, {false, true, false, false, false, false, false, false});
  }
  if (!jobs.empty()) {
    // The jobs ahead: running ones to their time limits (an upper bound), with their likely ends;
    // waiting ones at their likely starts for their likely run times, else at the plan's starts.
    out += "\nJobs on the cards (running ones to their time limits; waiting ones where they are likely or\n"
           "planned to start, not promises):\n";
    std::vector<std::vector<std::string>> legend;
    for (const json& j : jobs) {
      const bool running = Str(j, "state") == "running";
      legend.push_back({std::string(1, running ? kRunningMarker : kExpectedMarker), "job " + std::to_string(Int(j, "job_id")),
                        CutToWidth(Str(j, "user", "-"), kUserWidth), CutToWidth(Str(j, "name", "-"), kProjectWidth),
                        GpusCell(j), LegendSpan(Int(j, "start"), Int(j, "end"), zone),
                        running ? (Int(j, "likely_end") > 0 ? "running, likely to end " +
                                                                 Local(Int(j, "likely_end"), zone, "%a %H:%M")
                                                           : std::string("running"))
                        : j.value("likely", false) ? "likely (from the lab's history)"
                        : j.value("estimated", false) ? "expected (estimate)"
                                                      : "expected"});
    }
    out += RenderColumns(legend, {false, false, false, false, false, false, false});
  }
  std::string key = jobs.empty() ? ". free  + several bookings in one cell"
                                 : ". free  + several bookings, or a booking and a job, in one cell  = a running job  "
                                   "~ a job expected to start";
  if (shown.size() > 62) key += "  # the 63rd booking and later";
  if (this_week) key += "  [ ] today";
  out += key + "\n";
  if (hidden > 0) {
    out += std::to_string(hidden) +
           (hidden == 1 ? " cancelled or rejected booking" : " cancelled or rejected bookings") +
           " not shown\n";
  }
  return out;
}

std::string FormatBooked(const json& reply, const BookingsFormat& options) {
  const json& b = Obj(reply, "booking");
  const json& check = Obj(reply, "check");
  const Time start = Int(b, "start");
  const Time end = Int(b, "end");
  const double hours = Num(b, "gpu_hours", Num(check, "gpu_hours"));
  std::string line = "Booked " + std::to_string(Int(b, "id")) + ": " + BookingWhat(b) + " " +
                     FormatBookingSpan(start, end, options.zone) + " (" + ShortDuration(end - start) +
                     ", " + Fixed(hours, 1) + " GPU-hours), " + Str(b, "state", "?");
  if (Str(b, "state") == "requested") {
    std::string why;
    for (const json& r : Arr(check, "needs_admin")) {
      if (r.is_string()) why += (why.empty() ? "" : "; ") + TerminalSafe(r.get_ref<const std::string&>());
    }
    if (why.empty()) why = Str(b, "reason");
    line += ": needs an admin" + (why.empty() ? std::string() : ": " + why);
  }
  return line + "\n";
}

std::string FormatBookCheck(const json& reply, const BookingsFormat& options, bool* refused) {
  // A refusal carries the Check alone (details); a dry run's reply has the booking beside it.
  const json& check = reply.contains("check") ? Obj(reply, "check") : reply;
  const json& b = Obj(reply, "booking");
  std::string out;
  if (!b.empty()) {
    const Time start = Int(b, "start");
    const Time end = Int(b, "end");
    out += "Dry run, nothing booked: " + BookingWhat(b) + " " +
           FormatBookingSpan(start, end, options.zone) + " (" + ShortDuration(end - start) + ", " +
           Fixed(Num(b, "gpu_hours", Num(check, "gpu_hours")), 1) + " GPU-hours)\n";
  }
  std::vector<std::string> errors;
  for (const json& e : Arr(check, "errors")) {
    if (e.is_string()) errors.push_back(TerminalSafe(e.get_ref<const std::string&>()));
  }
  std::vector<std::string> needs_admin;
  for (const json& e : Arr(check, "needs_admin")) {
    if (e.is_string()) needs_admin.push_back(TerminalSafe(e.get_ref<const std::string&>()));
  }
  const std::vector<long long> conflicts = Ints(check, "conflicts");
  *refused = !errors.empty() || !conflicts.empty();
  if (!errors.empty()) {
    out += "Would be refused:\n";
    for (const std::string& e : errors) out += "  - " + e + "\n";
  }
  if (!conflicts.empty()) {
    out += std::string(errors.empty() ? "Would be refused: in the way: booking" : "In the way: booking") +
           (conflicts.size() == 1 ? " " : "s ") + JoinInts(conflicts, ", ") + "\n";
  }
  if (!*refused) {
    if (!needs_admin.empty() || Str(b, "state") == "requested") {
      out += "Would be requested: needs an admin";
      for (size_t i = 0; i < needs_admin.size(); ++i) out += (i == 0 ? ": " : "; ") + needs_admin[i];
      out += "\n";
    } else {
      out += "Would be confirmed\n";
    }
  }
  const std::vector<long long> alternatives = Ints(check, "alternatives");
  if (!alternatives.empty()) {
    out += "Nearest free starts:";
    for (size_t i = 0; i < alternatives.size(); ++i) {
      out += (i == 0 ? " " : ", ") + FormatBookingTime(alternatives[i], options.zone);
    }
    out += "\n";
  }
  return out;
}

std::string FormatReleased(const json& b) {
  std::string line = "Released booking " + std::to_string(Int(b, "id"));
  const double held = Num(b, "gpu_hours", -1);
  if (held < 0) return line + "\n";
  const Time start = Int(b, "start");
  const Time end = Int(b, "end");
  const Time actual_end = Int(b, "actual_end");
  // gpu_hours is what was held (GPU-equivalents x hours to the release); the planned hours are
  // the same GPU-equivalents over the whole booking.
  std::string planned;
  if (actual_end > start && end > start) {
    planned =
        " of " + Compact(held * static_cast<double>(end - start) / static_cast<double>(actual_end - start));
  }
  return line + " (held " + Compact(held) + planned + " GPU-hours)\n";
}

std::string FormatExtended(const json& b, const BookingsFormat& options) {
  const Time end = Int(b, "end");
  return "Extended booking " + std::to_string(Int(b, "id")) + " to " +
         (end > 0 ? TimeOnDay(end, Int(b, "start"), options.zone) : std::string("?")) + "\n";
}

}  // namespace rota::cli
