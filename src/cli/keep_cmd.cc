// `rota keep ID` (the answer to an idle warning: the idle clock restarts) and `rota guard` (the
// opt-in shell guard for /etc/profile.d/). docs/api.md, op "keep"; tests/daemon/test_watch.py.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/daemon_client.h"

namespace rota::cli {

namespace {

// Sourced by login shells (sh, bash, zsh, dash). Outside a Rota allocation CUDA sees no GPU, so a
// plain `python train.py` fails fast instead of silently taking every card; inside `rota run` or
// `rota shell` (ROTA_JOB_ID is set) the allocation's CUDA_VISIBLE_DEVICES applies. Root is left
// alone (admins debug drivers). It is a guard against accidents, not a security boundary: anyone
// may unset it, and Rota still sees and reports such processes as outside Rota.
constexpr char kGuard[] = R"sh(# /etc/profile.d/rota-guard.sh: written by `rota guard` (Rota's shell guard, opt-in).
# Outside a Rota allocation, CUDA sees no GPU: run work with `rota submit`, `rota run` or
# `rota shell`, which set CUDA_VISIBLE_DEVICES to the GPUs you were given.
if [ -z "${ROTA_JOB_ID:-}" ] && [ "$(id -u)" != 0 ]; then
  CUDA_VISIBLE_DEVICES=""
  export CUDA_VISIBLE_DEVICES
fi
)sh";

int RunKeep(const ClientOptions& options, long long job, bool json) {
  auto reply = CallDaemon(options, {{"op", "keep"}, {"job_id", job}});
  if (!reply.ok()) return Fail(reply.status());
  if (json) {
    PrintJson(*reply);
    return 0;
  }
  std::printf("Keeping job %lld: its idle clock restarts (%lld keeps left today)\n", job,
              reply->value("keeps_left", 0LL));
  return 0;
}

}  // namespace

void AddKeepCommands(CLI::App& app, ClientOptions* options, int* exit_code) {
  struct KeepArgs {
    long long job = 0;
    bool json = false;
  };
  auto args = std::make_shared<KeepArgs>();
  CLI::App* k = app.add_subcommand("keep", "Keep an idle job or session: its idle clock restarts");
  k->footer("Answers an idle warning (`rota show ID` lists them). A few keeps a day per job.");
  AddSocketFlag(k, options);
  AddJobIdOption(k, &args->job, "the job id");
  k->add_flag("--json", args->json, "print the daemon's reply as JSON");
  k->callback([options, args, exit_code] { *exit_code = RunKeep(*options, args->job, args->json); });

  CLI::App* g = app.add_subcommand("guard", "Print the shell guard for /etc/profile.d/ (the lab's opt-in)");
  g->footer("  rota guard | sudo tee /etc/profile.d/rota-guard.sh\n"
            "Login shells outside an allocation then get an empty CUDA_VISIBLE_DEVICES.");
  g->callback([exit_code] {
    std::fputs(kGuard, stdout);
    *exit_code = 0;
  });
}

}  // namespace rota::cli
