// Tested by lab_history_test.cc and tests/daemon/test_simulate_store.py.
#include "replay/lab_history.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "replay/replay_json.h"
#include "sim/tune.h"

namespace rota::replay {

namespace {

nlohmann::json Head(const StoreTrace& st) {
  return {{"jobs", st.trace.jobs.size()},
          {"skipped", st.trace.skipped},
          {"gpus", st.gpus},
          {"mig_slices", MigSlices(st.cards)},
          {"notes", st.trace.notes},
          {"late_days", st.late_days}};
}

}  // namespace

StatusOr<StoreTrace> LoadHistory(const Call& call, const std::string& since) {
  StatusOr<nlohmann::json> gpus = call({{"op", "gpus"}});
  if (!gpus.ok()) return gpus.status();
  std::vector<nlohmann::json> jobs;
  Time read_since = 0;
  nlohmann::json request = {{"op", "history"}, {"since", since}, {"all", true}};
  while (true) {
    StatusOr<nlohmann::json> reply = call(request);
    if (!reply.ok()) return reply.status();
    if (auto j = reply->find("jobs"); j != reply->end() && j->is_array()) {
      for (auto& job : *j) jobs.push_back(std::move(job));
    }
    if (auto s = reply->find("since"); s != reply->end() && s->is_number_integer())
      read_since = s->get<Time>();
    auto next = reply->find("next");
    if (next == reply->end() || !next->is_string()) break;
    request["after"] = *next;
  }
  StatusOr<StoreTrace> out = StoreTraceFromJson(*gpus, jobs, read_since);
  if (!out.ok()) return out;
  // The bookings of the same days: from the first submission to the last end.
  Time from = kNever, to = 0;
  for (const sim::TraceJob& j : out->trace.jobs) from = std::min(from, j.submit);
  for (const sim::JobOutcome& o : out->recorded) to = std::max(to, o.end);
  StatusOr<nlohmann::json> bookings =
      call({{"op", "bookings"}, {"all", true}, {"from", from}, {"to", to + 1}});
  if (!bookings.ok()) return bookings.status();
  out->bookings = StoreBookingsFromJson(*bookings, to + 1);
  return out;
}

sim::SimConfig HistoryConfig(const StoreTrace& st, const Policy& policy) {
  sim::SimConfig config;
  config.gpus = st.gpus;
  config.gpus_per_node = st.gpus;
  config.gpu_memory = st.gpu_memory;
  config.cards = st.cards;
  config.policy = policy;
  config.estimates = sim::Estimates::kRecorded;
  config.bookings = st.bookings;
  config.keep_outcomes = true;
  return config;
}

StatusOr<nlohmann::json> ReplayHistoryJson(const StoreTrace& st, const Policy& policy,
                                           const std::atomic<bool>* stop) {
  nlohmann::json out = Head(st);
  out["results"] = nlohmann::json::array();
  sim::SimConfig config = HistoryConfig(st, policy);
  config.stop = stop;
  for (Algorithm a : kAlgorithms) {
    config.policy.algorithm = a;
    const auto began = std::chrono::steady_clock::now();
    StatusOr<sim::SimResult> r = sim::Simulate(st.trace, config);
    if (!r.ok()) return r.status();
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    out["results"].push_back(ResultJson(*r, wall, true));
  }
  out["recorded"] = RecordedJson(st.recorded, st.gpus);
  return out;
}

StatusOr<nlohmann::json> TuneHistoryJson(const StoreTrace& st, const Policy& policy,
                                         const std::atomic<bool>* stop) {
  sim::SimConfig config = HistoryConfig(st, policy);
  config.stop = stop;
  StatusOr<sim::TuneResult> r = sim::Tune(st.trace, config);
  if (!r.ok()) return r.status();
  nlohmann::json out = Head(st);
  out["tried"] = r->tried;
  out["current"] = TuneFiguresJson(r->current);
  out["proposed"] = TuneFiguresJson(r->best);
  out["proposed_other_promises"] = TuneFiguresJson(r->other_promises);
  out["change"] = r->change;
  out["changes"] = r->changes;
  return out;
}

}  // namespace rota::replay
