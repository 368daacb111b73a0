// The daemon's durable record of jobs, their audit trail and accumulated usage, on SQLite.
//
// Contracts:
// - Every mutating call runs in one transaction; on any error nothing of it is written.
// - Two levels of durability (docs/store.md, Durability). What a user asked for and was told
//   about (Submit, SubmitMany, Cancel) is durable, power loss included, when it returns OK
//   (synchronous=FULL). The daemon's own bookkeeping (MarkStarted, MarkSignalled, MarkEnded,
//   Requeue, usage) is committed without waiting for the disk (synchronous=NORMAL in WAL mode):
//   it survives a crash or kill -9 of rotad, and the next FULL commit makes it durable too; a
//   power loss may drop the last of it, which recovery treats like the jobs it was about (they
//   died with the machine).
// - Every state change writes a job_events row in the same transaction, with `now`, a reason
//   and an actor. The store never reads a clock: callers pass `now`.
// - Transitions are checked: an unknown id is NotFound, a transition the job's state does not
//   allow is FailedPrecondition. A full disk is ResourceExhausted, a read-only or unwritable
//   database Unavailable; messages carry SQLite's own text.
// - One JobStore (one process) writes a database; it is not thread-safe.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/cluster.h"
#include "core/status.h"
#include "core/types.h"
#include "store/db.h"
#include "store/booking_record.h"
#include "store/job_record.h"

namespace rota::store {

// An API token's row (the secret itself is never stored).
struct ApiToken {
  std::int64_t id = 0;
  std::string hash;
  std::string user;
  std::int64_t uid = -1;
  std::string name;
  Time created = 0;
  Time expires = 0;     // 0: never
  Time revoked_at = 0;  // 0: in force
  std::string revoked_by;
  std::string scope = "full";  // "calendar", "read" or "full" (schema version 10)
};

enum class AccountKind : std::uint8_t { kUser, kProject };

// A run of a cluster's job outside Rota (plain sbatch/srun) that held GPUs (schema v15).
struct OutsideRun {
  std::string cluster_job;  // the cluster's id ("4711")
  std::string user;
  double gpus = 0;  // whole GPUs, over all its nodes
  Time start = 0;
  Time end = 0;
  bool operator==(const OutsideRun&) const = default;
};

// Accumulated usage by account, shaped like ClusterState::user_usage / project_usage.
// GPU-seconds of a job's allocation as the samples saw it: sampled at all, busy (weighted by
// utilisation), and under the idle threshold.
struct JobMeasures {
  double measured_gpu_seconds = 0;
  double busy_gpu_seconds = 0;
  double idle_gpu_seconds = 0;
};

struct UsageMaps {
  std::unordered_map<std::string, Usage> users;
  std::unordered_map<std::string, Usage> projects;
};

class JobStore {
 public:
  // Opens (creating or migrating) the store at `path`. Fails with FailedPrecondition when the
  // file was written by a newer schema version.
  static StatusOr<std::unique_ptr<JobStore>> Open(const std::string& path);

  // Records a new pending job and its "Submitted" event (actor: the job's user). Ignores the
  // record's id, state and run fields; job.submit_time becomes `now`. Returns the new id, which
  // is durable when this returns. InvalidArgument when user or command is empty.
  StatusOr<JobId> Submit(const JobRecord& record, Time now);
  // Submit for many jobs in one transaction (group commit: one disk sync for all). All or none:
  // on error nothing is written. Ids are returned in the order of `records`.
  StatusOr<std::vector<JobId>> SubmitMany(const std::vector<JobRecord>& records, Time now);

  // pending -> running, with where and as which processes it runs.
  Status MarkStarted(JobId id, const StartInfo& start, Time now);
  // Records that the job's warning signal was sent and it will be killed at `kill_at`
  // (a preemption when `preempted`, else its time limit). REQUIRES state running.
  Status MarkSignalled(JobId id, Time kill_at, bool preempted, Time now);
  // Records that `actor` asked to cancel the running job (its stop is under way), as the event
  // "<kCancelRequested><actor>", durable like Cancel. A restarted daemon finds it with
  // CancelRequestedBy and finishes the stop. REQUIRES state running.
  Status MarkCancelRequested(JobId id, std::string_view actor, Time now);
  // Who asked to cancel the running job `id` (the latest such event), or "" when nobody did.
  StatusOr<std::string> CancelRequestedBy(JobId id);
  static constexpr std::string_view kCancelRequested = "Cancel requested by ";
  // running -> a final state other than pending, e.g. (kFailed, 3, "Failed(exit 3)").
  // `actor` is who caused it ("rotad", or the user who cancelled a running job).
  Status MarkEnded(JobId id, JobState state, std::optional<int> exit_code, std::string_view reason, Time now,
                   std::string_view actor = "rotad");
  // An event on a pending or running job that does not change its state (an idle warning, a
  // keep, a launch postponed): recorded with synchronous=NORMAL (the daemon's bookkeeping).
  Status NoteJob(JobId id, std::string_view reason, std::string_view actor, Time now);
  // Where the engine runs the running job (`engine_job`, e.g. "Slurm job 123"), with a note
  // "Runs as <engine_job>" in its history. REQUIRES state running.
  Status SetEngineJob(JobId id, std::string_view engine_job, Time now);
  // A pending job's first start forecast (JobRecord::forecast_at, forecast_start), with no entry
  // in its history (a forecast is no event). A job that is no longer pending is left alone.
  Status SetForecast(JobId id, Time at, Time start);
  // A pending job's promise (Job::promise; core/promise.h), with no entry in its history.
  Status SetPromise(JobId id, Time promise);
  // The running job's cards as its engine placed it (a cluster that picks which of a node's GPUs:
  // Slurm), with `reason` in its history. REQUIRES state running; the same number of GPUs.
  Status MovePlacement(JobId id, const Placement& placement, std::string_view reason, Time now);
  // running -> pending (preempted with requeue, node failure with requeue). Keeps submit_time;
  // clears the start time, placement, signal and process fields.
  Status Requeue(JobId id, std::string_view reason, Time now);
  // Writes made by `writes`, through this store's methods, in one transaction: each method's own
  // transaction becomes a savepoint of it, so a method that fails undoes only its own writes.
  // The transaction commits when `writes` returns OK, and is rolled back otherwise; the status is
  // Commit's (or `writes`'). Bookkeeping (synchronous=NORMAL) unless `durable` (FULL: on disk
  // when it returns); the methods called must ask for the same (SQLite cannot change it inside a
  // transaction: they fail).
  Status InOneTransaction(const std::function<Status()>& writes, bool durable = false);
  // `change`, and when it succeeds `with` (more writes of the same change: its notice), in one
  // transaction of `durable`'s kind; `change` alone without `with`.
  Status ChangeWith(const std::function<Status()>& change, const std::function<void()>& with, bool durable);
  // pending -> cancelled, reason `why`, or "Cancelled by <actor>" when `why` is empty. A running
  // job is FailedPrecondition: the daemon stops its processes first and then calls
  // MarkEnded(kCancelled, ...).
  Status Cancel(JobId id, std::string_view actor, Time now, std::string_view why = {});

  // Pending and running jobs, by id: what a restarted daemon rebuilds its state from.
  StatusOr<std::vector<JobRecord>> LoadActive();
  StatusOr<JobRecord> Get(JobId id);
  // The job's audit trail, oldest first. NotFound for an unknown id.
  StatusOr<std::vector<JobEvent>> Events(JobId id);
  // Jobs that reached a final state at or after `since`, by end time.
  StatusOr<std::vector<JobRecord>> History(Time since);
  // One page of that list, by (end time, id): the jobs after `after` (an (end time, id) of the
  // last page; {0, 0} for the first), of `uid` only when it is given, at most `limit`; `more` when
  // there are jobs after them. A request's work stays small however long the history is.
  struct HistoryPageResult {
    std::vector<JobRecord> jobs;
    bool more = false;
  };
  StatusOr<HistoryPageResult> HistoryPage(Time since, std::optional<std::int64_t> uid, std::pair<Time, JobId> after,
                                          int limit);

  // What the GPU samples said about a job's run (measure_store.cc, schema v5): added to what
  // earlier runs of the same job recorded. Bookkeeping (synchronous=NORMAL).
  Status AddJobMeasures(JobId id, const JobMeasures& measures);
  // The measures of every job that is running or ended at or after `since`, by id.
  StatusOr<std::map<JobId, JobMeasures>> LoadJobMeasures(Time since);

  // Runs of jobs outside Rota (outside_store.cc). AddOutsideRun records one and says whether it
  // was new: a run recorded already (the same cluster job and start) is left as it is.
  StatusOr<bool> AddOutsideRun(const OutsideRun& run);
  // The runs that ended at or after `since`, oldest end first.
  StatusOr<std::vector<OutsideRun>> OutsideRunsSince(Time since);
  // Up to when the runs outside Rota that ended are known to have been charged (a meta row): a
  // restarted rotad asks the cluster's accounting for those that ended since. nullopt: never said.
  StatusOr<std::optional<Time>> OutsideSeenUntil();
  Status SetOutsideSeenUntil(Time until);

  // Inserts or replaces one account's usage.
  Status SaveUsage(AccountKind kind, std::string_view name, const Usage& usage);
  // Inserts or replaces every account in `usage`, in one transaction.
  Status SaveAllUsage(const UsageMaps& usage);
  StatusOr<UsageMaps> LoadUsage();
  // The highest weekly-quota level (80, 100) `user` was told of in the quota week starting at
  // `week`; LoadQuotaNotices gives each user's last (week, level).
  Status SaveQuotaNotice(std::string_view user, Time week, int level);
  StatusOr<std::map<std::string, std::pair<Time, int>>> LoadQuotaNotices();

  // GPUs (gpu_state.cc). A drain is written with synchronous=FULL (an admin is told it holds);
  // health events are the daemon's bookkeeping (NORMAL). Each call records its event.
  Status SaveDrain(const GpuDrain& drain, int gpu_index);
  Status RemoveDrain(std::string_view uuid, GpuDrain::Kind kind, int gpu_index, std::string_view actor,
                     std::string_view reason, Time now);
  StatusOr<std::vector<GpuDrain>> LoadDrains();
  Status AddGpuEvent(const GpuEvent& event);
  // The events of one card (all cards when `uuid` is empty), oldest first.
  StatusOr<std::vector<GpuEvent>> GpuEvents(std::string_view uuid);

  // Bookings (booking_store.cc). Creation and user- or admin-requested changes are written with
  // synchronous=FULL (`durable`); the daemon's lifecycle steps with NORMAL. An update with a
  // non-empty `reason` records an event (from -> the record's state).
  StatusOr<std::int64_t> AddBooking(const BookingRecord& record, std::string_view actor, Time now);
  Status UpdateBooking(const BookingRecord& record, std::optional<BookingState> from, std::string_view reason,
                       std::string_view actor, Time now, bool durable);
  StatusOr<BookingRecord> GetBooking(std::int64_t id);
  // Open bookings and those that ended (or would have) at or after `since`.
  StatusOr<std::vector<BookingRecord>> LoadBookings(Time since);
  // Bookings of any state overlapping [from, to).
  StatusOr<std::vector<BookingRecord>> BookingsBetween(Time from, Time to);
  StatusOr<std::vector<BookingEvent>> BookingEvents(std::int64_t id);

  // The audit trails of jobs, bookings and GPUs together, oldest first, from `since` on (at most
  // `limit`, the newest ones). `job` > 0: that job's events only.
  StatusOr<std::vector<AuditEvent>> AuditEvents(Time since, std::int64_t job, int limit);

  // The connection, for tests and maintenance (backups, PRAGMAs).
  // API tokens (token_store.cc): only hashes; Revoke marks the row, it is never deleted.
  StatusOr<std::int64_t> AddToken(const ApiToken& token);
  // Every token of `user` ("" = everyone's), revoked ones included, oldest first.
  StatusOr<std::vector<ApiToken>> Tokens(std::string_view user);
  Status RevokeToken(std::int64_t id, std::string_view actor, Time now);

  Db& db() { return *db_; }

 private:
  explicit JobStore(std::unique_ptr<Db> db) : db_(std::move(db)) {}

  // Sets synchronous=FULL (`full`) or NORMAL for the next transactions.
  Status Durability(bool full);

  std::unique_ptr<Db> db_;
  bool full_sync_ = true;  // what Db::Open set
};

}  // namespace rota::store
