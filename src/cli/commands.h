// Each `rota` subcommand lives in its own file and registers itself on the app here.
#pragma once

#include <CLI/CLI.hpp>

namespace rota::cli {

// Registers `rota simulate`; the command's exit status is written to *exit_code when it runs.
void AddSimulateCommand(CLI::App& app, int* exit_code);

// Registers `rota config check FILE`.
void AddConfigCommand(CLI::App& app, int* exit_code);

}  // namespace rota::cli
