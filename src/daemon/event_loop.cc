// Tested through the daemon's integration tests and event_loop_test.cc.
#include "daemon/event_loop.h"

#include <sys/epoll.h>
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
  epoll_event events[64];
  while (running_) {
    int n = epoll_wait(epfd_, events, 64, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    for (int i = 0; i < n && running_; ++i) {
      auto it = entries_.find(events[i].data.u64);
      if (it == entries_.end()) continue;  // removed by an earlier callback in this batch
      Callback cb = it->second.callback;  // a copy: the callback may remove itself
      cb(events[i].events);
    }
    if (running_ && idle_hook_) idle_hook_();
  }
}

}  // namespace rota::daemon
