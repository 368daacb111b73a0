// The `gpus` operation: what each card reports now (through the configured Devices, bounded by
// its deadline) together with who holds it in Rota: the live view behind `rota gpus`.
#include <spdlog/spdlog.h>

#include "api/protocol.h"
#include "daemon/clock.h"
#include "daemon/daemon.h"

namespace rota::daemon {

using nlohmann::json;

namespace {

json Processes(const std::vector<device::ProcessInfo>& processes) {
  json out = json::array();
  for (const device::ProcessInfo& p : processes) {
    out.push_back({{"pid", p.pid}, {"memory", p.used_memory}});
  }
  return out;
}

}  // namespace

json Daemon::GpusReply(const Caller& caller) {
  StatusOr<device::Snapshot> snap = devices_ ? devices_->Sample() : StatusOr<device::Snapshot>(Unavailable("no GPU source"));
  if (!snap.ok()) return api::ErrorReply(Unavailable("cannot read the GPUs: " + snap.status().message()));
  const Time now = Now();
  json gpus = json::array();
  for (const device::GpuInfo& info : snap->gpus) {
    // Who holds this card (or a slice of it) in Rota: everyone sees owner, job and name, as in
    // `rota queue --all`.
    json holders = json::array();
    bool drained = false;
    for (const Gpu& g : cards_.gpus) {
      if (g.uuid == info.uuid) drained = g.drained;
    }
    for (const auto& [id, a] : jobs_) {
      if (a.rec.state != store::JobState::kRunning) continue;
      const store::Placement& p = a.rec.placement;
      bool here = false;
      for (const std::string& uuid : p.gpu_uuids) here = here || uuid == info.uuid;
      if (!here) continue;
      const Time end = a.rec.start_time + a.rec.job.time_limit;
      holders.push_back({{"job_id", id},
                         {"user", a.rec.job.user},
                         {"name", a.rec.job.name},
                         {"tier", TierName(a.rec.job.tier)},
                         {"interactive", a.rec.interactive},
                         {"gpu_mem", p.alloc.memory},
                         {"mig_uuid", p.mig_uuid},
                         {"time_left", std::max<Time>(0, (a.rec.kill_at != kNever ? a.rec.kill_at : end) - now)},
                         {"mine", a.rec.uid == static_cast<std::int64_t>(caller.uid)}});
    }
    json mig = json::array();
    for (const device::MigInstance& m : info.mig) {
      mig.push_back({{"uuid", m.uuid},
                     {"profile", m.profile},
                     {"memory_total", m.memory_total},
                     {"memory_used", m.memory_used},
                     {"processes", Processes(m.processes)}});
    }
    gpus.push_back({{"index", info.index},
                    {"uuid", info.uuid},
                    {"name", info.name},
                    {"memory_total", info.memory_total},
                    {"memory_used", info.memory_used},
                    {"util", info.util_gpu},
                    {"temperature", info.temperature},
                    {"power_mw", info.power_mw},
                    {"mig", mig},
                    {"processes", Processes(info.processes)},
                    {"health", info.health.ok() ? std::string("ok") : info.health.message()},
                    {"drained", drained},
                    {"jobs", holders}});
  }
  json out = api::OkReply();
  out["driver_version"] = snap->driver_version;
  out["time"] = now;
  out["gpus"] = std::move(gpus);
  return out;
}

}  // namespace rota::daemon
