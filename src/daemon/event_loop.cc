// Tested through the daemon's integration tests and event_loop_test.cc.
#include "daemon/event_loop.h"

#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace rota::daemon {

StatusOr<std::unique_ptr<EventLoop>> EventLoop::Create() {
  int fd = epoll_create1(EPOLL_CLOEXEC);
  if (fd < 0) return Internal(std::string("epoll_create1: ") + std::strerror(errno));
  return std::unique_ptr<EventLoop>(new EventLoop(fd));
}

EventLoop::~EventLoop() { ::close(epfd_); }

Status EventLoop::Add(int fd, std::uint32_t events, Callback callback) {
  const std::uint64_t token = next_token_++;
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = token;
  if (epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
    return Internal("epoll_ctl(ADD, " + std::to_string(fd) + "): " + std::strerror(errno));
  }
  entries_[token] = Entry{fd, std::move(callback)};
  token_of_fd_[fd] = token;
  return Status();
}

Status EventLoop::Modify(int fd, std::uint32_t events) {
  auto it = token_of_fd_.find(fd);
  if (it == token_of_fd_.end()) return Internal("fd " + std::to_string(fd) + " is not watched");
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = it->second;
  if (epoll_ctl(epfd_, EPOLL_CTL_MOD, fd, &ev) != 0) {
    return Internal("epoll_ctl(MOD, " + std::to_string(fd) + "): " + std::strerror(errno));
  }
  return Status();
}

void EventLoop::Remove(int fd) {
  auto it = token_of_fd_.find(fd);
  if (it == token_of_fd_.end()) return;
  epoll_ctl(epfd_, EPOLL_CTL_DEL, fd, nullptr);
  entries_.erase(it->second);
  token_of_fd_.erase(it);
}

void EventLoop::Run() {
  running_ = true;
  while (running_ && RunOnce(-1) >= 0) {
  }
}

int EventLoop::RunOnce(int timeout_ms) {
  epoll_event events[64];
  const int n = epoll_wait(epfd_, events, 64, timeout_ms);
  if (n < 0) return errno == EINTR ? 0 : -1;
  running_ = true;  // a callback's Stop() ends this batch (and Run)
  for (int i = 0; i < n && running_; ++i) {
    // A copy: epoll_event is packed on x86-64, and find() would bind a reference to the
    // misaligned member (undefined behaviour, which clang's UBSan reports).
    const std::uint64_t token = events[i].data.u64;
    auto it = entries_.find(token);
    if (it == entries_.end()) continue;  // removed by an earlier callback in this batch
    Callback cb = it->second.callback;  // a copy: the callback may remove itself
    cb(events[i].events);
  }
  if (running_ && idle_hook_) idle_hook_();
  return n;
}

StatusOr<std::unique_ptr<OneShotTimer>> OneShotTimer::Create(EventLoop& loop, std::function<void()> fired) {
  const int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
  if (fd < 0) return Internal(std::string("timerfd_create: ") + std::strerror(errno));
  std::unique_ptr<OneShotTimer> t(new OneShotTimer(loop, fd, std::move(fired)));
  OneShotTimer* raw = t.get();
  if (Status s = loop.Add(fd, EPOLLIN, [raw](std::uint32_t) { raw->Fire(); }); !s.ok()) return s;
  return t;
}

OneShotTimer::~OneShotTimer() {
  loop_.Remove(fd_);
  ::close(fd_);
}

void OneShotTimer::Arm(long long ns) {
  if (armed_) return;
  itimerspec spec{};
  spec.it_value.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
  spec.it_value.tv_nsec = static_cast<long>(ns % 1'000'000'000);
  if (spec.it_value.tv_sec == 0 && spec.it_value.tv_nsec == 0) spec.it_value.tv_nsec = 1;  // 0 would disarm
  timerfd_settime(fd_, 0, &spec, nullptr);
  armed_ = true;
}

void OneShotTimer::Fire() {
  std::uint64_t expirations;
  while (::read(fd_, &expirations, sizeof expirations) > 0) {
  }
  armed_ = false;
  fired_();
}

}  // namespace rota::daemon
