// The daemon's job table: the jobs it holds in memory (pending and running; the store is the
// truth on disk), with what ties them to the rest of the daemon: the connection that holds each
// interactive session, the launches being withdrawn (their GPUs held until the engine says they
// are gone), what the last scheduling pass said of each pending job (why it waits, its place, its
// expected start), and when a start that failed is tried again. It keeps these consistent: a job
// taken out of the table (its end, a cancel) leaves no session and no waiting note behind.
//
// What happens to jobs (starting, stopping, recording ends) is the job runner's (job_runner.h)
// and the session desk's (session_desk.h); this part answers what the scheduler is given (AddTo) and keeps the
// state. Not thread-safe (the daemon's loop thread). Tested by job_table_test.cc and, through a
// whole daemon, lifecycle_test.cc and tests/daemon.
#pragma once

#include <functional>
#include <map>
#include <unordered_map>
#include <vector>

#include "core/cluster.h"
#include "core/decisions.h"
#include "core/types.h"
#include "daemon/active_job.h"
#include "daemon/after_ok.h"
#include "daemon/server.h"
#include "store/job_record.h"

namespace rota::daemon {

class JobTable {
 public:
  using Map = std::map<JobId, ActiveJob>;
  // A failed start is tried again kStartRetryFirst later, doubling up to kStartRetryMax.
  static constexpr Time kStartRetryFirst = 5;
  static constexpr Time kStartRetryMax = 300;

  // ---- The jobs, by id (the daemon's loops and lookups) ----
  Map::iterator begin() { return jobs_.begin(); }
  Map::iterator end() { return jobs_.end(); }
  Map::const_iterator begin() const { return jobs_.begin(); }
  Map::const_iterator end() const { return jobs_.end(); }
  Map::iterator find(JobId id) { return jobs_.find(id); }
  Map::const_iterator find(JobId id) const { return jobs_.find(id); }
  size_t count(JobId id) const { return jobs_.count(id); }
  size_t size() const { return jobs_.size(); }
  const Map& all() const { return jobs_; }
  ActiveJob& at(JobId id) { return jobs_.at(id); }
  // Adds job `a` (or puts it in place of the one with its id); a session with a connection is
  // bound to it.
  ActiveJob& Add(ActiveJob a);
  // Takes the job at `it` out of the table, with its session's connection and what the last
  // pass said of it.
  ActiveJob Take(Map::iterator it);

  // ---- Sessions: a client's connection and its interactive job ----
  JobId SessionOf(ConnId conn) const;  // 0: the connection holds none
  // The connection no longer holds its session (closed, or the session ended); the job stays.
  void Unbind(ConnId conn);
  // Binds `conn` to job `id` (in the table) as its session's connection (`session_attach`).
  void Bind(ConnId conn, JobId id);
  const std::unordered_map<ConnId, JobId>& sessions() const { return sessions_; }

  // Whether a pending job waits for job `id` (--after, --after-ok).
  bool Awaited(JobId id) const;

  // ---- Launches being withdrawn (a start the store could not record) ----
  // Holds `rec`'s GPUs (`alloc`) from the next passes, as a running job nothing preempts or
  // times out, until ForgetWithdrawn.
  void Withdraw(const store::JobRecord& rec, const Allocation& alloc, Time now);
  bool Withdrawn(JobId id) const { return withdrawn_.count(id) > 0; }
  bool ForgetWithdrawn(JobId id) { return withdrawn_.erase(id) > 0; }  // true: its GPUs are free now

  // ---- What the scheduler is given ----
  // Whether pending job `a` is held out of the pass: its start waits for a retry, its launch is
  // being withdrawn, or the end of a job it waits for with --after-ok is not known.
  bool HeldOut(const ActiveJob& a, const AfterOk& after_ok, Time now) const;
  // Adds the jobs to `st`: the pending ones the pass may start, those held out, the running ones
  // with their cards (a job whose processes are gone holds none), and the withdrawn launches.
  void AddTo(ClusterState& st, const AfterOk& after_ok, Time now) const;

  // ---- What the scheduler says of the pending jobs (why each waits, its place, its start) ----
  // `decided`: a pass's pending jobs, in priority order; the jobs held out of it follow, with
  // why they wait. `explained`: the pass listed every job (Policy::explain); a pass that lists
  // only those that can never run leaves the notes to be made on demand (below). Returns the
  // earliest start retry still to come (kNever: none).
  Time NoteWaiting(const std::vector<PendingInfo>& decided, const AfterOk& after_ok, Time now,
                   bool explained = true);
  // Explaining is a pass of its own (every job ranked and described), so the daemon's passes
  // that act do without it and the notes are made when first read after one (`rota queue`, a
  // job's page, a waiting session, the bookings' step): `explain` (the daemon's) computes them on
  // the state of now and calls NoteWaiting. Reading is logically const: the notes are a cache of
  // what an explained pass says of the queue. Without an explainer they are what the last
  // NoteWaiting left.
  void SetExplainer(std::function<void()> explain) { explain_ = std::move(explain); }
  // Whether the notes are those of the last pass (or made since it).
  bool explained() const { return explained_; }
  const PendingInfo* Waiting(JobId id) const;
  const std::unordered_map<JobId, PendingInfo>& waiting() const;
  const std::vector<JobId>& waiting_order() const;
  // 1 for the first job of the order; past the end for a job not in it.
  int PositionOf(JobId id) const;
  // Whether any job is pending (without making the notes).
  bool AnyPending() const;

  // ---- Start retries ----
  // When a start that failed `failures` times before is tried again.
  static Time RetryAt(int failures, Time now);
  // A start the store could not record: when to try again, by the failures in a row of all
  // jobs (the store is likely to fail for the next one too).
  Time StartNotRecorded(Time now) { return RetryAt(start_record_failures_++, now); }
  void StartRecorded() { start_record_failures_ = 0; }
  int start_record_failures() const { return start_record_failures_; }

  // A requeued job's record once its end is recorded: pending again, its run's fields cleared;
  // a launch this machine could not make is tried again later.
  static ActiveJob Requeued(ActiveJob ended, bool launch_failed, Time at);

 private:
  Map jobs_;
  std::unordered_map<ConnId, JobId> sessions_;  // connection -> its interactive job
  std::map<JobId, RunningJob> withdrawn_;
  // Made explained if they are not (see SetExplainer), unless being made now.
  void Explained() const;

  std::unordered_map<JobId, PendingInfo> waiting_;
  std::vector<JobId> waiting_order_;  // priority order of the last pass, then the held-out jobs
  std::function<void()> explain_;
  mutable bool explained_ = true;   // the notes are the last pass's, or made since
  mutable bool explaining_ = false;  // explain_ runs: its own reads take the notes as they are
  int start_record_failures_ = 0;     // failed start records in a row
};

}  // namespace rota::daemon
