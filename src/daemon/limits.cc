// What one user may take of rotad ([limits], docs/security.md "Limits"): the socket server's
// connection limits as configured, who is exempt, and the refusals the server reports. The
// per-user limits on jobs are admission.h's.
#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <fmt/format.h>

#include "daemon/daemon.h"

namespace rota::daemon {

namespace {

// Descriptors rotad keeps for everything but client connections: the store, the loop's timers,
// shepherds' pidfds and notes, cgroup watches, HTTP's sockets.
constexpr rlim_t kDescriptorsForTheRest = 512;

}  // namespace

void Daemon::ApplyServerLimits() {
  const config::LimitsConfig& l = config_.limits;
  ServerLimits limits;
  limits.per_user = l.connections_per_user;
  limits.total = l.connections;
  rlimit nofile{};
  if (::getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur != RLIM_INFINITY) {
    const rlim_t room = nofile.rlim_cur > kDescriptorsForTheRest * 2 ? nofile.rlim_cur - kDescriptorsForTheRest
                                                                       : nofile.rlim_cur / 2;
    if (static_cast<rlim_t>(limits.total) > room) {
      spdlog::warn("[limits] connections = {} is more than rotad's open-file limit allows ({}): serving at most {}",
                   limits.total, nofile.rlim_cur, room);
      limits.total = static_cast<int>(room);
    }
  }
  limits.idle_ms = l.idle_timeout * 1000;
  limits.request_ms = l.request_timeout * 1000;
  if (Status s = server_->SetLimits(limits); !s.ok()) spdlog::error("connection limits: {}", s.message());
}

void Daemon::OnRefused(const Peer& peer, const Status& why) {
  pipeline_->NoteRefusal(callers_.Get(peer.uid, peer.gid, peer.pid, CallerCache::Clock::now()), "a connection", why);
}

bool Daemon::Privileged(const Peer& peer) {
  if (peer.uid == 0 || (options_.user_mode && peer.uid == ::getuid())) return true;
  return callers_.Get(peer.uid, peer.gid, peer.pid, CallerCache::Clock::now()).admin;
}

}  // namespace rota::daemon
