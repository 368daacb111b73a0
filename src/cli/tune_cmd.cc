// `rota tune [--since 14d] [--config FILE] [--json]` (issue 29): replays the lab's own history
// (store_history.h) under a small grid of the rota policy's weights (sim/tune.h) and proposes the
// configuration change that lowers the average wait without giving up the p99 wait, utilisation
// or fairness, with the figures before and after, in all and per user. It changes nothing: the
// admin edits the configuration. Tested by tests/daemon/test_simulate_store.py; the search by
// src/sim/tune_test.cc.
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/commands.h"
#include "cli/store_history.h"
#include "cli/text.h"
#include "replay/lab_history.h"
#include "replay/replay_json.h"
#include "config/config.h"
#include "sim/tune.h"

namespace rota::cli {

namespace {

constexpr char kDefaultConfig[] = "/etc/rota/rota.toml";

struct TuneArgs {
  std::string since = "14d";
  std::string config;  // "" = kDefaultConfig, which may be missing (the defaults then)
  bool json = false;
};

int TuneFail(const std::string& message) {
  std::fprintf(stderr, "rota tune: %s\n", message.c_str());
  return 1;
}

std::string Secs(double v) { return FormatElapsed(static_cast<Duration>(v + 0.5)); }

std::string Percent(double v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100 * v);
  return buf;
}

std::string Jain(double v) {
  if (v < 0) return "-";
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

int RunTune(const ClientOptions& client, const TuneArgs& args) {
  // The lab's policy, as rotad reads it; without the default file, the defaults (said).
  config::Config lab;
  const std::string path = args.config.empty() ? kDefaultConfig : args.config;
  if (StatusOr<config::Config> read = config::LoadConfig(path); read.ok()) {
    lab = std::move(*read);
  } else if (!args.config.empty()) {
    return TuneFail(read.status().message());
  } else {
    std::fprintf(stderr, "rota tune: %s: tuning against the default policy (--config FILE for another)\n",
                 read.status().message().c_str());
  }
  StatusOr<StoreTrace> st = LoadStoreTrace(client, args.since);
  if (!st.ok()) return TuneFail(st.status().message());
  StatusOr<sim::TuneResult> r = sim::Tune(st->trace, replay::HistoryConfig(*st, lab.policy));
  if (!r.ok()) return TuneFail(r.status().message());

  if (args.json) {
    nlohmann::json out = {{"jobs", st->trace.jobs.size()},
                          {"skipped", st->trace.skipped},
                          {"gpus", st->gpus},
                          {"since", args.since},
                          {"config", path},
                          {"tried", r->tried},
                          {"current", replay::TuneFiguresJson(r->current)},
                          {"proposed", replay::TuneFiguresJson(r->best)},
                          {"proposed_other_promises", replay::TuneFiguresJson(r->other_promises)},
                          {"change", r->change},
                          {"changes", r->changes}};
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  std::printf(
      "Replayed %zu jobs that ended since %s on %d GPUs, under %d configurations of the rota policy.\n",
      st->trace.jobs.size(), args.since.c_str(), st->gpus, r->tried);
  const sim::Metrics& a = r->current.result.metrics;
  const sim::Metrics& b = r->best.result.metrics;
  // Beside the proposal, the same with promises the other way: the lab's choice, never proposed.
  const sim::Metrics& o = r->other_promises.result.metrics;
  const bool keeps = r->other_promises.promise_slack < 0;
  Table t({"", "NOW", "PROPOSED", keeps ? "PROPOSED, NO PROMISES" : "PROPOSED, PROMISES KEPT"});
  t.AddRow({"average wait", Secs(a.avg_wait), Secs(b.avg_wait), Secs(o.avg_wait)});
  t.AddRow({"p99 wait", Secs(a.p99_wait), Secs(b.p99_wait), Secs(o.p99_wait)});
  t.AddRow({"longest wait", Secs(a.max_wait), Secs(b.max_wait), Secs(o.max_wait)});
  t.AddRow({"GPU utilisation", Percent(a.utilisation), Percent(b.utilisation), Percent(o.utilisation)});
  t.AddRow({"fairness (Jain, slowdown)", Jain(a.jain_slowdown), Jain(b.jain_slowdown), Jain(o.jain_slowdown)});
  std::printf("%s", t.Render().c_str());
  std::printf(keeps ? "Without promises (no [policy] promise_slack): as a rule, shorter average waits and longer\n"
                      "longest ones. The choice is the lab's.\n"
                    : "With promises ([policy] promise_slack = \"0s\"), a job is protected once past the start first\n"
                      "come first served promised it: as a rule, longer average waits and shorter longest ones. The\n"
                      "choice is the lab's.\n");
  Table u({"USER", "JOBS", "AVG NOW", "AVG PROPOSED", "P99 NOW", "P99 PROPOSED"});
  const std::vector<sim::UserWaits> before = sim::PerUserWaits(r->current.result.outcomes);
  const std::vector<sim::UserWaits> after = sim::PerUserWaits(r->best.result.outcomes);
  for (size_t i = 0; i < before.size() && i < after.size(); ++i) {
    u.AddRow({before[i].user.empty() ? "-" : TerminalSafe(before[i].user), WithThousands(before[i].jobs),
              Secs(before[i].avg_wait), Secs(after[i].avg_wait), Secs(before[i].p99_wait),
              Secs(after[i].p99_wait)});
  }
  std::printf("\n%s", u.Render().c_str());
  if (!r->change) {
    std::printf(
        "\nKeep the current weights: no configuration tried waits less on average without a longer p99\n"
        "wait, lower utilisation or less fairness.\n");
    return 0;
  }
  std::printf("\nProposed change to %s (rota tune changes nothing; edit the file and restart rotad):\n",
              path.c_str());
  for (const std::string& c : r->changes) std::printf("  %s\n", c.c_str());
  return 0;
}

}  // namespace

void AddTuneCommand(CLI::App& app, ClientOptions* options, int* exit_code) {
  auto args = std::make_shared<TuneArgs>();
  CLI::App* c = app.add_subcommand(
      "tune", "Propose the rota policy's weights from a replay of the lab's own history (changes nothing)");
  c->footer(
      "Replays the jobs that ended since --since under a grid of weights (fair share, age, size) and the\n"
      "time-of-day table on or off, and proposes the configuration with the lowest average wait among\n"
      "those that keep the p99 wait, GPU utilisation (within a point) and fairness (within 0.01).");
  AddSocketFlag(c, options);
  c->add_option("--since", args->since, "the jobs that ended since: 14d (default), 2026-11-01, ...");
  c->add_option("--config", args->config, "the lab's configuration (default /etc/rota/rota.toml)");
  c->add_flag("--json", args->json, "print the figures as JSON");
  c->callback([options, args, exit_code] { *exit_code = RunTune(*options, *args); });
}

}  // namespace rota::cli
