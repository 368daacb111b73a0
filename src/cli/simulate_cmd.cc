// `rota simulate`: replays a job trace through the scheduling core under one or more policies and
// prints what each would have given (waits, completion times, utilisation, fairness).
// Tested by tests/cli_e2e.sh and, through the simulator, by src/sim/simulator_test.cc.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/text.h"
#include "core/types.h"
#include "sim/simulator.h"
#include "sim/trace.h"

namespace rota::cli {

namespace {

struct SimulateOptions {
  std::string trace;
  std::string policies = "fifo,backfill,rota";
  int gpus = 0;
  int gpus_per_node = 8;
  std::string gpu_mem = "80G";
  std::string format;
  std::string columns;
  std::vector<std::string> filters;
  std::string estimates = "exact";
  std::uint64_t seed = 1;
  std::string start;
  int plan_depth = -1;
  bool no_preemption = false;
  std::vector<std::string> settings;  // --set KEY=VALUE on the rota policy
  bool json = false;
  std::string outcomes;  // write per-job outcomes (CSV) here
};

// Applies one `--set KEY=VALUE` to the policy. Keys name the policy's fields.
Status ApplySetting(const std::string& kv, Policy& p) {
  auto eq = kv.find('=');
  if (eq == std::string::npos) return InvalidArgument("--set expects KEY=VALUE, got \"" + kv + "\"");
  std::string key = kv.substr(0, eq), value = kv.substr(eq + 1);
  auto number = [&value](double* out) {
    char* end = nullptr;
    double v = std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0') return false;
    *out = v;
    return true;
  };
  double v = 0;
  std::unordered_map<std::string, double*> weights = {
      {"weight.tier", &p.weights.tier},       {"weight.fairshare", &p.weights.fairshare},
      {"weight.age", &p.weights.age},         {"weight.size", &p.weights.size},
      {"weight.penalty", &p.weights.penalty}, {"size_max_gpu_hours", &p.size_max_gpu_hours},
      {"age_cap", &p.age_cap}};
  if (auto it = weights.find(key); it != weights.end()) {
    if (!number(&v) || v < 0) return InvalidArgument("--set " + key + ": expected a non-negative number");
    *it->second = v;
    return Status();
  }
  if (key == "age_max" || key == "fairshare_half_life") {
    auto d = ParseDuration(value);
    if (!d) return InvalidArgument("--set " + key + ": expected a duration such as 7d or 12h");
    (key == "age_max" ? p.age_max : p.fairshare_half_life) = *d;
    return Status();
  }
  if (key == "time_of_day" && value == "off") {
    p.time_of_day.clear();
    return Status();
  }
  return InvalidArgument("--set: unknown key \"" + key +
                         "\" (known: weight.tier, weight.fairshare, weight.age, weight.size, weight.penalty, "
                         "size_max_gpu_hours, age_cap, age_max, fairshare_half_life, time_of_day=off)");
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "rota simulate: %s\n", message.c_str());
  return 1;
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string part;
  while (std::getline(in, part, sep)) {
    if (!part.empty()) out.push_back(part);
  }
  return out;
}

std::string Secs(double v) { return WithThousands(static_cast<long long>(v + 0.5)); }

int RunSimulate(const SimulateOptions& o) {
  sim::TraceOptions topts;
  topts.format = o.format;
  if (!o.columns.empty()) {
    auto c = sim::ParseColumnsFlag(o.columns, topts);
    if (!c.ok()) return Fail(c.status().message());
    topts = *c;
  }
  for (const std::string& f : o.filters) {
    auto p = sim::ParseFilterFlag(f);
    if (!p.ok()) return Fail(p.status().message());
    topts.filters.push_back(*p);
  }
  sim::SimConfig config;
  config.gpus = o.gpus;
  config.gpus_per_node = o.gpus_per_node;
  auto mem = ParseMemory(o.gpu_mem);
  if (!mem || *mem <= 0) return Fail("--gpu-mem: \"" + o.gpu_mem + "\" is not a memory size (e.g. 80G)");
  config.gpu_memory = *mem;
  config.seed = o.seed;
  if (o.estimates == "exact") config.estimates = sim::Estimates::kExact;
  else if (o.estimates == "noisy") config.estimates = sim::Estimates::kNoisy;
  else if (o.estimates == "history") config.estimates = sim::Estimates::kHistory;
  else return Fail("--estimates must be exact, noisy or history");
  if (!o.start.empty()) {
    auto t = sim::ParseDateTimeUtc(o.start);
    if (!t) return Fail("--start: \"" + o.start + "\" is not a time (expected YYYY-MM-DD HH:MM:SS)");
    config.epoch = *t;
  }
  std::vector<Algorithm> algorithms;
  for (const std::string& p : Split(o.policies, ',')) {
    auto a = ParseAlgorithm(p);
    if (!a) return Fail("--policy: unknown policy \"" + p + "\" (use fifo, backfill, rota)");
    algorithms.push_back(*a);
  }
  if (algorithms.empty()) return Fail("--policy: give at least one of fifo, backfill, rota");

  auto trace = sim::LoadTrace(o.trace, topts);
  if (!trace.ok()) return Fail(trace.status().message());

  std::vector<sim::SimResult> results;
  for (Algorithm a : algorithms) {
    config.keep_outcomes = !o.outcomes.empty();
    config.policy = Policy{};
    config.policy.algorithm = a;
    if (o.plan_depth >= 0) config.policy.plan_depth = o.plan_depth;
    if (o.no_preemption) config.policy.preemption = false;
    for (const std::string& kv : o.settings) {
      Status st = ApplySetting(kv, config.policy);
      if (!st.ok()) return Fail(st.message());
    }
    auto r = sim::Simulate(*trace, config);
    if (!r.ok()) return Fail(r.status().message());
    results.push_back(std::move(*r));
  }

  if (!o.outcomes.empty()) {
    std::FILE* f = std::fopen(o.outcomes.c_str(), "w");
    if (!f) return Fail("--outcomes: cannot write " + o.outcomes);
    std::fprintf(f, "policy,job,user,submit,start,end,gpus,wait\n");
    for (const auto& r : results) {
      for (const sim::JobOutcome& j : r.outcomes) {
        std::fprintf(f, "%s,%lld,%s,%lld,%lld,%lld,%g,%lld\n", r.policy.c_str(), static_cast<long long>(j.id),
                     j.user.c_str(), static_cast<long long>(j.submit), static_cast<long long>(j.start),
                     static_cast<long long>(j.end), j.gpus, static_cast<long long>(j.start - j.submit));
      }
    }
    std::fclose(f);
  }
  if (o.json) {
    nlohmann::json out;
    out["trace"] = o.trace;
    out["jobs"] = trace->jobs.size();
    out["skipped"] = trace->skipped;
    out["notes"] = trace->notes;
    out["gpus"] = o.gpus;
    out["gpus_per_node"] = o.gpus_per_node;
    out["estimates"] = sim::EstimatesName(config.estimates);
    out["seed"] = o.seed;
    for (const auto& r : results) {
      const sim::Metrics& m = r.metrics;
      out["results"].push_back({{"policy", r.policy},
                                {"jobs", m.jobs},
                                {"rejected", r.rejected},
                                {"unfinished", r.unfinished},
                                {"preemptions", r.preemptions},
                                {"schedule_calls", r.schedule_calls},
                                {"avg_wait", m.avg_wait},
                                {"p50_wait", m.p50_wait},
                                {"p99_wait", m.p99_wait},
                                {"max_wait", m.max_wait},
                                {"avg_jct", m.avg_jct},
                                {"p99_jct", m.p99_jct},
                                {"makespan", m.makespan},
                                {"utilisation", m.utilisation},
                                {"jain_wait", m.jain_wait},
                                {"jain_slowdown", m.jain_slowdown},
                                {"users", m.users}});
    }
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  std::printf("Trace %s: %zu jobs", o.trace.c_str(), trace->jobs.size());
  if (trace->skipped) std::printf(" (%lld rows skipped)", static_cast<long long>(trace->skipped));
  std::printf("; %d GPUs, %d per node; estimates %s\n", o.gpus, o.gpus_per_node, sim::EstimatesName(config.estimates));
  for (const std::string& n : trace->notes) std::printf("  note: %s\n", n.c_str());
  Table t({"POLICY", "JOBS", "REJECTED", "AVG WAIT", "P50 WAIT", "P99 WAIT", "MAX WAIT", "AVG JCT", "P99 JCT",
           "MAKESPAN", "UTIL", "JAIN(WAIT)"});
  for (const auto& r : results) {
    const sim::Metrics& m = r.metrics;
    char util[16], jain[16];
    std::snprintf(util, sizeof util, "%.1f%%", 100.0 * m.utilisation);
    if (m.jain_wait < 0) std::snprintf(jain, sizeof jain, "-");
    else std::snprintf(jain, sizeof jain, "%.3f", m.jain_wait);
    t.AddRow({r.policy, WithThousands(m.jobs), WithThousands(r.rejected), Secs(m.avg_wait), Secs(m.p50_wait),
              Secs(m.p99_wait), Secs(m.max_wait), Secs(m.avg_jct), Secs(m.p99_jct),
              Secs(static_cast<double>(m.makespan)), util, jain});
  }
  std::printf("%s", t.Render().c_str());
  std::printf("Times in seconds. JAIN(WAIT): Jain's fairness index of per-user mean wait (1 = even).\n");
  return 0;
}

}  // namespace

void AddSimulateCommand(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<SimulateOptions>();
  CLI::App* cmd = app.add_subcommand("simulate", "Replay a job trace through the scheduler, in virtual time");
  cmd->add_option("--trace", o->trace, "CSV job trace")->required();
  cmd->add_option("--policy", o->policies, "Comma-separated policies: fifo, backfill, rota")->capture_default_str();
  cmd->add_option("--gpus", o->gpus, "GPUs in the simulated cluster")->required();
  cmd->add_option("--gpus-per-node", o->gpus_per_node, "GPUs per node")->capture_default_str();
  cmd->add_option("--gpu-mem", o->gpu_mem, "Memory of each GPU (shares are fractions of it)")->capture_default_str();
  cmd->add_option("--format", o->format, "Column preset: philly or alibaba");
  cmd->add_option("--columns", o->columns,
                  "Column mapping, e.g. submit=timestamp,duration=duration,gpus=num_gpus,user=user");
  cmd->add_option("--filter", o->filters, "Keep rows where COLUMN=VALUE (repeatable)");
  cmd->add_option("--estimates", o->estimates, "How time limits are made: exact, noisy or history")
      ->capture_default_str();
  cmd->add_option("--seed", o->seed, "Seed for noisy estimates")->capture_default_str();
  cmd->add_option("--start", o->start, "Wall-clock start of traces with relative times (UTC)");
  cmd->add_option("--plan-depth", o->plan_depth, "Blocked jobs that get exact reservations (rota, fifo)");
  cmd->add_flag("--no-preemption", o->no_preemption, "Turn preemption off for the rota policy");
  cmd->add_option("--set", o->settings,
                  "Change a policy setting, e.g. weight.age=2000 or age_max=7d (repeatable)");
  cmd->add_option("--outcomes", o->outcomes, "Write every job's submit, start and end to this CSV file");
  cmd->add_flag("--json", o->json, "Print JSON");
  cmd->callback([o, exit_code] { *exit_code = RunSimulate(*o); });
}

}  // namespace rota::cli
