// What rotad counts of its own work since it started, for `rota status` and GET /metrics: how
// long jobs waited, how long scheduling passes took (as Slurm's sdiag shows its cycles), jobs
// started and ended (by how they ended), and the seconds cards spent with no job. A part of the
// daemon that owns its state: the daemon tells it what happened, it keeps the sums. Not
// thread-safe (the daemon's loop thread). Tested by counters_test.cc.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "core/types.h"
#include "web/metrics_text.h"

namespace rota::daemon {

class SchedulerCounters {
 public:
  // A job or session started at `now`, submitted at `submit` (0: unknown, not timed).
  void JobStarted(Time submit, Time now);
  // A job ended (or was requeued): "completed", "failed", ..., "requeued".
  void JobEnded(const std::string& how);
  // A scheduling pass took `seconds` (wall time).
  void PassTook(double seconds);
  // The pending jobs were explained (every one ranked and described): in a pass that needed it,
  // or on demand after passes that did not (Daemon::ExplainWaiting).
  void Explained() { ++explained_; }
  // A card sample at `now` found `idle` cards with no job: they have been idle since the last one.
  void CardsSampled(std::size_t idle, Time now);

  // `rota status`'s "scheduler": {"passes", "last_ms", "mean_ms", "max_ms", "explained"}.
  nlohmann::json PassesJson() const;
  // The families of GET /metrics: the wait and pass histograms and the started and ended
  // totals (WriteRuns), the idle card-seconds (WriteIdle).
  void WriteRuns(web::MetricsWriter& w) const;
  void WriteIdle(web::MetricsWriter& w) const;

  std::uint64_t started() const { return started_; }
  double idle_gpu_seconds() const { return idle_gpu_seconds_; }

 private:
  web::Histogram wait_seconds_{{60, 300, 900, 1800, 3600, 7200, 14400, 28800, 86400, 259200}};
  web::Histogram pass_seconds_{{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 1}};
  double pass_last_seconds_ = 0;
  double pass_max_seconds_ = 0;
  std::uint64_t started_ = 0;
  std::uint64_t explained_ = 0;
  std::map<std::string, std::uint64_t> ended_;  // by how they ended
  double idle_gpu_seconds_ = 0;
  Time idle_counted_at_ = 0;
};

}  // namespace rota::daemon
