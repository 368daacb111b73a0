// `rota drain GPU --reason TEXT` and `rota resume GPU` (admins; docs/api.md, ops "drain" and
// "resume"). GPU is a card's index or UUID, sent as a string: the daemon resolves it, so a MIG
// slice's UUID drains its card. Tested end to end by tests/daemon/.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/daemon_client.h"
#include "cli/gpus_format.h"
#include "cli/text.h"

namespace rota::cli {

namespace {

struct DrainArgs {
  std::string gpu;
  std::string reason;
  bool json = false;
};

// "GPU 2 (GPU-8f2...)" from the reply, which names the card the daemon resolved.
std::string CardName(const nlohmann::json& reply, const std::string& asked) {
  auto index = reply.find("gpu");
  auto uuid = reply.find("uuid");
  std::string name = "GPU " + (index != reply.end() && index->is_number() ? std::to_string(index->get<long long>())
                                                                             : TerminalSafe(asked));
  if (uuid != reply.end() && uuid->is_string() && !uuid->get_ref<const std::string&>().empty()) {
    name += " (" + TerminalSafe(uuid->get_ref<const std::string&>()) + ")";
  }
  return name;
}

int RunDrain(const ClientOptions& options, const DrainArgs& args, bool drain) {
  if (IsBlank(args.gpu)) return Fail(InvalidArgument("name the GPU by its index or UUID"));
  nlohmann::json request = {{"op", drain ? "drain" : "resume"}, {"gpu", args.gpu}};
  if (drain) {
    // The reason is what the next admin and every user reads in `rota gpus`; an empty one says nothing.
    if (IsBlank(args.reason)) return Fail(InvalidArgument("--reason must say why the GPU is drained"));
    request["reason"] = args.reason;
  }
  auto reply = CallDaemon(options, request);
  if (!reply.ok()) return Fail(reply.status());
  if (args.json) {
    PrintJson(*reply);
    return 0;
  }
  std::string line = CardName(*reply, args.gpu) + (drain ? " drained: " + TerminalSafe(args.reason) : " resumed");
  std::printf("%s\n", line.c_str());
  return 0;
}

}  // namespace

void AddDrainCommands(CLI::App& app, ClientOptions* options, int* exit_code) {
  auto drain = std::make_shared<DrainArgs>();
  CLI::App* d = app.add_subcommand("drain", "Take a GPU out of service: no new work goes to it (admins)");
  d->footer(
      "Running jobs continue; the drain survives restarts of rotad. `rota gpus` shows\n"
      "\"DRAINED by YOU: REASON\" on the card; `rota resume GPU` brings it back.\n"
      "GPU is an index (2) or a UUID (GPU-...; a MIG slice's UUID drains its card).");
  AddSocketFlag(d, options);
  d->add_option("GPU", drain->gpu, "the card's index or UUID")->required();
  d->add_option("--reason,-r", drain->reason, "why, for users and the next admin (required)")
      ->required()
      ->type_name("TEXT");
  d->add_flag("--json", drain->json, "print the daemon's reply as JSON");
  d->callback([options, drain, exit_code] { *exit_code = RunDrain(*options, *drain, true); });

  auto resume = std::make_shared<DrainArgs>();
  CLI::App* r = app.add_subcommand("resume", "Put a drained GPU back in service (admins)");
  r->footer(
      "Ends an admin's drain, or a health drain once the card is healthy again. rotad refuses while\n"
      "the card is unhealthy or processes still hold it, and says which (exit code 1).");
  AddSocketFlag(r, options);
  r->add_option("GPU", resume->gpu, "the card's index or UUID")->required();
  r->add_flag("--json", resume->json, "print the daemon's reply as JSON");
  r->callback([options, resume, exit_code] { *exit_code = RunDrain(*options, *resume, false); });
}

}  // namespace rota::cli
