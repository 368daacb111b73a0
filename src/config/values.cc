// Tested by values_test.cc.
//
// Design: each parser accepts exactly the forms its header lists and returns nullopt for
// anything else, so that the caller (the config reader) owns the error message and can say
// where in the file the bad value is and what would be accepted.
#include "config/values.h"

#include <array>
#include <cctype>
#include <cstdio>
#include <string>

namespace rota::config {

namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// Parses all of `s` as a non-negative decimal integer of at most `max_digits` digits.
std::optional<int> Digits(std::string_view s, std::size_t max_digits) {
  if (s.empty() || s.size() > max_digits) return std::nullopt;
  int v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

}  // namespace

std::optional<int> ParseClock(std::string_view text) {
  auto colon = text.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  auto h = Digits(text.substr(0, colon), 2);
  std::string_view mm = text.substr(colon + 1);
  auto m = mm.size() == 2 ? Digits(mm, 2) : std::nullopt;
  if (!h || !m || *h > 23 || *m > 59) return std::nullopt;
  return *h * 60 + *m;
}

std::optional<int> ParseWeekday(std::string_view text) {
  static constexpr std::array<const char*, 7> kShort = {"mon", "tue", "wed", "thu", "fri", "sat", "sun"};
  static constexpr std::array<const char*, 7> kLong = {"monday", "tuesday", "wednesday", "thursday",
                                                       "friday", "saturday", "sunday"};
  std::string s = Lower(Trim(text));
  for (int i = 0; i < 7; ++i) {
    if (s == kShort[i] || s == kLong[i]) return i;
  }
  return std::nullopt;
}

std::optional<std::uint8_t> ParseWeekdays(std::string_view text) {
  std::string all = Lower(Trim(text));
  if (all == "all" || all == "daily") return std::uint8_t{0x7f};
  if (all.empty()) return std::nullopt;
  unsigned mask = 0;
  std::string_view rest = all;
  while (true) {
    auto comma = rest.find(',');
    std::string_view part = Trim(rest.substr(0, comma));
    auto dash = part.find('-');
    if (dash == std::string_view::npos) {
      auto d = ParseWeekday(part);
      if (!d) return std::nullopt;
      mask |= 1u << *d;
    } else {
      auto a = ParseWeekday(part.substr(0, dash));
      auto b = ParseWeekday(part.substr(dash + 1));
      if (!a || !b) return std::nullopt;
      for (int d = *a;; d = (d + 1) % 7) {
        mask |= 1u << d;
        if (d == *b) break;
      }
    }
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return static_cast<std::uint8_t>(mask);
}

std::optional<int> ParseUtcOffset(std::string_view text) {
  std::string s = Lower(Trim(text));
  std::string_view v = s;
  if (v == "utc" || v == "z" || v == "gmt") return 0;
  if (v.starts_with("utc") || v.starts_with("gmt")) v.remove_prefix(3);
  if (v.empty() || (v[0] != '+' && v[0] != '-')) return std::nullopt;
  int sign = v[0] == '-' ? -1 : 1;
  v.remove_prefix(1);
  std::optional<int> h, m = 0;
  if (auto colon = v.find(':'); colon != std::string_view::npos) {
    h = Digits(v.substr(0, colon), 2);
    m = v.size() - colon - 1 == 2 ? Digits(v.substr(colon + 1), 2) : std::nullopt;
  } else {
    h = Digits(v, 2);
  }
  if (!h || !m || *h > 14 || *m > 59 || (*h == 14 && *m > 0)) return std::nullopt;
  return sign * (*h * 3600 + *m * 60);
}

std::string FormatUtcOffset(int seconds) {
  if (seconds == 0) return "UTC";
  int a = seconds < 0 ? -seconds : seconds;
  char buf[16];
  std::snprintf(buf, sizeof buf, "%c%02d:%02d", seconds < 0 ? '-' : '+', a / 3600, a / 60 % 60);
  return buf;
}

std::optional<MigProfile> ParseMigProfile(std::string_view name) {
  std::string s = Lower(Trim(name));
  std::string_view v = s;
  if (auto plus = v.find('+'); plus != std::string_view::npos) {
    if (v.substr(plus) != "+me") return std::nullopt;  // media extensions: same compute and memory
    v = v.substr(0, plus);
  }
  auto g = v.find("g.");
  if (g == std::string_view::npos || !v.ends_with("gb")) return std::nullopt;
  auto compute = Digits(v.substr(0, g), 1);
  auto gb = Digits(v.substr(g + 2, v.size() - g - 4), 4);
  if (!compute || !gb || *compute < 1 || *compute > 7 || *gb < 1) return std::nullopt;
  return MigProfile{*compute, static_cast<MiB>(*gb) * 1024};
}

}  // namespace rota::config
