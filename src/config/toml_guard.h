// What Debian 12's toml++ (3.3.0) must not be given, found by fuzz/config_toml.cc:
// - a table header whose name does not start like a key ("[[[x]]]", "[[=", "[!]", "[" at the
//   end of a line): the header reader calls the key reader without checking its precondition,
//   which is only asserted (upstream fixed it in 2026, marzer/tomlplusplus pull request 301);
// - a character other than ASCII outside a string or comment (U+00A1 to U+0499 among others),
//   also in a table header's bare keys: its test for Unicode whitespace reaches a switch's
//   __builtin_unreachable for them.
// A debug build aborts on the first and a release build has undefined behaviour on both (a
// clang release build turns the assertion into an assumption too). Neither is valid TOML, so
// ParseConfig refuses them first, saying where and what.
#pragma once

#include <optional>
#include <string_view>

namespace rota::config {

struct TomlTrap {
  int line = 0;    // 1-based
  int column = 0;  // 1-based, in bytes, of the character toml++ cannot be given there
  const char* what = "";  // what is wrong, for the error message
};

// The first of these in `text`, nullopt when there is none: a table header whose name does not
// start with a bare key character (A-Za-z0-9_-), a quote or the closing ']', after "[" or "[["
// and spaces; a byte outside ASCII that is not in a string or a comment (a UTF-8 byte order
// mark at the start is fine), also in a table header outside its quoted keys and its comment.
// Lines inside multi-line strings and array values are not headers;
// strings and comments are skipped as TOML reads them.
std::optional<TomlTrap> FindTomlTrap(std::string_view text);

}  // namespace rota::config
