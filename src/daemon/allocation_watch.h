// Watching allocations after each GPU sample (docs/design.md, "Idle GPUs"): a running job or
// session whose GPUs stay idle is warned, then acted on (the admins told, or the job reclaimed),
// by the core's rules (core/watch.h); a memory share that uses more than it declared is warned,
// then acted on; `rota keep ID` restarts the idle clock a few times a day. Every step goes to
// the job's audit trail with the measurements, and its owner hears of it. It also measures each
// running allocation's GPU-seconds (sampled, busy, idle) for the usage report, kept with the job
// until its run ends.
//
// It reads the cards through the card watch (card_watch.h: the last sample, who each process
// belongs to) and keeps per job its idle clock; a stop is the daemon's (its signal, grace, then
// the stop). Runs on the daemon's loop thread. Tested by allocation_watch_test.cc,
// lifecycle_test.cc (in-process, virtual time) and tests/daemon/test_watch.py.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>

#include "config/config.h"
#include "core/watch.h"
#include "daemon/active_job.h"
#include "daemon/card_watch.h"
#include "daemon/identity.h"
#include "daemon/inventory.h"
#include "daemon/job_table.h"
#include "daemon/notifications.h"
#include "store/job_store.h"

namespace rota::daemon {

class AllocationWatch {
 public:
  struct Setup {
    store::JobStore* store = nullptr;        // all must outlive the watch
    const config::Config* config = nullptr;  // the configuration in force
    JobTable* jobs = nullptr;
    const Inventory* cards = nullptr;
    const CardWatch* watch = nullptr;
    Notifications* notes = nullptr;
    // Adds a line to a job's audit trail.
    std::function<void(JobId, const std::string&, Time)> note_job;
    // Stops a running job for the reason set in its stop_reason (its signal, grace, then the stop).
    std::function<void(ActiveJob&, Time)> stop;
  };
  explicit AllocationWatch(Setup setup);

  // What one sample says of an allocation.
  struct Reading {
    int util = -1;       // percent, -1 unknown
    double memory = -1;  // fraction of its memory in use, -1 unknown
    MiB used = -1;       // MiB its processes use, -1 unknown
  };
  Reading Read(JobId id, const ActiveJob& a) const;

  // After a sample at `now`: each running allocation's GPU-seconds added up, then its idle clock
  // and its memory watched.
  void Measure(Time now);
  void Watch(Time now);
  // Adds `a`'s measures to the store and clears them (its run ended, or rotad stops).
  void SaveMeasures(ActiveJob& a);

  // `rota keep ID`: `caller` may see the job (checked before); it must be running.
  nlohmann::json Keep(const Caller& caller, JobId id, Time now);

 private:
  store::JobStore* store_;
  const config::Config& config_;
  JobTable& jobs_;
  const Inventory& cards_;
  const CardWatch& watch_;
  Notifications* notes_;
  std::function<void(JobId, const std::string&, Time)> note_job_;
  std::function<void(ActiveJob&, Time)> stop_;
  std::unordered_map<JobId, IdleWatch> watches_;  // running jobs and sessions
};

}  // namespace rota::daemon
