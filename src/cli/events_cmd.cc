// `rota events [--job ID] [--since 1d] [--all] [--json]`: the audit trail of one's jobs, bookings
// and the GPUs (docs/api.md, op "events"). Tested by tests/daemon/test_watch.py.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/daemon_client.h"
#include "cli/json_fields.h"
#include "cli/text.h"
#include "core/types.h"

namespace rota::cli {

namespace {

struct EventsArgs {
  long long job = 0;
  std::string since = "1d";
  bool all = false;
  bool json = false;
};

int RunEvents(const ClientOptions& options, const EventsArgs& args) {
  nlohmann::json request = {{"op", "events"}, {"all", args.all}};
  if (args.job > 0) request["job_id"] = args.job;
  if (args.job == 0) {
    StatusOr<long long> since = SinceAgo(args.since);
    if (!since.ok()) return Fail(since.status());
    request["since"] = *since;
  }
  auto reply = CallDaemon(options, request);
  if (!reply.ok()) return Fail(reply.status());
  if (args.json) {
    PrintJson(*reply);
    return 0;
  }
  Table table({"TIME", "WHAT", "USER", "STATE", "BY", "REASON"});
  for (const nlohmann::json& e : fields::Arr(*reply, "events")) {
    const std::string kind = fields::Str(e, "kind");
    const std::string what = (kind == "gpu" ? "GPU " : kind + " ") + std::to_string(fields::Int(e, "id"));
    const std::string from = fields::Str(e, "from");
    const std::string to = fields::Str(e, "to");
    table.AddRow({FormatTime(fields::Int(e, "time"), "%m-%d %H:%M:%S", "?"), what, fields::Str(e, "user"), from.empty() || from == to ? to : from + ">" + to,
                  fields::Str(e, "actor"), fields::Str(e, "reason")});
  }
  std::string text = table.Render();
  PrintText(text);
  return 0;
}

}  // namespace

void AddEventsCommand(CLI::App& app, ClientOptions* options, int* exit_code) {
  auto args = std::make_shared<EventsArgs>();
  CLI::App* c = app.add_subcommand("events", "What happened: your jobs' and bookings' audit trail and the GPUs'");
  c->footer("Idle warnings, reclaims, keeps, starts and ends, booking changes, GPU health and drains.\n"
            "--all (admins): everyone's.");
  AddSocketFlag(c, options);
  c->add_option("--job", args->job, "one job's events (all of them)");
  c->add_option("--since", args->since, "how far back (default 1d)");
  c->add_flag("--all", args->all, "everyone's events (admins)");
  c->add_flag("--json", args->json, "print JSON");
  c->callback([options, args, exit_code] { *exit_code = RunEvents(*options, *args); });
}

}  // namespace rota::cli
