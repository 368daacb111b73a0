// Tested by toml_guard_test.cc and fuzz/config_toml.cc.
#include "config/toml_guard.h"

namespace rota::config {

namespace {

bool BareKeyChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}
bool Blank(char c) { return c == ' ' || c == '\t'; }

// Where a one-line string whose quote is at `open` ends: its closing quote, else the line break
// or the end of the text that cuts it off. A basic string's escapes are skipped.
std::size_t OneLineStringEnd(std::string_view text, std::size_t open) {
  const char quote = text[open];
  std::size_t k = open + 1;
  for (; k < text.size() && text[k] != quote && text[k] != '\n'; ++k) {
    if (quote == '"' && text[k] == '\\' && k + 1 < text.size() && text[k + 1] != '\n') ++k;
  }
  return k;
}

}  // namespace

std::optional<TomlTrap> FindTomlTrap(std::string_view text) {
  constexpr const char* kHeader =
      "a table header's name must start with a letter, digit, '_', '-' or a quote, as in [users.alice] or "
      "[[gpus.card]]";
  constexpr const char* kNotAscii =
      "a character other than ASCII outside a string or a comment (names and values with other "
      "characters go in quotes: \"张三\" = ...)";
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // a byte order mark
  enum class In { kNothing, kMultiBasic, kMultiLiteral } in = In::kNothing;
  int line = 1;
  std::size_t line_start = 0;
  bool at_line_start = true;  // only blanks so far on this line
  int depth = 0;              // arrays and inline tables open in a value (their lines are no headers)
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      line_start = i + 1;
      at_line_start = true;
      continue;
    }
    if (in == In::kMultiBasic) {
      if (c == '\\') {
        ++i;  // an escaped character (a quote, or the line break of a line-ending backslash)
        if (i < text.size() && text[i] == '\n') {
          ++line;
          line_start = i + 1;
        }
      } else if (text.substr(i, 3) == "\"\"\"") {
        in = In::kNothing;
        i += 2;
      }
      continue;
    }
    if (in == In::kMultiLiteral) {
      if (text.substr(i, 3) == "'''") {
        in = In::kNothing;
        i += 2;
      }
      continue;
    }
    if (at_line_start && Blank(c)) continue;
    if (at_line_start && c == '[' && depth == 0) {
      std::size_t j = i + 1;
      bool blank = false;
      while (j < text.size() && Blank(text[j])) {
        ++j;
        blank = true;
      }
      if (j < text.size() && text[j] == '[' && !blank) {
        ++j;
        while (j < text.size() && Blank(text[j])) ++j;
      }
      // At the end of the text toml++ reports the header unfinished itself; "[ [" is its own
      // error too (brackets of an array of tables must touch).
      if (j < text.size() && !(text[j] == '[' && blank) && !BareKeyChar(text[j]) && text[j] != '"' &&
          text[j] != '\'' && text[j] != ']') {
        return TomlTrap{line, static_cast<int>(j - line_start) + 1, kHeader};
      }
      // The rest of a header line holds no value (no string may span lines there). Its bare keys
      // are read with the whitespace test too: ASCII only outside quotes and a comment.
      std::size_t k = i + 1;
      for (; k < text.size() && text[k] != '\n'; ++k) {
        const char h = text[k];
        if (h == '#') {  // a comment, to the end of the line
          while (k < text.size() && text[k] != '\n') ++k;
          break;
        }
        if (h == '"' || h == '\'') {  // a quoted key, to its closing quote
          k = OneLineStringEnd(text, k);
          if (k >= text.size() || text[k] == '\n') break;  // unterminated: toml++ says so
          continue;
        }
        if (static_cast<unsigned char>(h) >= 0x80) return TomlTrap{line, static_cast<int>(k - line_start) + 1, kNotAscii};
      }
      i = k - 1;  // the line break (or the end) is next
      continue;
    }
    at_line_start = false;
    if (static_cast<unsigned char>(c) >= 0x80) return TomlTrap{line, static_cast<int>(i - line_start) + 1, kNotAscii};
    if (c == '[' || c == '{') {
      ++depth;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    } else if (c == '#') {  // a comment: the rest of the line
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
    } else if (text.substr(i, 3) == "\"\"\"") {
      in = In::kMultiBasic;
      i += 2;
    } else if (text.substr(i, 3) == "'''") {
      in = In::kMultiLiteral;
      i += 2;
    } else if (c == '"' || c == '\'') {  // a basic or literal string, to its closing quote or the line's end
      i = OneLineStringEnd(text, i);
      if (i < text.size() && text[i] == '\n') --i;  // the line break is counted above
    }
  }
  return std::nullopt;
}

}  // namespace rota::config
