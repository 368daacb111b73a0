// The lab's own history, read from rotad and replayed (issue 29): what `rota simulate
// --from-store`, `rota tune` and rotad's replay desk (the page's Replay tab) share. Reading goes
// through `call`, one request at a time: the command line's connection to rotad, or rotad's own
// handlers. Replays are pure and may run on another thread (`stop` cuts them short).
// Tested by lab_history_test.cc and tests/daemon/test_simulate_store.py.
#pragma once

#include <atomic>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "core/policy.h"
#include "core/status.h"
#include "replay/store_trace.h"
#include "sim/simulator.h"

namespace rota::replay {

using Call = std::function<StatusOr<nlohmann::json>(const nlohmann::json& request)>;

// The cards (op `gpus`), every job that ended since `since` (op `history`, everyone's, page by
// page) and the bookings of those days (op `bookings`). A bad `since` is rotad's InvalidArgument.
StatusOr<StoreTrace> LoadHistory(const Call& call, const std::string& since);

// The replay of a store's history: this server's cards as one node, the recorded limits, the
// bookings of those days, each job's outcome kept (per-user figures).
sim::SimConfig HistoryConfig(const StoreTrace& st, const Policy& policy);

// fifo, backfill and rota (each on `policy` with its algorithm set), each user's waits, and the
// waits as recorded: {"jobs", "skipped", "gpus", "notes", "results": [...], "recorded"}.
StatusOr<nlohmann::json> ReplayHistoryJson(const StoreTrace& st, const Policy& policy,
                                           const std::atomic<bool>* stop = nullptr);

// `rota tune` on the history against `policy`: {"jobs", "skipped", "gpus", "notes", "tried",
// "current", "proposed", "proposed_other_promises", "change", "changes"}.
StatusOr<nlohmann::json> TuneHistoryJson(const StoreTrace& st, const Policy& policy,
                                         const std::atomic<bool>* stop = nullptr);

}  // namespace rota::replay
