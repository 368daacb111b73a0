// Tested by replay_desk_test.cc and tests/daemon/test_simulate_store.py.
#include "daemon/replay_desk.h"

#include <chrono>

#include "api/protocol.h"
#include "replay/lab_history.h"

namespace rota::daemon {

using nlohmann::json;

const char* ReplayKindName(ReplayDesk::Kind kind) {
  return kind == ReplayDesk::Kind::kTune ? "tune" : "replay";
}

ReplayDesk::ReplayDesk(Setup setup) : setup_(std::move(setup)) {}

ReplayDesk::~ReplayDesk() {
  stop_ = true;
  if (worker_ && worker_->thread.joinable()) worker_->thread.join();
}

void ReplayDesk::Collect(Time now) {
  if (!worker_ || !worker_->finished.load()) return;
  worker_->thread.join();  // orders the thread's writes before these reads
  Done d;
  d.made = now;
  d.result = std::move(worker_->out);
  d.took = worker_->took;
  done_[worker_->key] = std::move(d);
  worker_.reset();
  // Old results go: only what was asked for in the last while is worth keeping.
  for (auto it = done_.begin(); it != done_.end();) {
    it = now - it->second.made > kFresh ? done_.erase(it) : std::next(it);
  }
}

json ReplayDesk::Running(const Key& key, Time started) {
  return api::OkReply(
      {{"kind", ReplayKindName(key.kind)}, {"since", key.since}, {"state", "running"}, {"started", started}});
}

json ReplayDesk::Reply(const Key& key, const Done& d) {
  if (!d.result.ok()) return api::ErrorReply(d.result.status());
  return api::OkReply({{"kind", ReplayKindName(key.kind)},
                       {"since", key.since},
                       {"state", "done"},
                       {"made", d.made},
                       {"took", d.took},
                       {"result", *d.result}});
}

json ReplayDesk::Ask(Kind kind, const json& request, Time now) {
  Key key{kind, "14d"};
  bool fresh = false;
  if (request.is_object()) {
    if (auto s = request.find("since"); s != request.end()) {
      if (!s->is_string() || s->get<std::string>().empty())
        return api::ErrorReply(InvalidArgument("\"since\" must be a time such as \"14d\" or \"2026-11-01\""));
      key.since = s->get<std::string>();
    }
    if (auto f = request.find("fresh"); f != request.end()) {
      if (!f->is_boolean()) return api::ErrorReply(InvalidArgument("\"fresh\" must be true or false"));
      fresh = f->get<bool>();
    }
  }
  Collect(now);
  if (worker_) {
    if (worker_->key.kind == key.kind && worker_->key.since == key.since)
      return Running(key, worker_->started);
    return api::ErrorReply(ResourceExhausted(std::string("a replay of the lab's history is under way (") +
                                             ReplayKindName(worker_->key.kind) + " since " +
                                             worker_->key.since + "): ask again when it has finished"));
  }
  if (auto it = done_.find(key); it != done_.end() && !fresh && now - it->second.made <= kFresh) {
    return Reply(key, it->second);
  }
  // Read here, on the loop (the store is the loop's); replayed on the worker.
  StatusOr<replay::StoreTrace> history = setup_.history(key.since);
  if (!history.ok()) return api::ErrorReply(history.status());
  auto w = std::make_unique<Worker>();
  w->key = key;
  w->started = now;
  Worker* raw = w.get();
  const std::atomic<bool>* stop = &stop_;
  try {
    w->thread = std::thread([raw, stop, kind, st = std::move(*history), policy = setup_.policy()] {
      const auto began = std::chrono::steady_clock::now();
      StatusOr<json> out = kind == Kind::kTune ? replay::TuneHistoryJson(st, policy, stop)
                                               : replay::ReplayHistoryJson(st, policy, stop);
      const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
      raw->out = std::move(out);
      raw->took = took;
      raw->finished = true;
    });
  } catch (const std::system_error& e) {
    return api::ErrorReply(Unavailable(std::string("cannot start the replay: ") + e.what()));
  }
  worker_ = std::move(w);
  return Running(key, now);
}

}  // namespace rota::daemon
