// Tested by containers_test.cc and tests/daemon/test_containers.py.
#include "daemon/containers.h"

namespace rota::daemon {

Status CheckImage(const config::Config& config, const std::string& image, bool root_daemon) {
  const config::ContainersConfig& c = config.containers;
  if (c.runtime == exec::ContainerRuntime::kNone) {
    return FailedPrecondition("this server runs no containers ([containers] runtime is not set): run without "
                              "--image, or ask the admins for a container runtime");
  }
  if (config.engine.kind != config::EngineKind::kLocal) {
    return FailedPrecondition("containers run only with the local engine for now; this server hands jobs to "
                              "Slurm: run without --image");
  }
  if (exec::StartedByRoot(c.runtime) && !root_daemon) {
    return FailedPrecondition(std::string("this rotad does not run as root, and ") +
                              exec::ContainerRuntimeName(c.runtime) +
                              " jobs are started by root and given their user: run without --image");
  }
  if (!exec::ImageAllowed(image, c.images)) {
    return PermissionDenied("the image " + image + " is not one this lab allows (" + Join(c.images, ", ") +
                            "); `rota rules` lists them");
  }
  return Status();
}

exec::ContainerSpec ContainerFor(const config::ContainersConfig& lab, const store::JobRecord& rec,
                                 const std::string& user, const std::vector<int>& minors) {
  exec::ContainerSpec c;
  c.runtime = lab.runtime;
  c.program = lab.Program();
  c.global_args = lab.runtime_args;
  c.image = rec.image;
  for (const exec::ContainerMount& m : lab.mounts) c.mounts.push_back(exec::ForUser(m, user));
  if (!lab.data_dir.empty()) {
    c.mounts.push_back(exec::ForUser({lab.data_dir, lab.data_dir, false, true, true}, user));
  }
  c.network = lab.network;
  c.as_owner = !lab.allow_root;
  c.gpus = lab.gpus;
  if (!rec.placement.mig_uuid.empty()) {
    c.gpu_ids = {rec.placement.mig_uuid};
  } else {
    c.gpu_ids = rec.placement.gpu_uuids;
  }
  c.gpu_minors = minors;
  return c;
}

}  // namespace rota::daemon
