// Running jobs: the part of the daemon that carries out what the scheduling core decides for
// jobs, through the engine, and records what became of them. It starts a batch job (the launch
// spec from the job, its owner's account and its cards; a start recorded before it counts, a
// launch the store cannot record withdrawn, a launch the machine cannot make postponed), hands a
// session's start to the session desk, sends the warning signals, runs the kill sequence
// (SIGTERM, then SIGKILL kill_wait later, for jobs and sessions alike), and takes each end the
// engine reports: decided at once, so the next pass sees the job's cards free and its run charged
// (EndJob), recorded in the store after that pass has started the jobs the cards go to
// (RecordEnds: docs/design.md, "Starting the next job before recording the last one's end"),
// requeued where the job asked. It cancels jobs (a user's cancel, an --after-ok that can never be
// satisfied: cancels.cc). After a restart it finishes what a previous rotad began: a
// launch it did not live to record, a batch job that kept running (re-adopted) or ended.
//
// Runs on the daemon's loop thread. Tested by job_runner_test.cc and lifecycle_test.cc
// (in-process, testing::FakeEngine) and tests/daemon (the local engine's shepherds, restarts,
// test_disk_full.py for the store failing under it).
#pragma once

#include <sys/types.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "core/cluster.h"
#include "core/decisions.h"
#include "core/job_end.h"
#include "core/status.h"
#include "daemon/active_job.h"
#include "daemon/after_ok.h"
#include "daemon/allocation_watch.h"
#include "daemon/clock.h"
#include "daemon/counters.h"
#include "daemon/engine.h"
#include "daemon/identity.h"
#include "daemon/inventory.h"
#include "daemon/job_table.h"
#include "daemon/notifications.h"
#include "daemon/session_desk.h"
#include "daemon/usage_ledger.h"
#include "exec/executor.h"
#include "store/job_store.h"

namespace rota::daemon {

class JobRunner {
 public:
  struct Setup {
    store::JobStore* store = nullptr;  // all must outlive the runner
    const Clock* clock = nullptr;
    const config::Config* config = nullptr;  // the configuration in force
    Duration kill_wait = 10;                 // SIGTERM to SIGKILL
    Engine* engine = nullptr;
    JobTable* jobs = nullptr;
    const Inventory* cards = nullptr;
    UsageLedger* ledger = nullptr;
    AllocationWatch* allocs = nullptr;  // what was measured of a run, saved with its end
    Notifications* notes = nullptr;
    SchedulerCounters* counters = nullptr;
    SessionDesk* sessions = nullptr;  // a session's start and stop, said to its client
    // A job owner's account (uid, gid, groups), for its launch.
    std::function<StatusOr<UnixAccount>(uid_t)> account;
    // Whose jobs a caller may see and touch (JobViews::Visible): NotFound for another's.
    std::function<StatusOr<store::JobRecord>(const Caller&, JobId)> visible;
    // A refused part of a request, for the log (the daemon's refusal log).
    std::function<void(const Caller&, std::string_view op, const Status&)> refused;
    // A pass is due (cards freed, a job pending again, a job cancelled).
    std::function<void()> changed;
  };
  explicit JobRunner(Setup setup);

  // ---- The core's decisions ----
  void ApplyStart(const rota::Start& start, Time now);
  void ApplySignal(const rota::Signal& signal, Time now);
  void ApplyKill(JobId id, Time now);
  // The kill sequence: SIGTERM now (a session's client is told), SIGKILL kill_wait later.
  void BeginStop(ActiveJob& a, Time now);
  // A stop for a reason of the daemon's own (its stop_reason: an overrun booking, an idle
  // reclaim): its warning signal, its grace, then the kill sequence, as for a preemption;
  // requeued if it asked.
  void StopAfterWarning(ActiveJob& a, Time now);
  // SIGKILL to the jobs whose SIGTERM was kill_wait ago and that are still there.
  void EscalateKills(Time now);
  // When EscalateKills is next due (kNever: no stop under way).
  Time NextEscalation() const;

  // ---- Cancels (cancels.cc) ----
  // `cancel`: each job of the request's `job_ids` the caller may touch is cancelled (pending) or
  // stopped (running); a result for each.
  nlohmann::json Cancel(const Caller& caller, const nlohmann::json& request);
  // Cancels the pending jobs whose --after-ok can never be satisfied, and then those that
  // waited for them. A cancel the store refuses is tried again by the next pass; the job is held
  // out until then.
  void CancelNeverSatisfied(Time now);
  // What --after-ok means once the jobs it names have ended (for the scheduler's state).
  const AfterOk& after_ok() const { return after_ok_; }

  // ---- What the engine reports ----
  // Job `id`'s processes are gone (at `at`): its cards free and its run charged now; its end
  // comes later.
  void Released(JobId id, Time at);
  // Job `id` ended: decided now, recorded by RecordEnds after the next pass.
  void Ended(JobId id, const JobExit& exit, Time now);
  // A withdrawn launch is gone: its cards are free.
  void WithdrawnGone(JobId id);
  // The engine runs job `id` as `engine_job` ("Slurm job 123"): recorded with the job.
  void Named(JobId id, const std::string& engine_job, Time now);
  // The cluster gave job `id` the cards `cards` (UUIDs): its placement follows when they are
  // other cards of the inventory than the ones chosen (the same number of whole cards only).
  void Placed(JobId id, const std::vector<std::string>& cards, Time now);

  // ---- Ends ----
  // `a` ended now (a session's end, an adopted job found ended): decided and recorded at once.
  void Finish(ActiveJob& a, const exec::ExitInfo& info, Time now);
  // Records the ends decided since the last call (after the pass that follows them).
  void RecordEnds();
  bool ends_waiting() const { return !ends_.empty(); }
  // How a job that is not in the table ended: an end decided but not yet recorded, else the
  // store's record. NotFound for no such job.
  StatusOr<JobEndSeen> EndOf(JobId id);
  // Requeued jobs whose end is not recorded yet are held out of the pass (pending again after).
  void AddHeld(ClusterState& st) const;

  // ---- After a restart ----
  // A pending batch job's launch by a rotad that died before recording its start: recorded and
  // re-adopted, or recorded and ended, or none found.
  enum class LaunchOutcome { kNone, kAdopted, kEnded };
  LaunchOutcome RecoverLaunch(ActiveJob& a, Time now);
  // A running batch job: re-adopted through its shepherd (true), or found ended (recorded,
  // false). A cancel that was under way goes on.
  bool Adopt(ActiveJob& a, Time now);

 private:
  // How a job ended, decided when its end was seen (EndJob) and recorded in the store later
  // (RecordEnd).
  struct Ending : JobEnd {
    ActiveJob job;  // out of the table already
    Time at = 0;
    JobExit exit;   // how its processes ended, as the engine said
  };
  // Takes `a` out of the table (its GPUs free for the next pass) and charges its run in memory.
  Ending EndJob(ActiveJob& a, const exec::ExitInfo& info, Time now);
  // Stores the end (or the requeue), notifies, removes the job's run files once recorded.
  void RecordEnd(Ending e);
  // The machine could not launch the job (no room for its spec, no process for its shepherd):
  // it stays pending, its history says why, and it is tried again later (JobTable::RetryAt).
  void PostponeLaunch(ActiveJob& a, const std::string& why, Time now);
  // Cancels pending job `id` in the store (`reason`, by `actor`), tells its waiting session, and
  // takes it out of the table.
  // `with`, when given, writes in the cancel's commit (its notice: a crash between two commits
  // would keep the cancel and lose the notice).
  Status CancelPending(JobId id, const std::string& actor, const std::string& reason, Time now,
                       const std::function<void()>& with = {});
  // A launch whose start could not be recorded (design.md, "A start the store cannot record"):
  // the engine withdraws it, and its GPUs stay held until the engine says it is gone.
  void WithdrawLaunch(const store::JobRecord& rec, const Allocation& alloc, Time now);

  store::JobStore& store_;
  const config::Config& config_;
  Setup setup_;
  Engine& engine_;
  JobTable& jobs_;
  const Inventory& cards_;
  std::vector<Ending> ends_;  // decided in this batch of events, recorded after its pass
  AfterOk after_ok_;
};

}  // namespace rota::daemon
