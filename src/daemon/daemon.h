// rotad: owns the server's GPUs. It keeps the active jobs in memory (the store is the truth on
// disk), answers API requests from the Unix socket, runs the scheduling core after every batch
// of events, and applies its decisions through the executor (batch jobs) or the client
// connection (interactive sessions). docs/design.md, "The daemon", describes the loop, the
// recovery on start and the kill sequence.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "config/config.h"
#include "core/cluster.h"
#include "core/decisions.h"
#include "daemon/foresight.h"
#include "daemon/active_job.h"
#include "daemon/admission.h"
#include "daemon/allocation_watch.h"
#include "daemon/booking_desk.h"
#include "daemon/card_desk.h"
#include "daemon/clock.h"
#include "daemon/counters.h"
#include "daemon/deps.h"
#include "daemon/engine.h"
#include "daemon/event_loop.h"
#include "daemon/http_door.h"
#include "daemon/identity.h"
#include "daemon/inventory.h"
#include "daemon/job_runner.h"
#include "daemon/job_table.h"
#include "daemon/job_views.h"
#include "daemon/notifications.h"
#include "daemon/replay_desk.h"
#include "daemon/request_pipeline.h"
#include "daemon/server.h"
#include "daemon/session_desk.h"
#include "daemon/usage_ledger.h"
#include "store/job_store.h"

namespace rota::daemon {

class Daemon : public Server::Handler, private EngineEvents {
 public:
  // Opens the store, builds the GPU inventory, recovers jobs left by a previous run and starts
  // listening. Fails with a message an admin can act on.
  static StatusOr<std::unique_ptr<Daemon>> Create(const DaemonOptions& options, config::Config config,
                                                  DaemonDeps deps = {});
  ~Daemon() override;

  // Serves until SIGTERM or SIGINT. Running jobs keep running under their shepherds.
  int Run();

  // A request from inside this process (tests that drive a daemon in-process): it takes the same
  // path as a line from the socket (request_pipeline.h: parsing, checks, group-committed
  // submissions, the handlers), from `caller` instead of a connection's peer. `done` gets the
  // reply on the loop's thread, at the latest after the batch of events that handles it.
  void Call(const Caller& caller, const nlohmann::json& request, std::function<void(nlohmann::json)> done) {
    pipeline_->Call(caller, request, std::move(done));
  }
  // The same for a line as it came, and for a request as the HTTP front end hands it over
  // (RequestPipeline::CallLine, CallHttp).
  void CallLine(const Caller& caller, std::string line, std::function<void(nlohmann::json)> done) {
    pipeline_->CallLine(caller, std::move(line), std::move(done));
  }
  void CallHttp(const Caller& caller, nlohmann::json request, std::function<void(nlohmann::json)> done) {
    pipeline_->CallHttp(caller, std::move(request), std::move(done));
  }
  // The loop, for callers that drive it themselves (EventLoop::RunOnce) instead of Run().
  EventLoop& loop() { return *loop_; }
  // Asks the sampler for a sample now (it comes through the loop), and how many samples were
  // applied so far: for callers that drive the loop on virtual time.
  void SampleSoon() { card_desk_->SampleSoon(); }
  std::uint64_t samples_applied() const { return card_desk_->samples_applied(); }
  // Tells the notifier to look at the outbox now: on a virtual clock it waits to be told, by the
  // one who moves the time.
  void WakeNotifier();
  // Whether submissions wait for the batch window (a real 5 ms timer on the loop) before their
  // pass: a caller that drives the loop knows that something will still come.
  bool SubmissionsBatching() const { return submissions_waiting_; }

  // Lines are handled after the whole batch of events has been read, so that submissions that
  // arrive together share one disk sync (group commit).
  void OnLine(ConnId conn, std::string_view line) override { pipeline_->TakeLine(conn, std::string(line)); }
  void OnClose(ConnId conn) override;
  void OnRefused(const Peer& peer, const Status& why) override;  // limits.cc
  bool Privileged(const Peer& peer) override;                     // limits.cc

 private:
  using Active = ActiveJob;  // active_job.h

  Daemon(const DaemonOptions& options, config::Config config, DaemonDeps deps);
  Status Open();
  // The time of day, from the injected clock.
  Time Now() const { return deps_.clock->Now(); }

  // Requests: which part answers which operation (op_handlers.cc), and the replies the daemon
  // itself gives (requests.cc).
  void RegisterOps();
  nlohmann::json Hello(const Caller& caller);
  // The socket server's connection limits from [limits], within rotad's open-file limit (limits.cc).
  void ApplyServerLimits();
  nlohmann::json StatusReply();
  // `rules`: the lab's rules in words (config/rules_text.h), in the language asked for.
  nlohmann::json Rules(const Caller& caller, const nlohmann::json& request);
  // `advise`: rent or wait for waiting jobs (advise.cc).
  nlohmann::json Advise(const Caller& caller, const nlohmann::json& request);
  // The jobs that hold or are expected to hold cards in [from, to), for `bookings` with "ahead"
  // (time_ahead.cc).
  nlohmann::json TimeAhead(Time from, Time to);
  nlohmann::json Reload(const Caller& caller);

  // Metrics (metrics.cc): the scheduler's and the cards' part of GET /metrics.
  std::string MetricsText();

  // Scheduling (scheduling.cc).
  void SchedulePass();
  // The passes due now (dirty_), then the simulated loads.
  void RunPasses();
  // Before answering anything but a submission: the pass that new submissions are waiting for
  // (their place and reason in the queue, or their start, are part of the answer).
  void CatchUpOnSubmissions();
  ClusterState BuildState(const std::vector<BookingEntry>& bookings) const;
  // The engine's runs outside Rota still running (Engine::OutsideRunning), with their owners'
  // names (each looked up once per run: outside_names_); runs whose uid has no name are left out.
  std::vector<store::OutsideRun> OutsideRunning() const;
  // What a run outside Rota holds in GPUs: its whole GPUs and its shards (Inventory::ShardGpus).
  double OutsideGpus(const OutsideRun& run) const;
  // At the start: the runs outside Rota that ended while rotad was away, asked of the engine
  // from the time the store keeps (outside_runs.cc).
  void CatchUpOutside();
  // Tells the owners of runs outside Rota still running when their week's usage so far (the runs
  // counted so far) crosses a quota level, as a charge would at the run's end (each sample).
  void TellOutsideQuota(Time now);
  // Keeps in the store that every run outside Rota that ended up to `until` is charged (only once
  // the Slurm engine has caught up: outside_seen_moves_). A pass keeps now - kOutsideWatermarkLag every kOutsideWatermarkEvery: a run
  // is charged when a read sees it gone (a read a second while the cluster answers), and the lag
  // covers a cluster that did not answer for a while.
  void KeepOutsideSeenUntil(Time until);
  static constexpr Duration kOutsideWatermarkLag = 10 * 60;
  static constexpr Duration kOutsideWatermarkEvery = 5 * 60;
  // The waiting jobs' notes (JobTable::SetExplainer) made on the state of now: an explained pass
  // whose decisions are not applied (the next pass makes them).
  void ExplainWaiting();
  // Keeps each waiting job's first start forecast (to calibrate later ones); returns when to try
  // again for the jobs the time budget left without one (kNever: none left).
  Time RecordFirstForecasts(Time now);
  // Promises the pending jobs that have none yet (core/promise.h, [policy] promise_slack), in the
  // state, the store and the job table.
  void KeepPromises(ClusterState& state, Time now);
  // What the engine reports (EngineEvents), for the job runner.
  void JobReleased(JobId id, Time at) override;
  void JobEnded(JobId id, const JobExit& exit) override;
  void WithdrawnGone(JobId id) override;
  void JobNamed(JobId id, const std::string& engine_job) override;
  void EngineAvailable() override;
  void JobPlaced(JobId id, const std::vector<std::string>& cards) override;
  void ClusterHolders(const std::vector<ClusterHolder>& holders) override;
  void OutsideRunEnded(const OutsideRun& run) override;
  void OutsideCaughtUp(Time until) override;


  // Adds a line to job `id`'s audit trail (and the log).
  void NoteJob(JobId id, const std::string& reason, Time now);


  // Notifications (notifications.h owns them): the notifier's start, or its new configuration on
  // reload, with the `rota notify test` answers it brings.
  Status ConfigureNotifications();

  // Start-up and configuration (daemon.cc, recovery.cc).
  Status Recover();
  void OnSignal();
  Status ReloadConfig();
  void WarnAboutMemoryDefault() const;  // in the log, at start and at each reload

  DaemonOptions options_;
  DaemonDeps deps_;
  config::Config config_;
  std::unique_ptr<EventLoop> loop_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<store::JobStore> store_;
  std::unique_ptr<Engine> engine_;
  // Socket callers' names and admin flags, for a few seconds (identity.h); cleared on reload.
  CallerCache callers_{std::chrono::seconds(5),
                       [this](uid_t uid, gid_t gid) { return Identify(uid, gid, 0, config_.admin_group); }};
  // Job owners' and callers' accounts (uid, gid, groups, shell), for as long; cleared on reload.
  // A job launched within 5 s of a change to its owner's groups runs with the old ones.
  mutable ExpiringCache<uid_t, StatusOr<UnixAccount>> accounts_{std::chrono::seconds(5)};
  StatusOr<UnixAccount> Account(uid_t uid) const {
    return accounts_.Get(uid, std::chrono::steady_clock::now(), [this, uid] { return deps_.accounts(uid); });
  }
  std::unique_ptr<AllocationWatch> allocs_;  // idle, stuck and over-memory allocations (allocation_watch.h)
  std::unique_ptr<BookingDesk> desk_;  // the bookings (booking_desk.h); made with the store
  Inventory cards_;  // the GPU inventory (inventory.h), kept up by card_desk_
  // The GPU source, its sampler, the card and outside watches, the card requests (card_desk.h).
  std::shared_ptr<AgentBoard> agents_;  // node agents' readings ([engine] agent_tokens), or none
  std::unique_ptr<CardDesk> card_desk_;
  std::unique_ptr<UsageLedger> ledger_;  // users' and projects' usage (usage_ledger.h)
  // Pending and running jobs, sessions' connections, withdrawn launches, what the last pass said
  // of the pending ones (job_table.h).
  JobTable jobs_;
  std::unique_ptr<JobViews> views_;  // what users read of jobs (job_views.h)
  std::unique_ptr<Foresight> foresight_;  // start forecasts and predicted ends (foresight.h)
  std::unique_ptr<ReplayDesk> replays_;   // the page's replays of the lab's history (replay_desk.h)
  // The lab's history for a replay, read through the handlers of `gpus`, `history` and `bookings`
  // as an admin would read it (replay_desk.cc's caller decides who may ask).
  StatusOr<replay::StoreTrace> LabHistory(const std::string& since);
  // Interactive sessions: their clients, connections' events, re-adoption (session_desk.h).
  std::unique_ptr<SessionDesk> sessions_;
  // Starts, signals, the kill sequence, ends, what a restart finds (job_runner.h).
  std::unique_ptr<JobRunner> runner_;
  // Every request's way from the socket, HTTP or Call to its handler (request_pipeline.h).
  std::unique_ptr<RequestPipeline> pipeline_;
  // New jobs' checks, the users' limits on them, submissions' group commit (admission.h).
  std::unique_ptr<Admission> admission_;
  std::unique_ptr<HttpDoor> door_;  // the HTTP front end, its waiting calls, credentials (http_door.h)
  std::uint64_t forecasts_recorded_from_ = 0;  // the computation RecordFirstForecasts last used
  // The owner's name of each run outside Rota still running, by the cluster's id (OutsideRunning:
  // a cache that a const state builder keeps).
  mutable std::map<std::string, std::optional<std::string>> outside_names_;
  bool outside_seen_moves_ = false;  // OutsideCaughtUp heard: the kept time may move on
  Time outside_seen_kept_ = 0;        // when KeepOutsideSeenUntil last wrote
  SchedulerCounters counters_;  // for `rota status` and /metrics, since this rotad started
  std::unique_ptr<Notifications> notes_;  // the outbox, the notifier, reminders (notifications.h)
  std::string host_;  // this server's name, for the messages
  MiB host_memory_ = 0;  // this server's memory (0: unknown), the most a job's --mem-per-gpu may add up to
  bool dirty_ = true;    // a pass is due at the end of this batch of events
  // New submissions wait for a pass at most kSubmitBatchWindow (design.md, "Scheduling passes"):
  // a script submitting one job every 2 ms gets one pass per few jobs, not one per job. Any
  // other reason for a pass (a job's end, a cancel, a deadline) takes them along at once.
  static constexpr long kSubmitBatchWindowNs = 5'000'000;
  bool submissions_waiting_ = false;
  int signal_fd_ = -1;
  std::unique_ptr<OneShotTimer> submit_timer_;  // kSubmitBatchWindowNs after a submission
  static constexpr int kLockTries = 20;  // for the state directory's lock, kLockRetryUs apart
  static constexpr useconds_t kLockRetryUs = 100'000;
  // Requests and job ends so far; the freed heap is returned (malloc_trim) kTrimDelayNs after
  // the first activity since the last return.
  static constexpr long long kTrimDelayNs = 5'000'000'000;
  std::uint64_t activity_ = 0;
  std::uint64_t activity_at_trim_ = 0;
  std::unique_ptr<OneShotTimer> trim_timer_;
  int lock_fd_ = -1;
  Time started_ = 0;
  int exit_code_ = 0;
};

}  // namespace rota::daemon
