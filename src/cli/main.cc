// The `rota` command line. Exit codes: 0 success; 1 the operation failed (the message says why);
// 2 the command line or the request was wrong (unknown flag, bad value); 3 rotad unreachable.
#include <cstdio>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/text.h"

int main(int argc, char** argv) {
  rota::cli::UseUtf8Locale();
  CLI::App app{"rota: GPU time-sharing for lab servers"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "rota 0.1.0");
  int exit_code = 0;
  rota::cli::ClientOptions client;
  app.add_option("--socket", client.socket, "rotad's socket (default: $ROTA_SOCKET, the user-mode socket, "
                                            "/run/rota/rota.sock)");
  rota::cli::AddSubmitCommand(app, &client, &exit_code);
  rota::cli::AddRunCommands(app, &client, &exit_code);
  rota::cli::AddQueueCommand(app, &client, &exit_code);
  rota::cli::AddShowCommand(app, &client, &exit_code);
  rota::cli::AddCancelCommand(app, &client, &exit_code);
  rota::cli::AddLogsCommand(app, &client, &exit_code);
  rota::cli::AddHistoryCommand(app, &client, &exit_code);
  rota::cli::AddStatusCommands(app, &client, &exit_code);
  rota::cli::AddGpusCommand(app, &client, &exit_code);
  rota::cli::AddKeepCommands(app, &client, &exit_code);
  rota::cli::AddEventsCommand(app, &client, &exit_code);
  rota::cli::AddUsageCommand(app, &client, &exit_code);
  rota::cli::AddInventoryCommand(app, &client, &exit_code);
  rota::cli::AddDrainCommands(app, &client, &exit_code);
  rota::cli::AddNotifyCommand(app, &client, &exit_code);
  rota::cli::AddBookCommands(app, &client, &exit_code);
  rota::cli::AddBookingsCommand(app, &client, &exit_code);
  rota::cli::AddWebCommand(app, &client, &exit_code);
  rota::cli::AddTokenCommands(app, &client, &exit_code);
  rota::cli::AddSimulateCommand(app, &exit_code);
  rota::cli::AddConfigCommand(app, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "rota: %s (see rota --help)\n", e.what());
    return 2;
  }
  return exit_code;
}
