// The page's replays of the lab's own history (issue 29): ops `replay` (anyone: fifo, backfill
// and rota on this server's cards, each user's waits beside the recorded ones) and `tune`
// (admins: `rota tune`'s grid). The history is read on the event loop (the store's pages, as
// op `history` reads them); the replays, pure and seconds long on a busy lab's weeks, run on one
// worker thread, so rotad keeps answering meanwhile. One runs at a time; the page asks again
// until it is done, and a result is given again for ten minutes unless a fresh one is asked for.
// The replay is stopped and joined when rotad stops. Tested by replay_desk_test.cc and
// tests/daemon/test_simulate_store.py.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "core/policy.h"
#include "core/status.h"
#include "core/types.h"
#include "replay/store_trace.h"

namespace rota::daemon {

class ReplayDesk {
 public:
  enum class Kind { kReplay, kTune };
  struct Setup {
    // The lab's history since `since` ("14d", a date: as op `history` reads it).
    std::function<StatusOr<replay::StoreTrace>(const std::string& since)> history;
    std::function<Policy()> policy;  // the policy in force (a copy: the worker keeps it)
  };
  static constexpr Duration kFresh = 10 * kMinute;  // a result given again without a new replay

  explicit ReplayDesk(Setup setup);
  ~ReplayDesk();  // stops a replay under way and waits for its thread
  ReplayDesk(const ReplayDesk&) = delete;
  ReplayDesk& operator=(const ReplayDesk&) = delete;

  // The op's reply: {"state": "running", "started"} while the replay runs, {"state": "done",
  // "made", "took", "result"} when it has; an error reply for bad input, a history with nothing
  // to replay, or another replay under way.
  nlohmann::json Ask(Kind kind, const nlohmann::json& request, Time now);

  bool busy() const { return worker_ != nullptr; }

 private:
  struct Key {
    Kind kind;
    std::string since;
    bool operator<(const Key& o) const { return std::tie(kind, since) < std::tie(o.kind, o.since); }
  };
  struct Done {
    Time made = 0;
    double took = 0;
    StatusOr<nlohmann::json> result = nlohmann::json();
  };
  struct Worker {
    Key key;
    Time started = 0;
    std::thread thread;
    std::atomic<bool> finished{false};                // out and took are written: the thread may be joined
    StatusOr<nlohmann::json> out = nlohmann::json();  // read only after the join
    double took = 0;
  };
  void Collect(Time now);  // a finished worker's result into done_
  static nlohmann::json Reply(const Key& key, const Done& d);
  static nlohmann::json Running(const Key& key, Time started);

  Setup setup_;
  std::atomic<bool> stop_{false};
  std::unique_ptr<Worker> worker_;
  std::map<Key, Done> done_;
};

const char* ReplayKindName(ReplayDesk::Kind kind);

}  // namespace rota::daemon
