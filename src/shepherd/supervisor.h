// rota-shepherd's parent side: starts the job, forwards signals to it while it runs, and once
// its leader has exited kills what it left behind and tells how it ended.
#pragma once

#include <optional>

#include "exec/executor.h"
#include "exec/spec.h"

namespace rota::shepherd {

// Runs the job described by `spec` to its end and returns how it ended (kExited, kSignalled or
// kStartFailed; never kVanished). Signals: SIGRTMIN+1 with value N forwards signal N to the
// job's process group (N = SIGKILL kills the whole cgroup, or the group); SIGTERM, SIGINT,
// SIGHUP, SIGUSR1 and SIGUSR2 sent to the shepherd itself are forwarded the same way.
// `job_nice`: where the shepherd runs at a higher priority than its job should (a standby:
// main.cc), the job's nice value, which the shepherd also returns to once the job is started.
// REQUIRES: single-threaded process; called once.
exec::ExitInfo SuperviseJob(const exec::JobSpec& spec, std::optional<int> job_nice);

// The signals the shepherd receives through its signalfd (all blocked).
void ShepherdSignals(sigset_t* set);

}  // namespace rota::shepherd
