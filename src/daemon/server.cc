// Tested by the daemon integration tests (tests/daemon/) and server_test.cc.
#include "daemon/server.h"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "api/protocol.h"

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

Server::~Server() {
  for (auto& [id, c] : conns_) {
    loop_.Remove(c.fd);
    ::close(c.fd);
    if (c.passed_fd >= 0) ::close(c.passed_fd);
  }
  if (listen_fd_ >= 0) {
    loop_.Remove(listen_fd_);
    ::close(listen_fd_);
    ::unlink(path_.c_str());
  }
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
  ::unlink(path.c_str());
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return Internal(Errno("socket"));
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    Status s = Unavailable(Errno("cannot bind " + path));
    ::close(fd);
    return s;
  }
  if (::chmod(path.c_str(), mode) != 0 || ::listen(fd, 512) != 0) {
    Status s = Internal(Errno("cannot listen on " + path));
    ::close(fd);
    return s;
  }
  listen_fd_ = fd;
  path_ = path;
  return loop_.Add(fd, EPOLLIN, [this](std::uint32_t) { Accept(); });
}

void Server::Accept() {
  while (true) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) return;  // EAGAIN, or a transient error (EMFILE): the next event retries
    ucred cred{};
    socklen_t len = sizeof cred;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
      ::close(fd);
      continue;
    }
    const ConnId id = next_id_++;
    Conn& c = conns_[id];
    c.fd = fd;
    c.peer = Peer{cred.uid, cred.gid, cred.pid};
    if (!loop_.Add(fd, EPOLLIN | EPOLLRDHUP, [this, id](std::uint32_t ev) { OnEvent(id, ev); }).ok()) {
      ::close(fd);
      conns_.erase(id);
      continue;
    }
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
    c.in.append(buf, static_cast<size_t>(n));
    size_t start = 0;
    while (true) {
      auto again = conns_.find(id);
      if (again == conns_.end() || again->second.closing) return;
      Conn& cc = again->second;
      size_t nl = cc.in.find('\n', start);
      if (nl == std::string::npos) {
        cc.in.erase(0, start);
        if (cc.in.size() >= api::kMaxLineBytes) {
          cc.in.clear();
          Send(id, api::ErrorReply("invalid_argument", "request line longer than " +
                                                           std::to_string(api::kMaxLineBytes) +
                                                           " bytes; closing the connection"));
          CloseAfterWrite(id);
          return;
        }
        break;
      }
      std::string line = cc.in.substr(start, nl - start);
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
}

ssize_t Server::Receive(Conn& c, char* buf, size_t size) {
  iovec iov{buf, size};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxPassedFds)];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n = ::recvmsg(c.fd, &msg, MSG_CMSG_CLOEXEC);
  if (n < 0) return n;
  // Descriptors beyond the buffer were closed by the kernel (MSG_CTRUNC); of those received, the
  // last is kept and the rest closed.
  for (cmsghdr* h = CMSG_FIRSTHDR(&msg); h != nullptr; h = CMSG_NXTHDR(&msg, h)) {
    if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS) continue;
    const size_t count = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(h) + i * sizeof(int), sizeof fd);
      if (c.passed_fd >= 0) ::close(c.passed_fd);
      c.passed_fd = fd;
    }
  }
  return n;
}

int Server::TakeProcessHandle(ConnId id) {
  auto it = conns_.find(id);
  if (it == conns_.end()) return -1;
  Conn& c = it->second;
  if (c.passed_fd >= 0) return std::exchange(c.passed_fd, -1);
  int pidfd = -1;
  socklen_t len = sizeof pidfd;
  if (::getsockopt(c.fd, SOL_SOCKET, kSoPeerPidfd, &pidfd, &len) != 0) return -1;  // ENOPROTOOPT before 6.5
  return pidfd;
}

void Server::Send(ConnId id, const nlohmann::json& message) {
  auto it = conns_.find(id);
  if (it == conns_.end()) return;
  Conn& c = it->second;
  c.out += message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  c.out += '\n';
  if (c.out.size() > kMaxBufferedReply) {
    Drop(id);
    return;
  }
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
  const bool want = !c.out.empty();
  if (want != c.want_write) {
    c.want_write = want;
    (void)loop_.Modify(c.fd, EPOLLIN | EPOLLRDHUP | (want ? EPOLLOUT : 0u));
  }
  if (!want && c.closing) Drop(id);
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

void Server::Drop(ConnId id) {
  auto it = conns_.find(id);
  if (it == conns_.end()) return;
  loop_.Remove(it->second.fd);
  ::close(it->second.fd);
  if (it->second.passed_fd >= 0) ::close(it->second.passed_fd);
  conns_.erase(it);
  handler_.OnClose(id);
}

}  // namespace rota::daemon
