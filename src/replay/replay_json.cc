// Tested by replay_json_test.cc and tests/daemon/test_simulate_store.py.
#include "replay/replay_json.h"

namespace rota::replay {

namespace {

nlohmann::json BookingsJson(const sim::BookingMetrics& b) {
  return {{"requested", b.requested},
          {"confirmed", b.confirmed},
          {"refused", b.refused},
          {"refused_rules", b.refused_rules},
          {"refused_no_room", b.refused_no_room},
          {"needs_admin", b.needs_admin},
          {"shows", b.shows},
          {"used", b.used},
          {"no_shows", b.no_shows},
          {"no_show_owner_blocked", b.no_show_owner_blocked},
          {"owner_elsewhere", b.owner_elsewhere},
          {"overruns", b.overruns},
          {"booked_gpu_hours", b.booked_gpu_hours},
          {"used_gpu_hours", b.used_gpu_hours},
          {"released_gpu_hours", b.released_gpu_hours},
          {"lent_gpu_hours", b.lent_gpu_hours},
          {"in_way_gpu_hours", b.in_way_gpu_hours},
          {"idle_gpu_hours", b.idle_gpu_hours},
          {"elsewhere_gpu_hours", b.elsewhere_gpu_hours},
          {"avg_wait_with", b.avg_wait_with},
          {"avg_wait_without", b.avg_wait_without},
          {"others_avg_wait_with", b.others_avg_wait_with},
          {"others_avg_wait_without", b.others_avg_wait_without},
          {"others_jobs", b.others_jobs}};
}

nlohmann::json PredictionJson(const sim::PredictionMetrics& p) {
  return {{"samples", p.samples},
          {"unknown_limit", p.unknown_limit},
          {"unknown_forecast", p.unknown_forecast},
          {"median_error_limit", p.error_limit},
          {"median_error_forecast", p.error_forecast},
          {"p90_coverage", p.p90_coverage},
          {"median_p90_ahead", p.p90_ahead},
          {"median_wait", p.actual_wait},
          {"waited", p.waited},
          {"waited_median_error_limit", p.waited_error_limit},
          {"waited_median_error_forecast", p.waited_error_forecast},
          {"waited_p90_coverage", p.waited_p90_coverage}};
}
}  // namespace

nlohmann::json PerUserJson(const std::vector<sim::JobOutcome>& outcomes) {
  nlohmann::json out = nlohmann::json::array();
  for (const sim::UserWaits& u : sim::PerUserWaits(outcomes)) {
    out.push_back({{"user", u.user}, {"jobs", u.jobs}, {"avg_wait", u.avg_wait}, {"p99_wait", u.p99_wait}});
  }
  return out;
}

nlohmann::json ResultJson(const sim::SimResult& r, double wall_seconds, bool per_user) {
  const sim::Metrics& m = r.metrics;
  const sim::IdleGpuSeconds& idle = r.idle;
  nlohmann::json out = {{"policy", r.policy},
                        {"wall_seconds", wall_seconds},
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
                        {"users", m.users},
                        {"idle_gpu_seconds",
                         {{"held", idle.held},
                          {"booking", idle.booking},
                          {"quota", idle.quota},
                          {"fragmented", idle.fragmented},
                          {"draining", idle.draining},
                          {"no_work", idle.no_work}}}};
  if (r.has_bookings) out["bookings"] = BookingsJson(r.bookings);
  if (r.has_prediction) {
    out["prediction"] = PredictionJson(r.prediction);
    out["prediction"]["foresaw_arrivals"] = r.foresaw_arrivals;
  }
  if (per_user) out["per_user"] = PerUserJson(r.outcomes);
  return out;
}

nlohmann::json RecordedJson(const std::vector<sim::JobOutcome>& recorded, int gpus) {
  const sim::Metrics m = sim::ComputeMetrics(recorded, static_cast<double>(gpus));
  return {{"jobs", m.jobs},
          {"avg_wait", m.avg_wait},
          {"p50_wait", m.p50_wait},
          {"p99_wait", m.p99_wait},
          {"max_wait", m.max_wait},
          {"jain_wait", m.jain_wait},
          {"per_user", PerUserJson(recorded)}};
}

nlohmann::json TuneFiguresJson(const sim::TuneCandidate& c) {
  const sim::Metrics& m = c.result.metrics;
  return {{"weights",
           {{"tier", c.weights.tier},
            {"fairshare", c.weights.fairshare},
            {"age", c.weights.age},
            {"size", c.weights.size},
            {"penalty", c.weights.penalty}}},
          {"time_of_day", c.time_of_day},
          {"size_by", c.size_by_prediction ? "prediction" : "limit"},
          {"promise_slack", c.promise_slack},
          {"avg_wait", m.avg_wait},
          {"p99_wait", m.p99_wait},
          {"max_wait", m.max_wait},
          {"utilisation", m.utilisation},
          {"jain_slowdown", m.jain_slowdown},
          {"per_user", PerUserJson(c.result.outcomes)}};
}

}  // namespace rota::replay
