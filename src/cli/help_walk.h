// `rota --help`, `rota CMD --help` and `rota --version` without a C++ exception. CLI11 answers
// them by throwing, and the first exception a statically linked program throws sorts every unwind
// entry of the binary (about 26 million instructions, 1.4 ms: 80 % of a `rota --version`). The
// walk finds what CLI11's own parse would print, for the command lines where that is certain;
// for anything else it answers "not sure", and the ordinary parse (with its exception) runs.
// Tested by help_walk_test.cc against CLI11's own answers.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace rota::cli {

struct HelpAnswer {
  enum Kind { kNone, kHelp, kVersion } kind = kNone;
  const CLI::App* app = nullptr;  // kHelp: whose help
  std::string prev;               // kHelp: the command path before its name, as CLI11's help() takes it
};

// Walks argv over known subcommands and options (skipping the values of options that take one)
// up to "--". kHelp at the first -h/--help; kVersion at a --version before any subcommand when
// `app` has a version flag of that name; kNone when neither comes, or when an argument is not
// one the walk knows (an unknown option, a positional argument).
HelpAnswer FindHelp(const CLI::App& app, int argc, const char* const* argv);

}  // namespace rota::cli
