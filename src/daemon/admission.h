// Admission: what a new job (a batch submission or a session) goes through before it is queued.
// The request becomes a job record (api/job_json.h) owned by the caller, with the lab's default
// warning signal where it asked for none; then it is checked against what can never work here
// (an unknown project, more host memory than the server has, --after/--after-ok naming no job or
// a job that already failed, a request no card of this server could ever hold, a root job where
// root may not run jobs) and against what one user may take ([limits] pending_per_user and
// submit_rate; admins are exempt). Batch submissions that pass are group-committed: every
// submission of one batch of requests is stored in one transaction (one disk sync) and then put
// in the job table.
//
// Runs on the daemon's loop thread. Tested by admission_test.cc, dispatch_test.cc (in-process),
// tests/daemon/test_jobs.py, test_dependencies.py and test_attacks_load.py (real processes).
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_map>
#include <vector>

#include "config/config.h"
#include "core/status.h"
#include "daemon/after_ok.h"
#include "daemon/clock.h"
#include "daemon/identity.h"
#include "daemon/inventory.h"
#include "daemon/job_table.h"
#include "daemon/server.h"
#include "store/job_store.h"
#include "web/rate_limit.h"

namespace rota::daemon {

class Admission {
 public:
  struct Setup {
    store::JobStore* store = nullptr;  // all must outlive the admission
    const Clock* clock = nullptr;
    const config::Config* config = nullptr;  // the configuration in force
    bool user_mode = false;                  // a rotad of one user's own: root's jobs are that user's
    MiB host_memory = 0;                     // this server's memory (0: unknown)
    JobTable* jobs = nullptr;
    const Inventory* cards = nullptr;
    // Whether the cards are not known yet (a cluster that did not answer when rotad started): no
    // request is then refused as one that could never fit. None: they are always known.
    std::function<bool()> cards_unknown;
    // Why the engine cannot run a request of this shape ("" it can; none: it can run them all).
    std::function<std::string(const Request&)> engine_refuses;
    // How a job that is not in the table ended (JobRunner::EndOf).
    std::function<StatusOr<JobEndSeen>(JobId)> end_of;
  };
  explicit Admission(Setup setup);

  // The job `request` asks for, as `caller`'s, checked; `conn` is the connection a session would
  // be bound to. Counted against the caller's pending jobs when it passes.
  StatusOr<store::JobRecord> Prepare(const Caller& caller, const nlohmann::json& request, bool interactive,
                                     ConnId conn);

  // ---- Group commit ----
  // A submission that passed, answered by Flush with the others of its batch (`tag` echoed).
  void Batch(ConnId conn, nlohmann::json tag, store::JobRecord rec);
  struct Answer {
    ConnId conn;
    nlohmann::json reply;  // its job id, or why the store refused the batch
    bool stored = false;   // the job is in the store and the table
  };
  // Stores the batched submissions in one transaction and adds them to the job table: an answer
  // for each, in order.
  std::vector<Answer> Flush();

  // Requests of another kind may start, cancel or end jobs: the caller's pending jobs are
  // counted again at the next submission.
  void Recount() { pending_counts_.reset(); }
  // The configuration was reloaded: the new submit rate from the next submission on.
  void Reconfigured();

 private:
  Time Now() const { return setup_.clock->Now(); }
  // What can never work here (the caller's limits aside).
  Status CheckSubmittable(const store::JobRecord& rec);
  // The jobs `j` names exist; none of its --after-ok jobs has already ended other than Completed.
  Status CheckDependencies(const Job& j);
  // Within [limits] pending_per_user and submit_rate; admins are exempt. Counts it when it is.
  Status CheckLimits(const Caller& caller);

  store::JobStore& store_;
  const config::Config& config_;
  Setup setup_;
  JobTable& jobs_;
  struct Batched {
    ConnId conn;
    nlohmann::json tag;
    store::JobRecord rec;
  };
  std::vector<Batched> batch_;  // submissions awaiting their group commit
  // Pending jobs by uid, for pending_per_user: counted at the first submission after a Recount
  // and kept up by the submissions after it.
  std::optional<std::unordered_map<std::int64_t, int>> pending_counts_;
  std::unique_ptr<web::RateLimiter> submit_rate_;  // submit_rate per uid; rebuilt after a reload
};

}  // namespace rota::daemon
