// What Debian 12's toml++ (3.3.0) must not be given. Its parser reads a table header's name with
// a function whose precondition is that the name starts like a key; the header reader does not
// check it first, so "[[[x]]]", "[[=", "[!]" or a "[" at the end of a line break it. A debug
// build aborts on the assertion, and a clang release build has undefined behaviour there (the
// assertion becomes an assumption). Upstream fixed it in 2026 (marzer/tomlplusplus pull request
// 301); fuzz/config_toml.cc found it here. Until Debian ships the fix, ParseConfig refuses such a
// header first, with the error toml++ gives in a gcc release build.
#pragma once

#include <optional>
#include <string_view>

namespace rota::config {

struct TomlTrap {
  int line = 0;    // 1-based
  int column = 0;  // 1-based, of the character a key cannot start with
};

// The first table header of `text` whose name does not start with a bare key character
// (A-Za-z0-9_-), a quote or the closing ']', after "[" or "[[" and spaces; nullopt when there is
// none. Lines inside multi-line strings are not headers; strings and comments on a line are
// skipped as TOML reads them.
std::optional<TomlTrap> FindTomlHeaderTrap(std::string_view text);

}  // namespace rota::config
