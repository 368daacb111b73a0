// Tested by connection_test.cc (against a socketpair and a listening socket in a temp dir).
//
// Design: one read buffer per connection; Receive() returns one line at a time and keeps what
// follows it for the next call, so a streaming reply (op "run") that arrives in the same read as
// the first message loses nothing. Writes use MSG_NOSIGNAL so a vanished daemon is an error
// value, never SIGPIPE.
#include "client/connection.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <utility>

#include "api/protocol.h"
#include "json/bounded.h"
#include "unixio/fd_passing.h"

namespace rota::client {

namespace {

Status Closed() { return Unavailable("rotad closed the connection"); }


}  // namespace

Connection::~Connection() { Close(); }

Connection::Connection(Connection&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), buffer_(std::move(other.buffer_)), timed_out_(other.timed_out_) {}

Connection& Connection::operator=(Connection&& other) noexcept {
  if (this != &other) {
    Close();
    fd_ = std::exchange(other.fd_, -1);
    buffer_ = std::move(other.buffer_);
    timed_out_ = other.timed_out_;
  }
  return *this;
}

void Connection::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  buffer_.clear();
}

Connection Connection::FromFd(int fd) { return Connection(fd); }

StatusOr<Connection> Connection::Open(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof addr.sun_path) {
    return InvalidArgument("socket path \"" + path + "\" is empty or too long for a Unix socket");
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Unavailable(std::string("cannot create a socket: ") + std::strerror(errno));
  int rc;
  do {
    rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  } while (rc < 0 && errno == EINTR);
  if (rc < 0) {
    int err = errno;
    ::close(fd);
    return Unavailable("cannot reach rotad at " + path + ": " + std::strerror(err) +
                       " (is rotad running? see README: Install as a service)");
  }
  return Connection(fd);
}

Status Connection::Send(const nlohmann::json& request, const std::vector<int>& pass_fds) {
  if (fd_ < 0) return Closed();
  // A copy only to add the version: a submission carries the whole environment.
  const bool add_version = request.is_object() && !request.contains("v");
  std::string line;
  try {
    if (add_version) {
      nlohmann::json message = request;
      message["v"] = api::kVersion;
      line = message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    } else {
      line = request.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
  } catch (const nlohmann::json::exception& e) {
    return Internal(std::string("cannot encode the request: ") + e.what());
  }
  line += '\n';
  if (line.size() > api::kMaxLineBytes) {
    return InvalidArgument("the request is " + std::to_string(line.size()) +
                           " bytes; rotad accepts at most " + std::to_string(api::kMaxLineBytes) +
                           " (is the environment very large?)");
  }
  size_t sent = 0;
  while (sent < line.size()) {
    ssize_t n;
    if (sent == 0 && !pass_fds.empty()) {
      n = unixio::SendWithFds(fd_, line.data(), line.size(), pass_fds.data(), pass_fds.size());
    } else {
      n = ::send(fd_, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        pollfd p{fd_, POLLOUT, 0};
        (void)::poll(&p, 1, -1);
        continue;
      }
      int err = errno;
      if (err == EPIPE || err == ECONNRESET) {
        // rotad may have said why before it closed (a connection over its limits gets one line
        // at once, before the request is even read): that line is still there to read.
        StatusOr<nlohmann::json> said = Receive(0);
        Close();
        if (said.ok()) {
          Status why = api::StatusOfReply(*said);
          if (!why.ok()) return why;
        }
        return Closed();
      }
      Close();
      return Unavailable(std::string("cannot send to rotad: ") + std::strerror(err));
    }
    sent += static_cast<size_t>(n);
  }
  return Status();
}

bool Connection::HasBufferedLine() const { return buffer_.find('\n') != std::string::npos; }

StatusOr<nlohmann::json> Connection::Receive(int timeout_ms) {
  timed_out_ = false;
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms < 0 ? 0 : timeout_ms);
  size_t scanned = 0;  // bytes of buffer_ known to hold no newline
  while (true) {
    size_t nl = buffer_.find('\n', scanned);
    if (nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      StatusOr<nlohmann::json> reply = ParseBoundedJson(line);
      if (!reply.ok() || !reply->is_object()) {
        return Internal("rotad sent a line that is not a JSON object: " + line.substr(0, 200));
      }
      return std::move(*reply);
    }
    scanned = buffer_.size();
    if (buffer_.size() >= api::kMaxReplyBytes) {
      Close();
      return Internal("rotad sent a line longer than " + std::to_string(api::kMaxReplyBytes) + " bytes");
    }
    if (fd_ < 0) return Closed();
    int wait = -1;
    if (timeout_ms >= 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      wait = left < 0 ? 0 : static_cast<int>(left);
    }
    pollfd p{fd_, POLLIN, 0};
    int rc = ::poll(&p, 1, wait);
    if (rc < 0) {
      if (errno == EINTR) continue;
      return Unavailable(std::string("cannot wait for rotad: ") + std::strerror(errno));
    }
    if (rc == 0) {
      timed_out_ = true;
      return Unavailable("timed out");
    }
    char chunk[65536];
    ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
      int err = errno;
      Close();
      if (err == ECONNRESET) return Closed();
      return Unavailable(std::string("cannot read from rotad: ") + std::strerror(err));
    }
    if (n == 0) {
      Close();
      return Closed();
    }
    buffer_.append(chunk, static_cast<size_t>(n));
  }
}

StatusOr<nlohmann::json> Connection::Call(const nlohmann::json& request, const std::vector<int>& pass_fds) {
  Status sent = Send(request, pass_fds);
  if (!sent.ok()) return sent;
  auto reply = Receive(-1);
  if (!reply.ok()) return reply.status();
  Status st = api::StatusOfReply(*reply);
  if (!st.ok()) return st;
  return reply;
}

}  // namespace rota::client
