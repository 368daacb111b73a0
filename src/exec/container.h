// Jobs in containers (`rota submit --image`): what the daemon puts in a job's spec, and the pure
// parts of turning it into the runtime's command line (docs/design.md, "Containers").
//
// Podman and Docker are started as root by rota-shepherd, which gives the container the job's
// user (--user UID:GID), no capabilities, no new privileges, only the job's GPUs, its limits and
// the mounts below; Apptainer is started as the job's user, like any job. The command line is
// built in the shepherd's child at exec time (container_argv.h), once the mounts are resolved.
//
// Mounts that a user controls (the working directory, the user's data directory) are not mounted
// as the path they give: root would follow a symlink the user swaps in between the check and the
// mount. MountRoot climbs to the deepest ancestor whose path no one but root can change, and that
// directory is mounted (at the same path) instead: for /home/ana/exp1, /home/ana.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace rota::exec {

enum class ContainerRuntime { kNone, kPodman, kDocker, kApptainer };

const char* ContainerRuntimeName(ContainerRuntime runtime);  // "podman", ...; "" for kNone
std::optional<ContainerRuntime> ParseContainerRuntime(std::string_view name);
// Podman and Docker are started by root and told which user to be; Apptainer runs as the user.
bool StartedByRoot(ContainerRuntime runtime);

// How GPUs reach a Podman container: CDI names (nvidia.com/gpu=UUID, where the NVIDIA container
// toolkit wrote a CDI spec), the cards' device nodes, or whichever the machine has (kAuto: CDI
// when a spec file exists in /etc/cdi or /var/run/cdi).
enum class ContainerGpus { kAuto, kCdi, kDevices };

struct ContainerMount {
  std::string source;      // absolute host path
  std::string target;      // absolute path in the container
  bool read_only = false;
  bool users = false;      // a path the job's user controls: mounted from its MountRoot
  bool optional = false;   // skipped when the source does not exist (the user's data directory)
};

// The container part of a job's spec (LaunchSpec::container). runtime == kNone: no container.
struct ContainerSpec {
  ContainerRuntime runtime = ContainerRuntime::kNone;
  std::string program;                   // the runtime's executable, absolute
  std::vector<std::string> global_args;  // before the verb ("--runtime", "runc", ...)
  std::string image;
  std::string name;                      // unique per launch: rota-job-<id>-<token prefix>
  std::vector<ContainerMount> mounts;    // besides the working directory's, which is always there
  bool network = false;                  // false: --network none
  bool as_owner = true;                  // false: the image's own user (the lab allows root)
  ContainerGpus gpus = ContainerGpus::kAuto;
  std::vector<std::string> gpu_ids;      // the job's cards' UUIDs (its MIG slice's, for a slice)
  std::vector<int> gpu_minors;           // their /dev/nvidia<minor>; none known for simulated cards
};

// A variable name an env file can hold (and [containers] env may list): [A-Za-z_][A-Za-z0-9_]*.
bool IsShellName(const std::string& name);

// Whether `image` matches one of the lab's patterns (shell globs; '*' also matches '/').
bool ImageAllowed(std::string_view image, const std::vector<std::string>& patterns);

// "SRC[:DST][:ro|:rw]" from [containers] mounts; "{user}" in SRC or DST stands for the job's user
// (a mount that names it is the user's: ContainerMount::users). InvalidArgument when SRC or DST
// is not absolute, the mode is unknown, or the text has more parts.
StatusOr<ContainerMount> ParseContainerMount(std::string_view text);
// "{user}" replaced by `user` in source and target.
ContainerMount ForUser(ContainerMount mount, const std::string& user);

// What MountRoot needs of a path: lstat.
using Lstat = std::function<int(const std::string& path, struct stat* st)>;

// The deepest ancestor of `path` (itself included) whose every component lies in a directory
// only root may change: owned by root and not group- or world-writable, or sticky with the
// component owned by root. `path` must be absolute and already resolved (realpath: no symlinks,
// no "." or ".."); a symlink met on the way ends the climb. FailedPrecondition when that
// ancestor is "/" (nothing below the root is safe to mount); the lstat errors as they come.
StatusOr<std::string> MountRoot(const std::string& path, const Lstat& lstat);

}  // namespace rota::exec
