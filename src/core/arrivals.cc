// Tested by arrivals_test.cc.
#include "core/arrivals.h"

#include <algorithm>

namespace rota {

bool ArrivalsOvertake(const Policy& policy) { return policy.algorithm == Algorithm::kRota; }

std::vector<Job> RepeatArrivals(const std::vector<Job>& recent, Time now, JobId first_id,
                                const ArrivalOptions& options) {
  std::vector<Job> out;
  const Duration period = std::max<Duration>(1, options.period);
  if (options.horizon <= 0) return out;
  for (const Job& j : recent) {
    if (j.submit_time <= now - period || j.submit_time > now) continue;
    for (Time t = j.submit_time + period; t <= now + options.horizon; t += period) {
      Job a = j;
      a.submit_time = t;
      a.after.clear();
      a.after_ok.clear();
      out.push_back(std::move(a));
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Job& a, const Job& b) { return a.submit_time < b.submit_time; });
  JobId id = first_id;
  for (Job& a : out) a.id = id++;
  return out;
}

}  // namespace rota
