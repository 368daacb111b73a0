// The Unix socket server: accepts connections, reads the caller's identity from the kernel
// (SO_PEERCRED), frames newline-delimited requests and queues replies. It knows nothing about
// what the requests mean: complete lines go to a Handler.
//
// Contracts:
// - The peer's uid, gid and pid are read once, at accept, from SO_PEERCRED. Nothing else about
//   identity is ever taken from the connection.
// - A line longer than api::kMaxLineBytes gets an error reply and the connection is closed once
//   that reply is written. Replies are written in order; a client that stops reading has its
//   replies buffered up to kMaxBufferedReply bytes, then it is disconnected.
// - Handler callbacks may call Send and Close on any connection, including the current one.
// - A client may pass descriptors with its bytes (SCM_RIGHTS): the last one is kept for
//   TakeProcessHandle, the others are closed at once; nothing is ever read from them.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/status.h"
#include "daemon/event_loop.h"

namespace rota::daemon {

using ConnId = std::uint64_t;

struct Peer {
  uid_t uid = 0;
  gid_t gid = 0;
  pid_t pid = 0;
};

class Server {
 public:
  class Handler {
   public:
    virtual ~Handler() = default;
    virtual void OnLine(ConnId conn, std::string_view line) = 0;
    virtual void OnClose(ConnId conn) = 0;
  };

  static constexpr std::size_t kMaxBufferedReply = 64u << 20;

  Server(EventLoop& loop, Handler& handler) : loop_(loop), handler_(handler) {}
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds and listens on `path` (its directory must exist), chmod `mode`. Fails with
  // FailedPrecondition when another daemon answers on it; a stale socket file is replaced.
  Status Listen(const std::string& path, mode_t mode);

  // Queues one reply line. Unknown (already closed) connections are ignored.
  void Send(ConnId conn, const nlohmann::json& message);
  // Closes after the queued replies are written (now, when there are none).
  void CloseAfterWrite(ConnId conn);
  // The connection's identity; nullptr when it is closed.
  const Peer* PeerOf(ConnId conn) const;
  // A handle (pidfd) on a process of the caller's, for what must act on that process (a session's
  // client, moved into its job's cgroup): the one the client passed with its request
  // (SCM_RIGHTS; docs/api.md, op "run"), else the process that connected (SO_PEERPIDFD, Linux
  // 6.5), else -1. The caller owns it, and must still check whose process it is
  // (exec::PidfdProcessOf): a client may pass any descriptor.
  int TakeProcessHandle(ConnId conn);
  bool IsOpen(ConnId conn) const { return conns_.count(conn) > 0; }
  std::size_t connections() const { return conns_.size(); }

 private:
  struct Conn {
    int fd = -1;
    Peer peer;
    std::string in;
    std::string out;
    bool closing = false;  // close once `out` is flushed
    bool want_write = false;
    int passed_fd = -1;  // the last descriptor the client passed (SCM_RIGHTS); one at most is kept
  };

  // Descriptors taken from one read; more are closed by the kernel.
  static constexpr std::size_t kMaxPassedFds = 4;
  // SO_PEERPIDFD (Linux 6.5), which Debian 12's headers do not name yet.
  static constexpr int kSoPeerPidfd = 77;

  void Accept();
  void OnEvent(ConnId id, std::uint32_t events);
  void ReadLines(ConnId id);
  // read(2) that also takes the descriptors the client passed (see TakeProcessHandle).
  ssize_t Receive(Conn& c, char* buf, size_t size);
  void Flush(ConnId id);
  void Drop(ConnId id);  // closes now and tells the handler

  EventLoop& loop_;
  Handler& handler_;
  int listen_fd_ = -1;
  std::string path_;
  ConnId next_id_ = 1;
  std::unordered_map<ConnId, Conn> conns_;
};

}  // namespace rota::daemon
