// Basic value types shared by every layer: time, identifiers, memory sizes, tiers.
//
// Time is a plain count of seconds since the Unix epoch (UTC). The scheduling core never reads a
// clock: every function that needs "now" takes it as an argument, which is what lets the
// simulator replay months of traces in seconds with the same code that runs the lab.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rota {

using Time = std::int64_t;      // seconds since the Unix epoch, UTC
using Duration = std::int64_t;  // seconds
using JobId = std::int64_t;
using MiB = std::int64_t;       // memory sizes, in MiB

inline constexpr Time kNever = std::numeric_limits<Time>::max();
inline constexpr Duration kMinute = 60;
inline constexpr Duration kHour = 3600;
inline constexpr Duration kDay = 86400;
inline constexpr Duration kWeek = 7 * kDay;
// The longest time limit a job may ask for (a year, leap day included).
inline constexpr Duration kMaxTimeLimit = 366 * kDay;

// floor(a / b), where `/` rounds toward zero: the day (or slot) of an instant before 1970 is
// still the one it falls in.
constexpr std::int64_t FloorDiv(std::int64_t a, std::int64_t b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
}

// Service tiers, lowest first: thesis / paper deadline > regular experiments > exploration.
enum class Tier : std::uint8_t { kExplore = 0, kRegular = 1, kThesis = 2 };
inline constexpr int kTierCount = 3;

const char* TierName(Tier tier);  // "explore", "regular", "thesis"
std::optional<Tier> ParseTier(std::string_view name);

// Parses sizes such as "20G", "20GB", "512M", "1.5T", "40960" (MiB). Returns nullopt on bad input.
std::optional<MiB> ParseMemory(std::string_view text);
// "20G" for multiples of 1024 MiB, "20.5G" otherwise, "512M" below 1 GiB.
std::string FormatMemory(MiB mib);

// "1 GPU", "2 GPUs": n and the noun in the number it takes.
std::string CountOf(long long n, std::string_view one, std::string_view many);
// "a, b, c" for Join({"a", "b", "c"}, ", "); "" for none.
std::string Join(const std::vector<std::string>& parts, std::string_view separator);
// "1, 2, 3" for JoinInts({1, 2, 3}, ", "); "" for none.
template <typename Int>
std::string JoinInts(const std::vector<Int>& values, std::string_view separator) {
  std::string out;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += separator;
    out += std::to_string(values[i]);
  }
  return out;
}

// A whole decimal number in [lo, hi]: digits only (no sign, no spaces), at most 18 of them.
std::optional<long long> ParseWholeNumber(std::string_view s, long long lo, long long hi);

// Parses durations such as "90", "90s", "30m", "4h", "2d", "1h30m", "1:30:00", "2-00:00:00".
// A bare number is minutes, as in Slurm's --time. Returns nullopt on bad input or negative time.
std::optional<Duration> ParseDuration(std::string_view text);
// "45s", "12m", "3h05m", "2d04h".
std::string FormatDuration(Duration d);
// The same without a zero second unit, for a configured span in a sentence: "30d", "2h", but
// "2d04h" and "3h05m" as above.
std::string FormatSpan(Duration d);

}  // namespace rota
