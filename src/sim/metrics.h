// Replay statistics: waiting times, completion times, utilisation and fairness of one replay.
//
// Computed from the outcome of every job once a replay is over. All times are in seconds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/types.h"

namespace rota::sim {

// What happened to one job in a replay.
struct JobOutcome {
  std::int64_t id = 0;
  std::string user;
  rota::Time submit = 0;
  rota::Time start = 0;  // REQUIRES: start >= submit
  rota::Time end = 0;    // REQUIRES: end >= start
  double gpus = 0;       // GPU equivalents held while running, fractional for shares
};

struct Metrics {
  std::int64_t jobs = 0;
  double avg_wait = 0;  // wait = start - submit
  double p50_wait = 0;  // percentiles by nearest rank on the sorted values
  double p99_wait = 0;
  double max_wait = 0;
  double avg_jct = 0;  // job completion time = end - submit
  double p99_jct = 0;
  rota::Duration makespan = 0;  // last end - first submit
  double utilisation = 0;       // busy GPU-seconds / (total_gpus * makespan); 0 when either is 0
  // Jain's index J = (sum x)^2 / (n * sum x^2) over users, x being each user's mean wait
  // (jain_wait) or mean bounded slowdown (wait + run) / max(run, 10 s) (jain_slowdown).
  // 1 when all x are 0; -1 when there are fewer than 2 users.
  double jain_wait = -1;
  double jain_slowdown = -1;
  int users = 0;  // distinct user names (the empty name counts as one user)
};

// Summarises a replay on a cluster of `total_gpus` GPUs. Empty input gives all zeros and -1 for
// the Jain indexes.
Metrics ComputeMetrics(const std::vector<JobOutcome>& outcomes, double total_gpus);

// Nearest-rank percentile (p in (0, 100]) of `sorted` (ascending): the value at rank ceil(p/100*n).
// 0 for an empty vector.
double NearestRankPercentile(const std::vector<double>& sorted, double p);

// Jain's fairness index of `x` as defined above; -1 for fewer than 2 values.
double JainIndex(const std::vector<double>& x);

}  // namespace rota::sim
