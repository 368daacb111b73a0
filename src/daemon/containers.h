// Container jobs on the daemon's side (docs/design.md, "Containers"): whether a job's image may
// run here, at submit, and the container part of its launch spec, at start. Pure.
#pragma once

#include <string>
#include <vector>

#include "config/config.h"
#include "core/status.h"
#include "exec/container.h"
#include "store/job_record.h"

namespace rota::daemon {

// Whether a job may ask for `image` here: containers configured ([containers] runtime), the
// local engine, a root rotad for Podman and Docker (they are started as root and told the user),
// and an image the lab allows. One clear refusal otherwise.
Status CheckImage(const config::Config& config, const std::string& image, bool root_daemon);

// The container part of a started job's spec: the lab's runtime and mounts (with "{user}"
// filled in, the data directory optional), the job's cards (UUIDs, or its slice's) and their
// device minors. The container's name is left to the shepherd, which makes it unique per launch.
exec::ContainerSpec ContainerFor(const config::ContainersConfig& lab, const store::JobRecord& rec,
                                 const std::string& user, const std::vector<int>& minors);

}  // namespace rota::daemon
