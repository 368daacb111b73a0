// Tested by when_test.cc.
//
// The text is normalised (trimmed, ASCII lower case, full-width space and colon made ASCII),
// split into at most a date word and a time of day, and each part is read by a small matcher.
// A matcher answers "not this form" (nullopt), "this form, but impossible" (a reason such as
// "2026-02 has 28 days") or a value, so that "2026-02-30 14:00" gets a precise message while
// "next week" gets the list of accepted forms. Days are counted as local days since 1970-01-01:
// day D starts at local time D * 86400, which the zone turns into an instant (daylight saving
// included: a wall time skipped in spring is read past the gap, one repeated in autumn as its
// first instant).
#include "api/when.h"

#include <array>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <optional>
#include <utility>
#include <vector>

namespace rota::api {

namespace {

// A matcher's answer: nullopt = not this form; an error = this form, impossible (the message is
// the reason only; ParseWhen adds the text); otherwise the value.
using Match = std::optional<StatusOr<std::int64_t>>;

constexpr std::int64_t kUnixFloor = 1'000'000'000;            // 2001-09-09: smaller numbers are typos
constexpr std::string_view kFullWidthSpace = "\xE3\x80\x80";  // U+3000
constexpr std::string_view kFullWidthColon = "\xEF\xBC\x9A";  // U+FF1A "："

Match Impossible(std::string reason) { return StatusOr<std::int64_t>(InvalidArgument(std::move(reason))); }

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

std::string_view TrimAscii(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Lower-cased ASCII, tabs and full-width spaces as spaces, full-width colons as colons, trimmed.
std::string Normalize(std::string_view text) {
  std::string s;
  s.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    std::string_view rest = text.substr(i);
    if (rest.starts_with(kFullWidthSpace)) {
      s += ' ';
      i += kFullWidthSpace.size();
    } else if (rest.starts_with(kFullWidthColon)) {
      s += ':';
      i += kFullWidthColon.size();
    } else {
      char c = text[i++];
      if (c == '\t' || c == '\r' || c == '\n') c = ' ';
      s += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    }
  }
  return std::string(TrimAscii(s));
}

// All of `s` as a number of min_len..max_len digits.
std::optional<int> Digits(std::string_view s, std::size_t min_len, std::size_t max_len) {
  if (s.size() < min_len || s.size() > max_len) return std::nullopt;
  int v = 0;
  for (char c : s) {
    if (!IsDigit(c)) return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

// Leading digits of `s` (at most 4), consumed.
std::string_view TakeDigits(std::string_view& s) {
  std::size_t n = 0;
  while (n < s.size() && n < 4 && IsDigit(s[n])) ++n;
  std::string_view d = s.substr(0, n);
  s.remove_prefix(n);
  return d;
}

bool Consume(std::string_view& s, std::string_view prefix) {
  if (!s.starts_with(prefix)) return false;
  s.remove_prefix(prefix.size());
  return true;
}

// Seconds since local midnight: "H:MM", "HH:MM", "HH:MM:SS", "14点", "14点30", "14点30分", "14点半".
Match TimeOfDay(std::string_view s) {
  const std::string_view token = s;
  std::optional<int> h = Digits(TakeDigits(s), 1, 2);
  if (!h) return std::nullopt;
  int m = 0, sec = 0;
  if (Consume(s, ":")) {
    std::optional<int> mm = Digits(s.substr(0, 2), 2, 2);
    if (!mm) return std::nullopt;
    m = *mm;
    s.remove_prefix(2);
    if (Consume(s, ":")) {
      std::optional<int> ss = Digits(s, 2, 2);
      if (!ss) return std::nullopt;
      sec = *ss;
      s = {};
    }
  } else if (Consume(s, "点")) {
    if (Consume(s, "半")) {
      m = 30;
    } else if (!s.empty()) {
      std::optional<int> mm = Digits(TakeDigits(s), 1, 2);
      if (!mm) return std::nullopt;
      m = *mm;
      Consume(s, "分");
    }
  } else {
    return std::nullopt;
  }
  if (!s.empty()) return std::nullopt;
  if (m > 59) return Impossible(std::string(token) + " is not a time of day: minutes go from 00 to 59");
  if (sec > 59) return Impossible(std::string(token) + " is not a time of day: seconds go from 00 to 59");
  if (*h > 24 || (*h == 24 && (m != 0 || sec != 0))) {
    return Impossible(std::string(token) +
                      " is not a time of day (00:00 to 24:00, where 24:00 ends the day)");
  }
  return StatusOr<std::int64_t>(*h * kHour + m * kMinute + sec);
}

std::string Pad2(int v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%02d", v);
  return buf;
}

// The local day of a year (or the next one not before `today` when absent), month and day.
Match Ymd(std::optional<int> year, int month, int day, std::int64_t today) {
  if (month < 1 || month > 12) return Impossible("there is no month " + std::to_string(month));
  if (day < 1) return Impossible("there is no day 0");
  if (year) {
    const int max = DaysInMonth(*year, month);
    if (day > max) {
      return Impossible(std::to_string(*year) + "-" + Pad2(month) + " has " + std::to_string(max) + " days");
    }
    return StatusOr<std::int64_t>(DaysFromCivil(*year, month, day));
  }
  const int max = DaysInMonth(2000, month);  // a leap year: the most a month ever has
  if (day > max) return Impossible("month " + Pad2(month) + " has at most " + std::to_string(max) + " days");
  // The next occurrence not before today: this year, else the next year that has the date
  // (02-29 waits for a leap year, at most 8 years away).
  const std::int64_t this_year = CivilFromDays(today).year;
  for (std::int64_t y = this_year; y <= this_year + 8; ++y) {
    if (day > DaysInMonth(y, month)) continue;
    const std::int64_t d = DaysFromCivil(y, month, day);
    if (d >= today) return StatusOr<std::int64_t>(d);
  }
  return Impossible("no such date ahead");  // unreachable: some leap year falls within 8 years
}

// "2026-12-01", "2026/12/01", "12-01", "12/01" (one separator throughout).
Match NumericDate(std::string_view s, std::int64_t today) {
  const std::size_t first = s.find_first_of("-/");
  if (first == std::string_view::npos) return std::nullopt;
  const char sep = s[first];
  std::vector<std::string_view> parts;
  for (std::size_t start = 0;;) {
    const std::size_t end = s.find(sep, start);
    parts.push_back(s.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  if (parts.size() == 3) {
    std::optional<int> y = Digits(parts[0], 4, 4), m = Digits(parts[1], 1, 2), d = Digits(parts[2], 1, 2);
    if (!y || !m || !d) return std::nullopt;
    return Ymd(*y, *m, *d, today);
  }
  if (parts.size() == 2) {
    std::optional<int> m = Digits(parts[0], 1, 2), d = Digits(parts[1], 1, 2);
    if (!m || !d) return std::nullopt;
    return Ymd(std::nullopt, *m, *d, today);
  }
  return std::nullopt;
}

// "2026年12月1日", "12月1日", "12月1号".
Match ChineseDate(std::string_view s, std::int64_t today) {
  std::optional<int> year;
  std::string_view rest = s;
  std::string_view first = TakeDigits(rest);
  if (Consume(rest, "年")) {
    year = Digits(first, 4, 4);
    if (!year) return std::nullopt;
    first = TakeDigits(rest);
  }
  std::optional<int> m = Digits(first, 1, 2);
  if (!m || !Consume(rest, "月")) return std::nullopt;
  std::optional<int> d = Digits(TakeDigits(rest), 1, 2);
  if (!d || !(Consume(rest, "日") || Consume(rest, "号")) || !rest.empty()) return std::nullopt;
  return Ymd(year, *m, *d, today);
}

struct DayWord {
  std::string_view word;
  int value;  // days after today for relative words; 0 (Monday) .. 6 for weekdays
};
constexpr std::array<DayWord, 5> kRelativeDays = {{
    {"today", 0},
    {"tomorrow", 1},
    {"今天", 0},
    {"明天", 1},
    {"后天", 2},
}};
constexpr std::array<DayWord, 33> kWeekdays = {{
    {"mon", 0},       {"monday", 0}, {"tue", 1},      {"tues", 1},   {"tuesday", 1},  {"wed", 2},
    {"wednesday", 2}, {"thu", 3},    {"thur", 3},     {"thurs", 3},  {"thursday", 3}, {"fri", 4},
    {"friday", 4},    {"sat", 5},    {"saturday", 5}, {"sun", 6},    {"sunday", 6},   {"周一", 0},
    {"周二", 1},      {"周三", 2},   {"周四", 3},     {"周五", 4},   {"周六", 5},     {"周日", 6},
    {"周天", 6},      {"星期一", 0}, {"星期二", 1},   {"星期三", 2}, {"星期四", 3},   {"星期五", 4},
    {"星期六", 5},    {"星期日", 6}, {"星期天", 6},
}};

// The local day named by a date word.
Match DateWord(std::string_view s, std::int64_t today) {
  for (const DayWord& w : kRelativeDays) {
    if (s == w.word) return StatusOr<std::int64_t>(today + w.value);
  }
  for (const DayWord& w : kWeekdays) {
    if (s != w.word) continue;
    const int today_weekday = static_cast<int>(((today + 3) % 7 + 7) % 7);  // 1970-01-01 was a Thursday
    int ahead = (w.value - today_weekday + 7) % 7;
    if (ahead == 0) ahead = 7;  // strictly after today: "mon" said on a Monday is next week's
    return StatusOr<std::int64_t>(today + ahead);
  }
  if (Match m = NumericDate(s, today)) return m;
  return ChineseDate(s, today);
}

// People type Chinese dates without a space before the time ("明天14点", "12月1日14:00") and
// ISO dates with a T ("2026-12-01T14:00"): split such a token into its date and time.
std::vector<std::string_view> SplitJoined(std::string_view t) {
  for (std::size_t i = 1; i + 1 < t.size(); ++i) {
    if (t[i] == 't' && IsDigit(t[i - 1]) && IsDigit(t[i + 1])) return {t.substr(0, i), t.substr(i + 1)};
  }
  // Only the Chinese words: "mon9:00" is more likely a typo than a form worth guessing at.
  auto chinese_prefix = [&](const DayWord& w) {
    return static_cast<unsigned char>(w.word[0]) >= 0x80 && t.size() > w.word.size() && t.starts_with(w.word);
  };
  for (const DayWord& w : kRelativeDays) {
    if (chinese_prefix(w)) return {t.substr(0, w.word.size()), t.substr(w.word.size())};
  }
  for (const DayWord& w : kWeekdays) {
    if (chinese_prefix(w)) return {t.substr(0, w.word.size()), t.substr(w.word.size())};
  }
  for (std::string_view mark : {"日", "号"}) {
    const std::size_t p = t.find(mark);
    if (p != std::string_view::npos && t.find("月") < p && p + mark.size() < t.size()) {
      return {t.substr(0, p + mark.size()), t.substr(p + mark.size())};
    }
  }
  return {t};
}

std::vector<std::string_view> SplitSpaces(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ') ++i;
    std::size_t j = i;
    while (j < s.size() && s[j] != ' ') ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

// How a caller reads: the forms its "cannot read" error lists, and whether a day without a time
// of day is that day's 00:00 (ParseSince) or an error (ParseWhen: a booking needs an hour).
struct Reading {
  std::string_view forms;
  bool day_alone_is_midnight = false;
};

StatusOr<Time> Read(std::string_view text, Time now, const Zone& zone, Time base_day, const Reading& how) {
  const std::string shown(TrimAscii(text));
  const std::string s = Normalize(text);
  auto unreadable = [&] {
    return InvalidArgument("cannot read \"" + shown + "\" as a time; use " + std::string(how.forms) +
                           " (server time, " + zone.Label(now) + ")");
  };
  auto impossible = [&](const Status& why) {
    return InvalidArgument("cannot read \"" + shown + "\" as a time: " + why.message());
  };

  if (!s.empty() && s.find_first_not_of("0123456789") == std::string::npos) {
    std::int64_t v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc() && end == s.data() + s.size() && v >= kUnixFloor) return v;
    return unreadable();
  }

  std::vector<std::string_view> tokens = SplitSpaces(s);
  if (tokens.size() == 1) tokens = SplitJoined(tokens[0]);
  const std::int64_t today = zone.Day(now);

  std::int64_t day = 0;
  std::string_view time_text;
  if (tokens.size() == 1) {
    time_text = tokens[0];
    day = base_day != 0 ? zone.Day(base_day) : today;
    if (!TimeOfDay(time_text)) {
      Match date = DateWord(time_text, today);
      if (!date) return unreadable();
      if (!date->ok()) return impossible(date->status());
      if (how.day_alone_is_midnight) return zone.FromLocal(**date * kDay);
      return InvalidArgument("cannot read \"" + shown +
                             "\" as a time: it has no time of day; add one, e.g. \"" + shown + " 14:00\"");
    }
  } else if (tokens.size() == 2) {
    Match date = DateWord(tokens[0], today);
    if (!date) return unreadable();
    if (!date->ok()) return impossible(date->status());
    day = **date;
    time_text = tokens[1];
  } else {
    return unreadable();
  }

  Match secs = TimeOfDay(time_text);
  if (!secs) return unreadable();
  if (!secs->ok()) return impossible(secs->status());
  return zone.FromLocal(day * kDay + **secs);
}

}  // namespace

StatusOr<Time> ParseWhen(std::string_view text, Time now, const Zone& zone, Time base_day) {
  return Read(text, now, zone, base_day,
              {"2026-12-01 14:00, 12-01 14:00, tomorrow 14:00, 14:00 (today) or mon 09:00"});
}

StatusOr<Time> ParseWeek(std::string_view text, Time now, const Zone& zone) {
  const std::string shown(TrimAscii(text));
  const std::string s = Normalize(text);
  const std::int64_t today = zone.Day(now);
  std::int64_t day = today;
  if (s == "next") {
    day = today + 7;
  } else if (s == "last") {
    day = today - 7;
  } else if (!s.empty() && s != "this") {
    Match date = DateWord(s, today);
    if (!date) {
      return InvalidArgument("cannot read \"" + shown +
                             "\" as a week; give a day of it (2026-12-01, 12-01, today, mon) or this, next or last");
    }
    if (!date->ok()) return InvalidArgument("cannot read \"" + shown + "\" as a week: " + date->status().message());
    day = **date;
  }
  const std::int64_t weekday = ((day + 3) % 7 + 7) % 7;  // 1970-01-01 was a Thursday; Monday is 0
  return zone.FromLocal((day - weekday) * kDay);
}

StatusOr<Time> ParseDeadline(std::string_view text, Time now, const Zone& zone) {
  // No time of day written (no colon, half- or full-width): first as that day's end.
  if (text.find(':') == std::string_view::npos && text.find("\uFF1A") == std::string_view::npos) {
    StatusOr<Time> end_of_day = ParseWhen(std::string(text) + " 24:00", now, zone);
    if (end_of_day.ok()) return end_of_day;
  }
  return ParseWhen(text, now, zone);
}

StatusOr<Time> ParseSince(std::string_view text, Time now, const Zone& zone) {
  const std::string_view trimmed = TrimAscii(text);
  // A number and a unit: how long ago. ParseDuration also reads "14:00" and "90" (Slurm's
  // minutes[:seconds]), which here are a time of day and nothing.
  if (!trimmed.empty() && std::isalpha(static_cast<unsigned char>(trimmed.back())) &&
      std::isdigit(static_cast<unsigned char>(trimmed.front())) &&
      trimmed.find_first_of(":-/") == std::string_view::npos) {
    if (std::optional<Duration> ago = ParseDuration(trimmed)) return now - *ago;
  }
  const std::string week_ago = FormatLocalDate(now - kWeek, zone);
  const std::string forms = "how long ago (7d, 12h, 90m), a day (" + week_ago +
                            ", today) or a day and time (" + week_ago + " 14:00)";
  StatusOr<Time> t = Read(trimmed, now, zone, 0, {forms, true});
  // The forms that mean the next such day ("11-01", "mon", "tomorrow") land in the future, where
  // nothing has ended yet: say so rather than answer with nothing.
  if (t.ok() && *t > now) {
    return InvalidArgument("\"" + std::string(trimmed) + "\" is " + FormatLocal(*t, zone) +
                           " (server time, " + zone.Label(*t) +
                           "), which has not come yet; give a past day with its year (" + week_ago +
                           ") or how long ago (7d)");
  }
  return t;
}

}  // namespace rota::api
