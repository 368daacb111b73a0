// The Slurm engine (issue 26; docs/design.md, "The Slurm engine"): Rota's core decides what starts
// where and when; this engine hands each start to a real Slurm cluster, as `sbatch` run by the
// job's owner (ChildCommands: never as root, never with --uid), and follows the job in Slurm's
// queue (`squeue`, read at most every poll interval, and at once after a submission or a Poke)
// until it ends, then reports the end in the same terms as the local engine (slurm/queue.h).
// Signals and stops are `scancel`, run as rotad. No Slurm command ever runs on the daemon's loop
// itself: a slurmctld that does not answer delays what Rota learns, never what Rota does.
//
// Which Slurm job is a Rota job: the job name "rota-<id>" (its tag) *and* the owner's uid. The job
// id sbatch prints is not trusted on its own: it comes from a process the user owns.
//
// Per job, a launch file (<run_dir>/<id>.launch: the owner's uid, the daemon's start note, when
// it was written) is written before sbatch runs and removed when the daemon Forgets the job: after
// a restart it tells FindLaunch that a launch was under way, whose, and since when.
//
// A submitted job that the queue stops listing (slurmctld forgot it: it ended while rotad did not
// read, longer ago than MinJobAge) is asked of Slurm's accounting (sacct, where slurmdbd runs)
// before it counts as vanished, and at a restart so is a recorded job that ended while rotad was
// away; without accounting (or when it does not answer kAccountingTries times) its end is unknown.
//
// A submission whose outcome is unknown (sbatch killed at its deadline, Slurm unreachable) is
// never sent again: the job is looked for in the queue by its tag until kUncertainPolls reads of
// the queue after the deadline have not listed it, and only then reported as a launch that the
// machine could not make (the daemon requeues it).
//
// Tested on a real Slurm through rotad by tests/daemon/test_slurm.py and
// tests/daemon/test_slurm_nodes.py (tests/daemon/slurm_cluster.py starts one), its launch files
// by slurm_engine_test.cc.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "daemon/child_command.h"
#include "daemon/clock.h"
#include "daemon/engine.h"
#include "daemon/event_loop.h"
#include "slurm/accounting.h"
#include "slurm/queue.h"
#include "slurm/reservations.h"
#include "slurm/submit.h"

namespace rota::daemon {

struct SlurmEngineOptions {
  slurm::SubmitConfig submit;  // submit.sbatch: absolute
  std::string squeue;          // absolute paths
  std::string scancel;
  std::string sinfo;
  std::string scontrol;
  std::string srun;  // run by sessions' clients, not by rotad
  // Slurm's accounting (slurm/accounting.h), "" where sacct is not installed: how a job that
  // slurmctld no longer lists ended. Clusters without slurmdbd answer that they keep none.
  std::string sacct;
  std::string node;                            // the node every job is pinned to ("" = any of the partition)
  std::string run_dir;                         // launch files; created 0700 if missing
  std::chrono::milliseconds deadline{10'000};  // of each Slurm command
  std::chrono::milliseconds poll{1'000};
  // How long Slurm lists an ended job (its MinJobAge, read from Slurm at a restart; this when it
  // cannot be): a launch file older than this whose job the queue does not list ran and ended
  // unseen, rather than never reached Slurm.
  Duration listed_after_end = 300;
};

// The environment of the Slurm commands rotad runs as itself (squeue, scancel, scontrol, sinfo):
// a plain PATH, rotad's TZ (Slurm prints times in the reader's zone) and SLURM_CONF when set.
std::vector<std::string> RotadSlurmEnv(const std::string& slurm_conf);

// Fills the command paths of `options` from `bin_dir` (sbatch, squeue, scancel, sinfo, scontrol, srun;
// sacct where it is there); FailedPrecondition naming what is missing.
Status FindSlurmCommands(const std::string& bin_dir, SlurmEngineOptions& options);

class SlurmEngine final : public Engine {
 public:
  // Asks Slurm's version (`sinfo -V`, which needs no controller): a machine whose Slurm commands
  // do not run cannot start the engine.
  // `loop`, `events` and `clock` must outlive the engine.
  static StatusOr<std::unique_ptr<SlurmEngine>> Create(const SlurmEngineOptions& options, EventLoop& loop,
                                                       EngineEvents& events, const Clock& clock);
  ~SlurmEngine() override;

  std::string Describe() const override;
  bool DeviceFilter() const override { return false; }  // Slurm's own cgroups, where configured
  bool Cgroups() const override { return false; }

  StatusOr<Started> Launch(const exec::LaunchSpec& spec) override;
  void Withdraw(JobId id) override;
  Status Signal(JobId id, int signo) override;

  StatusOr<exec::FoundLaunch> FindLaunch(JobId id) override;
  StatusOr<Started> Adopt(JobId id, pid_t pid, Time started) override;
  JobExit Collect(JobId id, pid_t pid) override;
  int RemoveLeftovers(const std::function<bool(JobId)>& in_use) override;
  void Forget(JobId id) override;

  void AfterEvents() override;
  // Pokes still waiting are dropped, unanswered (their connections close with the daemon).
  void Shutdown() override { poke_waiters_.clear(); }

  // Interactive sessions are Slurm jobs too: their client runs the command under `srun` (as the
  // user it is, from its terminal), tagged like a batch job; the engine follows the tag only to
  // name the session's Slurm job and read its GPUs. The client says when it ends (srun returns
  // with the command); then, or when the session is killed, its allocation is cancelled.
  StatusOr<SessionWrap> WrapSession(const SessionStart& start, std::map<std::string, std::string> env) override;
  void EndSession(JobId id, uid_t uid) override;

  // Bookings of whole nodes become Slurm reservations for their owners (slurm/reservations.h),
  // made, changed and deleted to match whenever the bookings change and every
  // kReservationCheckS (someone may have deleted one; slurmctld may have lost its state). A job of
  // a booking's owner on a reserved node goes into the reservation (--reservation) while it
  // lasts and exists in Slurm; any job's Slurm limit stops where a reservation on its node
  // begins (Slurm would not start a job that reaches into one).
  void Booked(const std::vector<BookedNodes>& bookings) override;
  std::vector<OutsideRun> OutsideRunning() const override;
  void CatchUpOutside(Time since, std::set<std::string> ours) override;

  // Every request shape runs (Engine::Refuses' default): memory shares as their card's shards
  // where every card is its own gres type with shards (the inventory says where not:
  // Inventory::WhyNoShares), MIG slices as one of their gres type (slurm::MigProfile; cards of
  // no MIG type offer none, which the core says at submission). A share or slice launched on a
  // card Slurm cannot give it on is refused (the job fails, saying why).
  static constexpr Duration kReservationCheckS = 30;

  // Reads the queue soon (a hook's poke: a job ended): at once, or after the read under way, or
  // kPokeGapMs after the last read began when that was closer (a poke in a loop is one read each
  // kPokeGapMs, not a storm of squeue).
  void Poke() override;
  static constexpr long kPokeGapMs = 50;
  // A waiting poke (a node's epilog) is answered after the first read of the queue that began
  // after it has been applied and no submission is under way (sbatch of the jobs started on what
  // it freed has returned), or after kPokeWaitMs; past kPokeWaiters waiting, at once.
  bool PokeAndWait(std::function<void()> settled) override;
  static constexpr long kPokeWaitMs = 3'000;
  static constexpr std::size_t kPokeWaiters = 64;
  static constexpr long kCompletingRecheckMs = 200;
  // Whether the last read of the queue worked, and what failed if not (for `rota status`).
  bool reachable() const { return reachable_; }
  const std::string& unreachable_why() const { return unreachable_why_; }
  // The Slurm job id of a Rota job, "" while not known.
  std::string SlurmIdOf(JobId id) const;

  // A launch file's reading (public for its test).
  // Rewritten once sbatch says the job was submitted (`submitted`) and once the queue confirms
  // its Slurm id: after a restart, a job that Slurm no longer lists then counts as submitted and
  // ended, never as a submission that did not go through (which would run it again).
  struct LaunchFile {
    uid_t uid = 0;
    std::string note;
    Time written = 0;
    bool submitted = false;
    std::string slurm_id;  // "" until the queue listed it
  };
  static std::string LaunchFileText(const LaunchFile& f);
  static StatusOr<LaunchFile> ParseLaunchFile(const std::string& text);

  static constexpr int kUncertainPolls = 3;
  static constexpr int kAccountingTries = 3;
  static constexpr int kOutsideAsks = 4;
  // How far the clocks of rotad's machine and Slurm's controller may differ when an entry's end is
  // compared with a launch's start.
  static constexpr Duration kClockSlack = 2;

 private:
  enum class Phase {
    kSubmitting,  // sbatch runs
    kUncertain,   // sbatch's outcome is not known: looked for in the queue
    kSubmitted,   // in Slurm (its id known once the queue lists it)
  };
  struct Job {
    Phase phase = Phase::kSubmitting;
    uid_t uid = 0;
    bool uid_known = true;
    std::string slurm_id;
    std::string claimed_id;         // what sbatch printed: preferred among the entries of its tag and owner
    Time since = 0;                 // when its submission began (kUncertain's wait counts from it)
    int missing = 0;                // reads of the queue since then that did not list it
    std::vector<int> held_signals;  // asked for before its Slurm id was known
    bool withdrawn = false;
    bool cancel_sent = false;  // withdrawn: scancel sent
    bool ended = false;        // its end was reported
    bool released = false;     // reported released (COMPLETING: its processes done)
    bool gpus_asked = false;   // scontrol asked which GPUs Slurm gave it
    bool session = false;      // an interactive session: its end comes from its client
    std::string note;                // the daemon's start note (its launch file's)
    bool asking_accounting = false;  // sacct runs for it
    int accounting_failures = 0;     // sacct asked and did not answer
  };

  SlurmEngine(const SlurmEngineOptions& options, EngineEvents& events, const Clock& clock,
              std::unique_ptr<ChildCommands> commands);
  std::string LaunchPath(JobId id) const;
  ChildCommand AsRotad(std::vector<std::string> argv) const;
  ChildCommand QueueCommand() const;
  void OnSubmitted(JobId id, const ChildResult& r);
  void ReadQueue();
  // The queue read (`queue`: jobs not over, no names), and the jobs followed read apart in every
  // state with their names (`names`, none when none is followed): see slurm::NamesFilter.
  static StatusOr<std::vector<slurm::QueuedJob>> ReadQueueWithNames(const ChildResult& queue,
                                                                    const ChildResult* names);
  ChildCommand NamesCommand(const std::vector<JobId>& ids) const;
  void OnQueue(StatusOr<std::vector<slurm::QueuedJob>> queue);
  // Applies one reading of the queue to every job followed.
  // How many of the jobs followed are completing.
  int Apply(const std::vector<slurm::QueuedJob>& queue);
  // The queue's entry for job `id` (its tag, its owner, its Slurm id once known), or nullptr.
  const slurm::QueuedJob* Find(const std::vector<slurm::QueuedJob>& queue, JobId id, const Job& j) const;
  void Cancel(JobId id, const std::string& slurm_id, int signo);
  // Asks Slurm which GPUs it gave the running job (`scontrol -d show job`) and reports them.
  void AskGpus(JobId id, const slurm::QueuedJob& q);
  // Follows the running jobs of `queue` that are not Rota's (`ours`: the Slurm ids of the jobs
  // followed) and hold GPUs: which GPUs each has is asked once (`scontrol -d show job`), and the
  // daemon told of every change (EngineEvents::ClusterHolders).
  void FollowOutside(const std::vector<slurm::QueuedJob>& queue, const std::set<std::string>& ours);
  // The runs outside Rota holding whole GPUs: those new are followed, those gone are charged.
  void ChargeOutside(const std::vector<slurm::QueuedJob>& queue, const std::set<std::string>& ours);
  void TellHolders();
  // The cards (SLURM-<node>-<i>) that `scontrol -d show job`'s answer `r` says a job on `nodes`
  // (the queue's host list: a Rota job's one node, or an outside job's several) with `count` GPUs
  // and the shards of `shard_cards` cards on each has (a card whose shards it holds is held: a
  // whole GPU would wait there); an error unless its lines name those nodes, each once, with
  // exactly those counts (slurm::GpusGiven).
  static StatusOr<std::vector<std::string>> GivenCards(const ChildResult& r, const std::string& nodes,
                                                       int count, int shard_cards = 0);
  // The whole GPUs a queue entry asks per node (its tres-per-node), its MIG slices
  // (slurm::MigProfile), and the cards whose shards it asks (one for each shard item: a job's
  // shards of one request come from one card).
  static int GpusPerNode(const slurm::QueuedJob& q);
  static int SlicesPerNode(const slurm::QueuedJob& q);
  static int ShardCardsPerNode(const slurm::QueuedJob& q);
  void Ended(JobId id, Job& j, const JobExit& exit);
  // Job `id`, no longer in the queue: its end as Slurm's accounting has it, or (none, or no
  // accounting) as unknown. Asynchronous; reported through Ended.
  void AskAccounting(JobId id, Job& j);
  // The end of job `id` (looked for as `j`) in sacct's `r`: nullopt, with `why`, when it does not tell.
  // sacct's entry for job `id` (looked for as `j`) in its output `r`: nullopt, with `why`, when it
  // has none; `why` also says when the entry is of a job still active.
  std::optional<slurm::QueuedJob> AccountedRun(JobId id, const Job& j, const ChildResult& r, std::string& why);
  // The launch file rewritten with what is known of the submission.
  void RecordLaunch(JobId id, const Job& j);
  ChildCommand AccountingCommand(std::span<const JobId> ids, Time since) const;
  // sacct's answers at the restart for the jobs of every launch file, asked in batches (one call
  // per kAccountingBatch jobs): by job id, the answer of its batch. A batch that failed ends the asking.
  const std::map<JobId, std::shared_ptr<const ChildResult>>& StartupAccounting();
  // The jobs that have a launch file in run_dir.
  std::vector<JobId> LaunchIds() const;
  // A job that Slurm no longer lists and whose end nothing tells.
  static JobExit UnknownEnd(const std::string& slurm_id, const std::string& why);
  // A submission whose outcome was not known, found not to have reached Slurm.
  static JobExit NotSubmitted(const std::string& more);
  // What job `id`'s launch file says (`file`, unset when there is none or it cannot be read), as a
  // job to look for in the queue: its owner and when its launch began.
  Job Probe(JobId id, std::optional<LaunchFile>& file) const;
  // The queue as read once for the restart's FindLaunch/Adopt/Collect (nullopt: Slurm did not answer).
  const std::optional<std::vector<slurm::QueuedJob>>& StartupQueue();
  // Slurm's MinJobAge (`scontrol show config`), read with the startup queue, into listed_after_end_.
  void ReadMinJobAge();
  void ArmPoll();
  // Answers the waiting pokes that are settled or out of time (after each batch of events).
  void SettlePokes();
  void SyncReservations();
  void ApplyReservations(std::vector<slurm::ReservationChange> plan, size_t next);
  // The reservation a job of `user` on `node` goes into now ("" none), and how long until a
  // reservation there begins that the job would reach into (0: none).
  std::pair<std::string, Duration> ReservationFor(const std::string& user, const std::string& node, Time now) const;

  SlurmEngineOptions options_;
  EngineEvents& events_;
  const Clock& clock_;
  std::unique_ptr<ChildCommands> commands_;
  std::unique_ptr<OneShotTimer> poll_timer_;
  std::unique_ptr<OneShotTimer> poke_timer_;
  std::unique_ptr<OneShotTimer> poke_wait_timer_;  // wakes the loop at the first waiter's bound
  struct PokeWaiter {
    std::uint64_t read = 0;  // the read of the queue it waits for
    std::chrono::steady_clock::time_point deadline;
    std::function<void()> settled;
  };
  std::vector<PokeWaiter> poke_waiters_;  // oldest first
  std::uint64_t reads_begun_ = 0;         // reads of the queue begun, and applied
  std::uint64_t reads_applied_ = 0;
  std::chrono::steady_clock::time_point last_read_{};
  std::map<JobId, Job> jobs_;
  bool reading_ = false;     // a squeue runs
  bool read_again_ = false;  // a poke came while it ran
  bool reachable_ = true;
  std::string unreachable_why_;
  std::string version_;
  bool startup_read_ = false;
  std::optional<std::vector<slurm::QueuedJob>> startup_queue_;
  bool accounting_off_ = false;          // sacct missing, or the cluster keeps no accounting
  // What the cluster's accounting settings keep from Rota (slurm::AccountingGap), in Describe():
  // read once with `scontrol show config`, at a restart with MinJobAge (ReadMinJobAge), else
  // after the first read of the queue (CheckAccounting).
  std::string accounting_gap_;
  bool accounting_checked_ = false;
  void CheckAccounting();
  void TakeAccountingGap(const std::string& show_config);
  // How long Slurm lists an ended job: its MinJobAge as read at the restart, else the option's.
  Duration listed_after_end_;
  bool startup_accounting_failed_ = false;  // sacct did not answer at the restart: not asked again then
  bool startup_accounting_read_ = false;
  std::map<JobId, std::shared_ptr<const ChildResult>> startup_accounting_;  // one answer per batch
  struct OutsideJob {
    uid_t uid = 0;
    std::vector<std::string> cards;  // empty until scontrol said (or where it cannot say)
  };
  std::map<std::string, OutsideJob> outside_;  // by Slurm id
  // Every running job outside Rota that holds whole GPUs or shards of them (not only those named
  // above), for the charge when it ends (OutsideRunEnded), by Slurm id; its `end` is the last
  // read that listed it running, as OutsideRunning gives it.
  std::map<std::string, OutsideRun> outside_runs_;
  // The runs outside Rota that ended while rotad was away (CatchUpOutside), asked of sacct after
  // the next read of the queue: every run either still runs then (followed) or ended before.
  struct CatchUp {
    Time since;
    std::set<std::string> ours;
  };
  std::optional<CatchUp> catch_up_;
  void StartCatchUp(Time since, std::set<std::string> ours);
  // ChargeCaughtUp with every run of the jobs `requeued` (Slurm id: its owner's uid) added, asked
  // of sacct by id (slurm::RunsArgs): the window listed their first runs alone.
  void ChargeWithLaterRuns(Time since, Time until, std::set<std::string> ours,
                           std::vector<slurm::AccountedUse> uses, std::map<std::string, uid_t> requeued);
  // Charges the runs of `uses` that ended in the window from `since` and are outside Rota, then
  // says the engine caught up to `until`.
  void ChargeCaughtUp(Time since, Time until, const std::set<std::string>& ours,
                      const std::vector<slurm::AccountedUse>& uses);
  // A run gone since a read longer ago than this (Slurm did not answer meanwhile) is charged to
  // that read, not to now: its end is not known, and a charge should not exceed the use.
  static constexpr Duration kOutsideEndSlack = 30;
  int outside_asking_ = 0;                     // scontrol runs for so many of them
  std::vector<ClusterHolder> told_holders_;
  std::vector<slurm::Reservation> wanted_reservations_;
  std::set<std::string> present_reservations_;  // Rota's, as Slurm has them since the last changes
  bool reservations_syncing_ = false;
  bool reservations_again_ = false;  // the bookings changed while a sync ran
  Time next_reservation_check_ = 0;
  std::string reservations_error_;  // the last failure to read them, said once
  std::map<std::string, std::string> reservation_failures_;  // by name: the last failure said
};

}  // namespace rota::daemon
