// rota-shepherd's part in container jobs (exec/container.h, docs/design.md "Containers").
//
// In the forked child (job_start.cc): Podman and Docker are started as root, so the child does
// not drop privileges for good. It takes the job's user for file access only (BecomeUserForFiles):
// the working directory, the log and the mounts' paths are reached with the user's rights, then
// it returns to root for the runtime. Apptainer is started as the user, like any job.
// In the supervisor: the runtime's `rm` for what a SIGKILL to the attached client leaves running.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "exec/container.h"
#include "exec/executor.h"

namespace rota::shepherd {

// Root takes on the job's user's groups, egid and euid, keeping root to return to.
void BecomeUserForFiles(const exec::LaunchSpec& spec, int error_fd);
void BackToRoot(int error_fd);

struct ContainerExec {
  std::vector<std::string> argv;  // argv[0]: the runtime's program, absolute
  std::map<std::string, std::string> env;
};

// In the child, with the working directory entered and the log open: resolves the mounts (as
// the user; then, back as root when `root_launch`, each user's mount to its MountRoot), gives the
// environment to the runtime (an unlinked memory file for podman and docker) and returns what to
// exec. On failure writes the reason to error_fd and exits 127 (job_start.h).
ContainerExec PrepareContainer(const exec::LaunchSpec& spec, int error_fd, bool root_launch);

// Runs a runtime command (argv[0] absolute) with /dev/null as its stdio and waits at most
// `timeout_ms` (then kills it). Its exit status; -1 when it could not run, was killed or took
// too long; 127 when the program could not be executed.
int RunRuntime(const std::vector<std::string>& argv, int timeout_ms);

// Runs the runtime's `rm --force` for the job's container and waits at most `timeout_ms` for it.
// Nothing for Apptainer. Returns false when it could not run or did not finish in time.
bool RemoveContainer(const exec::ContainerSpec& container, int timeout_ms);

}  // namespace rota::shepherd
