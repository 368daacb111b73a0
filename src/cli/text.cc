// Tested by text_test.cc.
//
// Width comes from wcwidth() of the C library under a UTF-8 locale: it knows East Asian wide
// characters, combining marks and zero-width characters, and is maintained with glibc.
#include "cli/text.h"

#include <algorithm>
#include <clocale>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <cwchar>
#include <optional>
#include <utility>

namespace rota::cli {

namespace {

// Decodes one UTF-8 character at `s`; returns its byte length (1 for an invalid byte) and width.
size_t NextChar(std::string_view s, int* width) {
  // Set on first use, not at start: most `rota submit` runs never measure a width, and loading
  // the locale is a dozen system calls on the path of every submission.
  static const bool locale_set = (UseUtf8Locale(), true);
  (void)locale_set;
  std::mbstate_t st{};
  wchar_t wc = 0;
  size_t n = std::mbrtowc(&wc, s.data(), s.size(), &st);
  if (n == static_cast<size_t>(-1) || n == static_cast<size_t>(-2) || n == 0) {
    *width = 1;
    return 1;
  }
  int w = ::wcwidth(wc);
  *width = w < 0 ? 1 : w;
  return n;
}

bool LooksNumeric(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || c == '.' || c == ',' || c == '-' || c == '%' || c == 's')) return false;
  }
  return s[0] != 's';
}

}  // namespace

void UseUtf8Locale() {
  const char* cur = std::setlocale(LC_CTYPE, "");
  if (cur && (std::strstr(cur, "UTF-8") || std::strstr(cur, "utf8") || std::strstr(cur, "UTF8"))) return;
  if (!std::setlocale(LC_CTYPE, "C.UTF-8")) std::setlocale(LC_CTYPE, "en_US.UTF-8");
}

int DisplayWidth(std::string_view text) {
  int total = 0;
  while (!text.empty()) {
    int w = 0;
    size_t n = NextChar(text, &w);
    total += w;
    text.remove_prefix(n);
  }
  return total;
}

std::string CutToWidth(std::string_view text, int width) {
  if (DisplayWidth(text) <= width) return std::string(text);
  if (width <= 0) return "";
  std::string out;
  int used = 0;
  while (!text.empty()) {
    int w = 0;
    size_t n = NextChar(text, &w);
    if (used + w > width - 1) break;  // keep one column for the ellipsis
    out.append(text.substr(0, n));
    used += w;
    text.remove_prefix(n);
  }
  return out + "\u2026";
}

namespace {

// Punctuation no line may start with, and that no line may end with (Chinese typesetting's rule,
// with the ASCII marks that follow a word).
bool Closing(std::string_view ch) {
  static constexpr std::string_view kMarks[] = {"，", "。", "、", "：", "；", "！", "？", "）", "」", "』", "】", "》",
                                                ",",  ".",  ":",  ";",  "!",  "?",  ")"};
  return std::find(std::begin(kMarks), std::end(kMarks), ch) != std::end(kMarks);
}
bool Opening(std::string_view ch) { return ch == "（" || ch == "「" || ch == "『" || ch == "【" || ch == "《" || ch == "("; }

}  // namespace

std::vector<std::string> WrapToWidth(std::string_view text, int width) {
  width = std::max(1, width);
  std::vector<std::string> lines;
  std::string line;
  int used = 0;
  // Where the line may end (bytes) and where the next one then resumes: at a space (dropped), or
  // before or after a wide character (Chinese breaks between any two characters).
  struct Break {
    size_t at, resume;
  };
  std::vector<Break> breaks;
  bool after_opening = false;
  auto flush = [&] {
    while (!line.empty() && line.back() == ' ') line.pop_back();
    lines.push_back(std::move(line));
    line.clear();
    used = 0;
    breaks.clear();
  };
  while (!text.empty()) {
    int w = 0;
    const size_t n = NextChar(text, &w);
    const std::string_view ch = text.substr(0, n);
    text.remove_prefix(n);
    if (ch == "\n") {
      flush();
      continue;
    }
    if (ch == " ") {
      if (used == 0) continue;  // no line starts with a space
      breaks.push_back({line.size(), line.size() + 1});
    } else if (Closing(ch)) {
      // Not between a character and the mark that closes it.
      if (!breaks.empty() && breaks.back().at == line.size() && breaks.back().resume == line.size()) breaks.pop_back();
    } else if (w > 1 && used > 0 && !after_opening) {
      breaks.push_back({line.size(), line.size()});
    }
    if (ch != " " && used + w > width) {
      if (!breaks.empty()) {
        const Break b = breaks.back();
        std::string rest = line.substr(std::min(b.resume, line.size()));
        line.resize(b.at);
        flush();
        line = std::move(rest);
        used = DisplayWidth(line);
      }
      if (used + w > width && used > 0) flush();  // a word wider than the line
    }
    line.append(ch);
    used += w;
    after_opening = Opening(ch);
    if (w > 1 && !after_opening) breaks.push_back({line.size(), line.size()});
  }
  if (!line.empty() || lines.empty()) flush();
  return lines;
}

std::string PadToWidth(std::string_view text, int width, bool right) {
  int pad = width - DisplayWidth(text);
  if (pad <= 0) return std::string(text);
  return right ? std::string(pad, ' ') + std::string(text) : std::string(text) + std::string(pad, ' ');
}

std::string Table::Render() const {
  std::vector<int> widths(header_.size(), 0);
  auto measure = [&widths](const std::vector<std::string>& row) {
    for (size_t i = 0; i < row.size() && i < widths.size(); ++i) {
      widths[i] = std::max(widths[i], DisplayWidth(row[i]));
    }
  };
  measure(header_);
  for (const auto& r : rows_) measure(r);
  std::string out;
  auto emit = [&](const std::vector<std::string>& row, bool header) {
    std::string line;
    for (size_t i = 0; i < widths.size(); ++i) {
      std::string cell = i < row.size() ? row[i] : "";
      bool last = i + 1 == widths.size();
      bool right = !header && LooksNumeric(cell);
      line += last && !right ? cell : PadToWidth(cell, widths[i], right);
      if (!last) line += "  ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  };
  emit(header_, true);
  for (const auto& r : rows_) emit(r, false);
  return out;
}

std::string WithThousands(long long v) {
  std::string digits = std::to_string(v < 0 ? -v : v);
  std::string out;
  int count = 0;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    if (count && count % 3 == 0) out.insert(out.begin(), ',');
    out.insert(out.begin(), *it);
    ++count;
  }
  return v < 0 ? "-" + out : out;
}

std::string RenderColumns(const std::vector<std::vector<std::string>>& rows, const std::vector<bool>& right,
                          const char* gap) {
  std::vector<int> widths(right.size(), 0);
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size() && i < widths.size(); ++i) {
      widths[i] = std::max(widths[i], DisplayWidth(row[i]));
    }
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < widths.size(); ++i) {
      const std::string cell = i < row.size() ? row[i] : "";
      const bool last = i + 1 == widths.size();
      line += last && !right[i] ? cell : PadToWidth(cell, widths[i], right[i]);
      if (!last) line += gap;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

bool IsBlank(std::string_view s) { return s.find_first_not_of(" \t\r\n") == std::string_view::npos; }

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string TerminalSafe(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f) {
      out += '?';
    } else if (c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      out += '?';  // a C1 control (U+0080..U+009F); some terminals act on them like ESC sequences
      ++i;
    } else {
      out += text[i];
    }
  }
  return out;
}

namespace {
struct DisplayZoneState {
  Zone (*source)() = nullptr;
  std::optional<Zone> zone;
};
DisplayZoneState& DisplayZoneOfProcess() {
  static DisplayZoneState state;
  return state;
}
}  // namespace

void SetDisplayZoneSource(Zone (*source)()) {
  DisplayZoneOfProcess().source = source;
  DisplayZoneOfProcess().zone.reset();
}
void SetDisplayZone(Zone zone) { DisplayZoneOfProcess().zone = std::move(zone); }
const Zone& DisplayZone() {
  DisplayZoneState& s = DisplayZoneOfProcess();
  if (!s.zone) s.zone = s.source != nullptr ? s.source() : Zone();
  return *s.zone;
}

std::string FormatTimeIn(long long t, const Zone& zone, const char* format) {
  // The local wall time as if it were UTC: gmtime_r splits it into fields without a zone.
  const std::time_t local = static_cast<std::time_t>(zone.ToLocal(t));
  std::tm tm{};
  if (!::gmtime_r(&local, &tm)) return "?";
  char buf[64];
  if (std::strftime(buf, sizeof buf, format, &tm) == 0) return "?";
  return buf;
}

std::string FormatTime(long long t, const char* format, const char* unknown) {
  if (t <= 0) return unknown;
  std::string out = FormatTimeIn(t, DisplayZone(), format);
  return out == "?" ? unknown : out;
}

}  // namespace rota::cli
