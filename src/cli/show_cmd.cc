// `rota show ID [--json]`: everything about one job and its audit trail.
// Tested against a daemon by tests/daemon/test_cli.py; the layout by job_format_test.cc.
#include <cstdio>
#include <memory>

#include "cli/daemon_client.h"
#include "cli/job_format.h"

namespace rota::cli {

namespace {

struct ShowArgs {
  long long id = 0;
  bool json = false;
};

int RunShow(const ClientOptions& options, const ShowArgs& args) {
  if (args.id <= 0) return Fail(InvalidArgument("job ids are whole numbers from 1"));
  auto reply = CallDaemon(options, {{"op", "show"}, {"job_id", args.id}});
  if (!reply.ok()) return Fail(reply.status());
  nlohmann::json job = reply->value("job", nlohmann::json::object());
  nlohmann::json events = reply->value("events", nlohmann::json::array());
  if (args.json) {
    PrintJson({{"job", job}, {"events", events}});
    return 0;
  }
  std::string text = RenderShow(job, events, Now());
  PrintText(text);
  return 0;
}

}  // namespace

void AddShowCommand(CLI::App& app, ClientOptions* options, int* exit_code) {
  auto args = std::make_shared<ShowArgs>();
  CLI::App* c = app.add_subcommand("show", "Show everything about one job, with its history");
  c->footer(
      "Prints \"Key: value\" lines (request, times, GPUs, command; for a pending job why it waits,\n"
      "when it should start and its priority factors), then \"History:\" with every state change.\n"
      "--json prints {\"job\": Job, \"events\": [Event...]} as the daemon sent them.");
  AddSocketFlag(c, options);
  AddJobIdOption(c, &args->id, "the job id");
  c->add_flag("--json", args->json, "print the job and its events as JSON");
  c->callback([options, args, exit_code] { *exit_code = RunShow(*options, *args); });
}

}  // namespace rota::cli
