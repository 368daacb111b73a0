// `rota queue [--all] [--start] [--json]`: pending and running jobs, running first, then pending
// in priority order (the daemon's order). Tested against a daemon by tests/daemon/test_jobs.py
// and test_cli.py; the table by job_format_test.cc.
#include <cstdio>
#include <memory>

#include "cli/daemon_client.h"
#include "cli/job_format.h"

namespace rota::cli {

namespace {

struct QueueArgs {
  bool all = false;
  bool start = false;
  bool json = false;
};

int RunQueue(const ClientOptions& options, const QueueArgs& args) {
  auto reply = CallDaemon(options, {{"op", "queue"}, {"all", args.all}});
  if (!reply.ok()) return Fail(reply.status());
  return PrintJobs(*reply, args.json,
                   [&](const std::vector<nlohmann::json>& jobs) { return RenderQueue(jobs, Now(), args.start); });
}

}  // namespace

void AddQueueCommand(CLI::App& app, ClientOptions* options, int* exit_code) {
  auto args = std::make_shared<QueueArgs>();
  CLI::App* c = app.add_subcommand("queue", "List pending and running jobs (yours; --all for everyone's)");
  c->footer(
      "Columns: JOBID USER TIER NAME ST TIME GPUS WHERE(REASON) [START P90].\n"
      "ST: PD pending, R running, CG stopping. TIME: run time so far (running) or wait so far (pending).\n"
      "GPUS: 2 (whole GPUs), 20G (memory share), 3g.40gb (MIG). WHERE: gpu0,1, gpu3:20G, gpu2/mig1;\n"
      "for pending jobs the reason: (Resources) (Priority) (Quota) (Dependency) (Booking) (PeakHours)\n"
      "(Impossible) (StartRetry), with ,Protected when it waited (or by the plan would wait) past the\n"
      "lab's bound and is next in line within its tier. START: expected start, ~ when estimated (the\n"
      "forecast from the lab's history, else the plan on time limits), - when unknown; P90: nine in ten\n"
      "such jobs started by then.\n"
      "--json prints the daemon's job objects (docs/api.md).");
  AddSocketFlag(c, options);
  c->add_flag("--all,-a", args->all, "everyone's jobs");
  c->add_flag("--start", args->start, "add the expected start time and its p90");
  c->add_flag("--json", args->json, "print the jobs as JSON");
  c->callback([options, args, exit_code] { *exit_code = RunQueue(*options, *args); });
}

}  // namespace rota::cli
