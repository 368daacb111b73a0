// Tested by simulator_test.cc (SimBooking*).
#include "sim/bookings.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <unordered_set>

#include "core/booking.h"
#include "sim/csv.h"
#include "sim/rng.h"

namespace rota::sim {

namespace {

std::optional<std::int64_t> Integer(std::string_view text) {
  std::string s(text);
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return std::nullopt;
  return v;
}

}  // namespace

std::string TraceUserName(const TraceJob& job) {
  if (!job.user.empty()) return job.user;
  if (!job.project.empty()) return job.project;
  return "user";
}

std::vector<std::string> BookingUsers(const Trace& trace) {
  std::vector<std::string> users;
  std::unordered_set<std::string> seen;
  for (const TraceJob& j : trace.jobs) {
    std::string u = TraceUserName(j);
    if (seen.insert(u).second) users.push_back(std::move(u));
  }
  if (users.size() >= 2) return users;
  std::vector<std::string> bookers;
  for (int i = 1; i <= 4; ++i) {
    std::string name = "booker-" + std::to_string(i);
    while (seen.count(name)) name += "'";
    bookers.push_back(std::move(name));
  }
  return bookers;
}

std::vector<SimBooking> GenerateBookings(const Trace& trace, const BookingGenOptions& o, Time epoch) {
  std::vector<SimBooking> out;
  if (trace.jobs.empty() || o.per_day <= 0) return out;
  const Time offset = trace.absolute_times ? 0 : epoch;
  const Time first = trace.jobs.front().submit + offset, last = trace.jobs.back().submit + offset;
  const double days = static_cast<double>(last - first) / static_cast<double>(kDay);
  const auto n = static_cast<std::int64_t>(std::llround(o.per_day * days));
  const Duration slot = std::max<Duration>(1, o.slot);
  const std::int64_t min_slots = std::max<std::int64_t>(1, (o.min_length + slot - 1) / slot);
  const std::int64_t max_slots = std::max(min_slots, o.max_length / slot);
  const std::vector<std::string> users = BookingUsers(trace);
  // Its own stream, apart from the replay's (noisy estimates), so adding bookings does not
  // change anyone's estimate.
  Rng rng(o.seed ^ 0xb00c1a6b00c1a6ULL);
  out.reserve(static_cast<size_t>(std::max<std::int64_t>(0, n)));
  for (std::int64_t i = 0; i < n; ++i) {
    SimBooking b;
    b.made = first + static_cast<Time>(rng.Uniform() * static_cast<double>(last - first));
    b.start = GridCeil(b.made + o.ahead, slot, o.zone);
    b.end = b.start + (min_slots + rng.Below(max_slots - min_slots + 1)) * slot;
    b.gpus = 1 + static_cast<int>(rng.Below(std::max(1, o.max_gpus)));
    b.user = users[static_cast<size_t>(rng.Below(static_cast<std::int64_t>(users.size())))];
    b.show = rng.Uniform() >= o.no_show;
    out.push_back(std::move(b));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const SimBooking& a, const SimBooking& b) { return a.made < b.made; });
  return out;
}

StatusOr<std::vector<SimBooking>> ParseBookings(std::string_view csv_text, const std::string& name,
                                                bool absolute, Time epoch, Duration ahead) {
  CsvReader reader(csv_text, name);
  if (Status s = reader.ReadHeader(); !s.ok()) return s;
  const char* required[] = {"user", "gpus", "start", "end", "show"};
  std::size_t col[5];
  for (int i = 0; i < 5; ++i) {
    auto c = reader.ColumnIndex(required[i]);
    if (!c) {
      return reader.ErrorAt(
          1, std::string("no column \"") + required[i] +
                 "\" (a booking file has user,gpus,start,end,show and optionally made; it has " +
                 reader.ColumnList() + ")");
    }
    col[i] = *c;
  }
  const std::optional<std::size_t> made_col = reader.ColumnIndex("made");
  const Time offset = absolute ? 0 : epoch;
  auto time_of = [&](std::string_view text) -> std::optional<Time> {
    if (auto v = Integer(text)) return *v + offset;
    return ParseDateTimeUtc(text);
  };
  std::vector<SimBooking> out;
  while (true) {
    StatusOr<bool> more = reader.Next();
    if (!more.ok()) return more.status();
    if (!*more) break;
    const auto& f = reader.fields();
    const std::int64_t line = reader.line();
    SimBooking b;
    b.line = line;
    b.user = std::string(f[col[0]]);
    if (b.user.empty()) return reader.ErrorAt(line, "user: empty (who books?)");
    auto gpus = Integer(f[col[1]]);
    if (!gpus || *gpus < 1 || *gpus > 1'000'000) {
      return reader.ErrorAt(line,
                            "gpus: \"" + std::string(f[col[1]]) + "\" is not a whole number of GPUs >= 1");
    }
    b.gpus = static_cast<int>(*gpus);
    auto start = time_of(f[col[2]]);
    auto end = time_of(f[col[3]]);
    if (!start)
      return reader.ErrorAt(line, "start: \"" + std::string(f[col[2]]) + "\" is not seconds or a date");
    if (!end) return reader.ErrorAt(line, "end: \"" + std::string(f[col[3]]) + "\" is not seconds or a date");
    b.start = *start;
    b.end = *end;
    const std::string_view show = f[col[4]];
    if (show == "1") {
      b.show = true;
    } else if (show == "0") {
      b.show = false;
    } else {
      return reader.ErrorAt(
          line, "show: \"" + std::string(show) + "\" must be 1 (the owner comes) or 0 (a no-show)");
    }
    b.made = b.start - ahead;
    if (made_col && !f[*made_col].empty()) {
      auto made = time_of(f[*made_col]);
      if (!made)
        return reader.ErrorAt(line, "made: \"" + std::string(f[*made_col]) + "\" is not seconds or a date");
      b.made = *made;
    }
    // The rules judge the times (past, grid, length); only what cannot be a booking at all is an
    // error here.
    if (b.end <= b.start) return reader.ErrorAt(line, "end is not after start");
    out.push_back(std::move(b));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const SimBooking& a, const SimBooking& b) { return a.made < b.made; });
  return out;
}

StatusOr<std::vector<SimBooking>> LoadBookings(const std::string& path, bool absolute, Time epoch,
                                               Duration ahead) {
  StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok()) return text.status();
  return ParseBookings(*text, path, absolute, epoch, ahead);
}

}  // namespace rota::sim
