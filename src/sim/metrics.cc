// Tested by metrics_test.cc.
//
// Design: one pass collects waits and completion times into vectors (sorted afterwards for the
// percentiles) and per-user sums into a map keyed by user name, so the result does not depend on
// the order of `outcomes`. Bounded slowdown uses a 10 s floor on the run time so that very short
// jobs do not dominate the fairness index. Sums are in double: a year of 82k jobs stays far below
// the range where double loses whole seconds.
#include "sim/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <map>

namespace rota::sim {
namespace {

constexpr double kSlowdownFloorSeconds = 10;

struct UserSums {
  double wait = 0;
  double slowdown = 0;
  std::int64_t jobs = 0;
};

}  // namespace

double NearestRankPercentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const double n = static_cast<double>(sorted.size());
  auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * n - 1e-9));
  rank = std::clamp<std::size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

double JainIndex(const std::vector<double>& x) {
  if (x.size() < 2) return -1;
  double sum = 0;
  double sum_sq = 0;
  for (double v : x) {
    sum += v;
    sum_sq += v * v;
  }
  if (sum_sq == 0) return 1;
  return sum * sum / (static_cast<double>(x.size()) * sum_sq);
}

Metrics ComputeMetrics(const std::vector<JobOutcome>& outcomes, double total_gpus) {
  Metrics m;
  if (outcomes.empty()) return m;
  m.jobs = static_cast<std::int64_t>(outcomes.size());
  std::vector<double> waits;
  std::vector<double> jcts;
  waits.reserve(outcomes.size());
  jcts.reserve(outcomes.size());
  std::map<std::string, UserSums> users;
  rota::Time first_submit = outcomes.front().submit;
  rota::Time last_end = outcomes.front().end;
  double busy = 0;
  for (const JobOutcome& o : outcomes) {
    const auto wait = static_cast<double>(o.start - o.submit);
    const auto run = static_cast<double>(o.end - o.start);
    waits.push_back(wait);
    jcts.push_back(static_cast<double>(o.end - o.submit));
    first_submit = std::min(first_submit, o.submit);
    last_end = std::max(last_end, o.end);
    busy += o.gpus * run;
    UserSums& u = users[o.user];
    u.wait += wait;
    u.slowdown += (wait + run) / std::max(run, kSlowdownFloorSeconds);
    ++u.jobs;
  }
  std::sort(waits.begin(), waits.end());
  std::sort(jcts.begin(), jcts.end());
  double wait_sum = 0;
  for (double w : waits) wait_sum += w;
  double jct_sum = 0;
  for (double j : jcts) jct_sum += j;
  const auto n = static_cast<double>(outcomes.size());
  m.avg_wait = wait_sum / n;
  m.p50_wait = NearestRankPercentile(waits, 50);
  m.p99_wait = NearestRankPercentile(waits, 99);
  m.max_wait = waits.back();
  m.avg_jct = jct_sum / n;
  m.p99_jct = NearestRankPercentile(jcts, 99);
  m.makespan = std::max<rota::Duration>(0, last_end - first_submit);
  if (total_gpus > 0 && m.makespan > 0) {
    m.utilisation = busy / (total_gpus * static_cast<double>(m.makespan));
  }
  m.users = static_cast<int>(users.size());
  std::vector<double> mean_wait;
  std::vector<double> mean_slowdown;
  for (const auto& [name, u] : users) {
    const auto k = static_cast<double>(u.jobs);
    mean_wait.push_back(u.wait / k);
    mean_slowdown.push_back(u.slowdown / k);
  }
  m.jain_wait = JainIndex(mean_wait);
  m.jain_slowdown = JainIndex(mean_slowdown);
  return m;
}

}  // namespace rota::sim
