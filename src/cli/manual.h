// What the package installs besides the binaries, generated from the command line's own
// definitions so that it never drifts from them (issue 30): the bash completion of `rota` (every
// command, nested command and option, file names for file-valued options) and man pages in
// roff for `rota` and `rotad` (every command with its options, as --help shows them).
// `rota completion bash`, `rota manpage` and `rotad --manpage` print them. Tested by
// manual_test.cc, and the completion in bash itself by tests/cli_e2e.sh.
#pragma once

#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

namespace rota::cli {

// The bash completion script for `program` whose commands and options are `app`'s.
std::string BashCompletion(const CLI::App& app, std::string_view program);

struct ManInfo {
  std::string program;  // "rota"
  std::string version;  // "0.2.0"
  std::string date;     // "2026-12-04": the build's, so that the page is the same on every build of a version
  std::string summary;  // the NAME line's text after "program \-"
  std::string more;     // paragraphs after the generated ones (FILES, SEE ALSO), in roff
};

// A man page, section 1 (rota) or 8 (rotad), for `app`: NAME, SYNOPSIS, DESCRIPTION, OPTIONS and,
// for each command (nested ones too), its usage, what it does, its options and its footer.
std::string ManPage(const CLI::App& app, const ManInfo& info, int section);

}  // namespace rota::cli
