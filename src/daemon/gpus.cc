// The `gpus` and `inventory` operations (card_desk.h): what the cards reported at the last sample, joined with
// who is on them (Rota's jobs and every GPU process, attributed) and their health and drains.
// Requests never wait for the driver: they read the sampler's last result.
#include <unistd.h>

#include <algorithm>

#include "api/protocol.h"
#include "daemon/clock.h"
#include "daemon/card_desk.h"

namespace rota::daemon {

using nlohmann::json;

json CardDesk::Gpus(const Caller& caller) const {
  if (!devices_error_.empty() && watch_->last_sample().gpus.empty() && cards_.gpus().empty()) {
    return api::ErrorReply(Unavailable("cannot read the GPUs: " + devices_error_));
  }
  const Time now = Now();
  // The Rota jobs on a card, and the memory their processes use there.
  auto processes_json = [&](const std::vector<device::ProcessInfo>& processes, const std::string& uuid) {
    json out = json::array();
    for (const device::ProcessInfo& p : processes) {
      const CardWatch::ProcessOwner owner = watch_->Owner(p.pid);
      bool allocated = false;
      if (auto job = jobs_.find(owner.job); owner.job != 0 && job != jobs_.end()) {
        allocated = job->second.rec.placement.OnCard(uuid);
      }
      out.push_back({{"pid", p.pid},
                     {"memory", p.used_memory},
                     {"sm_util", p.sm_util},
                     {"uid", owner.uid},
                     {"user", owner.user},
                     {"job_id", owner.job},
                     {"outside", owner.job == 0},
                     {"allocated", allocated}});
    }
    return out;
  };
  // A cluster node's card: the processes its agent named (pids of that node).
  auto node_processes_json = [&](const std::vector<device::NodeProcess>& processes, const std::string& uuid,
                                 json& out) {
    for (const device::NodeProcess& p : processes) {
      const NodeProcessOwner owner = OwnerOf(p);
      const JobId job = owner.job != nullptr ? owner.job->rec.job.id : 0;
      out.push_back({{"pid", p.pid},
                     {"memory", p.used_memory},
                     {"sm_util", -1},
                     {"uid", p.uid},
                     {"user", p.user},
                     {"job_id", job},
                     {"outside", job == 0},
                     {"allocated", owner.job != nullptr && owner.job->rec.placement.OnCard(uuid)},
                     {"slurm_job", p.slurm_job},
                     {"in_slurm", owner.slurm}});
    }
  };
  json gpus = json::array();
  for (const Gpu& g : cards_.gpus()) {
    const device::GpuInfo* info = watch_->Sampled(g.uuid);
    device::GpuInfo empty;
    if (info == nullptr) {
      empty.uuid = g.uuid;
      empty.index = g.index;
      empty.name = g.model;
      empty.memory_total = g.memory;
      info = &empty;
    }
    json holders = json::array();
    for (const auto& [id, a] : jobs_) {
      if (a.rec.state != store::JobState::kRunning) continue;
      const store::Placement& p = a.rec.placement;
      if (!p.OnCard(g.uuid)) continue;
      // Memory its processes use on this card (or its slice).
      MiB used = -1;
      const std::vector<device::ProcessInfo>* where = &info->processes;
      for (const device::MigInstance& m : info->mig) {
        if (m.uuid == p.mig_uuid) where = &m.processes;
      }
      for (const device::ProcessInfo& proc : *where) {
        if (watch_->Owner(proc.pid).job != id || proc.used_memory < 0) continue;
        used = std::max<MiB>(used, 0) + proc.used_memory;
      }
      const Time end = a.rec.start_time + a.rec.job.time_limit;
      holders.push_back({{"job_id", id},
                         {"user", a.rec.job.user},
                         {"name", a.rec.job.name},
                         {"tier", TierName(a.rec.job.tier)},
                         {"interactive", a.rec.interactive},
                         {"gpu_mem", p.alloc.memory},
                         {"mig_uuid", p.mig_uuid},
                         {"time_left", std::max<Time>(0, (a.rec.kill_at != kNever ? a.rec.kill_at : end) - now)},
                         {"mine", a.rec.uid == static_cast<std::int64_t>(caller.uid)},
                         {"memory_used", used}});
    }
    json mig = json::array();
    for (const device::MigInstance& m : info->mig) {
      mig.push_back({{"uuid", m.uuid},
                     {"profile", m.profile},
                     {"memory_total", m.memory_total},
                     {"memory_used", m.memory_used},
                     {"held_outside", cluster_held_slices_.count(m.uuid) > 0},
                     {"processes", processes_json(m.processes, g.uuid)}});
    }
    // A cluster's jobs outside Rota on the card (plain sbatch): whose, and which job.
    // On a card in MIG mode, one entry for each slice they hold.
    json held_by = json::array();
    for (const auto* outside : {&cluster_holders_, &slice_holders_}) {
      for (auto [it, end] = outside->equal_range(g.uuid); it != end; ++it) {
        const std::optional<std::string> name = UserName(it->second.uid);
        held_by.push_back({{"user", name ? *name : std::to_string(it->second.uid)},
                           {"uid", it->second.uid},
                           {"slurm_job", it->second.job},
                           {"mine", it->second.uid == caller.uid}});
      }
    }
    const CardWatch::CardState& c = watch_->State(g.uuid);
    std::string drained_by, drain_reason;
    Time since = 0;
    if (c.admin_drain) {
      drained_by = c.admin_drain->actor;
      drain_reason = c.admin_drain->reason;
      since = c.admin_drain->since;
    } else if (c.health.state == HealthState::kDrained) {
      drained_by = "health";
      drain_reason = c.health.error;
    } else if (!info->out_of_service.empty()) {
      drained_by = "source";  // e.g. a Slurm node drained or down
      drain_reason = info->out_of_service;
    }
    gpus.push_back({{"index", g.index},
                    {"uuid", g.uuid},
                    {"name", info->name},
                    {"node", info->node},
                    {"pci_bus_id", info->pci_bus_id},
                    {"memory_total", info->memory_total},
                    {"memory_used", info->memory_used},
                    {"util", info->util_gpu},
                    {"util_memory", info->util_memory},
                    {"temperature", info->temperature},
                    {"power_mw", info->power_mw},
                    {"ecc_uncorrected", info->ecc_uncorrected},
                    {"xids", info->xids},
                    {"health", HealthStateName(c.health.state)},
                    {"health_error", c.health.error},
                    {"drained", g.drained && !drained_by.empty()},
                    {"drain_reason", drain_reason},
                    {"drained_by", drained_by},
                    {"drained_since", since},
                    {"held_outside", HeldOutside(g.uuid)},
                    {"held_by", held_by},
                    {"mig", mig},
                    {"processes", processes_json(info->processes, g.uuid)},
                    {"jobs", holders}});
    node_processes_json(info->node_processes, g.uuid, gpus.back()["processes"]);
  }
  json out = api::OkReply();
  out["time"] = now;
  out["sampled_at"] = watch_->sampled_at();
  out["source"] = devices_ ? devices_->Describe() : std::string("none");
  out["driver_version"] = watch_->last_sample().driver_version;
  out["sample_error"] = watch_->sample_error().empty() ? devices_error_ : watch_->sample_error();
  out["gpus"] = std::move(gpus);
  return out;
}

json CardDesk::InventoryReply() const {
  json gpus = json::array();
  for (const Gpu& g : cards_.gpus()) {
    const device::GpuInfo* info = watch_->Sampled(g.uuid);
    json mig = json::array();
    for (const MigSlice& m : g.mig) mig.push_back({{"uuid", m.uuid}, {"profile", m.profile}, {"memory_total", m.memory}});
    json nvlink = json::array();
    for (int peer : g.nvlink) {
      if (peer >= 0 && static_cast<size_t>(peer) < cards_.gpus().size()) nvlink.push_back(cards_.gpus()[peer].index);
    }
    const CardWatch::CardState& c = watch_->State(g.uuid);
    gpus.push_back({{"index", g.index},
                    {"uuid", g.uuid},
                    {"name", g.model},
                    {"pci_bus_id", info ? info->pci_bus_id : ""},
                    {"memory_total", g.memory},
                    {"mig_capable", info ? info->mig_capable : !g.mig.empty()},
                    {"mig_enabled", info ? info->mig_enabled : !g.mig.empty()},
                    {"mig", mig},
                    {"nvlink", nvlink},
                    {"health", HealthStateName(c.health.state)},
                    {"drained", g.drained},
                    {"drain_reason", c.admin_drain ? c.admin_drain->reason : c.health.error}});
  }
  json out = api::OkReply();
  out["hostname"] = HostName();
  out["source"] = devices_ ? devices_->Describe() : std::string("none");
  out["driver_version"] = watch_->last_sample().driver_version;
  out["time"] = Now();
  out["gpus"] = std::move(gpus);
  out["storage"] = config_.storage_paths;
  return out;
}

}  // namespace rota::daemon
