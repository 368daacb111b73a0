// Tested by tzdb_test.cc (the real database of the machine, and TZif bytes made by the test).
//
// Design: read by hand, and written down in docs/design.md ("Time zones"): the Debian libraries
// that read the tz database (cctz, date's tz.cpp) are shared libraries only, which the statically
// linked `rota` cannot take, and date's header-only POSIX reader (ptz.h, 3.0.1) does not compile
// as C++20. TZif is short (RFC 8536: a header, then tables of big-endian numbers), and so is the
// POSIX TZ rule in its footer ("CET-1CEST,M3.5.0,M10.5.0/3") that gives the years after the
// table. Transitions that change only the name or the daylight flag, not the offset, are
// dropped: the core needs only offsets.
#include "config/tzdb.h"

#include "core/civil_date.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <utility>
#include <vector>

namespace rota::config {

namespace {

// 2100-01-01 00:00 UTC: far enough for any booking, quota week or report.
constexpr Time kZoneHorizon = 4102444800;
constexpr std::size_t kMaxTzifBytes = 1 << 20;

class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  bool Has(std::size_t n) const { return pos_ <= bytes_.size() && bytes_.size() - pos_ >= n; }
  std::int64_t Int(int width) {  // big-endian, two's complement; REQUIRES: Has(width)
    std::uint64_t v = 0;
    for (int i = 0; i < width; ++i) v = (v << 8) | static_cast<unsigned char>(bytes_[pos_++]);
    if (width < 8 && (v >> (8 * width - 1)) != 0) v |= ~std::uint64_t{0} << (8 * width);
    return static_cast<std::int64_t>(v);
  }
  void Skip(std::size_t n) { pos_ += n; }
  std::string_view Rest() const { return pos_ < bytes_.size() ? bytes_.substr(pos_) : std::string_view(); }

 private:
  std::string_view bytes_;
  std::size_t pos_ = 0;
};

struct Header {
  char version = 0;
  std::int64_t isut = 0, isstd = 0, leap = 0, time = 0, type = 0, chars = 0;
};

bool ReadHeader(Reader& r, Header& h) {
  if (!r.Has(44)) return false;
  if (r.Int(4) != 0x545a6966) return false;  // "TZif"
  h.version = static_cast<char>(r.Int(1));
  r.Skip(15);
  h.isut = r.Int(4);
  h.isstd = r.Int(4);
  h.leap = r.Int(4);
  h.time = r.Int(4);
  h.type = r.Int(4);
  h.chars = r.Int(4);
  for (std::int64_t n : {h.isut, h.isstd, h.leap, h.time, h.type, h.chars}) {
    if (n < 0 || n > 100000) return false;
  }
  return h.type >= 1;
}

std::size_t BlockSize(const Header& h, int time_width) {
  return static_cast<std::size_t>(h.time * time_width + h.time + h.type * 6 + h.chars +
                                  h.leap * (time_width + 4) + h.isstd + h.isut);
}

// A POSIX TZ rule ("CET-1CEST,M3.5.0,M10.5.0/3"): a standard offset, and optionally a daylight
// one with the days it starts and ends (the M form, the one the tz database writes; the J and
// day-of-year forms are refused, the table alone then holds).
struct PosixRule {
  struct Date {
    int month = 0, week = 0, weekday = 0;  // Mm.w.d: week 5 is the last; weekday 0 is Sunday
    int time = 2 * 3600;                   // local time of the change, may be negative or past 24 h
  };
  int std_offset = 0;  // east of UTC (POSIX writes west)
  bool dst = false;
  int dst_offset = 0;
  Date start, end;
};

class PosixReader {
 public:
  explicit PosixReader(std::string_view s) : s_(s) {}
  bool Name() {
    if (Eat('<')) {
      const std::size_t close = s_.find('>', i_);
      if (close == std::string_view::npos) return false;
      i_ = close + 1;
      return true;
    }
    const std::size_t from = i_;
    while (i_ < s_.size() && std::isalpha(static_cast<unsigned char>(s_[i_]))) ++i_;
    return i_ - from >= 3;
  }
  // [+-]h[:mm[:ss]], in seconds.
  bool Time(int& out, int max_hours) {
    int sign = 1;
    if (Eat('-')) sign = -1;
    else Eat('+');
    int h = 0, m = 0, sec = 0;
    if (!Number(h, max_hours)) return false;
    if (Eat(':') && !Number(m, 59)) return false;
    if (Eat(':') && !Number(sec, 59)) return false;
    out = sign * (h * 3600 + m * 60 + sec);
    return true;
  }
  bool Date(PosixRule::Date& d) {
    if (!Eat('M') || !Number(d.month, 12) || !Eat('.') || !Number(d.week, 5) || !Eat('.') || !Number(d.weekday, 6)) {
      return false;
    }
    if (d.month < 1 || d.week < 1) return false;
    if (Eat('/') && !Time(d.time, 167)) return false;
    return true;
  }
  bool Eat(char c) {
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool AtEnd() const { return i_ == s_.size(); }

 private:
  bool Number(int& out, int max) {
    const std::size_t from = i_;
    out = 0;
    while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_])) && i_ - from < 3) {
      out = out * 10 + (s_[i_++] - '0');
    }
    return i_ > from && out <= max;
  }
  std::string_view s_;
  std::size_t i_ = 0;
};

std::optional<PosixRule> ReadPosixRule(std::string_view text) {
  PosixReader r(text);
  PosixRule rule;
  int west = 0;
  if (!r.Name() || !r.Time(west, 24)) return std::nullopt;
  rule.std_offset = -west;
  if (r.AtEnd()) return rule;
  if (!r.Name()) return std::nullopt;
  rule.dst = true;
  rule.dst_offset = rule.std_offset + 3600;
  if (!r.AtEnd() && !r.Eat(',')) {
    if (!r.Time(west, 24)) return std::nullopt;
    rule.dst_offset = -west;
    if (!r.Eat(',')) return std::nullopt;
  } else if (r.AtEnd()) {
    return std::nullopt;  // daylight time without the days it applies: not a rule the database writes
  }
  if (!r.Date(rule.start) || !r.Eat(',') || !r.Date(rule.end) || !r.AtEnd()) return std::nullopt;
  return rule;
}

// Local seconds (since 1970-01-01 local) of `d` in `year`.
std::int64_t LocalChange(std::int64_t year, const PosixRule::Date& d) {
  const std::int64_t first = DaysFromCivil(year, d.month, 1);
  const int first_weekday = static_cast<int>(((first + 4) % 7 + 7) % 7);  // 1970-01-01: Thursday (4)
  std::int64_t day = first + (d.weekday - first_weekday + 7) % 7 + 7 * (d.week - 1);
  while (day >= first + DaysInMonth(year, d.month)) day -= 7;  // week 5: the last such day
  return day * kDay + d.time;
}

// The rule's changes after `from` up to kZoneHorizon.
void AddRuleTransitions(const PosixRule& rule, Time from, int& last, std::vector<Zone::Transition>& out) {
  if (!rule.dst) {
    if (rule.std_offset != last) out.push_back({from, rule.std_offset});
    last = rule.std_offset;
    return;
  }
  const std::int64_t first_year = CivilFromDays(FloorDiv(from, kDay)).year;
  for (std::int64_t y = first_year; y <= 2100; ++y) {
    // The start is in standard time's wall clock, the end in daylight time's.
    std::pair<Time, int> changes[] = {{LocalChange(y, rule.start) - rule.std_offset, rule.dst_offset},
                                      {LocalChange(y, rule.end) - rule.dst_offset, rule.std_offset}};
    if (changes[1].first < changes[0].first) std::swap(changes[0], changes[1]);  // southern hemisphere
    for (auto [at, offset] : changes) {
      if (at <= from || at >= kZoneHorizon || offset == last) continue;
      out.push_back({at, offset});
      last = offset;
    }
  }
}

// The first kMaxTzifBytes of file `path`; nullopt when it cannot be opened.
std::optional<std::string> ReadTzif(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string bytes(kMaxTzifBytes, '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  bytes.resize(static_cast<std::size_t>(in.gcount()));
  return bytes;
}

}  // namespace

std::string ZoneDir() {
  const char* dir = std::getenv("TZDIR");
  return dir != nullptr && *dir != '\0' ? dir : "/usr/share/zoneinfo";
}

StatusOr<Zone> ZoneFromTzif(std::string_view name, std::string_view bytes) {
  const std::string bad = "the tz database's file for \"" + std::string(name) + "\" is not a TZif file";
  Reader r(bytes);
  Header h;
  if (!ReadHeader(r, h)) return InvalidArgument(bad);
  int width = 4;
  if (h.version >= '2') {  // skip the 32-bit block: the 64-bit one follows with its own header
    const std::size_t v1 = BlockSize(h, 4);
    if (!r.Has(v1)) return InvalidArgument(bad);
    r.Skip(v1);
    if (!ReadHeader(r, h)) return InvalidArgument(bad);
    width = 8;
  }
  if (!r.Has(BlockSize(h, width))) return InvalidArgument(bad);
  std::vector<std::int64_t> times(static_cast<std::size_t>(h.time));
  for (std::int64_t& t : times) t = r.Int(width);
  std::vector<int> kinds(times.size());
  for (int& k : kinds) k = static_cast<int>(r.Int(1));
  std::vector<int> offsets(static_cast<std::size_t>(h.type));
  for (int& o : offsets) {
    o = static_cast<int>(r.Int(4));
    r.Skip(2);  // isdst, abbreviation index
  }
  r.Skip(static_cast<std::size_t>(h.chars + h.leap * (width + 4) + h.isstd + h.isut));

  // Type 0 is the time before the first transition (RFC 8536, 3.2).
  const int initial = offsets[0];
  std::vector<Zone::Transition> out;
  int last = initial;
  for (std::size_t i = 0; i < times.size(); ++i) {
    if (kinds[i] < 0 || kinds[i] >= h.type) return InvalidArgument(bad);
    const int o = offsets[static_cast<std::size_t>(kinds[i])];
    if (o == last) continue;
    out.push_back({times[i], o});
    last = o;
  }
  // The footer: "\n" POSIX-TZ "\n", the rule after the table's last transition.
  std::string_view rest = r.Rest();
  if (h.version >= '2' && rest.size() >= 2 && rest.front() == '\n') {
    const std::string_view footer = rest.substr(1, rest.find('\n', 1) - 1);
    if (std::optional<PosixRule> rule = ReadPosixRule(footer)) {
      AddRuleTransitions(*rule, times.empty() ? 0 : std::max<Time>(0, times.back()), last, out);
    }
  }
  return Zone(std::string(name), initial, std::move(out));
}

StatusOr<Zone> ZoneFromPosixRule(std::string_view rule) {
  std::optional<PosixRule> r = ReadPosixRule(rule);
  if (!r) return InvalidArgument("\"" + std::string(rule) + "\" is not a POSIX TZ rule");
  if (!r->dst) return Zone(r->std_offset);
  std::vector<Zone::Transition> out;
  int last = r->std_offset;
  AddRuleTransitions(*r, 0, last, out);
  return Zone(std::string(rule), r->std_offset, std::move(out));
}

Zone LocalZone(const std::string& dir) {
  const char* env = std::getenv("TZ");
  if (env == nullptr) {
    std::optional<std::string> bytes = ReadTzif("/etc/localtime");
    StatusOr<Zone> z = bytes ? ZoneFromTzif("localtime", *bytes) : StatusOr<Zone>(NotFound("no /etc/localtime"));
    return z.ok() ? *z : Zone();
  }
  std::string_view tz = env;
  if (!tz.empty() && tz.front() == ':') tz.remove_prefix(1);
  if (StatusOr<Zone> z = LoadZone(tz, dir); z.ok()) return *z;
  if (StatusOr<Zone> z = ZoneFromPosixRule(tz); z.ok()) return *z;
  return Zone();
}

StatusOr<Zone> LoadZone(std::string_view name, const std::string& dir) {
  const std::string shown = "\"" + std::string(name) + "\"";
  const bool well_formed = !name.empty() && name.front() != '/' && name.find("..") == std::string_view::npos &&
                           name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_+-/") ==
                               std::string_view::npos;
  if (!well_formed) {
    return InvalidArgument(shown + " is not a zone name of the tz database (such as Asia/Shanghai or Europe/Berlin)");
  }
  const std::string path = dir + "/" + std::string(name);
  std::optional<std::string> bytes = ReadTzif(path);
  if (!bytes) return NotFound(shown + " is not a zone of the tz database (no " + path + ")");
  return ZoneFromTzif(name, *bytes);
}

}  // namespace rota::config
