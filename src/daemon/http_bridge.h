// The hand-over between the HTTP worker threads and the daemon's event loop. The daemon's state
// belongs to the loop thread alone, so an HTTP handler never touches it: it queues an HttpCall
// (who, what) here and waits for the loop's answer. The loop watches fd() (an eventfd, like the
// sampler's), takes the queued calls after each wake-up and answers them through their promise
// from the same path as socket requests (RequestPipeline: the checks, the handlers, group-committed submissions).
//
// Thread-safety: Call() and Close() from any thread; Take() from the loop thread only.
#pragma once

#include <chrono>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "core/status.h"
#include "web/auth_state.h"

namespace rota::daemon {

struct HttpCall {
  bool metrics = false;                 // the scheduler's part of GET /metrics (reply: {"text": ...})
  std::optional<web::Principal> who;    // nullopt: anonymous (public_read)
  nlohmann::json request;               // an API request with "op" (docs/api.md)
  std::promise<nlohmann::json> reply;   // set once, by the loop thread
};

class HttpBridge {
 public:
  static StatusOr<std::unique_ptr<HttpBridge>> Create();
  ~HttpBridge();
  HttpBridge(const HttpBridge&) = delete;
  HttpBridge& operator=(const HttpBridge&) = delete;

  // Readable when calls are queued.
  int fd() const { return event_fd_; }

  // Any thread: queues `call` and waits up to `deadline` for its reply. An "unavailable" error
  // reply when the loop did not answer in time or the bridge is closed (the loop still answers
  // the call later, into a promise nobody reads).
  nlohmann::json Call(std::shared_ptr<HttpCall> call, std::chrono::milliseconds deadline);

  // Loop thread: the queued calls, oldest first; clears the eventfd.
  std::vector<std::shared_ptr<HttpCall>> Take();

  // Refuses new calls and answers the queued ones with "unavailable" (shutting down).
  void Close();

 private:
  explicit HttpBridge(int fd) : event_fd_(fd) {}

  int event_fd_;
  std::mutex mu_;
  bool closed_ = false;                              // GUARDED_BY(mu_)
  std::deque<std::shared_ptr<HttpCall>> queue_;      // GUARDED_BY(mu_)
};

}  // namespace rota::daemon
