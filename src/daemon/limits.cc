// What one user may take of rotad ([limits], docs/security.md "Limits"): the socket server's
// connection limits as configured, who is exempt, and the refusals the server reports. The
// per-user limits on jobs are in requests.cc (CheckSubmitLimits).
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

Status Daemon::CheckSubmitLimits(const Caller& caller) {
  if (caller.admin) return Status();
  const config::LimitsConfig& l = config_.limits;
  if (l.pending_per_user > 0) {
    if (!pending_counts_) {
      pending_counts_.emplace();
      for (const auto& [id, a] : jobs_) {
        if (a.rec.state == store::JobState::kPending) ++(*pending_counts_)[a.rec.uid];
      }
      for (const BatchedSubmit& b : submit_batch_) ++(*pending_counts_)[b.rec.uid];
    }
    const int mine = (*pending_counts_)[caller.uid];
    if (mine >= l.pending_per_user) {
      return ResourceExhausted("you have " + std::to_string(mine) + " pending jobs, the most one user may have ([limits] "
                               "pending_per_user = " + std::to_string(l.pending_per_user) +
                               "); wait for some to start, or cancel some");
    }
  }
  if (l.submit_rate > 0) {
    if (!submit_rate_) submit_rate_ = std::make_unique<web::RateLimiter>(l.submit_rate, l.submit_burst);
    const double now = std::chrono::duration<double>(CallerCache::Clock::now().time_since_epoch()).count();
    if (!submit_rate_->Allow(std::to_string(caller.uid), now)) {
      return ResourceExhausted(fmt::format("you are submitting faster than one user may ([limits] submit_rate = {:g} "
                                           "jobs a second, in bursts of {:g}); slow down and try again",
                                           l.submit_rate, l.submit_burst));
    }
  }
  // Counted now: the submissions of this batch are not in jobs_ before their group commit.
  if (pending_counts_) ++(*pending_counts_)[caller.uid];
  return Status();
}

void Daemon::OnRefused(const Peer& peer, const Status& why) {
  NoteRefusal(callers_.Get(peer.uid, peer.gid, peer.pid, CallerCache::Clock::now()), "a connection", why);
}

bool Daemon::Privileged(const Peer& peer) {
  if (peer.uid == 0 || (options_.user_mode && peer.uid == ::getuid())) return true;
  return callers_.Get(peer.uid, peer.gid, peer.pid, CallerCache::Clock::now()).admin;
}

}  // namespace rota::daemon
