// `rotad --agent URL`: the small mode that runs on each compute node of a cluster whose head rotad
// uses the Slurm engine (issue 26, GPUs on every node). It samples this node's GPUs through the
// configured source ([gpus] source: NVML, or simulated cards) every interval and posts their
// readings (device/node_readings.h) to the head's POST /agent/readings with this node's token.
// It holds no state and schedules nothing: a head that does not answer is said once and tried
// again at the next interval. Stops on SIGTERM or SIGINT. With --poke it is the node's end hook
// instead (PokeHead).
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
  bool poke = false;       // --poke: PokeHead, once
};

// Runs until SIGTERM or SIGINT; the exit code (0 stopped, 1 could not start).
int RunAgent(const AgentOptions& options, const config::Config& config);

// `rotad --agent URL --poke`, from the node's Slurm Epilog: tells the head a job ended here and
// waits (POST /agent/poke with this node's token) until the head has submitted what the end let
// start, at most kPokeTimeoutMs. 0 when the head answered, 1 otherwise (said on stderr).
int PokeHead(const AgentOptions& options);
constexpr long kPokeTimeoutMs = 5'000;

}  // namespace rota::daemon
