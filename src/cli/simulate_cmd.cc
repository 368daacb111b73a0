// `rota simulate`: replays a job trace through the scheduling core under one or more policies and
// prints what each would have given (waits, completion times, utilisation, fairness), and with
// bookings (--bookings FILE, --book-rate R) what became of the booked capacity. The trace is a
// CSV file (--trace) or the lab's own history (--from-store, store_trace.h), which adds each
// user's waits as they were and as each policy would have made them.
// Tested by tests/cli_e2e.sh, tests/daemon/test_simulate_store.py and, through the simulator, by
// src/sim/simulator_test.cc.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "cli/commands.h"
#include "cli/store_history.h"
#include "replay/replay_json.h"
#include "replay/store_trace.h"
#include "cli/text.h"
#include "core/types.h"
#include "sim/bookings.h"
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
  std::string estimates;  // exact for a file, recorded for the store
  std::uint64_t seed = 1;
  std::string start;
  int plan_depth = -1;
  bool no_preemption = false;
  std::vector<std::string> settings;  // --set KEY=VALUE on the rota policy
  bool json = false;
  std::string outcomes;  // write per-job outcomes (CSV) here
  std::string bookings;  // booking CSV: user,gpus,start,end,show[,made]
  double book_rate = 0;  // generated bookings per day
  double no_show = 0.2;  // fraction of generated bookings whose owner does not come
  std::string book_ahead = "1d";  // generated (and file bookings without `made`): made this early
  int predict = 0;  // foresee every Nth job's start and measure the forecasts (0: not)
  bool no_arrivals = false;  // ... knowing only the jobs queued (to measure what arrivals add)
  bool from_store = false;  // the lab's own history instead of --trace
  std::string since = "14d";
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
  if (key == "promise_slack") {
    if (value == "off") {
      p.promise_slack = -1;
      return Status();
    }
    auto d = ParseDuration(value);
    if (!d) return InvalidArgument("--set promise_slack: expected a duration such as 0s or 12h, or off");
    p.promise_slack = *d;
    return Status();
  }
  if (key == "age_max" || key == "fairshare_half_life" || key == "protect_after") {
    if (key == "protect_after" && value == "off") {
      p.protect_after = -1;
      return Status();
    }
    auto d = ParseDuration(value);
    if (!d) return InvalidArgument("--set " + key + ": expected a duration such as 7d or 12h");
    (key == "age_max" ? p.age_max : key == "protect_after" ? p.protect_after : p.fairshare_half_life) = *d;
    return Status();
  }
  if (key == "protect_max") {
    if (!number(&v) || v < 0 || v != static_cast<int>(v)) return InvalidArgument("--set protect_max: expected a count");
    p.protect_max = static_cast<int>(v);
    return Status();
  }
  if (key == "protect_foreseen") {
    if (value != "on" && value != "off") return InvalidArgument("--set protect_foreseen: expected on or off");
    p.protect_foreseen = value == "on";
    return Status();
  }
  if (key == "time_of_day" && value == "off") {
    p.time_of_day.clear();
    return Status();
  }
  if (key == "size_by") {  // as [policy] size_by
    if (value != "limit" && value != "prediction")
      return InvalidArgument("--set size_by: expected \"limit\" or \"prediction\"");
    p.size_by_prediction = value == "prediction";
    return Status();
  }
  return InvalidArgument(
      "--set: unknown key \"" + key +
      "\" (known: weight.tier, weight.fairshare, weight.age, weight.size, weight.penalty, "
      "size_max_gpu_hours, age_cap, age_max, fairshare_half_life, time_of_day=off, protect_after, "
      "protect_max, promise_slack, protect_foreseen=on|off, size_by=limit|prediction)");
}

int SimulateFail(const std::string& message) {
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

std::string GpuHours(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// "12.3 (4.5%)": GPU-hours and their share of the booked ones.
std::string HoursOf(double v, double booked) {
  char buf[48];
  if (booked > 0)
    std::snprintf(buf, sizeof buf, "%.1f (%.1f%%)", v, 100.0 * v / booked);
  else
    std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// The forecasts' errors against the plan on time limits (what Slurm estimates).
void PrintPredictions(const std::vector<sim::SimResult>& results, int every) {
  std::printf("\nStart forecasts, every %d%s job foreseen when it arrived (median absolute errors)\n", every,
              every == 1 ? "" : "th");
  Table t({"POLICY", "JOBS", "MEDIAN WAIT", "ON LIMITS", "FORECAST", "BETTER", "BY P90", "P90 AHEAD",
           "WAITED", "ON LIMITS", "FORECAST", "BETTER", "BY P90"});
  auto ratio = [](double a, double b) {
    char buf[24];
    if (b > 0) std::snprintf(buf, sizeof buf, "%.1f x", a / b);
    else std::snprintf(buf, sizeof buf, a > 0 ? "exact" : "-");
    return std::string(buf);
  };
  auto share = [](double v) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * v);
    return std::string(buf);
  };
  for (const auto& r : results) {
    const sim::PredictionMetrics& p = r.prediction;
    t.AddRow({r.policy, WithThousands(p.samples), Secs(p.actual_wait), Secs(p.error_limit), Secs(p.error_forecast),
              ratio(p.error_limit, p.error_forecast), share(p.p90_coverage), Secs(p.p90_ahead),
              WithThousands(p.waited), Secs(p.waited_error_limit), Secs(p.waited_error_forecast),
              ratio(p.waited_error_limit, p.waited_error_forecast), share(p.waited_p90_coverage)});
  }
  std::printf("%s", t.Render().c_str());
  std::printf("ON LIMITS: the plan on time limits (what Slurm estimates); FORECAST (the p50): the scheduler\n"
              "played forward on run times predicted from the jobs ended so far. BETTER: ON LIMITS / FORECAST.\n"
              "BY P90: jobs that started by their p90 (calibrated on the sampled jobs started so far);\n"
              "P90 AHEAD: median of p90 - arrival. WAITED: the same over the jobs that did not start at once.\n");
  if (std::any_of(results.begin(), results.end(),
                  [](const sim::SimResult& r) { return r.foresaw_arrivals; })) {
    std::printf(
        "Under the rota policy the play foresees the last week's jobs coming again (--no-arrivals: not).\n");
  }
}

// Each user's average and p99 wait as recorded and under each policy (--from-store).
void PrintPerUser(const std::vector<sim::JobOutcome>& recorded, const std::vector<sim::SimResult>& results) {
  std::vector<std::string> header = {"USER", "JOBS", "RECORDED AVG", "P99"};
  for (const auto& r : results) {
    header.push_back(r.policy + " AVG");
    header.push_back("P99");
  }
  Table t(header);
  std::vector<std::vector<sim::UserWaits>> per;
  for (const auto& r : results) per.push_back(sim::PerUserWaits(r.outcomes));
  for (const sim::UserWaits& u : sim::PerUserWaits(recorded)) {
    std::vector<std::string> row = {u.user.empty() ? "-" : TerminalSafe(u.user), WithThousands(u.jobs), Secs(u.avg_wait),
                                    Secs(u.p99_wait)};
    for (const auto& p : per) {
      auto it = std::find_if(p.begin(), p.end(), [&u](const sim::UserWaits& w) { return w.user == u.user; });
      row.push_back(it == p.end() ? "-" : Secs(it->avg_wait));
      row.push_back(it == p.end() ? "-" : Secs(it->p99_wait));
    }
    t.AddRow(row);
  }
  std::printf("\nWaits per user: as recorded, and as each policy would have made them (seconds)\n%s",
              t.Render().c_str());
}

int RunSimulate(const ClientOptions& client, const SimulateOptions& o) {
  sim::TraceOptions topts;
  topts.format = o.format;
  if (!o.columns.empty()) {
    auto c = sim::ParseColumnsFlag(o.columns, topts);
    if (!c.ok()) return SimulateFail(c.status().message());
    topts = *c;
  }
  for (const std::string& f : o.filters) {
    auto p = sim::ParseFilterFlag(f);
    if (!p.ok()) return SimulateFail(p.status().message());
    topts.filters.push_back(*p);
  }
  if (o.from_store == !o.trace.empty()) return SimulateFail("give either --trace FILE or --from-store");
  sim::SimConfig config;
  config.gpus = o.gpus;
  config.gpus_per_node = o.gpus_per_node;
  auto mem = ParseMemory(o.gpu_mem);
  if (!mem || *mem <= 0)
    return SimulateFail("--gpu-mem: \"" + o.gpu_mem + "\" is not a memory size (e.g. 80G)");
  config.gpu_memory = *mem;
  config.seed = o.seed;
  const std::string estimates = !o.estimates.empty() ? o.estimates : o.from_store ? "recorded" : "exact";
  if (estimates == "exact") config.estimates = sim::Estimates::kExact;
  else if (estimates == "noisy") config.estimates = sim::Estimates::kNoisy;
  else if (estimates == "history") config.estimates = sim::Estimates::kHistory;
  else if (estimates == "recorded") config.estimates = sim::Estimates::kRecorded;
  else if (estimates == "modal") config.estimates = sim::Estimates::kModal;
  else return SimulateFail("--estimates must be exact, noisy, modal, history or recorded");
  if (!o.start.empty()) {
    auto t = sim::ParseDateTimeUtc(o.start);
    if (!t) return SimulateFail("--start: \"" + o.start + "\" is not a time (expected YYYY-MM-DD HH:MM:SS)");
    config.epoch = *t;
  }
  std::vector<Algorithm> algorithms;
  for (const std::string& p : Split(o.policies, ',')) {
    auto a = ParseAlgorithm(p);
    if (!a) return SimulateFail("--policy: unknown policy \"" + p + "\" (use fifo, backfill, rota)");
    algorithms.push_back(*a);
  }
  if (algorithms.empty()) return SimulateFail("--policy: give at least one of fifo, backfill, rota");

  StatusOr<sim::Trace> trace = sim::Trace{};
  std::vector<sim::JobOutcome> recorded;
  std::string source = o.trace;
  if (o.from_store) {
    StatusOr<StoreTrace> st = LoadStoreTrace(client, o.since);
    if (!st.ok()) return SimulateFail(st.status().message());
    // This server's cards as they are (memory, nodes, MIG slices), unless asked for others with
    // --gpus or --gpu-mem: then that many cards of that memory on one node.
    const bool as_they_are = (config.gpus <= 0 || config.gpus == st->gpus) && o.gpu_mem == "80G";
    if (config.gpus <= 0) config.gpus = st->gpus;
    config.gpus_per_node = config.gpus;
    if (o.gpu_mem == "80G") config.gpu_memory = st->gpu_memory;
    if (as_they_are) config.cards = st->cards;
    recorded = std::move(st->recorded);
    config.bookings = std::move(st->bookings);
    trace = std::move(st->trace);
    source = "the store (jobs ended since " + o.since + ")";
  } else {
    if (o.gpus <= 0) return SimulateFail("--gpus must be at least 1 (the simulated cluster's GPUs)");
    trace = sim::LoadTrace(o.trace, topts);
    if (!trace.ok()) return SimulateFail(trace.status().message());
  }

  if (o.book_rate < 0) return SimulateFail("--book-rate must not be negative");
  if (o.predict < 0) return SimulateFail("--predict must not be negative");
  config.predict_every = o.predict;
  if (o.no_arrivals && o.predict == 0)
    return SimulateFail("--no-arrivals changes start forecasts: use it with --predict N");
  if (o.no_arrivals) config.arrivals.horizon = 0;
  if (o.no_show < 0 || o.no_show > 1) return SimulateFail("--no-show must be a fraction from 0 to 1");
  auto ahead = ParseDuration(o.book_ahead);
  if (!ahead)
    return SimulateFail("--book-ahead: \"" + o.book_ahead + "\" is not a duration (e.g. 1d or 36h)");
  if (!o.bookings.empty()) {
    auto b = sim::LoadBookings(o.bookings, trace->absolute_times, config.epoch, *ahead);
    if (!b.ok()) return SimulateFail(b.status().message());
    config.bookings = std::move(*b);
  }
  if (o.book_rate > 0) {
    sim::BookingGenOptions gen;
    gen.per_day = o.book_rate;
    gen.no_show = o.no_show;
    gen.ahead = *ahead;
    gen.slot = config.booking_rules.slot;  // on the rules' grid, in the policy's local time
    gen.zone = Policy{}.zone;
    gen.seed = o.seed;
    std::vector<sim::SimBooking> made = sim::GenerateBookings(*trace, gen, config.epoch);
    config.bookings.insert(config.bookings.end(), made.begin(), made.end());
    std::stable_sort(config.bookings.begin(), config.bookings.end(),
                     [](const sim::SimBooking& a, const sim::SimBooking& b) { return a.made < b.made; });
  }
  const bool with_bookings = !o.bookings.empty() || o.book_rate > 0 || (o.from_store && !config.bookings.empty());

  std::vector<sim::SimResult> results;
  std::vector<double> wall;  // seconds each policy's replay took (speed regressions show here)
  for (Algorithm a : algorithms) {
    config.keep_outcomes = !o.outcomes.empty() || o.from_store;
    config.policy = Policy{};
    config.policy.algorithm = a;
    if (o.plan_depth >= 0) config.policy.plan_depth = o.plan_depth;
    if (o.no_preemption) config.policy.preemption = false;
    for (const std::string& kv : o.settings) {
      Status st = ApplySetting(kv, config.policy);
      if (!st.ok()) return SimulateFail(st.message());
    }
    const auto began = std::chrono::steady_clock::now();
    auto r = sim::Simulate(*trace, config);
    if (!r.ok()) return SimulateFail(r.status().message());
    results.push_back(std::move(*r));
    wall.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count());
  }

  if (!o.outcomes.empty()) {
    std::FILE* f = std::fopen(o.outcomes.c_str(), "w");
    if (!f) return SimulateFail("--outcomes: cannot write " + o.outcomes);
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
    out["trace"] = source;
    out["jobs"] = trace->jobs.size();
    out["skipped"] = trace->skipped;
    out["notes"] = trace->notes;
    out["gpus"] = config.gpus;
    out["gpus_per_node"] = config.gpus_per_node;
    if (!config.cards.empty()) out["mig_slices"] = replay::MigSlices(config.cards);
    out["estimates"] = sim::EstimatesName(config.estimates);
    out["seed"] = o.seed;
    if (with_bookings) {
      out["bookings"] = {{"file", o.from_store && o.bookings.empty() ? "the store" : o.bookings},
                         {"rate_per_day", o.book_rate},
                         {"no_show", o.no_show},
                         {"ahead", o.book_ahead},
                         {"count", config.bookings.size()}};
    }
    for (size_t i = 0; i < results.size(); ++i) {
      out["results"].push_back(replay::ResultJson(results[i], wall[i], o.from_store));
    }
    if (o.from_store) out["recorded"] = replay::RecordedJson(recorded, config.gpus);
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  std::printf("Trace %s: %zu jobs", source.c_str(), trace->jobs.size());
  if (trace->skipped) std::printf(" (%lld rows skipped)", static_cast<long long>(trace->skipped));
  if (config.cards.empty()) {
    std::printf("; %d GPUs, %d per node", config.gpus, config.gpus_per_node);
  } else {
    std::printf("; this server's %d GPUs as they are", config.gpus);
    if (const int slices = replay::MigSlices(config.cards); slices > 0)
      std::printf(" (%d MIG slices)", slices);
  }
  std::printf("; estimates %s\n", sim::EstimatesName(config.estimates));
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
  std::printf("\nIdle GPU-hours by cause (HELD: a waiting job fit but was held for capacity promised ahead;\n"
              "FRAGMENTED: enough idle cards, not on one node; DRAINING: every waiting job needed more than\n"
              "was idle), and the replay's time and passes\n");
  Table idle({"POLICY", "HELD", "BOOKING", "QUOTA", "FRAGMENTED", "DRAINING", "NOTHING WAITING", "REPLAY", "PASSES"});
  for (size_t i = 0; i < results.size(); ++i) {
    const sim::IdleGpuSeconds& g = results[i].idle;
    char secs[32];
    std::snprintf(secs, sizeof secs, "%.2f s", wall[i]);
    idle.AddRow({results[i].policy, GpuHours(g.held / 3600), GpuHours(g.booking / 3600), GpuHours(g.quota / 3600),
                 GpuHours(g.fragmented / 3600), GpuHours(g.draining / 3600), GpuHours(g.no_work / 3600), secs,
                 WithThousands(results[i].schedule_calls)});
  }
  std::printf("%s", idle.Render().c_str());
  if (o.predict > 0) PrintPredictions(results, o.predict);
  if (o.from_store) PrintPerUser(recorded, results);
  if (!with_bookings) return 0;
  if (config.bookings.empty()) {
    std::printf(
        "\nBookings: none to replay (the file is empty, or the trace spans too little time for the rate)\n");
    return 0;
  }
  std::printf("\nBookings: %zu asked for", config.bookings.size());
  if (o.book_rate > 0)
    std::printf(" (%g a day, %g no-shows, made %s ahead", o.book_rate, o.no_show, o.book_ahead.c_str());
  if (o.book_rate > 0 && !o.bookings.empty()) std::printf(", and %s", o.bookings.c_str());
  if (o.book_rate > 0)
    std::printf(")");
  else
    std::printf(" (%s)", o.bookings.empty() ? "the store's" : o.bookings.c_str());
  std::printf("; GPU-hours of the confirmed ones\n");
  Table b({"POLICY", "CONFIRMED", "REFUSED", "NO-SHOWS", "BOOKED", "USED", "RELEASED", "LENT", "IN THE WAY",
           "IDLE", "AVG WAIT WITHOUT", "AVG WAIT WITH"});
  for (const auto& r : results) {
    const sim::BookingMetrics& m = r.bookings;
    b.AddRow({r.policy, WithThousands(m.confirmed), WithThousands(m.refused), WithThousands(m.no_shows),
              GpuHours(m.booked_gpu_hours), HoursOf(m.used_gpu_hours, m.booked_gpu_hours),
              HoursOf(m.released_gpu_hours, m.booked_gpu_hours),
              HoursOf(m.lent_gpu_hours, m.booked_gpu_hours), HoursOf(m.in_way_gpu_hours, m.booked_gpu_hours),
              HoursOf(m.idle_gpu_hours, m.booked_gpu_hours), Secs(m.avg_wait_without),
              Secs(m.avg_wait_with)});
  }
  std::printf("%s", b.Render().c_str());
  std::printf(
      "USED: the owner's jobs on the booked cards; RELEASED: from a no-show's release to the planned end; "
      "LENT: "
      "others' jobs\nstarted on the booked cards knowing of the booking (backfill); IN THE WAY: others' jobs "
      "already there.\nREFUSED: not confirmed by the rules (no room, refused, or needing an admin). AVG "
      "WAIT: the "
      "trace's jobs,\nreplayed without and with the bookings.\n");
  for (const auto& r : results) {
    const sim::BookingMetrics& m = r.bookings;
    std::printf(
        "  %s: refused %lld (no room %lld, rules %lld, admin %lld); no-shows %lld of which %lld with the "
        "owner's "
        "job still waiting; owner's work off the booked cards in %lld bookings (%.1f GPU-h); "
        "overruns %lld; others' avg wait %s -> %s (%lld jobs)\n",
        r.policy.c_str(), static_cast<long long>(m.refused), static_cast<long long>(m.refused_no_room),
        static_cast<long long>(m.refused_rules), static_cast<long long>(m.needs_admin),
        static_cast<long long>(m.no_shows), static_cast<long long>(m.no_show_owner_blocked),
        static_cast<long long>(m.owner_elsewhere), m.elsewhere_gpu_hours, static_cast<long long>(m.overruns),
        Secs(m.others_avg_wait_without).c_str(), Secs(m.others_avg_wait_with).c_str(),
        static_cast<long long>(m.others_jobs));
  }
  return 0;
}

}  // namespace

void AddSimulateCommand(CLI::App& app, ClientOptions* options, int* exit_code) {
  auto o = std::make_shared<SimulateOptions>();
  CLI::App* cmd = app.add_subcommand("simulate", "Replay a job trace through the scheduler, in virtual time");
  cmd->add_option("--trace", o->trace, "CSV job trace");
  cmd->add_flag("--from-store", o->from_store,
                "Replay the lab's own history instead: the jobs rotad recorded, on this server's cards");
  cmd->add_option("--since", o->since, "With --from-store: the jobs that ended since (14d, 2026-11-01, ...)")
      ->capture_default_str();
  AddSocketFlag(cmd, options);
  cmd->add_option("--policy", o->policies, "Comma-separated policies: fifo, backfill, rota")->capture_default_str();
  cmd->add_option("--gpus", o->gpus, "GPUs in the simulated cluster (--from-store: this server's)");
  cmd->add_option("--gpus-per-node", o->gpus_per_node, "GPUs per node")->capture_default_str();
  cmd->add_option("--gpu-mem", o->gpu_mem, "Memory of each GPU (shares are fractions of it)")->capture_default_str();
  cmd->add_option("--format", o->format, "Column preset: philly or alibaba");
  cmd->add_option("--columns", o->columns,
                  "Column mapping, e.g. submit=timestamp,duration=duration,gpus=num_gpus,user=user");
  cmd->add_option("--filter", o->filters, "Keep rows where COLUMN=VALUE (repeatable)");
  cmd->add_option("--estimates", o->estimates,
                  "How time limits are made: exact (a file's default), noisy, modal (round values, habits), "
                  "history or recorded (the store's, or the trace's limit column)");
  cmd->add_option("--seed", o->seed, "Seed for noisy estimates and generated bookings")
      ->capture_default_str();
  cmd->add_option("--start", o->start, "Wall-clock start of traces with relative times (UTC)");
  cmd->add_option("--plan-depth", o->plan_depth, "Blocked jobs that get exact reservations (rota, fifo)");
  cmd->add_flag("--no-preemption", o->no_preemption, "Turn preemption off for the rota policy");
  cmd->add_option("--set", o->settings,
                  "Change a policy setting, e.g. weight.age=2000 or age_max=7d (repeatable)");
  cmd->add_option("--outcomes", o->outcomes, "Write every job's submit, start and end to this CSV file");
  cmd->add_option("--bookings", o->bookings,
                  "Bookings to replay: CSV with user,gpus,start,end,show (times in the trace's time base)");
  cmd->add_option("--book-rate", o->book_rate, "Generate this many bookings per day (2-8 h, 1-2 GPUs)");
  cmd->add_option("--no-show", o->no_show, "Fraction of generated bookings whose owner does not come")
      ->capture_default_str();
  cmd->add_option("--book-ahead", o->book_ahead, "How long before its start a booking is made")
      ->capture_default_str();
  cmd->add_option("--predict", o->predict,
                  "Foresee the start of every Nth job when it arrives and report the forecasts' errors");
  cmd->add_flag("--no-arrivals", o->no_arrivals,
                "With --predict: forecasts know only the jobs queued, not the last week's arrivals again");
  cmd->add_flag("--json", o->json, "Print JSON");
  cmd->callback([options, o, exit_code] { *exit_code = RunSimulate(*options, *o); });
}

}  // namespace rota::cli
