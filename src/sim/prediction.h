// How good start forecasts are (issue 29): the replay records, for a sample of jobs, what was
// foreseen when each arrived (the plan on time limits, as Slurm estimates; the forecast on
// predicted run times, which is the p50; the p90) and when it really started, and sums up the errors.
// Tested by prediction_test.cc and simulator_test.cc.
#pragma once

#include <cstdint>
#include <vector>

#include "core/types.h"

namespace rota::sim {

struct PredictionRecord {
  rota::Time at = 0;                     // when it was foreseen (the job's arrival)
  rota::Time limit_plan = rota::kNever;  // the plan on time limits
  rota::Time forecast = rota::kNever;    // the plan on predicted run times
  rota::Time p90 = rota::kNever;
  rota::Time actual = rota::kNever;  // kNever: never started
};

struct PredictionMetrics {
  std::int64_t samples = 0;        // sampled jobs that started
  std::int64_t unknown_limit = 0;  // ... of which the plan on limits foresaw no start
  std::int64_t unknown_forecast = 0;
  // Median absolute error in seconds, over the samples where that estimate was known.
  double error_limit = 0;
  double error_forecast = 0;
  double p90_coverage = 0;  // share of samples that started by their p90 (unknown p90: a miss)
  double p90_ahead = 0;     // median of p90 - arrival: how far ahead the p90 reaches
  double actual_wait = 0;   // median wait of the samples, for scale
  // The same errors over the samples that did not start when they arrived (where there is a
  // wait to foresee; on a lightly loaded cluster most jobs start at once, and every estimate
  // says so).
  std::int64_t waited = 0;
  double waited_error_limit = 0;
  double waited_error_forecast = 0;
  double waited_p90_coverage = 0;
};

PredictionMetrics ComputePredictionMetrics(const std::vector<PredictionRecord>& records);

}  // namespace rota::sim
