// Tested by tune_test.cc.
#include "sim/tune.h"

#include <algorithm>
#include <cstdio>
#include <set>

namespace rota::sim {

namespace {

std::vector<double> Values(std::vector<double> grid, double current) {
  grid.push_back(current);
  std::sort(grid.begin(), grid.end());
  grid.erase(std::unique(grid.begin(), grid.end()), grid.end());
  return grid;
}

// Whether `c` keeps what the lab has: the p99 wait no worse, utilisation within a point, fairness
// within 0.01 (where there are users to compare).
bool Keeps(const Metrics& c, const Metrics& base) {
  if (c.p99_wait > base.p99_wait) return false;
  if (c.utilisation < base.utilisation - 0.01) return false;
  if (base.jain_slowdown >= 0 && c.jain_slowdown < base.jain_slowdown - 0.01) return false;
  return true;
}

std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

StatusOr<TuneResult> Tune(const Trace& trace, const SimConfig& base) {
  SimConfig config = base;
  config.policy.algorithm = Algorithm::kRota;
  config.keep_outcomes = true;
  config.predict_every = 0;
  TuneResult out;
  const Duration slack = config.policy.promise_slack;
  auto replay = [&](const Weights& w, bool time_of_day, bool by_prediction,
                    Duration promise_slack) -> StatusOr<TuneCandidate> {
    SimConfig c = config;
    c.policy.weights = w;
    if (!time_of_day) c.policy.time_of_day.clear();
    c.policy.size_by_prediction = by_prediction;
    c.policy.promise_slack = promise_slack;
    StatusOr<SimResult> r = Simulate(trace, c);
    if (!r.ok()) return r.status();
    ++out.tried;
    return TuneCandidate{w, time_of_day, by_prediction, promise_slack, std::move(*r)};
  };
  const Weights& now = config.policy.weights;
  const bool has_table = !config.policy.time_of_day.empty();
  const bool by_prediction = config.policy.size_by_prediction;
  StatusOr<TuneCandidate> current = replay(now, has_table, by_prediction, slack);
  if (!current.ok()) return current.status();
  out.current = *current;
  out.best = out.current;
  for (double fairshare : Values({0, 500, 1000, 2000}, now.fairshare)) {
    for (double age : Values({0, 250, 500, 1000, 2000}, now.age)) {
      for (double size : Values({0, 1000, 2000}, now.size)) {
        for (bool table : has_table ? std::vector<bool>{true, false} : std::vector<bool>{false}) {
          // What the size is computed on matters only where size weighs something.
          for (bool predicted : size > 0 ? std::vector<bool>{by_prediction, !by_prediction}
                                         : std::vector<bool>{by_prediction}) {
            Weights w = now;
            w.fairshare = fairshare;
            w.age = age;
            w.size = size;
            if (fairshare == now.fairshare && age == now.age && size == now.size && table == has_table &&
                predicted == by_prediction)
              continue;
            StatusOr<TuneCandidate> c = replay(w, table, predicted, slack);
            if (!c.ok()) return c.status();
            const Metrics& m = c->result.metrics;
            if (!Keeps(m, out.current.result.metrics)) continue;
            // Better: a lower average wait by more than a second (ties keep the earlier, closer to
            // the grid's start, and in the end the configuration).
            if (m.avg_wait + 1 < out.best.result.metrics.avg_wait) out.best = std::move(*c);
          }
        }
      }
    }
  }
  StatusOr<TuneCandidate> other =
      replay(out.best.weights, out.best.time_of_day, out.best.size_by_prediction, slack >= 0 ? -1 : 0);
  if (!other.ok()) return other.status();
  out.other_promises = std::move(*other);
  const Weights& b = out.best.weights;
  if (b.fairshare != now.fairshare)
    out.changes.push_back("[policy.weights] fairshare = " + Number(b.fairshare));
  if (b.age != now.age) out.changes.push_back("[policy.weights] age = " + Number(b.age));
  if (b.size != now.size) out.changes.push_back("[policy.weights] size = " + Number(b.size));
  if (out.best.time_of_day != has_table) out.changes.push_back("[policy] time_of_day = []");
  if (out.best.size_by_prediction != by_prediction) {
    out.changes.push_back(std::string("[policy] size_by = \"") + (out.best.size_by_prediction ? "prediction" : "limit") +
                          "\"");
  }
  out.change = !out.changes.empty();
  return out;
}

}  // namespace rota::sim
