// Tested by prediction_test.cc.
#include "sim/prediction.h"

#include <algorithm>
#include <cstdlib>

#include "sim/metrics.h"

namespace rota::sim {

namespace {

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return NearestRankPercentile(v, 50);
}

}  // namespace

PredictionMetrics ComputePredictionMetrics(const std::vector<PredictionRecord>& records) {
  PredictionMetrics m;
  std::vector<double> limit, forecast, ahead, wait, waited_limit, waited_forecast;
  std::int64_t covered = 0, waited_covered = 0;
  for (const PredictionRecord& r : records) {
    if (r.actual == kNever) continue;
    ++m.samples;
    wait.push_back(static_cast<double>(r.actual - r.at));
    auto error = [&r](Time t) { return static_cast<double>(std::llabs(r.actual - t)); };
    if (r.actual > r.at) {
      ++m.waited;
      if (r.limit_plan != kNever) waited_limit.push_back(error(r.limit_plan));
      if (r.forecast != kNever) waited_forecast.push_back(error(r.forecast));
      waited_covered += r.p90 != kNever && r.actual <= r.p90;
    }
    if (r.limit_plan == kNever) {
      ++m.unknown_limit;
    } else {
      limit.push_back(error(r.limit_plan));
    }
    if (r.forecast == kNever) {
      ++m.unknown_forecast;
    } else {
      forecast.push_back(error(r.forecast));
    }
    if (r.p90 != kNever) {
      covered += r.actual <= r.p90;
      ahead.push_back(static_cast<double>(r.p90 - r.at));
    }
  }
  m.error_limit = Median(limit);
  m.error_forecast = Median(forecast);
  m.p90_ahead = Median(ahead);
  m.actual_wait = Median(wait);
  m.waited_error_limit = Median(waited_limit);
  m.waited_error_forecast = Median(waited_forecast);
  m.waited_p90_coverage =
      m.waited > 0 ? static_cast<double>(waited_covered) / static_cast<double>(m.waited) : 0;
  m.p90_coverage = m.samples > 0 ? static_cast<double>(covered) / static_cast<double>(m.samples) : 0;
  return m;
}

}  // namespace rota::sim
