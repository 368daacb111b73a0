#include "daemon/counters.h"

#include <algorithm>

namespace rota::daemon {

void SchedulerCounters::JobStarted(Time submit, Time now) {
  ++started_;
  if (submit > 0 && now >= submit) wait_seconds_.Observe(static_cast<double>(now - submit));
}

void SchedulerCounters::JobEnded(const std::string& how) { ++ended_[how]; }

void SchedulerCounters::PassTook(double seconds) {
  pass_seconds_.Observe(seconds);
  pass_last_seconds_ = seconds;
  pass_max_seconds_ = std::max(pass_max_seconds_, seconds);
}

void SchedulerCounters::CardsSampled(std::size_t idle, Time now) {
  if (idle_counted_at_ > 0 && now > idle_counted_at_) {
    idle_gpu_seconds_ += static_cast<double>(idle) * static_cast<double>(now - idle_counted_at_);
  }
  idle_counted_at_ = now;
}

nlohmann::json SchedulerCounters::PassesJson() const {
  const std::uint64_t passes = pass_seconds_.count();
  return {{"passes", passes},
          {"last_ms", pass_last_seconds_ * 1e3},
          {"mean_ms", passes ? pass_seconds_.sum() / static_cast<double>(passes) * 1e3 : 0.0},
          {"max_ms", pass_max_seconds_ * 1e3},
          {"explained", explained_}};
}

void SchedulerCounters::WriteRuns(web::MetricsWriter& w) const {
  w.Family("rota_job_wait_seconds", "histogram", "Time from submission to start of the jobs started since rotad started.");
  w.HistogramSamples("rota_job_wait_seconds", {}, wait_seconds_);
  w.Family("rota_schedule_pass_seconds", "histogram", "How long each scheduling pass took since rotad started.");
  w.HistogramSamples("rota_schedule_pass_seconds", {}, pass_seconds_);
  w.Family("rota_schedule_explained_total", "counter",
           "Times the waiting jobs were explained (reasons and expected starts) since rotad started.");
  w.Sample("rota_schedule_explained_total", {}, static_cast<double>(explained_));
  w.Family("rota_jobs_started_total", "counter", "Jobs and sessions started since rotad started.");
  w.Sample("rota_jobs_started_total", {}, static_cast<double>(started_));
  w.Family("rota_jobs_ended_total", "counter", "Jobs and sessions ended since rotad started, by how they ended.");
  for (const auto& [how, n] : ended_) w.Sample("rota_jobs_ended_total", {{"reason", how}}, static_cast<double>(n));
}

void SchedulerCounters::WriteIdle(web::MetricsWriter& w) const {
  w.Family("rota_idle_gpu_seconds_total", "counter", "Seconds cards spent with no job on them, summed over cards, since rotad started.");
  w.Sample("rota_idle_gpu_seconds_total", {}, idle_gpu_seconds_);
}

}  // namespace rota::daemon
