// `rota notify test [--channel NAME]` (admins; docs/api.md, op "notify_test"): one test message
// through one or every configured channel, now, and what each answered. Tested end to end by
// tests/daemon/test_notify.py.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/daemon_client.h"
#include "cli/text.h"

namespace rota::cli {

namespace {

struct NotifyTestArgs {
  std::string channel;
  bool json = false;
};

int RunNotifyTest(const ClientOptions& options, const NotifyTestArgs& args) {
  nlohmann::json request = {{"op", "notify_test"}};
  if (!args.channel.empty()) request["channel"] = args.channel;
  auto reply = CallDaemon(options, request);
  if (!reply.ok()) return Fail(reply.status());
  if (args.json) {
    PrintJson(*reply);
  }
  int failed = 0;
  for (const nlohmann::json& r : reply->value("results", nlohmann::json::array())) {
    const std::string channel = TerminalSafe(r.value("channel", ""));
    const std::string describe = TerminalSafe(r.value("describe", ""));
    if (r.value("ok", false)) {
      if (!args.json) std::printf("%s: OK (%s)\n", channel.c_str(), describe.c_str());
    } else {
      ++failed;
      if (!args.json)
        std::printf("%s: FAILED: %s\n", channel.c_str(), TerminalSafe(r.value("error", "")).c_str());
    }
  }
  return failed == 0 ? 0 : 1;
}

}  // namespace

void AddNotifyCommand(CLI::App& app, ClientOptions* options, int* exit_code) {
  CLI::App* n = app.add_subcommand("notify", "Notification channels (admins)");
  n->require_subcommand(1);
  auto args = std::make_shared<NotifyTestArgs>();
  CLI::App* t = n->add_subcommand("test", "Send a test message through the lab's channels now");
  t->footer(
      "Each channel of [notify.channels] in rota.toml (or only --channel NAME) gets one message, once,\n"
      "and the answer is printed: OK, or what the server or platform said. Exit code 1 when one failed.");
  AddSocketFlag(t, options);
  t->add_option("--channel,-c", args->channel, "only this channel")->type_name("NAME");
  t->add_flag("--json", args->json, "print the daemon's reply as JSON");
  t->callback([options, args, exit_code] { *exit_code = RunNotifyTest(*options, *args); });
}

}  // namespace rota::cli
