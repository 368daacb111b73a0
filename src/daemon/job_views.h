// What users read of jobs (docs/api.md): the queue (running, then pending in the last pass's
// order, then those submitted since), one job with its history, past jobs a page at a time, a
// job's output, and the audit events of jobs, bookings and cards. A user sees the details of
// their own jobs only (others' are listed by `queue --all` but private), admins everyone's.
// A job's output is opened with its owner's rights, never root's.
//
// Reads only: the job table, the inventory and the store. Runs on the daemon's loop thread.
// Tested by job_views_test.cc (visibility, the queue's order, history pages) and
// tests/daemon/test_jobs.py, test_permissions.py, test_watch.py (real processes and users).
#pragma once

#include <sys/types.h>

#include <functional>
#include <nlohmann/json.hpp>

#include "config/config.h"
#include "core/status.h"
#include "daemon/foresight.h"
#include "daemon/clock.h"
#include "daemon/identity.h"
#include "daemon/inventory.h"
#include "daemon/job_table.h"
#include "store/job_store.h"

namespace rota::daemon {

class JobViews {
 public:
  struct Setup {
    store::JobStore* store = nullptr;  // all must outlive the views
    const Clock* clock = nullptr;
    const config::Config* config = nullptr;  // the configuration in force
    const JobTable* jobs = nullptr;
    const Inventory* cards = nullptr;
    Foresight* foresight = nullptr;  // start forecasts and predicted ends; may be null (none)
    // A job owner's account, to open their output with their rights.
    std::function<StatusOr<UnixAccount>(uid_t)> accounts;
  };
  explicit JobViews(Setup setup);

  // Job `id` (active, else from the store), if `caller` may see its details.
  StatusOr<store::JobRecord> Visible(const Caller& caller, JobId id);
  // A job as the API gives it, with why it waits and its GPU-hours so far.
  nlohmann::json JobJson(const store::JobRecord& rec, const Caller& caller);

  nlohmann::json Queue(const Caller& caller, const nlohmann::json& request);
  nlohmann::json Show(const Caller& caller, const nlohmann::json& request);
  nlohmann::json History(const Caller& caller, const nlohmann::json& request);
  nlohmann::json Logs(const Caller& caller, const nlohmann::json& request);
  nlohmann::json Events(const Caller& caller, const nlohmann::json& request);

 private:
  Time Now() const { return clock_->Now(); }

  store::JobStore* store_;
  const Clock* clock_;
  const config::Config& config_;
  const JobTable& jobs_;
  const Inventory& cards_;
  Foresight* foresight_;
  std::function<StatusOr<UnixAccount>(uid_t)> accounts_;
};

}  // namespace rota::daemon
