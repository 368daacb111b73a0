// `rota usage [--days N] [--json]`: GPU-hours this week against quota, and the last days' use,
// waits, utilisation, idle hours, no-shows and overruns (docs/api.md, op "usage"). Admins see
// everyone; others their own rows and the lab's totals. Tested by tests/daemon/test_usage.py.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/daemon_client.h"
#include "cli/text.h"
#include "cli/usage_format.h"

namespace rota::cli {

namespace {

struct UsageArgs {
  int days = 28;
  int show_days = 7;
  bool json = false;
};

int RunUsage(const ClientOptions& options, const UsageArgs& args) {
  auto reply = CallDaemon(options, {{"op", "usage"}, {"days", args.days}});
  if (!reply.ok()) return Fail(reply.status());
  if (args.json) {
    PrintJson(*reply);
    return 0;
  }
  const std::string text = FormatUsage(*reply, args.show_days);
  PrintText(text);
  return 0;
}

}  // namespace

void AddUsageCommand(CLI::App& app, ClientOptions* options, int* exit_code) {
  auto args = std::make_shared<UsageArgs>();
  CLI::App* c = app.add_subcommand("usage", "GPU-hours against quota, waits, utilisation, idle hours, no-shows");
  c->footer("Hours this quota week per user and project; the lab's days and totals over --days.\n"
            "Admins see every user; others see their own rows and the lab's totals.");
  AddSocketFlag(c, options);
  c->add_option("--days", args->days, "how many days back (default 28, at most 366)")->check(CLI::Range(1, 366));
  c->add_option("--show-days", args->show_days, "days printed one per line (default 7)")->check(CLI::Range(0, 366));
  c->add_flag("--json", args->json, "print JSON");
  c->callback([options, args, exit_code] { *exit_code = RunUsage(*options, *args); });
}

}  // namespace rota::cli
