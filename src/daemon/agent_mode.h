// `rotad --agent URL`: the small mode that runs on each compute node of a cluster whose head rotad
// uses the Slurm engine (issue 26, GPUs on every node). It samples this node's GPUs through the
// configured source ([gpus] source: NVML, or simulated cards) every interval and posts their
// readings (device/node_readings.h) to the head's POST /agent/readings with this node's token.
// It holds no state and schedules nothing: a head that does not answer is said once and tried
// again at the next interval. Stops on SIGTERM or SIGINT.
//
// Tested through real processes by tests/daemon/test_slurm_nodes.py (AgentTest).
#pragma once

#include <string>

#include "config/config.h"
#include "core/status.h"

namespace rota::daemon {

struct AgentOptions {
  std::string head;        // the head rotad's base URL: "https://head:8443"
  std::string node;        // this node's name in Slurm ("" = the short host name)
  std::string token_file;  // this node's token (mode 0600)
  double interval = 5;     // seconds between readings
};

// Runs until SIGTERM or SIGINT; the exit code (0 stopped, 1 could not start).
int RunAgent(const AgentOptions& options, const config::Config& config);

}  // namespace rota::daemon
