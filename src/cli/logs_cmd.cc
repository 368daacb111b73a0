// `rota logs ID [-f]`: prints a job's output file, fetched through rotad in chunks; with -f keeps
// following it until the job has ended and everything was read. Tested against a
// daemon by tests/daemon/test_cli.py and test_jobs.py.
#include <time.h>

#include <cstdio>
#include <memory>

#include "cli/daemon_client.h"

namespace rota::cli {

namespace {

struct LogsArgs {
  long long id = 0;
  bool follow = false;
  int interval_ms = 200;
};

int RunLogs(const ClientOptions& options, const LogsArgs& args) {
  if (args.id <= 0) return Fail(InvalidArgument("job ids are whole numbers from 1"));
  auto conn = Connect(options);
  if (!conn.ok()) return Fail(conn.status());
  long long offset = 0;
  while (true) {
    auto reply = conn->Call({{"op", "logs"}, {"job_id", args.id}, {"offset", offset}, {"max_bytes", 65536}});
    if (!reply.ok()) return Fail(reply.status());
    std::string data = reply->value("data", "");
    if (!data.empty()) {
      PrintText(data);
      if (args.follow) std::fflush(stdout);
    }
    long long next = reply->value("offset", offset + static_cast<long long>(data.size()));
    bool eof = reply->value("eof", true);
    bool final = reply->value("final", false);
    bool progressed = next != offset;
    offset = next;
    if (eof && (!args.follow || final)) break;
    if (!eof && progressed) continue;
    struct timespec pause = {args.interval_ms / 1000, (args.interval_ms % 1000) * 1000000L};
    ::nanosleep(&pause, nullptr);
  }
  return std::fflush(stdout) == 0 ? 0 : 1;
}

}  // namespace

void AddLogsCommand(CLI::App& app, ClientOptions* options, int* exit_code) {
  auto args = std::make_shared<LogsArgs>();
  CLI::App* c = app.add_subcommand("logs", "Print a job's output (-f: follow it until the job ends)");
  c->footer("Only the job's owner and admins may read its output.");
  AddSocketFlag(c, options);
  AddJobIdOption(c, &args->id, "the job id");
  c->add_flag("--follow,-f", args->follow, "keep printing new output until the job has ended");
  c->add_option("--interval", args->interval_ms, "with -f, milliseconds between polls (default 200)")
      ->check(CLI::Range(10, 60000));
  c->callback([options, args, exit_code] { *exit_code = RunLogs(*options, *args); });
}

}  // namespace rota::cli
