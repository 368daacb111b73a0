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
  // One batch: waits up to `timeout_ms` (-1: for ever, 0: not at all) for events, runs their
  // callbacks and then the idle hook (also when none came). Returns how many events came, -1
  // when the wait failed (other than EINTR). For tests that drive a daemon in-process.
  int RunOnce(int timeout_ms);

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

// A one-shot CLOCK_MONOTONIC timer on a loop (a timerfd): Arm(ns) runs `fired` once, `ns` from
// now, on the loop's thread. Arming one that is armed already does nothing: the first deadline
// stands.
class OneShotTimer {
 public:
  // `loop` must outlive the timer.
  static StatusOr<std::unique_ptr<OneShotTimer>> Create(EventLoop& loop, std::function<void()> fired);
  ~OneShotTimer();  // taken off the loop and closed
  OneShotTimer(const OneShotTimer&) = delete;
  OneShotTimer& operator=(const OneShotTimer&) = delete;

  void Arm(long long ns);
  bool armed() const { return armed_; }

 private:
  OneShotTimer(EventLoop& loop, int fd, std::function<void()> fired)
      : loop_(loop), fd_(fd), fired_(std::move(fired)) {}
  void Fire();

  EventLoop& loop_;
  int fd_;
  bool armed_ = false;
  std::function<void()> fired_;
};

}  // namespace rota::daemon
