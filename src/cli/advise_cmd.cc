// `rota advise [JOB] [--all] [--json]`: rent or wait for waiting jobs (docs/api.md, op
// "advise"): your pending jobs, one job, or (admins) everyone's. Formatting is
// advise_format.cc's. Tested end to end by tests/daemon/test_advise.py.
#include <memory>

#include "cli/advise_format.h"
#include "cli/daemon_client.h"

namespace rota::cli {

namespace {

struct AdviseArgs {
  long long job = 0;
  bool all = false;
  bool json = false;
};

int RunAdvise(const ClientOptions& options, const AdviseArgs& args) {
  nlohmann::json request = {{"op", "advise"}};
  if (args.job > 0) request["job_id"] = args.job;
  if (args.all) request["all"] = true;
  auto reply = CallDaemon(options, request);
  if (!reply.ok()) return Fail(reply.status());
  if (args.json) {
    PrintJson(*reply);
    return 0;
  }
  PrintText(FormatAdvice(*reply));
  return 0;
}

}  // namespace

void AddAdviseCommand(CLI::App& app, ClientOptions* options, int* exit_code) {
  auto args = std::make_shared<AdviseArgs>();
  CLI::App* c = app.add_subcommand("advise", "rent or wait: when your waiting jobs start, and what renting would cost");
  c->footer("For each waiting job: its expected start, the lab's backlog ahead of it and, when the wait\n"
            "passes [advice] wait_threshold, the cheapest instances of the lab's price table for its\n"
            "cards and time limit. Prices are the table's, with their dates; nothing is looked up online.");
  AddSocketFlag(c, options);
  c->add_option("JOB", args->job, "one job (yours, or anyone's for admins)")->check(CLI::PositiveNumber);
  c->add_flag("--all", args->all, "everyone's waiting jobs (admins)");
  c->add_flag("--json", args->json, "print the daemon's reply as JSON");
  c->callback([options, args, exit_code] { *exit_code = RunAdvise(*options, *args); });
}

}  // namespace rota::cli
