// Each `rota` subcommand lives in its own file and registers itself on the app here.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace rota::cli {

// Options every command that talks to rotad shares. `rota --socket PATH CMD` and
// `rota CMD --socket PATH` both set it. Must outlive app.parse().
struct ClientOptions {
  std::string socket;  // empty: $ROTA_SOCKET, then the user-mode socket, then the system one
};

// Registers `rota simulate`; the command's exit status is written to *exit_code when it runs.
void AddSimulateCommand(CLI::App& app, ClientOptions* options, int* exit_code);
void AddTuneCommand(CLI::App& app, ClientOptions* options, int* exit_code);

// Registers `rota config check FILE`.
void AddConfigCommand(CLI::App& app, int* exit_code);

// The commands that talk to rotad (docs/api.md). Exit codes: 0 done, 1 refused or failed,
// 2 bad command line or request, 3 rotad unreachable.
void AddSubmitCommand(CLI::App& app, ClientOptions* options, int* exit_code);   // submit_cmd.cc
void AddRunCommands(CLI::App& app, ClientOptions* options, int* exit_code);     // run_cmd.cc: run, shell
void AddQueueCommand(CLI::App& app, ClientOptions* options, int* exit_code);    // queue_cmd.cc
void AddShowCommand(CLI::App& app, ClientOptions* options, int* exit_code);     // show_cmd.cc
void AddCancelCommand(CLI::App& app, ClientOptions* options, int* exit_code);   // cancel_cmd.cc
void AddLogsCommand(CLI::App& app, ClientOptions* options, int* exit_code);     // logs_cmd.cc
void AddHistoryCommand(CLI::App& app, ClientOptions* options, int* exit_code);  // history_cmd.cc
void AddStatusCommands(CLI::App& app, ClientOptions* options, int* exit_code);  // status_cmd.cc: status, reload
void AddGpusCommand(CLI::App& app, ClientOptions* options, int* exit_code);     // gpus_cmd.cc
void AddKeepCommands(CLI::App& app, ClientOptions* options, int* exit_code);    // keep_cmd.cc: keep, guard
void AddEventsCommand(CLI::App& app, ClientOptions* options, int* exit_code);   // events_cmd.cc
void AddUsageCommand(CLI::App& app, ClientOptions* options, int* exit_code);    // usage_cmd.cc
void AddInventoryCommand(CLI::App& app, ClientOptions* options, int* exit_code);  // inventory_cmd.cc
void AddAdviseCommand(CLI::App& app, ClientOptions* options, int* exit_code);   // advise_cmd.cc
void AddRulesCommand(CLI::App& app, ClientOptions* options, int* exit_code);    // rules_cmd.cc
void AddDrainCommands(CLI::App& app, ClientOptions* options, int* exit_code);  // drain_cmd.cc: drain, resume
// book_cmd.cc: book, unbook, release, extend, approve, reject
void AddBookCommands(CLI::App& app, ClientOptions* options, int* exit_code);
void AddBookingsCommand(CLI::App& app, ClientOptions* options, int* exit_code);  // bookings_cmd.cc: + export, import
void AddWebCommand(CLI::App& app, ClientOptions* options, int* exit_code);     // web_cmd.cc
void AddTokenCommands(CLI::App& app, ClientOptions* options, int* exit_code);  // token_cmd.cc: create, list, revoke
// manual_cmd.cc: completion, manpage (main.cc registers every command when they are named)
void AddManualCommands(CLI::App& app, ClientOptions* options, int* exit_code);
void AddNotifyCommand(CLI::App& app, ClientOptions* options, int* exit_code);    // notify_cmd.cc: notify test

}  // namespace rota::cli
