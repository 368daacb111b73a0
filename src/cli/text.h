// Text output helpers for the command line: display width of UTF-8 text (CJK characters take two
// columns), cutting and padding by display width, never by bytes, and simple aligned tables.
#pragma once

#include "core/types.h"
#include "core/zone.h"

#include <string>
#include <string_view>
#include <vector>

namespace rota::cli {

// Sets a UTF-8 character type for the process (keeps the user's locale when it is UTF-8). The
// width functions below call it the first time they are used.
void UseUtf8Locale();
// Columns `text` takes on a terminal; invalid bytes count one column each.
int DisplayWidth(std::string_view text);
// The longest prefix of `text` that fits `width` columns, with "…" when it was cut.
std::string CutToWidth(std::string_view text, int width);
// `text` in lines of at most `width` columns: broken at spaces, or between any two characters in a
// word wider than the line (Chinese has no spaces); newlines in `text` are kept. Spaces at a break
// are dropped. A width under 1 is taken as 1.
std::vector<std::string> WrapToWidth(std::string_view text, int width);
// `text` padded with spaces to `width` columns (left-aligned, or right-aligned).
std::string PadToWidth(std::string_view text, int width, bool right = false);

// A table whose columns are aligned by display width. Numeric-looking cells align right.
class Table {
 public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
  void AddRow(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  std::string Render() const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// Rows (the header first) in columns aligned by display width, `gap` apart; `right` says which
// columns align right and how many there are. Unlike Table, alignment is per column (a "-" in a
// time column stays on the left). Trailing spaces are trimmed.
std::string RenderColumns(const std::vector<std::vector<std::string>>& rows, const std::vector<bool>& right,
                          const char* gap = "  ");

using ::rota::JoinInts;  // core/types.h: "1,2,3" for JoinInts({1, 2, 3}, ",")

// `v` with `digits` decimals: "2.50".
std::string Fixed(double v, int digits);

// Whether `s` holds nothing but spaces, tabs and line ends.
bool IsBlank(std::string_view s);

// "1,234,567" for 1234567.
std::string WithThousands(long long v);

// `text` with control characters (C0, DEL, C1) replaced by '?': names and reasons come from
// users and must not move the cursor or recolour the terminal. Valid UTF-8 otherwise passes.
std::string TerminalSafe(std::string_view text);

// `t` (Unix seconds) in the display zone with strftime's `format` (not %Z or %z); `unknown` when
// t <= 0 (a time the daemon does not have) or it cannot be converted.
std::string FormatTime(long long t, const char* format, const char* unknown);
// `t` as strftime's `format` shows it in `zone` (core/zone.h does the arithmetic; strftime only
// spells the fields); "?" when it cannot.
std::string FormatTimeIn(long long t, const Zone& zone, const char* format);

// The zone FormatTime shows times in. The command line sets a source, called once when the first
// time is shown (the machine's zone, config::LocalZone); a command whose reply names the server's
// zone sets that instead (SetDisplayZone). With neither: UTC.
void SetDisplayZoneSource(Zone (*source)());
void SetDisplayZone(Zone zone);
const Zone& DisplayZone();

}  // namespace rota::cli
