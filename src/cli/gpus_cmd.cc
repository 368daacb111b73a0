// `rota gpus [--json]`: one line per card in gpustat's spirit (index, name, temperature,
// utilisation, memory used/total, then who holds it: user/job with the share or slice, tier and
// time left); MIG slices on lines of their own under their card. Tested by tests/daemon/.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/daemon_client.h"
#include "cli/job_format.h"
#include "cli/text.h"
#include "core/types.h"

namespace rota::cli {

namespace {

std::string Gib(long long mib) {
  if (mib < 0) return "?";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", static_cast<double>(mib) / 1024.0);
  return buf;
}

std::string Memory(const nlohmann::json& j) {
  return Gib(j.value("memory_used", -1LL)) + "/" + Gib(j.value("memory_total", -1LL)) + "G";
}

// "alice/17(20G, regular, 0:59:00 left)" for each holder matching `mig_uuid` ("" = the card).
std::string Holders(const nlohmann::json& gpu, const std::string& mig_uuid) {
  std::string out;
  for (const nlohmann::json& h : gpu.value("jobs", nlohmann::json::array())) {
    if (h.value("mig_uuid", "") != mig_uuid) continue;
    std::string what = h.value("tier", "?");
    if (long long mem = h.value("gpu_mem", 0LL); mem > 0) what = Gib(mem) + "G, " + what;
    if (h.value("interactive", false)) what += ", session";
    what += ", " + FormatElapsed(h.value("time_left", 0LL)) + " left";
    out += (out.empty() ? "" : " ") + h.value("user", "?") + "/" + std::to_string(h.value("job_id", 0LL)) + "(" +
           what + ")";
  }
  return out;
}

int RunGpus(const ClientOptions& options, bool json) {
  auto reply = CallDaemon(options, {{"op", "gpus"}});
  if (!reply.ok()) return Fail(reply.status());
  nlohmann::json gpus = reply->value("gpus", nlohmann::json::array());
  if (json) {
    PrintJson(gpus);
    return 0;
  }
  Table table({"GPU", "NAME", "TEMP", "UTIL", "MEMORY", "JOBS"});
  for (const nlohmann::json& g : gpus) {
    const long long temp = g.value("temperature", -1LL);
    const long long util = g.value("util", -1LL);
    const bool has_mig = !g.value("mig", nlohmann::json::array()).empty();
    std::string jobs = Holders(g, "");
    if (jobs.empty() && !has_mig) jobs = "free";
    if (g.value("drained", false)) jobs = "DRAINED: " + g.value("health", std::string("drained")) + " " + jobs;
    table.AddRow({std::to_string(g.value("index", 0LL)), CutToWidth(g.value("name", "?"), 24),
                  temp < 0 ? "?" : std::to_string(temp) + "C", util < 0 ? "?" : std::to_string(util) + "%", Memory(g),
                  jobs});
    for (const nlohmann::json& m : g.value("mig", nlohmann::json::array())) {
      std::string holders = Holders(g, m.value("uuid", ""));
      table.AddRow({"", "  MIG " + m.value("profile", "?"), "", "", Memory(m), holders.empty() ? "free" : holders});
    }
  }
  std::string text = table.Render();
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

}  // namespace

void AddGpusCommand(CLI::App& app, ClientOptions* options, int* exit_code) {
  auto json = std::make_shared<bool>(false);
  CLI::App* c = app.add_subcommand("gpus", "Show each GPU now: temperature, load, memory and whose jobs are on it");
  c->footer("Columns: GPU NAME TEMP UTIL MEMORY (used/total GiB) JOBS (user/job(share, tier, time left)).\n"
            "MIG slices are listed under their card. --json prints the daemon's objects (docs/api.md).");
  AddSocketFlag(c, options);
  c->add_flag("--json", *json, "print JSON");
  c->callback([options, json, exit_code] { *exit_code = RunGpus(*options, *json); });
}

}  // namespace rota::cli
