// The socket server's limits (docs/security.md, "What one user may take"): connections admitted
// per user and in all (a few kept for admins), a descriptor kept in reserve so that a connection
// can be refused even when rotad has none left, and the sweep that closes idle connections and
// requests that do not arrive whole. Tested by tests/daemon/test_attacks_load.py.
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "daemon/server.h"

namespace rota::daemon {

Status Server::SetLimits(const ServerLimits& limits) {
  if (limits.per_user < 1 || limits.total < 1 || limits.idle_ms < 1 || limits.request_ms < 1) {
    return InvalidArgument("connection limits must be positive");
  }
  limits_ = limits;
  return Status();
}

Status Server::Admit(const Peer& peer) {
  const int total = static_cast<int>(conns_.size());
  const bool privileged = handler_.Privileged(peer);
  if (privileged) {
    if (total >= limits_.total) return ResourceExhausted("rotad serves " + std::to_string(total) + " connections, its limit");
    return Status();
  }
  if (total >= limits_.total - kPrivilegedReserve) {
    return ResourceExhausted("rotad serves " + std::to_string(total) + " connections, as many as it takes from users (" +
                             "[limits] connections); try again in a moment");
  }
  auto it = per_uid_.find(peer.uid);
  if (it != per_uid_.end() && it->second >= limits_.per_user) {
    return ResourceExhausted("uid " + std::to_string(peer.uid) + " already has " + std::to_string(it->second) +
                             " connections open to rotad, its limit ([limits] connections_per_user); close some");
  }
  return Status();
}

void Server::ShedOne() {
  // No descriptor for the waiting connection: the one kept in reserve makes room to take it off
  // the queue (else the level-triggered listening socket would wake the loop at once, forever).
  if (reserve_fd_ >= 0) {
    ::close(reserve_fd_);
    reserve_fd_ = -1;
    ucred cred{};
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd >= 0) {
      socklen_t len = sizeof cred;
      const bool known = ::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0;
      const Status why = ResourceExhausted("rotad has no file descriptor left for another connection; try again in a moment");
      RefuseAtAccept(fd, why);
      if (known) handler_.OnRefused(Peer{cred.uid, cred.gid, cred.pid}, why);
    }
    KeepReserve();
    if (reserve_fd_ >= 0) return;
  }
  // Not even that: stop accepting until the next sweep (a second at most), rather than spin.
  if (!accept_paused_) {
    accept_paused_ = true;
    (void)loop_.Modify(listen_fd_, 0);
    ArmSweep();
  }
}

void Server::KeepReserve() {
  if (reserve_fd_ < 0) reserve_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
}

void Server::ArmSweep() {
  if (sweep_armed_ || sweep_fd_ < 0) return;
  // A quarter of the shorter timeout, between 0.25 s and 5 s: a connection is closed at most that
  // late. Armed only while some connection can time out, so an idle rotad is not woken.
  const std::int64_t period = std::clamp<std::int64_t>(std::min(limits_.idle_ms, limits_.request_ms) / 4, 250, 5000);
  itimerspec t{};
  t.it_value.tv_sec = period / 1000;
  t.it_value.tv_nsec = (period % 1000) * 1'000'000;
  if (::timerfd_settime(sweep_fd_, 0, &t, nullptr) == 0) sweep_armed_ = true;
}

void Server::Sweep() {
  std::uint64_t expirations;
  (void)!::read(sweep_fd_, &expirations, sizeof expirations);
  sweep_armed_ = false;
  if (accept_paused_) {
    accept_paused_ = false;
    KeepReserve();
    (void)loop_.Modify(listen_fd_, EPOLLIN);
  }
  const std::int64_t now = NowMs();
  std::vector<std::pair<ConnId, Status>> late;
  bool watching = false;
  for (const auto& [id, c] : conns_) {
    if (c.closing) continue;
    if (c.partial_since_ms != 0 && now - c.partial_since_ms >= limits_.request_ms) {
      late.emplace_back(id, InvalidArgument("the request did not arrive whole within " +
                                            std::to_string(limits_.request_ms / 1000) + " s; closing the connection"));
    } else if (!c.held && c.in.empty() && c.out.empty() && now - c.last_read_ms >= limits_.idle_ms) {
      late.emplace_back(id, Status());
    } else if (!c.held || c.partial_since_ms != 0) {
      watching = true;
    }
  }
  for (const auto& [id, why] : late) {
    if (why.ok()) {
      Drop(id);  // idle: nothing is owed to it, nothing to say
    } else {
      Refuse(id, why);
    }
  }
  if (watching || accept_paused_) ArmSweep();
}

}  // namespace rota::daemon
