// `rota config check FILE`: reads a configuration the way rotad will and prints either
// "FILE: OK" with a one-line summary (exit 0) or every error, one per line (exit 1).
// Tested by tests/cli_e2e.sh; the parsing itself by src/config/config_test.cc.
//
// Design: the command is a thin shell over rota::config::LoadConfig, so what it accepts is
// exactly what the daemon accepts; it never talks to a running daemon.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "config/config.h"

namespace rota::cli {

namespace {

int RunConfigCheck(const std::string& file) {
  auto config = config::LoadConfig(file);
  if (!config.ok()) {
    std::fprintf(stderr, "%s\n", config.status().message().c_str());
    return 1;
  }
  std::printf("%s: OK\n%s\n", file.c_str(), config::Summary(*config).c_str());
  // What rotad would warn about on this machine: said, but the file is valid (exit 0).
  for (const std::string& warning : config::Warnings(*config, config::ServerMemory())) {
    std::fprintf(stderr, "warning: %s\n", warning.c_str());
  }
  return 0;
}

}  // namespace

void AddConfigCommand(CLI::App& app, int* exit_code) {
  CLI::App* config = app.add_subcommand("config", "Work with rotad's configuration file");
  config->require_subcommand(1);
  auto file = std::make_shared<std::string>();
  CLI::App* check = config->add_subcommand("check", "Check a configuration file and report every error");
  check->add_option("FILE", *file, "the file, e.g. /etc/rota/rota.toml")->required();
  check->callback([file, exit_code] { *exit_code = RunConfigCheck(*file); });
}

}  // namespace rota::cli
