// `rota tune` (issue 29): a small grid of the rota policy's weights (fair share, age, size), what
// size is measured on, and the time-of-day table (on or off), each replayed on the lab's own history, and the best of them
// proposed against the lab's configuration: the lowest average wait among those that keep the
// p99 wait no worse, GPU utilisation within a point and fairness (Jain of per-user slowdown)
// within 0.01 of what the configuration gives on the same replay. It changes nothing; the admin
// edits the configuration. Deterministic (replays are). Tested by tune_test.cc.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "sim/simulator.h"

namespace rota::sim {

struct TuneCandidate {
  Weights weights;
  bool time_of_day = true;  // the configuration's table (off: none)
  bool size_by_prediction = false;  // Policy::size_by_prediction
  Duration promise_slack = -1;      // Policy::promise_slack (-1: no promises)
  SimResult result;         // with outcomes
};

struct TuneResult {
  TuneCandidate current;             // the configuration as it is
  TuneCandidate best;                // the proposal; == current when nothing does better
  bool change = false;               // best differs from current and does better
  int tried = 0;                     // replays run
  std::vector<std::string> changes;  // "[policy.weights] age = 1000", ... (empty: keep)
  // The proposal again with promises turned the other way (kept with a slack of 0 where the lab
  // keeps none, not kept where it does): shown beside it, never proposed, since promises trade
  // the average for the longest waits (docs/design.md, step 2) and that choice is the lab's.
  TuneCandidate other_promises;
};

// The grid: fair share {0, 500, 1000, 2000}, age {0, 250, 500, 1000, 2000}, size {0, 1000, 2000}
// (the configuration's own values added), time of day as configured or off, and where size
// weighs something, the size on the limit or on the predicted run (Policy::size_by_prediction). `base` is the
// replay's configuration with the lab's policy; its algorithm is set to rota. One more replay
// gives other_promises.
StatusOr<TuneResult> Tune(const Trace& trace, const SimConfig& base);

}  // namespace rota::sim
