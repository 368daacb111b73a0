// Outside processes: GPU processes that no Rota allocation on their card covers (someone ran
// `python train.py` directly, or a job's process strayed onto a card its job was not given).
// After each sample: each such process (by pid and start time) is recorded once in the GPU audit
// trail, naming its user and whose the card is (the loudest case: another user's allocation or
// booking), the owner and the admins are told, and its card takes no new work while any is on it.
// With [watch] outside_action = "stop", it is stopped after outside_grace (SIGTERM, then SIGKILL
// after the daemon's kill wait); root's processes are never stopped. The owner and the admins
// hear of it through the notifier (event outside_process).
// Tested by tests/daemon/test_gpus.py (OutsideTest).
#include <signal.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/booking.h"
#include "daemon/daemon.h"
#include "exec/procfs.h"

namespace rota::daemon {


std::string Daemon::CardClaims(const std::string& uuid, Time now) const {
  std::string out;
  for (const auto& [id, a] : jobs_) {
    if (a.rec.state != store::JobState::kRunning || !a.rec.placement.OnCard(uuid)) continue;
    out += (out.empty() ? "" : ", ") + a.rec.job.user + "'s job " + std::to_string(id);
  }
  for (const auto& [id, b] : book_->all()) {
    if (b.entry.state != BookingState::kActive || now < b.entry.spec.start || now >= b.entry.spec.end) continue;
    if (std::find(b.gpu_uuids.begin(), b.gpu_uuids.end(), uuid) == b.gpu_uuids.end()) continue;
    out += (out.empty() ? "" : ", ") + b.entry.spec.user + "'s booking " + std::to_string(id);
  }
  return out;
}

void Daemon::WatchOutside(Time now) {
  std::map<std::pair<int, unsigned long long>, OutsideProcess> seen;
  std::set<std::string> held;
  for (const device::GpuInfo& info : last_sample_.gpus) {
    for (const auto& [proc, owner] : Uncovered(info)) {
      // A process that cannot be read (gone, another pid namespace) is not judged.
      StatusOr<unsigned long long> started = exec::ProcessStartTime(proc.pid);
      if (!started.ok() || owner.uid < 0) continue;
      held.insert(info.uuid);
      const auto key = std::make_pair(proc.pid, *started);
      auto was = outside_.find(key);
      OutsideProcess p;
      if (was != outside_.end()) {
        p = was->second;
      } else {
        p.pid = proc.pid;
        p.uid = owner.uid;
        p.user = owner.user;
        p.job = owner.job;
        p.uuid = info.uuid;
        p.gpu_index = info.index;
        p.first_seen = now;
        const std::string claims = CardClaims(info.uuid, now);
        std::string what = ProcessLabel(p.pid, p.user, p.job) + " uses GPU " + std::to_string(info.index) +
                           (proc.used_memory >= 0 ? " (" + FormatMemory(proc.used_memory) + ")" : "") +
                           (p.job != 0 ? ", which its job was not given" : " outside Rota") +
                           (claims.empty() ? "" : "; the card is " + claims + "'s") +
                           "; the card takes no new work while it is there";
        if (config_.watch.outside_stop && p.uid != 0) {
          what += "; it is stopped in " + FormatDuration(config_.watch.outside_grace) + " unless it ends";
        }
        RecordGpuEvent(info.uuid, info.index, "outside", what, now);
        spdlog::warn("admins: {}", what);
        notify::Event e;
        e.name = "outside_process";
        e.user = p.uid == 0 ? "" : p.user;  // root's processes: the admins alone
        e.reason = p.user;
        e.pid = p.pid;
        e.job = p.job;
        e.gpus = std::to_string(info.index);
        e.actor = claims;
        if (config_.watch.outside_stop && p.uid != 0) e.minutes = std::max<Duration>(1, config_.watch.outside_grace / kMinute);
        Notify(e);
      }
      // The policy stop: SIGTERM after the grace, SIGKILL a kill wait later.
      if (config_.watch.outside_stop && p.uid != 0 && now - p.first_seen >= config_.watch.outside_grace) {
        const int sig = p.term_sent == 0 ? SIGTERM : (now - p.term_sent >= options_.kill_wait ? SIGKILL : 0);
        if (sig != 0 && !(sig == SIGKILL && p.killed)) {
          if (::kill(p.pid, sig) != 0) {
            spdlog::error("cannot stop outside process {}: {}", p.pid, std::strerror(errno));
          } else if (sig == SIGTERM) {
            RecordGpuEvent(p.uuid, p.gpu_index, "outside_stopped",
                           ProcessLabel(p.pid, p.user, p.job) + " stopped (SIGTERM) after " + FormatDuration(now - p.first_seen) + " outside Rota",
                           now);
          }
          if (sig == SIGTERM) p.term_sent = now;
          if (sig == SIGKILL) p.killed = true;
        }
      }
      seen[key] = p;
    }
  }
  outside_ = std::move(seen);  // processes no longer on a card are forgotten
  if (held != held_outside_) dirty_ = true;
  held_outside_ = std::move(held);
}

void Daemon::RecordGpuEvent(const std::string& uuid, int gpu_index, const std::string& event, const std::string& reason,
                            Time now) {
  if (Status s = store_->AddGpuEvent({now, uuid, gpu_index, event, reason, "rotad"}); !s.ok()) {
    spdlog::error("GPU {}: cannot record \"{}\": {}", gpu_index, reason, s.message());
  }
}

}  // namespace rota::daemon
