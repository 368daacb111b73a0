// `rota history [--since 7d] [--all] [--json]`: jobs that ended since then, oldest end first.
// Tested against a daemon by tests/daemon/test_cli.py and test_jobs.py; the table by
// job_format_test.cc.
#include <cstdio>
#include <memory>

#include "cli/daemon_client.h"
#include "cli/job_format.h"
#include "core/types.h"

namespace rota::cli {

namespace {

struct HistoryArgs {
  std::string since = "7d";
  bool all = false;
  bool json = false;
};

int RunHistory(const ClientOptions& options, const HistoryArgs& args) {
  // The daemon reads --since, in the server's zone (api::ParseSince), as it reads booking times.
  // rotad answers a page at a time ([limits] history_limit jobs): the pages are asked for one
  // after another on one connection and printed as one list.
  auto conn = Connect(options);
  if (!conn.ok()) return Fail(conn.status());
  nlohmann::json all = nlohmann::json::array();
  nlohmann::json request = {{"op", "history"}, {"since", args.since}, {"all", args.all}};
  while (true) {
    auto reply = conn->Call(request);
    if (!reply.ok()) {
      if (reply.status().code() == StatusCode::kInvalidArgument) return Fail("--since", reply.status());
      return Fail(reply.status());
    }
    for (auto& j : (*reply)["jobs"]) all.push_back(std::move(j));
    auto next = reply->find("next");
    if (next == reply->end() || !next->is_string()) break;
    request["after"] = *next;
  }
  return PrintJobs(nlohmann::json{{"jobs", std::move(all)}}, args.json,
                   [](const std::vector<nlohmann::json>& jobs) { return RenderHistory(jobs); });
}

}  // namespace

void AddHistoryCommand(CLI::App& app, ClientOptions* options, int* exit_code) {
  auto args = std::make_shared<HistoryArgs>();
  CLI::App* c = app.add_subcommand("history", "List finished jobs (yours; --all for everyone's)");
  c->footer(
      "Columns: JOBID USER NAME STATE WAIT RUN GPU-HOURS REASON (STATE: COMPLETED, FAILED, CANCELLED,\n"
      "TIMEOUT, PREEMPTED, NODE_FAIL). --json prints the daemon's job objects.");
  AddSocketFlag(c, options);
  c->add_option("--since", args->since,
                "jobs that ended since: 7d (default), 12h, 2026-11-01, \"2026-11-01 14:00\", today "
                "(server time)");
  c->add_flag("--all,-a", args->all, "everyone's jobs");
  c->add_flag("--json", args->json, "print the jobs as JSON");
  c->callback([options, args, exit_code] { *exit_code = RunHistory(*options, *args); });
}

}  // namespace rota::cli
