// The figures of a replay and of a tuning as JSON: one shape for `rota simulate --json`,
// `rota tune --json` and rotad's op `replay` (the page's Replay tab), so the page and the command
// line cannot drift apart (docs/api.md, "replay"). Tested by replay_json_test.cc and
// tests/daemon/test_simulate_store.py.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "sim/simulator.h"
#include "sim/tune.h"

namespace rota::replay {

// Each user's waits in a replay (or as recorded): [{"user", "jobs", "avg_wait", "p99_wait"}].
nlohmann::json PerUserJson(const std::vector<sim::JobOutcome>& outcomes);

// One policy's replay: waits, utilisation, fairness, idle capacity by cause, the bookings' and the
// forecasts' figures where the replay has them, and each user's waits when `per_user`.
nlohmann::json ResultJson(const sim::SimResult& r, double wall_seconds, bool per_user);

// The lab's jobs as they really waited, on `gpus` cards.
nlohmann::json RecordedJson(const std::vector<sim::JobOutcome>& recorded, int gpus);

// One configuration tried by `rota tune`: its weights, table and size basis, and its figures.
nlohmann::json TuneFiguresJson(const sim::TuneCandidate& c);

}  // namespace rota::replay
