// Tests of the help walk: wherever it answers, its answer is exactly what CLI11's own parse
// prints (help of the right command, the version), and it steps aside wherever it cannot be sure.
#include "cli/help_walk.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace rota::cli {
namespace help_walk_test {
namespace {

bool flag_ = false;

// An app shaped like rota's: a version flag and a global option, commands with flags, options
// taking one value, an option taking an optional value, positionals, and a nested command.
std::unique_ptr<CLI::App> MakeApp(std::string* sink) {
  auto app = std::make_unique<CLI::App>("rota: GPU time-sharing for lab servers");
  app->require_subcommand(1);
  app->set_version_flag("--version", "rota 9.9.9");
  app->add_option("--socket", *sink, "rotad's socket");
  CLI::App* submit = app->add_subcommand("submit", "queue a batch job");
  submit->add_option("--gpus", *sink, "whole GPUs");
  submit->add_option("--time,-t", *sink, "the limit");
  submit->add_flag("--json", flag_, "print JSON");
  submit->add_option("COMMAND", *sink, "the command");
  CLI::App* show = app->add_subcommand("show", "one job");
  show->add_option("ID", *sink, "the job")->required();
  CLI::App* bookings = app->add_subcommand("bookings", "the calendar");
  bookings->add_option("--week", *sink, "a week")->expected(0, 1);
  bookings->add_subcommand("export", "the spreadsheet out")->add_flag("--csv", flag_, "as CSV");
  return app;
}

using Argv = std::vector<const char*>;

// What CLI11's parse prints for `argv` (on a fresh app), or why it prints nothing.
std::string ParseAnswer(const Argv& argv) {
  std::string sink;
  auto app = MakeApp(&sink);
  try {
    app->parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::CallForHelp&) {
    return app->help();
  } catch (const CLI::CallForVersion& e) {
    return std::string(e.what()) + "\n";
  } catch (const CLI::ParseError& e) {
    return std::string("<error> ") + e.what();
  }
  return "<parsed>";
}

// The walk's answer as main.cc prints it, or "<none>".
std::string WalkAnswer(const Argv& argv) {
  std::string sink;
  auto app = MakeApp(&sink);
  app->name(argv[0]);
  const HelpAnswer a = FindHelp(*app, static_cast<int>(argv.size()), argv.data());
  if (a.kind == HelpAnswer::kNone) return "<none>";
  return a.kind == HelpAnswer::kVersion ? "rota 9.9.9\n" : a.app->help(a.prev);
}

TEST(HelpWalk, AnswersExactlyAsCli11Would) {
  const std::vector<Argv> cases = {
      {"rota", "--help"},
      {"rota", "-h"},
      {"rota", "--version"},
      {"/usr/bin/rota", "submit", "--help"},
      {"rota", "submit", "--gpus", "2", "-t", "4h", "-h"},
      {"rota", "submit", "--gpus=2", "--json", "--help"},
      {"rota", "--socket", "/run/x.sock", "submit", "--help"},
      {"rota", "--socket=/run/x.sock", "bookings", "export", "--help"},
      {"rota", "bookings", "export", "--csv", "--help"},
      {"rota", "show", "--help"},  // its required ID is not asked for when help is
  };
  for (const Argv& argv : cases) {
    const std::string walk = WalkAnswer(argv), parse = ParseAnswer(argv);
    EXPECT_NE(walk, "<none>") << argv.back();
    EXPECT_EQ(walk, parse) << argv[1];
    EXPECT_EQ(parse.find("<"), std::string::npos) << parse;
  }
  // The right command's help: its own usage line, under the program's name as typed.
  EXPECT_NE(WalkAnswer({"/usr/bin/rota", "submit", "--help"}).find("/usr/bin/rota submit"), std::string::npos);
  EXPECT_NE(WalkAnswer({"rota", "bookings", "export", "-h"}).find("rota bookings export"), std::string::npos);
}

TEST(HelpWalk, StepsAsideWhereItCannotBeSure) {
  const std::vector<Argv> cases = {
      {"rota", "submit", "--", "python", "train.py", "--help"},  // the job's own --help
      {"rota", "submit", "--gpus", "--help"},                     // --help is --gpus's value here
      {"rota", "show", "12", "--help"},                           // after a positional
      {"rota", "submit", "--bogus", "--help"},                    // an option the walk does not know
      {"rota", "submit", "-gt", "--help"},                        // grouped short options
      {"rota", "bookings", "--week", "--help"},                   // an optional value
      {"rota", "submit", "--version"},                            // only rota itself has --version
      {"rota", "frobnicate", "--help"},
      {"rota", "submit", "--json=yes", "--help"},
      {"rota", "submit"},
  };
  for (const Argv& argv : cases) EXPECT_EQ(WalkAnswer(argv), "<none>") << argv[1] << " " << argv.back();
}

}  // namespace
}  // namespace help_walk_test
}  // namespace rota::cli
