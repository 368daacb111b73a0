// Tested by types_test.cc.
#include "core/types.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace rota {

const char* TierName(Tier tier) {
  switch (tier) {
    case Tier::kExplore: return "explore";
    case Tier::kRegular: return "regular";
    case Tier::kThesis: return "thesis";
  }
  return "regular";
}

std::optional<Tier> ParseTier(std::string_view name) {
  if (name == "explore") return Tier::kExplore;
  if (name == "regular") return Tier::kRegular;
  if (name == "thesis") return Tier::kThesis;
  return std::nullopt;
}

namespace {

// Parses a non-negative decimal number at the front of `s`; advances `s`.
std::optional<double> TakeNumber(std::string_view& s) {
  size_t i = 0;
  bool digits = false, dot = false;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || (s[i] == '.' && !dot))) {
    if (s[i] == '.') dot = true; else digits = true;
    ++i;
  }
  if (!digits) return std::nullopt;
  std::string num(s.substr(0, i));
  s.remove_prefix(i);
  return std::strtod(num.c_str(), nullptr);
}

}  // namespace

std::optional<MiB> ParseMemory(std::string_view text) {
  std::string_view s = text;
  auto n = TakeNumber(s);
  if (!n) return std::nullopt;
  double mult = 1;  // MiB
  std::string unit;
  for (char c : s) unit += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (unit.empty() || unit == "M" || unit == "MB" || unit == "MIB") mult = 1;
  else if (unit == "G" || unit == "GB" || unit == "GIB") mult = 1024;
  else if (unit == "T" || unit == "TB" || unit == "TIB") mult = 1024.0 * 1024;
  else return std::nullopt;
  double v = *n * mult;
  if (!(v >= 0) || v > 1e12) return std::nullopt;
  return static_cast<MiB>(std::llround(v));
}

std::string CountOf(long long n, std::string_view one, std::string_view many) {
  return std::to_string(n) + " " + std::string(n == 1 ? one : many);
}

std::string Join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += separator;
    out += parts[i];
  }
  return out;
}

std::string FormatMemory(MiB mib) {
  char buf[32];
  if (mib >= 1024) {
    if (mib % 1024 == 0) std::snprintf(buf, sizeof buf, "%lldG", static_cast<long long>(mib / 1024));
    else std::snprintf(buf, sizeof buf, "%.1fG", static_cast<double>(mib) / 1024.0);
  } else {
    std::snprintf(buf, sizeof buf, "%lldM", static_cast<long long>(mib));
  }
  return buf;
}

std::optional<long long> ParseWholeNumber(std::string_view s, long long lo, long long hi) {
  if (s.empty() || s.size() > 18) return std::nullopt;
  long long v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  if (v < lo || v > hi) return std::nullopt;
  return v;
}

std::optional<Duration> ParseDuration(std::string_view text) {
  if (text.empty()) return std::nullopt;
  // Slurm forms: [days-]hours:minutes:seconds, minutes:seconds, plain minutes.
  if (text.find(':') != std::string_view::npos || text.find('-') != std::string_view::npos) {
    Duration days = 0;
    std::string_view rest = text;
    if (auto dash = rest.find('-'); dash != std::string_view::npos) {
      std::string_view d = rest.substr(0, dash);
      auto n = TakeNumber(d);
      if (!n || !d.empty() || *n != std::floor(*n) || *n > 1e11) return std::nullopt;
      days = static_cast<Duration>(*n);
      rest.remove_prefix(dash + 1);
    }
    Duration parts[3] = {0, 0, 0};
    int count = 0;
    while (true) {
      auto n = TakeNumber(rest);
      if (!n || *n != std::floor(*n) || count == 3 || *n > 1e11) return std::nullopt;
      parts[count++] = static_cast<Duration>(*n);
      if (rest.empty()) break;
      if (rest[0] != ':') return std::nullopt;
      rest.remove_prefix(1);
    }
    Duration secs = 0;
    if (text.find('-') != std::string_view::npos) {
      // days-hours[:minutes[:seconds]]
      secs = parts[0] * kHour + parts[1] * kMinute + parts[2];
    } else if (count == 3) {
      secs = parts[0] * kHour + parts[1] * kMinute + parts[2];
    } else {
      secs = parts[0] * kMinute + parts[1];  // minutes:seconds
    }
    if (days > 1e11 / kDay || secs > 1e11 || days * kDay + secs > 1e11) return std::nullopt;
    return days * kDay + secs;
  }
  // Unit forms: 90s, 30m, 4h, 2d, 1h30m, 1.5h; a bare number is minutes.
  std::string_view s = text;
  double total = 0;
  bool any = false;
  while (!s.empty()) {
    auto n = TakeNumber(s);
    if (!n) return std::nullopt;
    if (s.empty()) {
      if (any) return std::nullopt;  // "1h30" is ambiguous
      total += *n * kMinute;
      any = true;
      break;
    }
    char u = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
    s.remove_prefix(1);
    switch (u) {
      case 's': total += *n; break;
      case 'm': total += *n * kMinute; break;
      case 'h': total += *n * kHour; break;
      case 'd': total += *n * kDay; break;
      case 'w': total += *n * kWeek; break;
      default: return std::nullopt;
    }
    any = true;
  }
  if (!any || total < 0 || total > 1e11) return std::nullopt;
  return static_cast<Duration>(std::llround(total));
}

std::string FormatDuration(Duration d) {
  char buf[48];
  if (d < 0) d = 0;
  if (d < kMinute) std::snprintf(buf, sizeof buf, "%llds", static_cast<long long>(d));
  else if (d < kHour) std::snprintf(buf, sizeof buf, "%lldm", static_cast<long long>(d / kMinute));
  else if (d < kDay)
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", static_cast<long long>(d / kHour),
                  static_cast<long long>((d % kHour) / kMinute));
  else
    std::snprintf(buf, sizeof buf, "%lldd%02lldh", static_cast<long long>(d / kDay),
                  static_cast<long long>((d % kDay) / kHour));
  return buf;
}

std::string FormatSpan(Duration d) {
  std::string s = FormatDuration(d);
  if (s.size() > 3 && (s.ends_with("00h") || s.ends_with("00m"))) s.resize(s.size() - 3);
  return s;
}

}  // namespace rota
