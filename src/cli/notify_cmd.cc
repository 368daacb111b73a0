// `rota notify test [--channel NAME]` (admins; docs/api.md, op "notify_test"): one test message
// through one or every configured channel, now, and what each answered. `rota notify log`
// (admins; op "notify_log"): the messages of the outbox, newest first, with what became of them.
// Tested end to end by tests/daemon/test_notify.py.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/daemon_client.h"
#include "cli/json_fields.h"
#include "cli/text.h"
#include "core/types.h"

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

struct NotifyLogArgs {
  std::string since = "1d";
  std::string state;
  bool failed = false;
  int limit = 200;
  bool json = false;
};

int RunNotifyLog(const ClientOptions& options, const NotifyLogArgs& args) {
  StatusOr<long long> since = SinceAgo(args.since);
  if (!since.ok()) return Fail(since.status());
  nlohmann::json request = {{"op", "notify_log"}, {"since", *since}, {"limit", args.limit}};
  if (args.failed) request["state"] = "failed";
  if (!args.state.empty()) request["state"] = args.state;
  auto reply = CallDaemon(options, request);
  if (!reply.ok()) return Fail(reply.status());
  if (args.json) {
    PrintJson(*reply);
    return 0;
  }
  // WHAT: why it failed or is being retried, else its subject.
  Table table({"TIME", "CHANNEL", "EVENT", "TO", "STATE", "TRIES", "WHAT"});
  for (const nlohmann::json& m : fields::Arr(*reply, "messages")) {
    const std::string error = fields::Str(m, "last_error");
    const std::string to = fields::Str(m, "recipient");
    table.AddRow({FormatTime(fields::Int(m, "created"), "%m-%d %H:%M:%S", "?"), fields::Str(m, "channel"),
                  fields::Str(m, "event"), to.empty() ? "(admins)" : to, fields::Str(m, "state"),
                  std::to_string(fields::Int(m, "attempts")),
                  CutToWidth(error.empty() ? fields::Str(m, "subject") : error, 120)});
  }
  std::string text = table.Render();
  PrintText(text);
  return 0;
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

  auto log = std::make_shared<NotifyLogArgs>();
  CLI::App* l = n->add_subcommand("log", "The notifications sent, failed or waiting, newest first");
  l->footer(
      "One line per message and channel: when its event happened, the channel, the event, who it\n"
      "was for ((admins) for the admins' copies), pending, sent or failed, the attempts, and why it\n"
      "failed (or its subject). Kept [notify] keep_messages (30 days) once settled.");
  AddSocketFlag(l, options);
  l->add_option("--since", log->since, "how far back (default 1d)");
  l->add_flag("--failed", log->failed, "only the messages given up on");
  l->add_option("--state", log->state, "only pending, sent or failed")->check(CLI::IsMember({"pending", "sent", "failed"}));
  l->add_option("--limit", log->limit, "at most this many (default 200)")->check(CLI::Range(1, 10000));
  l->add_flag("--json", log->json, "print the daemon's reply as JSON");
  l->callback([options, log, exit_code] { *exit_code = RunNotifyLog(*options, *log); });
}

}  // namespace rota::cli
