// A client connection to rotad: newline-delimited JSON over the daemon's Unix socket
// (docs/api.md, "Transport and framing").
//
// Thread-compatible, not thread-safe: one user at a time. Not copyable; movable.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/status.h"

namespace rota::client {

class Connection {
 public:
  Connection() = default;
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  Connection(Connection&& other) noexcept;
  Connection& operator=(Connection&& other) noexcept;

  // Connects to the daemon's socket at `path`. A failed connect is Unavailable, with a message
  // that names the path and the reason and says where to look.
  static StatusOr<Connection> Open(const std::string& path);
  // Wraps a connected stream socket (tests use a socketpair); takes ownership of `fd`.
  static Connection FromFd(int fd);

  // Sends `request` (with "v" set to the API version) and reads one reply. A reply with
  // ok=false becomes the Status it carries; Unavailable when the connection failed or closed.
  // `pass_fds`: descriptors passed along with the request (SCM_RIGHTS; at most unixio::kMaxFds),
  // for `run`: a pidfd on this process, which is how rotad knows which process the session is,
  // then for an attached session its standard input, output and error (docs/api.md).
  StatusOr<nlohmann::json> Call(const nlohmann::json& request, const std::vector<int>& pass_fds = {});
  // Sends one request line ("v" added when missing), with `pass_fds` as Call. Retries partial writes and EINTR.
  Status Send(const nlohmann::json& request, const std::vector<int>& pass_fds = {});
  // Reads the next message line, waiting at most `timeout_ms` (-1: forever). A timeout is
  // Unavailable with the message "timed out"; check TimedOut() to tell it apart. The reply is
  // returned as is (ok=false is not turned into an error here).
  StatusOr<nlohmann::json> Receive(int timeout_ms);
  // True when the last Receive failed because its time ran out.
  bool TimedOut() const { return timed_out_; }
  // True when a complete line is already buffered (poll() on fd() would not show it).
  bool HasBufferedLine() const;

  // The socket, for poll(); -1 when not connected.
  int fd() const { return fd_; }
  bool connected() const { return fd_ >= 0; }
  void Close();

 private:
  explicit Connection(int fd) : fd_(fd) {}

  int fd_ = -1;
  std::string buffer_;  // bytes read past the last returned line
  bool timed_out_ = false;
};

}  // namespace rota::client
