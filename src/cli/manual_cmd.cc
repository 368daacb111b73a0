// `rota completion bash` and `rota manpage [--date DATE]`: the bash completion and the man page,
// generated from this binary's own commands and options (manual.h) for the package to install.
// main.cc registers every command before these run, so that they see them all.
#include <cstdio>
#include <memory>
#include <string>

#include "api/protocol.h"
#include "cli/commands.h"
#include "cli/manual.h"

namespace rota::cli {

namespace {

constexpr char kMore[] =
    ".SH ENVIRONMENT\n.TP\n.B ROTA_SOCKET\nrotad's socket (default: the user-mode socket if one runs, else "
    "/run/rota/rota.sock)\n"
    ".SH EXIT STATUS\n0 done; 1 refused or failed; 2 a bad command line or request; 3 rotad unreachable.\n"
    ".SH SEE ALSO\n.BR rotad (8);\n.B rota rules\nfor the lab's rules, and\n.B rota COMMAND \\-\\-help\n"
    "for each command.\n";

const CLI::App& Root(const CLI::App* app) {
  while (app->get_parent() != nullptr) app = app->get_parent();
  return *app;
}

void Print(const std::string& text) { std::fwrite(text.data(), 1, text.size(), stdout); }

}  // namespace

void AddManualCommands(CLI::App& app, ClientOptions*, int* exit_code) {
  CLI::App* completion = app.add_subcommand("completion", "print the shell completion of rota: rota completion bash");
  auto shell = std::make_shared<std::string>();
  completion->add_option("SHELL", *shell, "bash")->required()->check(CLI::IsMember({"bash"}));
  completion->footer("For /usr/share/bash-completion/completions/rota, or in ~/.bashrc:\n"
                     "  source <(rota completion bash)");
  completion->callback([completion, shell, exit_code] {  // `shell` lives as long as the option writing it
    Print(BashCompletion(Root(completion), "rota"));
    *exit_code = 0;
  });
  CLI::App* manpage = app.add_subcommand("manpage", "print rota's man page (roff), for the package");
  auto date = std::make_shared<std::string>();
  manpage->add_option("--date", *date, "the date the page names (the release's)")->type_name("YYYY-MM-DD");
  manpage->callback([manpage, date, exit_code] {
    ManInfo info{"rota", api::kDaemonVersion, *date, "GPU time-sharing for lab servers: jobs, bookings, rules",
                 kMore};
    Print(ManPage(Root(manpage), info, 1));
    *exit_code = 0;
  });
}

}  // namespace rota::cli
