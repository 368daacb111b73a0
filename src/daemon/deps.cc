// The real outside world of DaemonDeps (deps.h): the local or Slurm engine and the configured GPU
// source.
// Tested through every test of tests/daemon, which run the real rotad.
#include "daemon/deps.h"

#include <chrono>
#include <cstdio>
#include <functional>

#include "api/protocol.h"
#include "daemon/local_engine.h"
#include "daemon/slurm_cards.h"
#include "daemon/slurm_engine.h"
#include "device/nvml_devices.h"
#include "exec/executor.h"

namespace rota::daemon {

StatusOr<std::unique_ptr<Engine>> MakeLocalEngine(const EngineHost& host) {
  const DaemonOptions& options = host.options;
  exec::ExecutorOptions eo;
  eo.shepherd_path = options.shepherd_path;
  eo.run_dir = options.state_dir + "/run";
  // One cgroup base per daemon: the system daemon's is "rota"; any other (user mode, tests,
  // a second instance) gets one named after its state directory, stable across restarts.
  if (options.user_mode || options.state_dir != api::kSystemStateDir) {
    char name[32];
    std::snprintf(name, sizeof name, "rota-%016zx", std::hash<std::string>{}(options.state_dir));
    eo.cgroup_name = name;
  }
  StatusOr<std::unique_ptr<LocalEngine>> engine = LocalEngine::Create(eo, host.loop, host.events, host.clock);
  if (!engine.ok()) return engine.status();
  return std::unique_ptr<Engine>(std::move(*engine));
}

StatusOr<std::unique_ptr<Engine>> MakeSlurmEngine(const config::EngineConfig& config, const EngineHost& host) {
  SlurmEngineOptions so;
  if (Status s = FindSlurmCommands(config.bin_dir, so); !s.ok()) return s;
  so.submit.partition = config.partition;
  so.submit.account = config.account;
  so.submit.slurm_conf = config.slurm_conf;
  so.submit.tag = config.tag;
  so.node = config.node;
  so.run_dir = host.options.state_dir + "/slurm";
  so.deadline = std::chrono::seconds(config.command_timeout);
  so.poll = std::chrono::milliseconds(static_cast<long long>(config.poll_interval * 1000));
  StatusOr<std::unique_ptr<SlurmEngine>> engine = SlurmEngine::Create(so, host.loop, host.events, host.clock);
  if (!engine.ok()) return engine.status();
  return std::unique_ptr<Engine>(std::move(*engine));
}

std::shared_ptr<device::Devices> MakeConfiguredDevices(const config::Config& config, SimulatedLoadsFn loads) {
  if (config.gpu_source == config::GpuSource::kSimulated) {
    return device::MakeSimulatedDevices(config.simulated_gpus, std::move(loads));
  }
  if (config.gpu_source == config::GpuSource::kSlurm) {
    SlurmCardsOptions so;
    so.sinfo = config.engine.bin_dir + "/sinfo";
    so.slurm_conf = config.engine.slurm_conf;
    so.partition = config.engine.partition;
    so.deadline = std::chrono::seconds(config.engine.command_timeout);
    so.model = config.engine.gpu_model;
    so.memory = config.engine.gpu_memory;
    return std::make_shared<SlurmCards>(std::move(so));
  }
  device::NvmlOptions no;
  no.library_path = config.nvml_library;
  no.deadline = std::chrono::seconds(config.nvml_timeout);
  return device::MakeNvmlDevices(no);
}

}  // namespace rota::daemon
