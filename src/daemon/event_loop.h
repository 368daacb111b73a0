// The daemon's single-threaded event loop: epoll over file descriptors (the listening socket,
// client connections, shepherd pidfds, a signalfd, a timerfd), each with a callback. Nothing in
// rotad polls on a timer of its own: it sleeps in epoll_wait until something happens.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>

#include "core/status.h"

namespace rota::daemon {

class EventLoop {
 public:
  using Callback = std::function<void(std::uint32_t events)>;

  static StatusOr<std::unique_ptr<EventLoop>> Create();
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // Watches `fd` for `events` (EPOLLIN, EPOLLOUT, ...). The loop does not own the fd; call
  // Remove before closing it. Removing (and even re-adding the same fd number) from inside a
  // callback is safe: events queued for the old registration are dropped.
  Status Add(int fd, std::uint32_t events, Callback callback);
  Status Modify(int fd, std::uint32_t events);
  void Remove(int fd);

  // Called once after each batch of events, before sleeping again (the daemon runs its
  // scheduling pass here, so a burst of events costs one pass).
  void SetIdleHook(std::function<void()> hook) { idle_hook_ = std::move(hook); }

  // Runs until Stop() is called from a callback.
  void Run();
  void Stop() { running_ = false; }

 private:
  explicit EventLoop(int epfd) : epfd_(epfd) {}

  struct Entry {
    int fd;
    Callback callback;
  };
  int epfd_;
  bool running_ = false;
  std::uint64_t next_token_ = 1;
  std::unordered_map<std::uint64_t, Entry> entries_;  // by token (epoll data)
  std::unordered_map<int, std::uint64_t> token_of_fd_;
  std::function<void()> idle_hook_;
};

}  // namespace rota::daemon
