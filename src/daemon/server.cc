// Tested by the daemon integration tests: tests/daemon/test_protocol.py (framing, limits) and
// tests/daemon/test_attacks_load.py (connection caps, idle and trickled connections, backpressure).
#include "daemon/server.h"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <utility>
#include <vector>

#include "api/protocol.h"
#include "unixio/fd_passing.h"

namespace rota::daemon {

namespace {

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

// True when something accepts connections on `path`.
bool SomeoneListens(const sockaddr_un& addr) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  bool ok = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

std::int64_t Server::NowMs() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000;
}

void Server::RefuseAtAccept(int fd, const Status& why) {
  const std::string line = api::ErrorReply(why).dump() + "\n";
  (void)::send(fd, line.data(), line.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  ::close(fd);
}

Server::~Server() {
  for (auto& [id, c] : conns_) {
    loop_.Remove(c.fd);
    ::close(c.fd);
    ClosePassed(c);
  }
  if (listen_fd_ >= 0) {
    loop_.Remove(listen_fd_);
    ::close(listen_fd_);
    ::unlink(path_.c_str());
  }
  if (sweep_fd_ >= 0) {
    loop_.Remove(sweep_fd_);
    ::close(sweep_fd_);
  }
  if (more_fd_ >= 0) {
    loop_.Remove(more_fd_);
    ::close(more_fd_);
  }
  if (reserve_fd_ >= 0) ::close(reserve_fd_);
}

Status Server::Listen(const std::string& path, mode_t mode) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) {
    return InvalidArgument("socket path is too long (" + std::to_string(path.size()) + " bytes): " + path);
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  if (SomeoneListens(addr)) {
    return FailedPrecondition("another rotad is already serving " + path + "; stop it first");
  }
  // Made in a private directory beside `path` (mode 0700, ours), given its mode there, then
  // renamed over `path`: chmod by a path that someone else could swap for a link never happens.
  const size_t slash = path.rfind('/');
  std::string dir_template = (slash == std::string::npos ? std::string(".") : path.substr(0, slash)) + "/.rotad-XXXXXX";
  if (::mkdtemp(dir_template.data()) == nullptr) return Unavailable(Errno("cannot make a directory beside " + path));
  const std::string private_dir = dir_template;
  const std::string temp = private_dir + "/s";
  sockaddr_un temp_addr{};
  temp_addr.sun_family = AF_UNIX;
  auto fail = [&](Status s, int fd) {
    if (fd >= 0) ::close(fd);
    ::unlink(temp.c_str());
    ::rmdir(private_dir.c_str());
    return s;
  };
  if (temp.size() >= sizeof temp_addr.sun_path) {
    return fail(InvalidArgument("socket path is too long to be made beside it (" + std::to_string(temp.size()) +
                                " bytes): " + path),
                -1);
  }
  std::memcpy(temp_addr.sun_path, temp.c_str(), temp.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return fail(Internal(Errno("socket")), -1);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&temp_addr), sizeof temp_addr) != 0) {
    return fail(Unavailable(Errno("cannot bind " + path)), fd);
  }
  if (::chmod(temp.c_str(), mode) != 0 || ::listen(fd, 512) != 0) {
    return fail(Internal(Errno("cannot listen on " + path)), fd);
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) return fail(Unavailable(Errno("cannot bind " + path)), fd);
  ::rmdir(private_dir.c_str());
  listen_fd_ = fd;
  path_ = path;
  KeepReserve();
  more_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (more_fd_ < 0) return Internal(Errno("eventfd"));
  if (Status s = loop_.Add(more_fd_, EPOLLIN, [this](std::uint32_t) { TakeMore(); }); !s.ok()) return s;
  sweep_fd_ = ::timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
  if (sweep_fd_ < 0) return Internal(Errno("timerfd_create"));
  if (Status s = loop_.Add(sweep_fd_, EPOLLIN, [this](std::uint32_t) { Sweep(); }); !s.ok()) return s;
  return loop_.Add(fd, EPOLLIN, [this](std::uint32_t) { Accept(); });
}

void Server::Accept() {
  while (true) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EMFILE || errno == ENFILE) ShedOne();
      return;  // EAGAIN: none waiting
    }
    ucred cred{};
    socklen_t len = sizeof cred;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
      ::close(fd);
      continue;
    }
    const Peer peer{cred.uid, cred.gid, cred.pid};
    if (Status why = Admit(peer); !why.ok()) {
      RefuseAtAccept(fd, why);
      handler_.OnRefused(peer, why);
      continue;
    }
    const ConnId id = next_id_++;
    Conn& c = conns_[id];
    c.fd = fd;
    c.peer = peer;
    c.last_read_ms = NowMs();
    if (!loop_.Add(fd, EPOLLIN | EPOLLRDHUP, [this, id](std::uint32_t ev) { OnEvent(id, ev); }).ok()) {
      ::close(fd);
      conns_.erase(id);
      continue;
    }
    ++per_uid_[peer.uid];
    ArmSweep();
    // A client usually writes its request right after connecting: read it now rather than on
    // the next turn of the loop (EAGAIN when it has not arrived yet).
    ReadLines(id);
  }
}

void Server::OnEvent(ConnId id, std::uint32_t events) {
  if (events & EPOLLOUT) Flush(id);
  if (!conns_.count(id)) return;
  if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) ReadLines(id);
}

void Server::UpdateInterest(Conn& c) {
  const bool want = !c.out.empty();
  c.want_write = want;
  (void)loop_.Modify(c.fd, (c.paused ? 0u : EPOLLIN | EPOLLRDHUP) | (want ? EPOLLOUT : 0u));
}

void Server::ReadLines(ConnId id) {
  char buf[65536];
  while (true) {
    auto it = conns_.find(id);
    if (it == conns_.end()) return;
    Conn& c = it->second;
    if (c.closing) {
      // Discard input after a framing error; only the pending error reply matters.
      ssize_t n = ::read(c.fd, buf, sizeof buf);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) Drop(id);
      if (n <= 0) return;
      continue;
    }
    if (c.out.size() > kPauseReadingAt) {
      // Backpressure: replies wait for a client that does not read; its next requests wait in
      // `in`, the kernel's buffer and then the client until they are gone (Flush resumes).
      if (!c.paused) {
        c.paused = true;
        UpdateInterest(c);
      }
      return;
    }
    // Requests already read come first, a turn's worth at a time (TakeLines).
    if (c.complete_lines) {
      if (!TakeLines(id)) return;
      continue;
    }
    ssize_t n = Receive(c, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN) Drop(id);
      return;
    }
    if (n == 0) {
      Drop(id);
      return;
    }
    c.last_read_ms = NowMs();
    if (c.in.empty()) c.partial_since_ms = c.last_read_ms;
    partial_total_ += static_cast<size_t>(n);
    c.in.append(buf, static_cast<size_t>(n));
    c.complete_lines = std::memchr(buf, '\n', static_cast<size_t>(n)) != nullptr;
    if (!c.complete_lines && c.in.size() >= api::kMaxLineBytes) {
      RefuseOverlongLine(id);
      return;
    }
    if (!c.complete_lines && partial_total_ > kMaxPartialTotal) {
      Refuse(id, ResourceExhausted("rotad holds too many unfinished requests; closing the connection"));
      return;
    }
  }
}

bool Server::TakeLines(ConnId id) {
  // The lines handed on in this turn are erased from `in` once, when it ends: one move of what is
  // left rather than one per line.
  std::size_t start = 0;
  auto consume = [&](Conn& c) {
    c.in.erase(0, start);
    partial_total_ -= start;
  };
  for (int taken = 0;; ++taken) {
    auto it = conns_.find(id);
    if (it == conns_.end()) return false;  // dropped, and all of `in` with it
    Conn& c = it->second;
    if (c.closing) {
      consume(c);
      return false;
    }
    const size_t nl = c.in.find('\n', start);
    if (nl == std::string::npos) {
      consume(c);
      c.complete_lines = false;
      c.partial_since_ms = c.in.empty() ? 0 : c.last_read_ms;
      if (c.in.size() >= api::kMaxLineBytes) {
        RefuseOverlongLine(id);
        return false;
      }
      return true;
    }
    if (taken == kLinesPerTurn || c.out.size() > kPauseReadingAt) {
      // The rest waits for the next turn of the loop (or for the client to read its replies):
      // one client's pipeline of thousands of requests is not answered in one batch, ahead of
      // everyone else's and all in memory at once.
      consume(c);
      more_.insert(id);
      uint64_t one = 1;
      (void)!::write(more_fd_, &one, sizeof one);
      return false;
    }
    std::string line = c.in.substr(start, nl - start);
    start = nl + 1;
    if (line.size() + 1 > api::kMaxLineBytes) {
      Send(id, api::ErrorReply("invalid_argument", "request line longer than " +
                                                       std::to_string(api::kMaxLineBytes) + " bytes"));
      continue;
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    handler_.OnLine(id, line);
  }
}

void Server::TakeMore() {
  uint64_t count;
  (void)!::read(more_fd_, &count, sizeof count);
  std::vector<ConnId> due(more_.begin(), more_.end());
  more_.clear();
  for (ConnId id : due) ReadLines(id);
}

ssize_t Server::Receive(Conn& c, char* buf, size_t size) {
  int fds[unixio::kMaxFds];
  std::size_t nfds = 0;
  const ssize_t n = unixio::ReceiveWithFds(c.fd, buf, size, fds, &nfds);
  // The descriptors received with one message (more were closed by the kernel) replace those of
  // an earlier one.
  if (nfds > 0) {
    ClosePassed(c);
    c.passed.assign(fds, fds + nfds);
  }
  return n;
}

void Server::ClosePassed(Conn& c) {
  for (int fd : c.passed) {
    if (fd >= 0) ::close(fd);
  }
  c.passed.clear();
}

std::vector<int> Server::TakeTerminal(ConnId id) {
  auto it = conns_.find(id);
  if (it == conns_.end() || it->second.passed.size() != 4) return {};
  std::vector<int>& passed = it->second.passed;
  std::vector<int> out(passed.begin() + 1, passed.end());
  passed.resize(1);
  return out;
}

int Server::TakeProcessHandle(ConnId id) {
  auto it = conns_.find(id);
  if (it == conns_.end()) return -1;
  Conn& c = it->second;
  if (!c.passed.empty() && c.passed.front() >= 0) return std::exchange(c.passed.front(), -1);
  int pidfd = -1;
  socklen_t len = sizeof pidfd;
  if (::getsockopt(c.fd, SOL_SOCKET, kSoPeerPidfd, &pidfd, &len) != 0) return -1;  // ENOPROTOOPT before 6.5
  return pidfd;
}

void Server::Send(ConnId id, const nlohmann::json& message) {
  auto it = conns_.find(id);
  if (it == conns_.end()) return;
  Conn& c = it->second;
  std::string line = message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  line += '\n';
  if (c.out.size() + line.size() > kMaxBufferedReply) {
    handler_.OnRefused(c.peer, ResourceExhausted("a client that does not read its replies (" +
                                                 std::to_string(c.out.size() + line.size()) +
                                                 " bytes waiting) was disconnected"));
    Drop(id);
    return;
  }
  auto waiting = out_per_uid_.find(c.peer.uid);
  const std::size_t mine = waiting == out_per_uid_.end() ? 0 : waiting->second;
  if (mine + line.size() > kMaxBufferedPerUser && !handler_.Privileged(c.peer)) {
    handler_.OnRefused(c.peer, ResourceExhausted("replies waiting for this user's connections reached " +
                                                 std::to_string(kMaxBufferedPerUser >> 20) +
                                                 " MiB; a connection that does not read was disconnected"));
    Drop(id);
    return;
  }
  if (out_total_ + line.size() > kMaxBufferedTotal) {
    handler_.OnRefused(c.peer, ResourceExhausted("replies waiting for clients reached rotad's bound (" +
                                                 std::to_string(kMaxBufferedTotal >> 20) +
                                                 " MiB); a client was disconnected"));
    Drop(id);
    return;
  }
  out_total_ += line.size();
  out_per_uid_[c.peer.uid] += line.size();  // an entry only while something waits (TakeOut)
  c.out += line;
  Flush(id);
}

void Server::Flush(ConnId id) {
  auto it = conns_.find(id);
  if (it == conns_.end()) return;
  Conn& c = it->second;
  size_t done = 0;
  while (done < c.out.size()) {
    ssize_t n = ::send(c.fd, c.out.data() + done, c.out.size() - done, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) break;
      Drop(id);
      return;
    }
    done += static_cast<size_t>(n);
  }
  c.out.erase(0, done);
  TakeOut(c.peer.uid, done);
  const bool resume = c.paused && c.out.size() <= kPauseReadingAt / 2;
  if (resume) c.paused = false;
  if (resume || c.want_write != !c.out.empty()) UpdateInterest(c);
  if (c.out.empty() && c.closing) {
    Drop(id);
    return;
  }
  if (resume) ReadLines(id);  // what the client sent meanwhile (the kernel kept it)
}

void Server::TakeOut(uid_t uid, std::size_t bytes) {
  if (bytes == 0) return;
  out_total_ -= bytes;
  auto it = out_per_uid_.find(uid);
  if (it != out_per_uid_.end() && (it->second -= bytes) == 0) out_per_uid_.erase(it);
}

void Server::RefuseOverlongLine(ConnId id) {
  Refuse(id, InvalidArgument("request line longer than " + std::to_string(api::kMaxLineBytes) +
                             " bytes; closing the connection"));
}

void Server::Refuse(ConnId id, const Status& why) {
  auto it = conns_.find(id);
  if (it == conns_.end()) return;
  const Peer peer = it->second.peer;
  partial_total_ -= it->second.in.size();
  it->second.in.clear();
  it->second.partial_since_ms = 0;
  Send(id, api::ErrorReply(why));
  CloseAfterWrite(id);
  handler_.OnRefused(peer, why);
}

void Server::CloseAfterWrite(ConnId id) {
  auto it = conns_.find(id);
  if (it == conns_.end()) return;
  it->second.closing = true;
  if (it->second.out.empty()) Drop(id);
}

const Peer* Server::PeerOf(ConnId id) const {
  auto it = conns_.find(id);
  return it == conns_.end() ? nullptr : &it->second.peer;
}

void Server::SetHeld(ConnId id, bool held) {
  auto it = conns_.find(id);
  if (it == conns_.end()) return;
  it->second.held = held;
  it->second.last_read_ms = NowMs();
  if (!held) ArmSweep();
}

void Server::Drop(ConnId id) {
  auto it = conns_.find(id);
  if (it == conns_.end()) return;
  Conn& c = it->second;
  loop_.Remove(c.fd);
  ::close(c.fd);
  ClosePassed(c);
  TakeOut(c.peer.uid, c.out.size());
  partial_total_ -= c.in.size();
  if (auto n = per_uid_.find(c.peer.uid); n != per_uid_.end() && --n->second <= 0) per_uid_.erase(n);
  more_.erase(id);
  conns_.erase(it);
  handler_.OnClose(id);
}

}  // namespace rota::daemon
