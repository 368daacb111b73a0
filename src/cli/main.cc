// The `rota` command line. Exit codes: 0 success; 1 the operation failed (the message says why);
// 2 the command line or the request was wrong (unknown flag, bad value); 3 rotad unreachable.
//
// `rota` starts once per submission, so its start-up is on the path of every scripted submit.
// Registering all commands builds a few hundred CLI11 options (about half a millisecond); when
// the command word is known, only that command's group is registered; without one (no command,
// --help, --version) all are, so the help lists every command. An unknown word is refused here,
// with the nearest command when one is two edits away or less. "rota help [COMMAND]" is --help.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "api/protocol.h"
#include "cli/commands.h"
#include "cli/help_walk.h"
#include "cli/text.h"
#include "config/tzdb.h"

namespace {

using rota::cli::ClientOptions;

struct CommandGroup {
  std::initializer_list<std::string_view> names;  // the subcommands the adder registers
  std::function<void(CLI::App&, ClientOptions*, int*)> add;
};

const std::initializer_list<CommandGroup>& Groups() {
  using namespace rota::cli;
  static const std::initializer_list<CommandGroup> groups = {
      {{"submit"}, AddSubmitCommand},
      {{"run", "shell"}, AddRunCommands},
      {{"queue"}, AddQueueCommand},
      {{"show"}, AddShowCommand},
      {{"cancel"}, AddCancelCommand},
      {{"logs"}, AddLogsCommand},
      {{"history"}, AddHistoryCommand},
      {{"status", "reload", "poke"}, AddStatusCommands},
      {{"gpus"}, AddGpusCommand},
      {{"keep", "guard"}, AddKeepCommands},
      {{"events"}, AddEventsCommand},
      {{"usage"}, AddUsageCommand},
      {{"inventory"}, AddInventoryCommand},
      {{"rules"}, AddRulesCommand},
      {{"advise"}, AddAdviseCommand},
      {{"drain", "resume"}, AddDrainCommands},
      {{"notify"}, AddNotifyCommand},
      {{"book", "unbook", "release", "extend", "approve", "reject"}, AddBookCommands},
      {{"bookings"}, AddBookingsCommand},
      {{"web"}, AddWebCommand},
      {{"token"}, AddTokenCommands},
      {{"simulate"}, AddSimulateCommand},
      {{"tune"}, AddTuneCommand},
      {{"config"}, [](CLI::App& app, ClientOptions*, int* code) { AddConfigCommand(app, code); }},
      {{"completion", "manpage"}, AddManualCommands},
  };
  return groups;
}

// The command word: the first argument that is not a top-level option (only --socket takes a
// value). Empty when there is none or an option comes first that only the full app knows.
std::string_view CommandWord(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--socket") {
      ++i;
      continue;
    }
    if (arg.rfind("--socket=", 0) == 0) continue;
    if (arg.empty() || arg[0] == '-') return {};
    return arg;
  }
  return {};
}

const CommandGroup* GroupOf(std::string_view word) {
  if (word.empty()) return nullptr;
  for (const CommandGroup& g : Groups()) {
    for (std::string_view name : g.names) {
      if (name == word) return &g;
    }
  }
  return nullptr;
}

std::string VersionText() { return std::string("rota ") + rota::api::kDaemonVersion; }

// The app with one group of commands, or all of them when `only` is null.
std::unique_ptr<CLI::App> MakeApp(const CommandGroup* only, ClientOptions* client, int* exit_code) {
  auto app = std::make_unique<CLI::App>("rota: GPU time-sharing for lab servers");
  app->require_subcommand(1);
  app->set_version_flag("--version", VersionText());
  app->add_option("--socket", client->socket, "rotad's socket (default: $ROTA_SOCKET, the user-mode socket, "
                                               "/run/rota/rota.sock)");
  if (only) {
    only->add(*app, client, exit_code);
  } else {
    for (const CommandGroup& g : Groups()) g.add(*app, client, exit_code);
  }
  return app;
}

// Levenshtein distance, for "did you mean": command words are short.
std::size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The command nearest to a misspelt `word` (at most two edits away), or "".
std::string_view NearestCommand(std::string_view word) {
  std::string_view best;
  std::size_t best_distance = 3;
  for (const CommandGroup& g : Groups()) {
    for (std::string_view name : g.names) {
      const std::size_t d = EditDistance(word, name);
      if (d < best_distance) {
        best = name;
        best_distance = d;
      }
    }
  }
  return best;
}

// Without a command word: the first argument that rota itself does not take, or "".
std::string_view StrayOption(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--socket") {
      ++i;
    } else if (arg.rfind("--socket=", 0) != 0 && arg != "-h" && arg != "--help" && arg != "--version") {
      return arg;
    }
  }
  return {};
}

// What is wrong with a command line that names no known command; "" when nothing is (help,
// version).
std::string TopLevelError(int argc, char** argv, std::string_view word) {
  if (!word.empty()) {
    std::string message = "unknown command \"" + std::string(word) + "\"";
    if (std::string_view near = NearestCommand(word); !near.empty()) {
      message += "; did you mean \"" + std::string(near) + "\"?";
    }
    return message;
  }
  if (std::string_view stray = StrayOption(argc, argv); !stray.empty()) {
    return "\"" + std::string(stray) + "\" is not an option of rota itself: a command's options go after it, "
           "as in rota submit --gpus 1 -- CMD";
  }
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "-h" || arg == "--help" || arg == "--version") return {};
  }
  return "no command given: try rota queue, rota submit or rota run";
}

}  // namespace

int main(int argc, char** argv) {
  int exit_code = 0;
  // Times are shown in the machine's zone unless a reply names the server's (bookings); the zone
  // is read only when a command shows its first time.
  rota::cli::SetDisplayZoneSource([] { return rota::config::LocalZone(); });
  ClientOptions client;
  std::string_view word = CommandWord(argc, argv);
  // "rota help" and "rota help show", as git has them: rota --help and rota show --help.
  std::vector<char*> help_argv;
  if (word == "help") {
    int at = 1;
    while (argv[at] != word.data()) ++at;  // the word is a view of one of the arguments
    help_argv.assign(argv, argv + at);
    if (at + 1 < argc) help_argv.push_back(argv[at + 1]);
    static char help_flag[] = "--help";
    help_argv.push_back(help_flag);
    argc = static_cast<int>(help_argv.size());
    argv = help_argv.data();
    word = CommandWord(argc, argv);
  }
  const CommandGroup* only = GroupOf(word);
  // The completion and the man page describe every command: all are registered for them.
  const bool all = word == "completion" || word == "manpage";
  if (all) only = nullptr;
  if (!only && !all) {
    if (std::string error = TopLevelError(argc, argv, word); !error.empty()) {
      std::fprintf(stderr, "rota: %s (see rota --help)\n", error.c_str());
      return 2;
    }
  }
  std::unique_ptr<CLI::App> app = MakeApp(only, &client, &exit_code);
  // Help and version as CLI11 prints them, without its exception (help_walk.h).
  app->name(argv[0]);
  if (const rota::cli::HelpAnswer answer = rota::cli::FindHelp(*app, argc, argv); answer.kind != answer.kNone) {
    const std::string text = answer.kind == answer.kVersion ? VersionText() + "\n" : answer.app->help(answer.prev);
    std::fwrite(text.data(), 1, text.size(), stdout);
    return 0;
  }
  try {
    app->parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app->exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app->exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app->exit(e);
  } catch (const CLI::ParseError& e) {
    // The help of the command that was being parsed: "rota show --help", "rota notify log --help".
    std::string help = "rota";
    for (const CLI::App* at = app.get(); at != nullptr;) {
      std::vector<CLI::App*> parsed = at->get_subcommands();
      at = parsed.empty() ? nullptr : parsed.back();
      if (at != nullptr) help += " " + at->get_name();
    }
    std::fprintf(stderr, "rota: %s (see %s --help)\n", e.what(), help.c_str());
    return 2;
  }
  return exit_code;
}
