// Tested by the integration tests in tests/daemon/ (real rotad and rota processes).
//
// Design: one thread. Every event (a request line, a shepherd's exit, a signal, the timer) is
// handled to completion, marking the schedule dirty; after each batch of events the loop's idle
// hook runs one scheduling pass. The store is written before memory and before any reply, so
// what a client was told is on disk.
#include "daemon/daemon.h"

#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <functional>
#include <cstring>
#include <ctime>
#include <spdlog/spdlog.h>

#include "api/protocol.h"
#include "daemon/clock.h"
#include "daemon/http_bridge.h"
#include "daemon/systemd_notify.h"
#include "exec/cgroup.h"
#include "exec/device_filter.h"

namespace rota::daemon {

namespace {

// Creates `dir` and its parents with `mode` (for the ones it creates).
Status MakeDirs(const std::string& dir, mode_t mode) {
  std::string path;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = dir.find('/', pos + 1);
    path = dir.substr(0, pos);
    if (path.empty()) continue;
    if (::mkdir(path.c_str(), mode) != 0 && errno != EEXIST) {
      return Unavailable("cannot create " + path + ": " + std::strerror(errno));
    }
  }
  return Status();
}

std::string DirName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos || slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

Daemon::Daemon(const DaemonOptions& options, config::Config config, DaemonDeps deps)
    : options_(options), deps_(deps), config_(std::move(config)) {}

Daemon::~Daemon() {
  door_.reset();  // its threads first: they may be waiting on this loop
  if (pipeline_) pipeline_->Attach(nullptr);
  sessions_.reset();  // re-adopted clients unwatched, ended sessions' cgroups a last try
  server_.reset();
  if (notes_) {
    // A send in progress finishes; unsent messages stay in the outbox. The socket's clients are
    // gone with the server; HTTP and in-process callers still wait for their answer.
    for (Notifications::TestReply& r : notes_->Stop()) {
      if (pipeline_ && pipeline_->Waiting(r.conn)) pipeline_->Reply(r.conn, r.reply);
    }
  }
  if (card_desk_) card_desk_->StopSampling();
  if (engine_) {
    engine_->Shutdown();
    engine_.reset();  // before the loop it watches on
  }
  submit_timer_.reset();
  trim_timer_.reset();
  if (signal_fd_ >= 0) ::close(signal_fd_);
  if (loop_) loop_->Remove(deps_.clock->WakeFd());
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

StatusOr<std::unique_ptr<Daemon>> Daemon::Create(const DaemonOptions& options, config::Config config,
                                                 DaemonDeps deps) {
  std::unique_ptr<Daemon> d(new Daemon(options, std::move(config), deps));
  if (Status s = d->Open(); !s.ok()) return s;
  return d;
}

Status Daemon::Open() {
  started_ = Now();
  // Signals arrive through a signalfd, so they must be blocked in every thread: block them before
  // anything starts one. The real libnvidia-ml starts its own threads in nvmlInit (CardDesk::Load);
  // a SIGTERM the kernel handed to one of those would kill rotad without its shutdown (seen on
  // a real H200). Children must not inherit the blocked mask (the executor resets it in the
  // shepherd).
  sigset_t mask;
  sigemptyset(&mask);
  for (int s : {SIGHUP, SIGTERM, SIGINT, SIGCHLD}) sigaddset(&mask, s);
  if (pthread_sigmask(SIG_BLOCK, &mask, nullptr) != 0) return Internal("pthread_sigmask failed");
  ::signal(SIGPIPE, SIG_IGN);
  const mode_t dir_mode = options_.user_mode ? 0700 : 0755;
  if (Status s = MakeDirs(options_.state_dir, 0700); !s.ok()) return s;
  if (Status s = MakeDirs(DirName(options_.socket_path), dir_mode); !s.ok()) return s;

  // One daemon per state directory.
  const std::string lock_path = options_.state_dir + "/rotad.lock";
  lock_fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock_fd_ < 0) return Unavailable("cannot open " + lock_path + ": " + std::strerror(errno));
  // A predecessor that was just killed can hold the lock for some milliseconds after its exit
  // was reported (a restart at once after kill -9 was refused now and then): asked again for up
  // to two seconds before giving up.
  for (int tries = 0; ::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0; ++tries) {
    if (errno != EWOULDBLOCK || tries == kLockTries) {
      return FailedPrecondition("another rotad is using " + options_.state_dir + " (lock " + lock_path + ")");
    }
    ::usleep(kLockRetryUs);
  }

  StatusOr<std::unique_ptr<store::JobStore>> store = deps_.store(options_.state_dir + "/rota.db");
  if (!store.ok()) return store.status();
  store_ = std::move(*store);
  host_ = HostName();
  Notifications::Setup notes;
  notes.store = store_.get();
  notes.clock = deps_.clock;
  notes.channels = deps_.channels;
  notes.host = host_;
  notes.note_job = [this](JobId id, const std::string& line, Time now) { NoteJob(id, line, now); };
  notes.gpus_of = [this](const store::JobRecord& rec) { return cards_.IndexList(rec.placement.alloc); };
  notes_ = std::make_unique<Notifications>(std::move(notes), config_);  // events from here on are kept
  if (Status s = notes_->Load(); !s.ok()) return s;
  BookingDesk::Setup desk;
  desk.store = store_.get();
  desk.clock = deps_.clock;
  desk.config = &config_;
  desk.cards = &cards_;
  desk.notes = notes_.get();
  desk.jobs = &jobs_;
  desk.stop = [this](ActiveJob& a, Time now) { runner_->StopAfterWarning(a, now); };
  desk.changed = [this] { dirty_ = true; };
  desk_ = std::make_unique<BookingDesk>(std::move(desk));  // empty until loaded, after the inventory
  host_memory_ = config::ServerMemory();
  WarnAboutMemoryDefault();
  JobViews::Setup views;
  views.store = store_.get();
  views.clock = deps_.clock;
  views.config = &config_;
  views.jobs = &jobs_;
  views.cards = &cards_;
  views.accounts = [this](uid_t uid) { return Account(uid); };
  Foresight::Setup foresight;
  foresight.store = store_.get();
  foresight.config = &config_;
  foresight.jobs = &jobs_;
  foresight.state = [this] { return BuildState(desk_->book().Entries()); };
  foresight_ = std::make_unique<Foresight>(std::move(foresight));
  views.foresight = foresight_.get();
  views_ = std::make_unique<JobViews>(std::move(views));
  // The waiting jobs' notes are made when first read after a pass that did not (JobTable).
  jobs_.SetExplainer([this] { ExplainWaiting(); });
  ReplayDesk::Setup replays;
  replays.history = [this](const std::string& since) { return LabHistory(since); };
  replays.policy = [this] { return config_.policy; };
  replays_ = std::make_unique<ReplayDesk>(std::move(replays));
  UsageLedger::Setup ledger;
  ledger.store = store_.get();
  ledger.config = &config_;
  ledger.cards = &cards_.state();
  ledger.notes = notes_.get();
  ledger_ = std::make_unique<UsageLedger>(std::move(ledger));
  if (Status s = ledger_->Load(); !s.ok()) return s;

  StatusOr<std::unique_ptr<EventLoop>> loop = EventLoop::Create();
  if (!loop.ok()) return loop.status();
  loop_ = std::move(*loop);
  StatusOr<std::unique_ptr<Engine>> engine = deps_.engine(EngineHost{*loop_, *this, *deps_.clock, options_});
  if (!engine.ok()) return engine.status();
  engine_ = std::move(*engine);
  spdlog::info("executor: {}", engine_->Describe());
  server_ = std::make_unique<Server>(*loop_, *this);  // listening once the jobs are recovered
  SessionDesk::Setup sessions;
  sessions.store = store_.get();
  sessions.clock = deps_.clock;
  sessions.config = &config_;
  sessions.loop = loop_.get();
  sessions.server = server_.get();
  sessions.engine = engine_.get();
  sessions.jobs = &jobs_;
  sessions.cards = &cards_;
  sessions.ledger = ledger_.get();
  sessions.counters = &counters_;
  sessions.changed = [this] { dirty_ = true; };
  sessions.finish = [this](ActiveJob& a, const exec::ExitInfo& info, Time now) {
    ++activity_;
    runner_->Finish(a, info, now);
  };
  sessions.stop = [this](ActiveJob& a, Time now) { runner_->BeginStop(a, now); };
  sessions_ = std::make_unique<SessionDesk>(std::move(sessions));

  if (!config_.engine.agent_tokens.empty()) {
    // Node agents' GPU readings (agent_board.h): tokens read once, at start.
    StatusOr<std::map<std::string, std::string>> tokens = AgentBoard::LoadTokens(config_.engine.agent_tokens);
    if (!tokens.ok()) return tokens.status();
    spdlog::info("agents: tokens of {} node(s) from {}", tokens->size(), config_.engine.agent_tokens);
    agents_ = std::make_shared<AgentBoard>(std::move(*tokens), *deps_.clock, config_.engine.agent_stale_after);
  }
  CardDesk::Setup cards;
  cards.agents = agents_.get();
  cards.store = store_.get();
  cards.clock = deps_.clock;
  cards.config = &config_;
  cards.kill_wait = options_.kill_wait;
  cards.loop = loop_.get();
  cards.devices = deps_.devices;
  cards.jobs = &jobs_;
  cards.cards = &cards_;
  cards.bookings = desk_.get();
  cards.notes = notes_.get();
  cards.changed = [this] { dirty_ = true; };
  cards.stop = [this](ActiveJob& a, Time now) { runner_->BeginStop(a, now); };
  cards.sampled = [this](Time now) {
    counters_.CardsSampled(card_desk_->IdleCards(), now);
    allocs_->Measure(now);
    allocs_->Watch(now);
    TellOutsideQuota(now);
  };
  card_desk_ = std::make_unique<CardDesk>(std::move(cards));
  if (Status s = card_desk_->Open(); !s.ok()) return s;
  AllocationWatch::Setup allocs;
  allocs.store = store_.get();
  allocs.config = &config_;
  allocs.jobs = &jobs_;
  allocs.cards = &cards_;
  allocs.watch = &card_desk_->watch();
  allocs.notes = notes_.get();
  allocs.note_job = [this](JobId id, const std::string& line, Time now) { NoteJob(id, line, now); };
  allocs.stop = [this](ActiveJob& a, Time now) {
    runner_->StopAfterWarning(a, now);
    dirty_ = true;
  };
  allocs_ = std::make_unique<AllocationWatch>(std::move(allocs));
  JobRunner::Setup runner;
  runner.store = store_.get();
  runner.clock = deps_.clock;
  runner.config = &config_;
  runner.kill_wait = options_.kill_wait;
  runner.engine = engine_.get();
  runner.jobs = &jobs_;
  runner.cards = &cards_;
  runner.ledger = ledger_.get();
  runner.allocs = allocs_.get();
  runner.notes = notes_.get();
  runner.counters = &counters_;
  runner.sessions = sessions_.get();
  runner.account = [this](uid_t uid) { return Account(uid); };
  runner.visible = [this](const Caller& caller, JobId id) { return views_->Visible(caller, id); };
  runner.refused = [this](const Caller& caller, std::string_view op, const Status& why) {
    pipeline_->NoteRefusal(caller, op, why);
  };
  runner.changed = [this] { dirty_ = true; };
  runner_ = std::make_unique<JobRunner>(std::move(runner));
  Admission::Setup admission;
  admission.store = store_.get();
  admission.clock = deps_.clock;
  admission.config = &config_;
  admission.user_mode = options_.user_mode;
  admission.host_memory = host_memory_;
  admission.jobs = &jobs_;
  admission.cards = &cards_;
  admission.cards_unknown = [this] { return card_desk_->CardsUnknown(); };
  admission.engine_refuses = [this](const Request& r) { return engine_->Refuses(r); };
  admission.end_of = [this](JobId id) { return runner_->EndOf(id); };
  admission_ = std::make_unique<Admission>(std::move(admission));
  RequestPipeline::Setup pipeline;
  pipeline.clock = deps_.clock;
  pipeline.config = &config_;
  pipeline.user_mode = options_.user_mode;
  pipeline.server = server_.get();
  pipeline.admission = admission_.get();
  pipeline.callers = &callers_;
  pipeline.account = [this](uid_t uid) { return Account(uid); };
  pipeline.catch_up = [this] { CatchUpOnSubmissions(); };
  pipeline.submitted = [this] { submissions_waiting_ = true; };
  pipeline.metrics = [this] { return MetricsText(); };
  pipeline_ = std::make_unique<RequestPipeline>(std::move(pipeline));
  RegisterOps();
  if (Status s = pipeline_->CheckComplete(); !s.ok()) return s;
  card_desk_->Load(Now());
  if (Status s = desk_->Load(Now()); !s.ok()) return s;
  // Said once (docs/security.md, "GPU isolation"): what keeps a job off the cards it was not given.
  if (engine_->DeviceFilter()) {
    spdlog::info("GPU isolation: a job's cgroup refuses it the /dev/nvidia nodes of the cards it was not given "
                 "(a BPF device program), besides CUDA_VISIBLE_DEVICES");
  } else {
    spdlog::info("GPU isolation: a job sees its own cards through CUDA_VISIBLE_DEVICES only; it can still open "
                 "the /dev/nvidia* nodes of the others (no device program here: {}), so processes on cards they "
                 "were not given are found by the card watch and reported as outside use",
                 engine_->Cgroups() ? "BPF is not allowed" : "no cgroup v2");
  }

  signal_fd_ = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  if (signal_fd_ < 0) return Internal(std::string("signalfd: ") + std::strerror(errno));
  if (Status s = loop_->Add(signal_fd_, EPOLLIN, [this](std::uint32_t) { OnSignal(); }); !s.ok()) return s;

  // The clock's deadline: the next pass the core asked for (SchedulePass sets it).
  if (Status s = loop_->Add(deps_.clock->WakeFd(), EPOLLIN,
                            [this](std::uint32_t) {
                              deps_.clock->Woken();
                              dirty_ = true;
                            });
      !s.ok()) {
    return s;
  }
  StatusOr<std::unique_ptr<OneShotTimer>> submit_timer =
      OneShotTimer::Create(*loop_, [this] { if (submissions_waiting_) dirty_ = true; });
  if (!submit_timer.ok()) return submit_timer.status();
  submit_timer_ = std::move(*submit_timer);
  StatusOr<std::unique_ptr<OneShotTimer>> trim_timer = OneShotTimer::Create(*loop_, [this] {
    activity_at_trim_ = activity_;
    malloc_trim(0);
  });
  if (!trim_timer.ok()) return trim_timer.status();
  trim_timer_ = std::move(*trim_timer);
  loop_->SetIdleHook([this] {
    // Jobs that ended in this batch: the jobs their GPUs go to are launched first, then the
    // ends are recorded, all before any request is answered.
    if (runner_->ends_waiting()) {
      RunPasses();
      runner_->RecordEnds();
    }
    activity_ += pipeline_->Process();
    if (submissions_waiting_ && !dirty_) submit_timer_->Arm(kSubmitBatchWindowNs);
    RunPasses();
    engine_->AfterEvents();
    // Heap that requests and jobs used and freed, handed back to the system once things calm
    // down: glibc keeps freed memory for reuse, so a burst of thousands of submissions or
    // cancels would otherwise stay in rotad's resident size.
    if (activity_ != activity_at_trim_) trim_timer_->Arm(kTrimDelayNs);
  });

  if (Status s = Recover(); !s.ok()) return s;
  CatchUpOutside();  // the cluster's jobs outside Rota that ended while rotad was away
  if (Status s = card_desk_->StartSampling(); !s.ok()) return s;
  if (Status s = ConfigureNotifications(); !s.ok()) return s;

  // System mode: everyone may connect (identity comes from the kernel); user mode: the
  // directory is private to the user anyway.
  ApplyServerLimits();
  if (Status s = server_->Listen(options_.socket_path, options_.user_mode ? 0600 : 0666); !s.ok()) return s;
  // After sigprocmask above: the HTTP threads inherit the blocked signals.
  HttpDoor::Setup door;
  door.store = store_.get();
  door.clock = deps_.clock;
  door.config = &config_;
  door.user_mode = options_.user_mode;
  door.agents = agents_.get();
  door.take = [this](ConnId conn, std::shared_ptr<HttpCall> call) {
    pipeline_->TakeHttp(conn, std::move(call));
  };
  door_ = std::make_unique<HttpDoor>(std::move(door));
  if (Status s = door_->Start(*loop_); !s.ok()) return s;
  pipeline_->Attach(door_.get());
  return Status();
}

void Daemon::OnSignal() {
  signalfd_siginfo info;
  while (::read(signal_fd_, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
    switch (info.ssi_signo) {
      case SIGHUP:
        NotifySystemd("RELOADING=1");
        if (Status s = ReloadConfig(); !s.ok()) {
          spdlog::error("reload: {}; keeping the configuration in force", s.message());
        }
        NotifySystemd("READY=1");
        break;
      case SIGTERM:
      case SIGINT:
        spdlog::info("stopping on signal {}; running jobs keep running and are re-adopted on start",
                     info.ssi_signo);
        NotifySystemd("STOPPING=1");
        loop_->Stop();
        break;
      default:
        break;  // SIGCHLD: children are reaped through their pidfds
    }
  }
}

Status Daemon::ReloadConfig() {
  if (options_.config_path.empty()) return Status();
  StatusOr<config::Config> fresh = config::LoadConfig(options_.config_path);
  if (!fresh.ok()) return fresh.status();
  const bool source_changed = fresh->gpu_source != config_.gpu_source || fresh->nvml_library != config_.nvml_library ||
                              fresh->nvml_timeout != config_.nvml_timeout;
  config_ = std::move(*fresh);
  card_desk_->Forget(source_changed);
  callers_.Clear();
  accounts_.Clear();
  if (server_) ApplyServerLimits();
  admission_->Reconfigured();  // the new rate from the next submission on
  card_desk_->Load(Now());
  if (Status s = card_desk_->StartSampling(); !s.ok()) return s;
  if (Status s = ConfigureNotifications(); !s.ok()) return s;
  spdlog::info("reloaded {}: {}", options_.config_path, config::Summary(config_));
  WarnAboutMemoryDefault();
  dirty_ = true;
  return Status();
}

void Daemon::WarnAboutMemoryDefault() const {
  for (const std::string& warning : config::Warnings(config_, host_memory_)) spdlog::warn("{}", warning);
}

Status Daemon::ConfigureNotifications() {
  return notes_->Configure(*loop_, [this] {
    for (Notifications::TestReply& r : notes_->TakeTestReplies()) {
      if (!RequestPipeline::IsLocal(r.conn)) server_->SetHeld(r.conn, false);
      pipeline_->Reply(r.conn, r.reply);
    }
  });
}

void Daemon::WakeNotifier() { notes_->Wake(); }

void Daemon::NoteJob(JobId id, const std::string& reason, Time now) {
  if (Status s = store_->NoteJob(id, reason, "rotad", now); !s.ok()) {
    spdlog::error("job {}: cannot record \"{}\": {}", id, reason, s.message());
  }
  spdlog::info("job {}: {}", id, reason);
}

void Daemon::OnClose(ConnId conn) { sessions_->Closed(conn); }

void Daemon::JobReleased(JobId id, Time at) {
  ++activity_;
  runner_->Released(id, at);
}

void Daemon::JobEnded(JobId id, const JobExit& exit) {
  ++activity_;
  runner_->Ended(id, exit, Now());
}

void Daemon::WithdrawnGone(JobId id) { runner_->WithdrawnGone(id); }

void Daemon::JobNamed(JobId id, const std::string& engine_job) { runner_->Named(id, engine_job, Now()); }

void Daemon::JobPlaced(JobId id, const std::vector<std::string>& cards) { runner_->Placed(id, cards, Now()); }

void Daemon::ClusterHolders(const std::vector<ClusterHolder>& holders) { card_desk_->SetClusterHolders(holders); }

void Daemon::OutsideRunEnded(const OutsideRun& run) {
  // A user who bypasses Rota pays for it as for a job of Rota's: fair share and the quota week.
  const std::optional<std::string> user = UserName(run.uid);
  if (!user) {
    spdlog::warn("Slurm job {} (outside Rota) ended; its uid {} has no name here: not charged", run.job, run.uid);
    return;
  }
  const store::OutsideRun charged{run.job, *user, OutsideGpus(run), run.start, run.end};
  if (Status s = ledger_->ChargeOutside(charged); !s.ok()) {
    spdlog::error("charging Slurm job {} (outside Rota) to {}: {}", run.job, *user, s.message());
    return;
  }
  dirty_ = true;  // fair share and quotas moved
}

void Daemon::EngineAvailable() {
  // Jobs postponed while the cluster did not answer wait no longer than the next pass (their
  // backoff reached minutes while it was away).
  const Time now = Now();
  int woken = 0;
  for (auto& [id, a] : jobs_) {
    if (a.rec.state != store::JobState::kPending || a.launch_failures == 0 || a.retry_at <= now) continue;
    a.retry_at = now;
    a.launch_failures = 0;
    ++woken;
  }
  if (woken > 0) spdlog::info("{} job(s) postponed while the engine did not answer are tried now", woken);
  dirty_ = true;
}

int Daemon::Run() {
  NotifySystemd("READY=1");
  spdlog::info("rotad {} serving {} ({} mode), state in {}", api::kDaemonVersion, options_.socket_path,
               options_.user_mode ? "user" : "system", options_.state_dir);
  RunPasses();
  loop_->Run();
  runner_->RecordEnds();  // jobs that ended in the last batch of events
  KeepOutsideSeenUntil(Now() - kOutsideWatermarkLag);  // the Slurm engine's, once caught up
  // Running jobs keep running; what was measured of them so far is kept.
  for (auto& [id, a] : jobs_) allocs_->SaveMeasures(a);
  return exit_code_;
}

}  // namespace rota::daemon
