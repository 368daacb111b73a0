// `rota status [--json]`: what the daemon runs and has; `rota reload`: rereads its configuration;
// `rota poke`: a job may have ended in Slurm (tests/daemon/test_slurm.py).
// Tested against a daemon by tests/daemon/test_cli.py; reload by test_permissions.py and
// test_notify.py.
#include <cstdio>
#include <memory>

#include "api/protocol.h"
#include "cli/daemon_client.h"
#include "cli/job_format.h"
#include "cli/text.h"
#include "core/types.h"

namespace rota::cli {

namespace {

int RunStatus(const ClientOptions& options, bool json) {
  auto conn = Connect(options);
  if (!conn.ok()) return Fail(conn.status());
  auto hello = conn->Call({{"op", "hello"}});
  if (!hello.ok()) return Fail(hello.status());
  auto status = conn->Call({{"op", "status"}});
  if (!status.ok()) return Fail(status.status());
  UseServerZone(*status);
  nlohmann::json s = *status;
  s.erase("v");
  s.erase("ok");
  s.erase("tag");
  s.erase("zone");
  if (json) {
    PrintJson(s);
    return 0;
  }
  std::printf("rotad %s, %s mode, %s devices, up since %s\n", s.value("version", "?").c_str(),
              s.value("mode", "?").c_str(), s.value("devices", "?").c_str(),
              FormatLocalTime(s.value("started", 0LL)).c_str());
  std::printf("You: %s (uid %lld)%s\n", hello->value("user", "?").c_str(), hello->value("uid", -1LL),
              hello->value("admin", false) ? ", admin" : "");
  std::printf("Engine: %s\n", s.value("executor", "?").c_str());
  if (nlohmann::json agents = s.value("agents", nlohmann::json::array()); agents.is_array()) {
    if (s.contains("agents")) std::printf("Agents:%s\n", agents.empty() ? " none heard from yet" : "");
    for (const nlohmann::json& a : agents) {
      std::printf("  %s: readings of %s%s\n", a.value("node", "?").c_str(),
                  FormatLocalTime(a.value("received", 0LL)).c_str(),
                  a.value("fresh", false) ? "" : " (stale: its GPUs' load reads unknown)");
    }
  }
  nlohmann::json jobs = s.value("jobs", nlohmann::json::object());
  std::printf("Jobs: %lld running, %lld pending\n", jobs.value("running", 0LL), jobs.value("pending", 0LL));
  if (nlohmann::json sched = s.value("scheduler", nlohmann::json::object()); sched.value("passes", 0LL) > 0) {
    std::printf("Scheduler: %lld passes, last %.2f ms, mean %.2f ms, max %.2f ms\n", sched.value("passes", 0LL),
                sched.value("last_ms", 0.0), sched.value("mean_ms", 0.0), sched.value("max_ms", 0.0));
  }
  Table table({"GPU", "MODEL", "MEMORY", "MIG", "DRAINED", "UUID"});
  for (const nlohmann::json& g : s.value("gpus", nlohmann::json::array())) {
    nlohmann::json mig = g.value("mig", nlohmann::json::array());
    std::string mig_text = "none";
    if (mig.is_array() && !mig.empty()) {
      mig_text.clear();
      for (const nlohmann::json& m : mig) {
        if (!mig_text.empty()) mig_text += ",";
        mig_text += m.is_string() ? m.get<std::string>() : m.value("profile", std::string("?"));
      }
    }
    table.AddRow({std::to_string(g.value("index", -1LL)), g.value("model", "-"),
                  FormatMemory(g.value("memory", 0LL)), mig_text, g.value("drained", false) ? "yes" : "no",
                  g.value("uuid", "-")});
  }
  std::string text = table.Render();
  PrintText(text);
  return 0;
}

// A hook's call: bounded, so that a rotad that does not answer (stopped, overloaded) never holds
// up Slurm's epilog for long. rotad answers a waiting poke within its own bound (3 s).
constexpr int kPokeReplyMs = 2'000;
constexpr int kWaitingPokeReplyMs = 5'000;

int RunPoke(const ClientOptions& options, bool wait) {
  auto conn = Connect(options);
  if (!conn.ok()) return Fail(conn.status());
  nlohmann::json request = {{"op", "poke"}};
  if (wait) request["wait"] = true;
  if (Status sent = conn->Send(request); !sent.ok()) return Fail(sent);
  auto reply = conn->Receive(wait ? kWaitingPokeReplyMs : kPokeReplyMs);
  if (!reply.ok()) return Fail(conn->TimedOut() ? Unavailable("rotad did not answer the poke in time") : reply.status());
  if (Status st = api::StatusOfReply(*reply); !st.ok()) return Fail(st);
  return 0;
}

int RunReload(const ClientOptions& options) {
  auto reply = CallDaemon(options, {{"op", "reload"}});
  if (!reply.ok()) return Fail(reply.status());
  std::printf("Reloaded the configuration\n");
  return 0;
}

}  // namespace

void AddStatusCommands(CLI::App& app, ClientOptions* options, int* exit_code) {
  auto json = std::make_shared<bool>(false);
  CLI::App* status = app.add_subcommand("status", "Show rotad's version, mode, GPUs and job counts");
  status->footer("--json prints the daemon's status object (docs/api.md).");
  AddSocketFlag(status, options);
  status->add_flag("--json", *json, "print the status as JSON");
  status->callback([options, json, exit_code] { *exit_code = RunStatus(*options, *json); });

  CLI::App* reload = app.add_subcommand("reload", "Make rotad read its configuration again (admins)");
  reload->footer("On errors the old configuration stays in force and every problem is printed; exit 2.");
  AddSocketFlag(reload, options);
  reload->callback([options, exit_code] { *exit_code = RunReload(*options); });

  auto wait = std::make_shared<bool>(false);
  CLI::App* poke = app.add_subcommand("poke", "Tell rotad a job may have ended in Slurm (for Slurm's Epilog)");
  poke->footer(
      "rotad reads Slurm's queue now rather than at its next poll. With --wait (for slurmd's Epilog,\n"
      "which Slurm waits for before it schedules again), it answers once it has submitted the jobs\n"
      "the end let start, within 3 s. Prints nothing; exit 0 (3 when rotad did not answer).");
  AddSocketFlag(poke, options);
  poke->add_flag("--wait", *wait, "answer once the jobs the end let start are submitted to Slurm");
  poke->callback([options, wait, exit_code] { *exit_code = RunPoke(*options, *wait); });
}

}  // namespace rota::cli
