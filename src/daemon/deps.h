// What the daemon is handed from outside (docs/design.md, "Engines and the outside world"): its
// options, and DaemonDeps, the outside world it talks to through interfaces: the clock, the
// store, the engine that runs jobs, the GPUs, the accounts of job owners and the notification
// transport. main() hands the real ones (the defaults below); the in-process tests
// (src/testing/daemon/in_process.h) a fake clock, a fake engine, scripted cards, made-up
// accounts and channels that record what they are given.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/status.h"
#include "core/types.h"
#include "daemon/clock.h"
#include "daemon/engine.h"
#include "daemon/event_loop.h"
#include "daemon/identity.h"
#include "device/devices.h"
#include "device/simulated_devices.h"
#include "notify/channels.h"
#include "store/job_store.h"

namespace rota::daemon {

struct DaemonOptions {
  std::string config_path;  // "" = no file: the built-in defaults
  bool user_mode = false;   // run by an ordinary user for that user alone
  std::string state_dir;    // resolved: the database, the run directory, the lock
  std::string socket_path;  // resolved
  std::string shepherd_path;
  Duration kill_wait = 10;  // SIGTERM to SIGKILL
};

// What an engine is made with: the daemon's loop (to watch what it waits for), where it reports,
// and the clock. All outlive the engine.
struct EngineHost {
  EventLoop& loop;
  EngineEvents& events;
  const Clock& clock;
  const DaemonOptions& options;
};
using EngineFactory = std::function<StatusOr<std::unique_ptr<Engine>>(const EngineHost&)>;

// The local engine (local_engine.h) with the run directory and cgroup base of `host.options`.
StatusOr<std::unique_ptr<Engine>> MakeLocalEngine(const EngineHost& host);
// The Slurm engine (slurm_engine.h) of [engine] kind = "slurm", its launch files in
// <state_dir>/slurm.
StatusOr<std::unique_ptr<Engine>> MakeSlurmEngine(const config::EngineConfig& config, const EngineHost& host);

// What the running jobs declare they use of simulated cards (device/simulated_devices.h), asked
// by the sampler's thread at each sample.
using SimulatedLoadsFn = std::function<std::vector<device::SimulatedLoad>()>;
// The GPU source for `config`: made at start, again at each reload for simulated cards (their
// list is the configuration's), and for NVML only when [gpus] changes where it is read from.
using DevicesFactory =
    std::function<std::shared_ptr<device::Devices>(const config::Config& config, SimulatedLoadsFn loads)>;
// [gpus] source: the simulated cards of the configuration, driven by `loads`, or NVML loaded
// at run time with the configured library and deadline.
std::shared_ptr<device::Devices> MakeConfiguredDevices(const config::Config& config, SimulatedLoadsFn loads);

// The store at `path` (created and migrated when needed). There is no fake: SQLite in a
// temporary directory is fast enough for every test, and it is the part we rely on
// (docs/design.md, "Engines and the outside world").
using StoreOpener = std::function<StatusOr<std::unique_ptr<store::JobStore>>(const std::string& path)>;

// The outside world the daemon is handed. The clock is borrowed and must outlive the daemon; the
// engine is made by the daemon once its loop exists.
struct DaemonDeps {
  Clock* clock = &SystemClock();
  StoreOpener store = store::JobStore::Open;
  EngineFactory engine = MakeLocalEngine;
  DevicesFactory devices = MakeConfiguredDevices;
  // Job owners' accounts (uid, gid, groups, shell): the system's user database.
  std::function<StatusOr<UnixAccount>(uid_t)> accounts = LookUpAccount;
  // The notification transport: a channel of [notify.channels.NAME] (mail, chat bots, webhooks,
  // terminals), made at start and at each reload.
  std::function<StatusOr<std::unique_ptr<notify::Channel>>(const notify::ChannelSpec&)> channels =
      notify::MakeChannel;
};

}  // namespace rota::daemon
