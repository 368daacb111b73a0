// The Unix socket server: accepts connections, reads the caller's identity from the kernel
// (SO_PEERCRED), frames newline-delimited requests and queues replies. It knows nothing about
// what the requests mean: complete lines go to a Handler.
//
// Contracts:
// - The peer's uid, gid and pid are read once, at accept, from SO_PEERCRED. Nothing else about
//   identity is ever taken from the connection.
// - A line longer than api::kMaxLineBytes gets an error reply and the connection is closed once
//   that reply is written. Replies are written in order.
// - Handler callbacks may call Send and Close on any connection, including the current one.
// - A client may pass descriptors with its bytes (SCM_RIGHTS): those of its last message are kept
//   (up to unixio::kMaxFds), for TakeProcessHandle and TakeTerminal; rotad itself never reads
//   or writes them.
//
// What one client may take (docs/security.md, "Limits"; ServerLimits):
// - Connections: at most `per_user` of one uid, `total` in all; the last kPrivilegedReserve of
//   those are for privileged callers (root and admins, as the handler says), who have no per-uid
//   limit. A connection over a limit gets one error line and is closed (OnRefused tells why).
// - Time: a connection that sends nothing for `idle_ms` is closed, unless the handler holds it
//   (SetHeld: a session, an answer on its way); a request line must arrive whole within
//   `request_ms` of its first byte, else an error line and the connection is closed.
// - Turns: a connection's requests are handed on kLinesPerTurn at a time; the rest wait for the
//   next turn of the loop, after everyone else's.
// - Memory: a client that stops reading has no more of its requests read while more than
//   kPauseReadingAt bytes of replies wait for it (backpressure), and is disconnected beyond
//   kMaxBufferedReply; replies waiting for one uid's connections are bounded by
//   kMaxBufferedPerUser, for all by kMaxBufferedTotal, and unfinished
//   request lines by kMaxPartialTotal (the connection that would pass the bound is closed).
// - Descriptors: when accept fails for lack of them (EMFILE, ENFILE), a descriptor kept in reserve
//   is freed to accept the waiting connection and close it with an error line, so the loop does
//   not spin on a listening socket it cannot empty.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "daemon/event_loop.h"

namespace rota::daemon {

using ConnId = std::uint64_t;

struct Peer {
  uid_t uid = 0;
  gid_t gid = 0;
  pid_t pid = 0;
};

struct ServerLimits {
  int per_user = 64;
  int total = 4096;
  std::int64_t idle_ms = 300'000;
  std::int64_t request_ms = 10'000;
};

class Server {
 public:
  class Handler {
   public:
    virtual ~Handler() = default;
    virtual void OnLine(ConnId conn, std::string_view line) = 0;
    virtual void OnClose(ConnId conn) = 0;
    // A connection refused or closed for a limit (the status says which), for the log.
    virtual void OnRefused(const Peer& peer, const Status& why) { (void)peer, (void)why; }
    // Root and admins: no per-uid connection limit, and the reserve of connections.
    virtual bool Privileged(const Peer& peer) { return peer.uid == 0; }
  };

  static constexpr std::size_t kMaxBufferedReply = 64u << 20;
  static constexpr std::size_t kPauseReadingAt = 1u << 20;
  static constexpr std::size_t kMaxBufferedPerUser = 32u << 20;  // root and admins: only the total
  // Requests of one connection handed on in one turn of the loop; more wait for the next.
  static constexpr int kLinesPerTurn = 64;
  static constexpr std::size_t kMaxBufferedTotal = 256u << 20;
  static constexpr std::size_t kMaxPartialTotal = 64u << 20;
  static constexpr int kPrivilegedReserve = 32;

  Server(EventLoop& loop, Handler& handler) : loop_(loop), handler_(handler) {}
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds and listens on `path` (its directory must exist) with `mode`. Fails with
  // FailedPrecondition when another daemon answers on it; a stale socket file is replaced. The
  // socket is made and given its mode in a private directory beside `path`, then renamed into
  // place: no path that another user could swap is ever changed by mode.
  Status Listen(const std::string& path, mode_t mode);
  // New limits, for connections from now on (existing ones are not closed).
  Status SetLimits(const ServerLimits& limits);

  // Queues one reply line. Unknown (already closed) connections are ignored.
  void Send(ConnId conn, const nlohmann::json& message);
  // Closes after the queued replies are written (now, when there are none).
  void CloseAfterWrite(ConnId conn);
  // The connection's identity; nullptr when it is closed.
  const Peer* PeerOf(ConnId conn) const;
  bool IsOpen(ConnId conn) const { return conns_.count(conn) > 0; }
  std::size_t connections() const { return conns_.size(); }
  // A connection that may be quiet for long (a session, a request answered later): no idle timeout.
  void SetHeld(ConnId conn, bool held);
  // A handle (pidfd) on a process of the caller's, for what must act on that process (a session's
  // client, moved into its job's cgroup): the one the client passed with its request
  // (SCM_RIGHTS; docs/api.md, op "run"), else the process that connected (SO_PEERPIDFD, Linux
  // 6.5), else -1. The caller owns it, and must still check whose process it is
  // (exec::PidfdProcessOf): a client may pass any descriptor.
  int TakeProcessHandle(ConnId conn);
  // An attached session's terminal (`rota run --image`): the three descriptors the client passed
  // after the pidfd (its standard input, output and error), or none when it passed another
  // number. The caller owns them; they are handed on to the container's runtime, which reads and
  // writes them with the rights the client opened them with, nothing more.
  std::vector<int> TakeTerminal(ConnId conn);

 private:
  // Milliseconds on the monotonic clock: the connections' timeouts (a transport's own, not the
  // scheduler's time, which comes from the daemon's clock).
  static std::int64_t NowMs();
  // Tells a connection that is not taken in why, in one line written without waiting (it fits
  // any socket buffer), and closes it.
  static void RefuseAtAccept(int fd, const Status& why);

  struct Conn {
    int fd = -1;
    Peer peer;
    std::string in;
    std::string out;
    bool closing = false;  // close once `out` is flushed
    bool paused = false;   // not reading: too many replies wait for the client
    bool held = false;     // SetHeld
    bool want_write = false;
    bool complete_lines = false;  // `in` may hold whole lines not yet handed on
    std::vector<int> passed;  // the descriptors passed with the client's last message (SCM_RIGHTS)
    std::int64_t last_read_ms = 0;     // when bytes last came
    std::int64_t partial_since_ms = 0;  // when the unfinished line in `in` began (0: none)
  };
  static void ClosePassed(Conn& c);

  // SO_PEERPIDFD (Linux 6.5), which Debian 12's headers do not name yet.
  static constexpr int kSoPeerPidfd = 77;

  void Accept();
  // Accepts one connection that cannot be served (no descriptor left), tells it and closes it.
  void ShedOne();
  // Why a new connection from `peer` is refused; OK when it may come in.
  Status Admit(const Peer& peer);
  void OnEvent(ConnId id, std::uint32_t events);
  void ReadLines(ConnId id);
  // Hands on up to kLinesPerTurn whole lines of `in`; false when it stopped before the end of
  // them (the connection is then in more_) or the connection is gone or closing.
  bool TakeLines(ConnId id);
  void TakeMore();  // more_fd_'s callback: the next turn of connections in more_
  // read(2) that also takes the descriptors the client passed (see TakeProcessHandle).
  ssize_t Receive(Conn& c, char* buf, size_t size);
  void Flush(ConnId id);
  void Drop(ConnId id);  // closes now and tells the handler
  void UpdateInterest(Conn& c);
  // Sends one error line and closes after it (for a limit or a framing error).
  void Refuse(ConnId id, const Status& why);
  void RefuseOverlongLine(ConnId id);  // a line past api::kMaxLineBytes: Refuse, saying so
  void KeepReserve();                  // (re)opens reserve_fd_ when it is not open
  // The idle and unfinished-request sweep, on a timer armed while there are connections to watch.
  void Sweep();
  void ArmSweep();
  // Replies of `uid`'s connection written or dropped: out of the totals.
  void TakeOut(uid_t uid, std::size_t bytes);

  EventLoop& loop_;
  Handler& handler_;
  int listen_fd_ = -1;
  int reserve_fd_ = -1;  // /dev/null, closed to make room for ShedOne
  int sweep_fd_ = -1;    // timerfd
  int more_fd_ = -1;     // eventfd: connections in more_ have lines waiting for a turn
  bool sweep_armed_ = false;
  bool accept_paused_ = false;  // ShedOne found no descriptor at all: accepting again at the next sweep
  std::string path_;
  ServerLimits limits_;
  ConnId next_id_ = 1;
  std::unordered_map<ConnId, Conn> conns_;
  std::set<ConnId> more_;
  std::unordered_map<uid_t, int> per_uid_;
  std::size_t out_total_ = 0;      // bytes of replies waiting, all connections
  std::unordered_map<uid_t, std::size_t> out_per_uid_;  // ... by the connections' uid
  std::size_t partial_total_ = 0;  // bytes of unfinished request lines, all connections
};

}  // namespace rota::daemon
