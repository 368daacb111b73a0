// The lab's accounts: each user's and project's GPU usage (fair-share usage decaying with time,
// and the GPU-hours of the quota week), charged when a run ends (or its last process is gone)
// and stored in the same commit as the run's end, so that a crash can neither lose a charge nor
// make a restart charge it twice. The scheduler plans with these figures (quotas, fair share);
// `rota usage` reports them with what the samples measured (Report, usage.cc). After a charge is stored
// the owner hears when their week's usage crosses 80 % and 100 % of their quota (notifications.h).
//
// Runs on the daemon's loop thread. Tested by usage_ledger_test.cc, the arithmetic by
// core/usage_test.cc and core/usage_report_test.cc, and end to end by tests/daemon/test_usage.py.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>

#include "config/config.h"
#include "core/cluster.h"
#include "core/status.h"
#include "daemon/identity.h"
#include "daemon/job_table.h"
#include "daemon/notifications.h"
#include "store/job_store.h"

namespace rota::daemon {

class UsageLedger {
 public:
  struct Setup {
    store::JobStore* store = nullptr;        // must outlive the ledger
    const config::Config* config = nullptr;  // the configuration in force (the policy's half-life, weeks)
    const ClusterState* cards =
        nullptr;                     // the inventory: what an allocation counts as (a share is a fraction)
    Notifications* notes = nullptr;  // quota notices; may be null (none)
  };
  explicit UsageLedger(Setup setup);

  // The usage stored before a restart.
  Status Load();
  const store::UsageMaps& maps() const { return usage_; }

  // Charges `rec`'s run from its start to `end` to its owner and its project, in memory. A run
  // that never started or held no card charges nothing.
  void Charge(const store::JobRecord& rec, Time end);
  // Stores the usage Charge added for `rec` and, in the same commit, `end` (the writes of the
  // run's end), then tells the owner of a quota level crossed. The status is `end`'s, else the
  // commit's.
  Status SaveWith(const store::JobRecord& rec, Time at, const std::function<Status()>& end);
  // A run of a cluster's job outside Rota (a plain sbatch the Slurm engine saw end): recorded and
  // charged to its owner (fair share and the quota week; no project) in one commit, once: a run
  // recorded already charges nothing. Its owner hears of a quota level crossed, as after a job.
  Status ChargeOutside(const store::OutsideRun& run);
  // The usage with `running` (runs outside Rota still running, each up to the last read that
  // listed it) charged so far, in a copy: what the scheduler plans with. A Rota job counts while
  // it runs (QuotaBook, fair share), so must a job that bypassed Rota; stored only when it ends.
  store::UsageMaps MapsWith(const std::vector<store::OutsideRun>& running) const;

  // The usage report (`usage`: `rota usage`, the web page's Usage view; usage.cc): the ledger's
  // figures with what the samples measured of each run, the ended ones' from the store and the
  // running ones' of `jobs`, over the days the request asks for up to `now`; `outside_running`:
  // the runs outside Rota still running, their part so far (MapsWith).
  nlohmann::json Report(const Caller& caller, const nlohmann::json& request, const JobTable& jobs, Time now,
                        const std::vector<store::OutsideRun>& outside_running = {});
  // Each user's GPU-hours of the quota week at `now`, as the report's week_gpu_hours counts them:
  // the charged runs and the running jobs' part so far, outside Rota's too (`rota rules`).
  std::map<std::string, double> WeekHours(const JobTable& jobs, Time now,
                                          const std::vector<store::OutsideRun>& outside_running = {}) const;

 private:
  void Save(const store::JobRecord& rec, Time end);

  Setup setup_;
  store::UsageMaps usage_;
};

}  // namespace rota::daemon
