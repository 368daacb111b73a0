// `rota rules [--markdown] [--lang zh|en] [--json]`: the lab's rules in plain words, from the
// running configuration (docs/api.md, op "rules"): for a new student to read first, and with
// --markdown for the lab's wiki. Formatting is rules_format.cc's. Tested end to end by
// tests/daemon/test_rules.py.
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <string>

#include "cli/daemon_client.h"
#include "cli/rules_format.h"

namespace rota::cli {

namespace {

struct RulesArgs {
  bool markdown = false;
  bool json = false;
  std::string lang;
};

// The terminal's width, at most 100 columns (long lines read badly); 80 when not a terminal.
int OutputWidth() {
  struct winsize ws {};
  if (::isatty(STDOUT_FILENO) && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
    return std::min<int>(ws.ws_col, 100);
  return 80;
}

int RunRules(const ClientOptions& options, const RulesArgs& args) {
  nlohmann::json request = {{"op", "rules"}};
  if (!args.lang.empty()) request["lang"] = args.lang;
  auto reply = CallDaemon(options, request);
  if (!reply.ok()) return Fail(reply.status());
  if (args.json) {
    PrintJson(*reply);
    return 0;
  }
  PrintText(args.markdown ? FormatRulesMarkdown(*reply) : FormatRulesText(*reply, OutputWidth()));
  return 0;
}

}  // namespace

void AddRulesCommand(CLI::App& app, ClientOptions* options, int* exit_code) {
  auto args = std::make_shared<RulesArgs>();
  CLI::App* c = app.add_subcommand("rules", "the lab's rules in plain words: quotas, tiers, bookings, idle GPUs");
  c->footer("From the configuration rotad runs with, with where you stand this quota week\n"
            "(admins: everyone). --markdown writes a page for the lab's wiki.");
  AddSocketFlag(c, options);
  c->add_flag("--markdown", args->markdown, "print Markdown (for the lab's wiki)");
  c->add_option("--lang", args->lang, "zh or en (default: your language in the configuration)")
      ->check(CLI::IsMember({"zh", "en"}));
  c->add_flag("--json", args->json, "print the daemon's reply as JSON");
  c->callback([options, args, exit_code] { *exit_code = RunRules(*options, *args); });
}

}  // namespace rota::cli
