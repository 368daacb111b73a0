// Keeping a job off the GPUs it was not given (docs/security.md, "GPU isolation"): a cgroup v2
// device program (BPF_PROG_TYPE_CGROUP_DEVICE) on the job's cgroup that refuses its processes the
// character devices of the other cards (/dev/nvidiaN, major 195, minor N). Without it a job sees
// its cards through CUDA_VISIBLE_DEVICES only, and can still open the others' device nodes.
//
// The program is written here as a few eBPF instructions (as systemd writes its own): one test
// per refused device, everything else allowed. It is attached with BPF_F_ALLOW_MULTI, so the
// programs of the cgroups above (systemd's) still apply too, and stays attached for as long as
// the cgroup exists: no descriptor is kept.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/status.h"

namespace rota::exec {

// A character device: major and minor numbers.
using CharDevice = std::pair<unsigned, unsigned>;

// The major number of /dev/nvidia0.. (the NVIDIA driver's, fixed).
inline constexpr unsigned kNvidiaMajor = 195;

// Whether this kernel loads a device program for this process (BPF, root, kernel 4.15 and later).
bool DeviceFilterAvailable();

// Refuses the processes of cgroup `dir` (a v2 cgroup directory) every access to `devices`.
// Nothing is done for an empty list. FailedPrecondition when the program cannot be loaded or
// attached (no BPF here, not a v2 cgroup).
Status DenyDevices(const std::string& dir, const std::vector<CharDevice>& devices);

}  // namespace rota::exec
