// `rota submit [OPTIONS] -- COMMAND [ARGS...]`: queues a batch job and prints "Submitted job N"
// (with --parsable just N). The environment and working directory are captured here.
// Tested against a daemon by tests/daemon/test_jobs.py and test_cli.py; the request building by
// src/client/job_request_test.cc.
//
// Design: when COMMAND is a script starting with "#!", its #ROTA lines (before the first command,
// as #SBATCH) give defaults that command-line flags override; all values are judged together
// after merging, so a bad value is refused here (exit 2) whichever side gave it.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>

#include "api/protocol.h"
#include "cli/daemon_client.h"
#include "client/conda.h"
#include "client/output_path.h"

extern char** environ;

namespace rota::cli {

namespace {

struct SubmitArgs {
  client::RequestFlags flags;
  std::vector<std::string> command;
  bool parsable = false;
};

// The #ROTA flags of `path` if it is a readable script; empty flags otherwise.
StatusOr<client::RequestFlags> ScriptFlags(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return client::RequestFlags{};
  std::ifstream in(path, std::ios::binary);
  if (!in) return client::RequestFlags{};
  std::string text(64 * 1024, '\0');  // directives sit at the top; 64 KiB is plenty
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  return client::ParseDirectiveWords(client::ScriptDirectives(text), path);
}

StatusOr<std::string> CurrentDirectory() {
  std::vector<char> buf(4096);
  while (::getcwd(buf.data(), buf.size()) == nullptr) {
    if (errno != ERANGE)
      return Internal(std::string("cannot read the working directory: ") + std::strerror(errno));
    buf.resize(buf.size() * 2);
  }
  return std::string(buf.data());
}

int RunSubmit(const ClientOptions& options, const SubmitArgs& args) {
  if (args.command.empty())
    return Fail(InvalidArgument("no command given (rota submit [OPTIONS] -- COMMAND [ARGS...])"));
  auto script = ScriptFlags(args.command[0]);
  if (!script.ok()) return Fail(script.status());
  client::RequestFlags flags = client::MergeFlags(*script, args.flags);
  auto cwd = CurrentDirectory();
  if (!cwd.ok()) return Fail(cwd.status());
  client::JobContext context{args.command, *cwd, client::EnvironmentMap(environ), false};
  if (Status s = client::UseConda(flags, context); !s.ok()) return Fail(s);
  auto job = client::BuildJob(flags, context);
  if (!job.ok()) return Fail(job.status());
  if (Status s = client::CheckOutputPath(flags.output, *cwd); !s.ok()) return Fail(s);
  nlohmann::json request = {{"v", api::kVersion}, {"op", "submit"}};
  request["job"] = std::move(*job);
  auto reply = CallDaemon(options, request);
  if (!reply.ok()) return Fail(reply.status());
  long long id = reply->value("job_id", 0LL);
  if (args.parsable)
    std::printf("%lld\n", id);
  else
    std::printf("Submitted job %lld\n", id);
  return 0;
}

}  // namespace

void AddSubmitCommand(CLI::App& app, ClientOptions* options, int* exit_code) {
  auto args = std::make_shared<SubmitArgs>();
  CLI::App* c = app.add_subcommand("submit", "Queue a batch job: rota submit [OPTIONS] -- COMMAND [ARGS...]");
  c->footer(
      "The job runs COMMAND in the current directory with the current environment. If COMMAND is a\n"
      "script starting with #!, lines such as \"#ROTA --gpus 2 --time 4h\" before its first command\n"
      "set options; flags given here override them. Prints \"Submitted job N\".\n"
      "Exit codes: 0 queued, 1 refused by rotad, 2 bad option, 3 rotad unreachable.");
  c->positionals_at_end();
  AddSocketFlag(c, options);
  AddRequestFlags(c, &args->flags, /*batch=*/true);
  c->add_flag("--parsable", args->parsable, "print only the job id");
  c->add_option("COMMAND", args->command, "the command and its arguments (after --)");
  c->callback([options, args, exit_code] { *exit_code = RunSubmit(*options, *args); });
}

}  // namespace rota::cli
