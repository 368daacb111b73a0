// Outside processes, carried out (card_desk.h): after each sample the desk reads who runs what
// outside an allocation (this machine's /proc; a cluster node's processes as its agent named
// them, NodeOutside), OutsideWatch (outside_watch.h) decides what is new and what is stopped,
// and this records each new one once in the GPU audit trail, naming its user and whose the card is (the
// loudest case: another user's allocation or booking), tells the owner and the admins (event
// outside_process), and sends the policy's signals. Tested by tests/daemon/test_gpus.py
// (OutsideTest) and cards_test.cc (in-process).
#include <signal.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/booking.h"
#include "daemon/card_desk.h"
#include "exec/procfs.h"

namespace rota::daemon {

std::string CardDesk::CardClaims(const std::string& uuid, Time now) const {
  std::string out;
  for (const auto& [id, a] : jobs_) {
    if (a.rec.state != store::JobState::kRunning || !a.rec.placement.OnCard(uuid)) continue;
    out += (out.empty() ? "" : ", ") + a.rec.job.user + "'s job " + std::to_string(id);
  }
  for (const auto& [id, b] : setup_.bookings->book().all()) {
    if (b.entry.state != BookingState::kActive || now < b.entry.spec.start || now >= b.entry.spec.end) continue;
    if (std::find(b.gpu_uuids.begin(), b.gpu_uuids.end(), uuid) == b.gpu_uuids.end()) continue;
    out += (out.empty() ? "" : ", ") + b.entry.spec.user + "'s booking " + std::to_string(id);
  }
  return out;
}

CardDesk::NodeProcessOwner CardDesk::OwnerOf(const device::NodeProcess& np) const {
  if (np.slurm_job.empty()) return {};  // started on the node by hand
  const std::string name = "Slurm job " + np.slurm_job;
  for (const auto& [id, a] : jobs_) {
    if (a.rec.state != store::JobState::kRunning || a.rec.engine_job != name) continue;
    // Another uid naming a Rota job's Slurm job (SLURM_JOB_ID set by hand) is not that job's.
    if (np.uid >= 0 && np.uid != a.rec.uid) return {};
    return {false, &a};
  }
  return {true, nullptr};  // a Slurm job outside Rota
}

void CardDesk::NodeOutside(std::vector<OutsideWatch::Process>& sample) const {
  for (const device::GpuInfo& info : watch_->last_sample().gpus) {
    if (info.node.empty()) continue;
    for (const device::NodeProcess& np : info.node_processes) {
      const NodeProcessOwner owner = OwnerOf(np);
      // Slurm's own jobs are counted among the GPUs its jobs hold, not as outside processes.
      if (owner.slurm) continue;
      if (owner.job != nullptr && owner.job->rec.placement.OnCard(info.uuid)) continue;  // its own job's
      const JobId job = owner.job != nullptr ? owner.job->rec.job.id : 0;  // or strayed onto this card
      OutsideWatch::Process p;
      p.pid = np.pid;
      p.start_time = np.start_time;
      p.uid = np.uid;
      p.user = np.user;  // "" when the node could not name the uid: then told to the admins alone
      p.job = job;
      p.node = info.node;
      p.uuid = info.uuid;
      p.gpu_index = info.index;
      p.used_memory = np.used_memory;
      // Its agent stops only what it can tell is nobody's job (device::OrdersToCarryOut).
      p.stoppable = np.slurm_job.empty() && np.uid > 0 && setup_.agents != nullptr;
      sample.push_back(std::move(p));
    }
  }
}

void CardDesk::WatchOutside(Time now) {
  std::vector<OutsideWatch::Process> sample;
  NodeOutside(sample);
  for (const device::GpuInfo& info : watch_->last_sample().gpus) {
    for (const auto& [proc, owner] : watch_->Uncovered(info, Placed())) {
      // A process that cannot be read (gone, another pid namespace) is not judged.
      StatusOr<unsigned long long> started = exec::ProcessStartTime(proc.pid);
      if (!started.ok() || owner.uid < 0) continue;
      OutsideWatch::Process p;
      p.pid = proc.pid;
      p.start_time = *started;
      p.uid = owner.uid;
      p.user = owner.user;
      p.job = owner.job;
      p.uuid = info.uuid;
      p.gpu_index = info.index;
      p.used_memory = proc.used_memory;
      sample.push_back(std::move(p));
    }
  }
  const OutsideWatch::Rules rules{config_.watch.outside_stop, config_.watch.outside_grace, setup_.kill_wait};
  OutsideWatch::Step step = outside_.Observe(std::move(sample), rules, now);
  for (const OutsideWatch::Process& p : step.new_processes) {
    const std::string claims = CardClaims(p.uuid, now);
    const bool here = p.node.empty();  // a node's process: stopped through its agent
    std::string what = CardWatch::ProcessLabel(p.pid, p.user, p.job) + (here ? "" : " on node " + p.node) +
                       " uses GPU " + std::to_string(p.gpu_index) +
                       (p.used_memory >= 0 ? " (" + FormatMemory(p.used_memory) + ")" : "") +
                       (p.job != 0 ? ", which its job was not given" : " outside Rota") +
                       (claims.empty() ? "" : "; the card is " + claims + "'s") +
                       "; the card takes no new work while it is there";
    if (rules.stop && p.uid != 0 && p.stoppable) what += "; it is stopped in " + FormatDuration(rules.grace) + " unless it ends";
    RecordGpuEvent(p.uuid, p.gpu_index, "outside", what, now);
    spdlog::warn("admins: {}", what);
    notify::Event e;
    e.name = "outside_process";
    e.user = p.uid == 0 ? "" : p.user;  // root's processes: the admins alone
    e.reason = p.user;
    e.pid = p.pid;
    e.job = p.job;
    e.gpus = std::to_string(p.gpu_index);
    e.actor = claims;
    if (rules.stop && p.uid != 0 && p.stoppable) e.minutes = std::max<Duration>(1, rules.grace / kMinute);
    setup_.notes->Notify(e);
  }
  for (const auto& [p, sig] : step.signals) {
    if (!p.node.empty()) {
      // A node's pid: the node's agent is asked (in the reply to its next readings), and checks it.
      setup_.agents->Order(p.node, {p.pid, p.start_time, sig});
      if (sig == SIGTERM) {
        RecordGpuEvent(p.uuid, p.gpu_index, "outside_stopped",
                       CardWatch::ProcessLabel(p.pid, p.user, p.job) + " on node " + p.node +
                           ": its agent asked to stop it (SIGTERM) after " + FormatDuration(now - p.first_seen) +
                           " outside Rota",
                       now);
      }
      outside_.Sent(p, sig, now);
      continue;
    }
    if (::kill(p.pid, sig) != 0) {
      spdlog::error("cannot stop outside process {}: {}", p.pid, std::strerror(errno));
    } else if (sig == SIGTERM) {
      RecordGpuEvent(p.uuid, p.gpu_index, "outside_stopped",
                     CardWatch::ProcessLabel(p.pid, p.user, p.job) + " stopped (SIGTERM) after " +
                         FormatDuration(now - p.first_seen) + " outside Rota",
                     now);
    }
    outside_.Sent(p, sig, now);
  }
  if (step.held_changed) setup_.changed();
}

void CardDesk::RecordGpuEvent(const std::string& uuid, int gpu_index, const std::string& event, const std::string& reason,
                            Time now) {
  if (Status s = store_->AddGpuEvent({now, uuid, gpu_index, event, reason, "rotad"}); !s.ok()) {
    spdlog::error("GPU {}: cannot record \"{}\": {}", gpu_index, reason, s.message());
  }
}

}  // namespace rota::daemon
