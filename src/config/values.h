// Parsers for the small value syntaxes of the configuration file: clock times, weekday sets,
// UTC offsets and MIG profile names. Pure functions on text; no TOML here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/types.h"

namespace rota::config {

// "14:00" -> 840 minutes after midnight. Accepts 00:00 to 23:59 (H:MM too).
std::optional<int> ParseClock(std::string_view text);

// One day, "mon" or "monday" (any case) -> 0 ... 6 (Monday first).
std::optional<int> ParseWeekday(std::string_view text);

// "mon-fri", "sat,sun", "mon,wed-fri", "fri-mon" (wraps), "all" -> bit mask, bit 0 = Monday.
std::optional<std::uint8_t> ParseWeekdays(std::string_view text);

// "UTC", "Z", "+08:00", "-03:30", "+8", "UTC+8" -> seconds east of UTC. Zone names such as
// "Asia/Shanghai" are not offsets (rota reads no tz database) and return nullopt.
std::optional<int> ParseUtcOffset(std::string_view text);
// "+08:00", "-03:30", "UTC" for 0.
std::string FormatUtcOffset(int seconds);

// A MIG profile name such as "3g.40gb" or "1g.10gb+me": compute slices and memory.
struct MigProfile {
  int compute = 0;  // the "3" of 3g
  MiB memory = 0;   // the "40gb", in MiB
};
std::optional<MigProfile> ParseMigProfile(std::string_view name);

}  // namespace rota::config
