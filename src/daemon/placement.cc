// Where a started job runs, as the store, the job and its limits see it: the placement by card
// UUID, the environment that points it at its cards (CUDA_VISIBLE_DEVICES by UUID, ROTA_*), the
// cards' device indices, and its host memory limit. Tested by tests/daemon/test_jobs.py (the
// environment a job sees, its memory per GPU) and in-process by lifecycle_test.cc
// (CUDA_VISIBLE_DEVICES by UUID).
#include <string>
#include <vector>

#include "daemon/daemon.h"

namespace rota::daemon {

store::Placement Daemon::PlacementOf(const Allocation& alloc) const {
  store::Placement p;
  p.alloc = alloc;
  for (int g : alloc.gpus) p.gpu_uuids.push_back(cards_.gpus[static_cast<size_t>(g)].uuid);
  if (alloc.mig >= 0 && !alloc.gpus.empty()) {
    p.mig_uuid = cards_.gpus[static_cast<size_t>(alloc.gpus[0])].mig[static_cast<size_t>(alloc.mig)].uuid;
  }
  return p;
}

std::map<std::string, std::string> Daemon::AllocationEnv(const store::JobRecord& rec) const {
  std::map<std::string, std::string> env;
  const store::Placement& p = rec.placement;
  std::string visible;
  if (!p.mig_uuid.empty()) {
    visible = p.mig_uuid;
  } else {
    for (const std::string& u : p.gpu_uuids) visible += (visible.empty() ? "" : ",") + u;
  }
  env["CUDA_VISIBLE_DEVICES"] = visible;
  env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";
  env["ROTA_JOB_ID"] = std::to_string(rec.job.id);
  env["ROTA_GPUS"] = GpuIndexList(p.alloc);
  if (p.alloc.memory > 0) env["ROTA_GPU_MEM"] = std::to_string(p.alloc.memory) + "M";
  if (!p.mig_uuid.empty()) env["ROTA_MIG_PROFILE"] = rec.job.request.mig_profile;
  return env;
}

std::string Daemon::GpuIndexList(const Allocation& alloc) const {
  std::vector<int> indices;
  for (int g : alloc.gpus) indices.push_back(cards_.gpus[static_cast<size_t>(g)].index);
  return JoinInts(indices, ",");
}

std::int64_t Daemon::HostMemoryLimit(const store::JobRecord& rec, const Allocation& alloc) const {
  const MiB per_gpu = rec.job.host_mem_per_gpu > 0 ? rec.job.host_mem_per_gpu : config_.default_mem_per_gpu;
  return per_gpu * static_cast<std::int64_t>(std::max<size_t>(1, alloc.gpus.size())) * 1024 * 1024;
}

}  // namespace rota::daemon
