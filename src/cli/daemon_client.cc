// Tested through the commands by tests/cli_e2e.sh; the exit-code mapping by job_format_test.cc.
#include "cli/daemon_client.h"

#include <cstdio>
#include <ctime>
#include <optional>

#include "api/protocol.h"
#include "api/zone_json.h"
#include "cli/text.h"
#include "core/types.h"

namespace rota::cli {

CLI::Validator JobIdCheck() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const bool digits = !text.empty() && text.size() <= 18 &&
                            text.find_first_not_of("0123456789") == std::string::npos;
        if (digits && text.find_first_not_of('0') != std::string::npos) return "";
        std::string hint = text.find(',') != std::string::npos ? "; give several separated by spaces" : "";
        return "\"" + text + "\" is not a job id: ids are numbers, as rota queue shows them" + hint;
      },
      "", "job id");
}

void AddSocketFlag(CLI::App* command, ClientOptions* options) {
  command
      ->add_option("--socket", options->socket,
                   "rotad's socket (default: $ROTA_SOCKET, then the user-mode socket if rotad runs as you, "
                   "then /run/rota/rota.sock)")
      ->type_name("PATH");
}

void AddRequestFlags(CLI::App* c, client::RequestFlags* f, bool batch) {
  c->add_option("--gpus", f->gpus, "whole GPUs (default 1); only one of --gpus, --gpu-mem, --mig")
      ->type_name("N");
  c->add_option("--gpu-mem", f->gpu_mem, "a share of one GPU's memory, e.g. 20G")->type_name("SIZE");
  c->add_option("--mig", f->mig, "a MIG slice by profile, e.g. 3g.40gb")->type_name("PROFILE");
  c->add_option("--time", f->time, "time limit: 90 (minutes), 30m, 4h, 2d, 1:30:00, 2-00:00:00 (default 1h)")
      ->type_name("TIME");
  c->add_option("--tier", f->tier, "thesis, regular (default) or explore")->type_name("TIER");
  c->add_option("--project", f->project, "the project to account the job to")->type_name("PROJECT");
  c->add_option("--name", f->name, "the job's name (default: the command's base name)")->type_name("NAME");
  c->add_option("--mem-per-gpu", f->mem_per_gpu,
                "host memory per GPU, e.g. 40G (default: the configured one)")
      ->type_name("SIZE");
  c->add_option(
       "--signal", f->signal,
       "a warning signal before the stop at the time limit or a preemption, and how long before: USR1@120, "
       "SIGUSR2@60, 10@30, TERM (120 s); never before half the limit. Default: none (SIGTERM at the limit)")
      ->type_name("SIG[@SECS]");
  c->add_option("--after", f->after, "start only after these jobs ended, however they ended: ID[,ID...]")
      ->type_name("ID[,ID]");
  c->add_option("--after-ok", f->after_ok, "start only after these jobs completed (exit 0); cancelled if one fails")
      ->type_name("ID[,ID]");
  c->add_option("--conda", f->conda,
                "run in this conda (mamba, micromamba) environment: a name, as `conda activate` takes it, or a path")
      ->type_name("ENV");
  c->add_option("--image", f->image,
                "run in this container image, with the lab's runtime, as you, with only your GPUs "
                "(`rota rules` lists the images the lab allows)")
      ->type_name("IMAGE");
  if (batch) {
    c->add_option("--output", f->output, "the output file; %j is the job id (default <cwd>/rota-%j.out)")
        ->type_name("FILE");
    c->add_flag("--requeue", f->requeue, "requeue the job when it is preempted instead of ending it");
    c->add_option("--deadline", f->deadline,
                  "when you need the results: 2026-12-10 (the end of that day), \"fri 18:00\"; "
                  "rota advise warns when the job may miss it (it changes no priority)")
        ->type_name("WHEN");
  }
}

int ExitCodeFor(const Status& status) {
  if (status.ok()) return api::kExitOk;
  return api::ExitCodeForError(api::ErrorCode(status.code()));
}

int Fail(const Status& status) {
  std::fprintf(stderr, "rota: %s\n", status.message().c_str());
  return ExitCodeFor(status);
}

int Fail(const std::string& prefix, const Status& status) {
  std::fprintf(stderr, "rota: %s: %s\n", prefix.c_str(), status.message().c_str());
  return ExitCodeFor(status);
}

StatusOr<client::Connection> Connect(const ClientOptions& options) {
  return client::Connection::Open(api::ClientSocketPath(options.socket));
}

StatusOr<nlohmann::json> CallDaemon(const ClientOptions& options, const nlohmann::json& request) {
  auto conn = Connect(options);
  if (!conn.ok()) return conn.status();
  StatusOr<nlohmann::json> reply = conn->Call(request);
  if (reply.ok()) UseServerZone(*reply);
  return reply;
}

void UseServerZone(const nlohmann::json& reply) {
  if (!reply.is_object() || !reply.contains("zone")) return;
  if (std::optional<Zone> zone = api::ZoneFromJson(reply["zone"])) SetDisplayZone(std::move(*zone));
}

int PrintJobs(const nlohmann::json& reply, bool json,
              const std::function<std::string(const std::vector<nlohmann::json>&)>& render) {
  nlohmann::json jobs = reply.value("jobs", nlohmann::json::array());
  if (json) {
    PrintJson(jobs);
    return 0;
  }
  PrintText(render(std::vector<nlohmann::json>(jobs.begin(), jobs.end())));
  return 0;
}

void PrintText(const std::string& text) { std::fwrite(text.data(), 1, text.size(), stdout); }

nlohmann::json WhenArg(const std::string& text) {
  if (!text.empty() && text.size() < 19 && text.find_first_not_of("0123456789") == std::string::npos) {
    return std::stoll(text);
  }
  return text;
}

void PrintJson(const nlohmann::json& value) {
  std::string text = value.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
  text += '\n';
  PrintText(text);
}

long long Now() { return static_cast<long long>(std::time(nullptr)); }

StatusOr<long long> SinceAgo(const std::string& text) {
  std::optional<Duration> ago = ParseDuration(text);
  if (!ago) return InvalidArgument("--since " + text + " is not a duration (use 1d, 12h, 30m)");
  return Now() - *ago;
}

}  // namespace rota::cli
