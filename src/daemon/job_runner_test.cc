// The job runner alone (job_runner.h), over a real store and testing::FakeEngine on a real event
// loop: a batch start (the launch spec from the job, its owner's account and its cards, recorded
// as started), a launch the machine cannot make (pending, tried again later) and one the engine
// refuses (the job fails), an end decided at once and recorded after (its cards free before the
// store is written; its end known to --after-ok meanwhile), a requeue (held until recorded,
// then pending again), and the kill sequence (SIGTERM, SIGKILL kill_wait later). The same rules
// through a whole daemon: lifecycle_test.cc; through real shepherds: tests/daemon.
#include "daemon/job_runner.h"

#include <signal.h>

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "testing/daemon/fake_engine.h"
#include "testing/daemon/parts.h"
#include "testing/fake_clock.h"
#include "testing/temp_dir.h"

namespace rota::daemon {
namespace job_runner_test {
namespace {

using nlohmann::json;

constexpr Time kStart = 1796115600;

class JobRunnerTest : public ::testing::Test, private EngineEvents {
 protected:
  void SetUp() override {
    store_ = testing::OpenStore(dir_);
    ASSERT_NE(store_, nullptr);
    loop_ = testing::NewLoop();
    ASSERT_NE(loop_, nullptr);
    server_ = std::make_unique<Server>(*loop_, handler_);
    engine_ = std::make_unique<testing::FakeEngine>(*loop_, static_cast<EngineEvents&>(*this));
    const device::Snapshot snap = testing::IdleCards(2);
    cards_.Load(&snap);
    notes_ = testing::QuietNotifications(*store_, clock_, config_);
    ledger_ = testing::LoadedLedger(*store_, config_, cards_.state(), *notes_);
    ASSERT_NE(ledger_, nullptr);
    watch_ = std::make_unique<CardWatch>(*store_);
    AllocationWatch::Setup allocs;
    allocs.store = store_.get();
    allocs.config = &config_;
    allocs.jobs = &jobs_;
    allocs.cards = &cards_;
    allocs.watch = watch_.get();
    allocs.notes = notes_.get();
    allocs.note_job = [](JobId, const std::string&, Time) {};
    allocs.stop = [](ActiveJob&, Time) {};
    allocs_ = std::make_unique<AllocationWatch>(std::move(allocs));
    // The sessions' part, wired as the daemon wires it (the runner hands it sessions' starts and
    // stops; these tests run batch jobs).
    SessionDesk::Setup sd;
    sd.store = store_.get();
    sd.clock = &clock_;
    sd.config = &config_;
    sd.loop = loop_.get();
    sd.server = server_.get();
    sd.engine = engine_.get();
    sd.jobs = &jobs_;
    sd.cards = &cards_;
    sd.ledger = ledger_.get();
    sd.counters = &counters_;
    sd.changed = [this] { ++changes_; };
    sd.finish = [this](ActiveJob& a, const exec::ExitInfo& info, Time now) { runner_->Finish(a, info, now); };
    sd.stop = [this](ActiveJob& a, Time now) { runner_->BeginStop(a, now); };
    sessions_ = std::make_unique<SessionDesk>(std::move(sd));
    JobRunner::Setup s;
    s.store = store_.get();
    s.clock = &clock_;
    s.config = &config_;
    s.kill_wait = 10;
    s.engine = engine_.get();
    s.jobs = &jobs_;
    s.cards = &cards_;
    s.ledger = ledger_.get();
    s.allocs = allocs_.get();
    s.notes = notes_.get();
    s.counters = &counters_;
    s.sessions = sessions_.get();
    s.account = [](uid_t uid) -> StatusOr<UnixAccount> {
      if (uid != 20001) return NotFound("no user with uid " + std::to_string(uid));
      UnixAccount a;
      a.uid = 20001;
      a.gid = 20001;
      a.name = "alice";
      a.groups = {20001, 3000};
      return a;
    };
    s.visible = [this](const Caller& caller, JobId id) -> StatusOr<store::JobRecord> {
      StatusOr<store::JobRecord> rec = store_->Get(id);
      if (rec.ok() && rec->job.user != caller.name && !caller.admin) return NotFound("no job " + std::to_string(id));
      return rec;
    };
    s.refused = [this](const Caller&, std::string_view op, const Status& why) {
      refused_.push_back(std::string(op) + ": " + why.message());
    };
    s.changed = [this] { ++changes_; };
    runner_ = std::make_unique<JobRunner>(std::move(s));
  }

  // A pending batch job of alice's (or of `uid`) in the store and the table.
  JobId Pending(bool requeue = false, std::int64_t uid = 20001, std::vector<JobId> after_ok = {}) {
    store::JobRecord rec;
    rec.job.user = uid == 20001 ? "alice" : "bob";
    rec.job.after_ok = std::move(after_ok);
    rec.uid = uid;
    rec.job.request.gpus = 1;
    rec.job.time_limit = kHour;
    rec.job.requeue = requeue;
    rec.command = {"python", "train.py"};
    rec.cwd = "/home/alice";
    rec.output = "/home/alice/out-%j.log";
    StatusOr<JobId> id = store_->Submit(rec, kStart);
    EXPECT_TRUE(id.ok());
    rec.job.id = *id;
    ActiveJob a;
    a.rec = rec;
    jobs_.Add(std::move(a));
    return *id;
  }

  void Start(JobId id, int card, Time now = kStart + 10) {
    rota::Start start;
    start.job = id;
    start.alloc.gpus = {card};
    runner_->ApplyStart(start, now);
  }

  store::JobRecord Stored(JobId id) {
    StatusOr<store::JobRecord> rec = store_->Get(id);
    EXPECT_TRUE(rec.ok());
    return rec.ok() ? *rec : store::JobRecord{};
  }

  std::string History(JobId id) {
    std::string all;
    StatusOr<std::vector<store::JobEvent>> events = store_->Events(id);
    if (events.ok()) {
      for (const store::JobEvent& e : *events) all += e.reason + "\n";
    }
    return all;
  }

  // What the engine reported, handed to the runner as the daemon does.
  void Deliver(Time now) {
    now_ = now;
    loop_->RunOnce(0);
  }
  void JobReleased(JobId id, Time at) override { runner_->Released(id, at); }
  void JobEnded(JobId id, const JobExit& exit) override { runner_->Ended(id, exit, now_); }
  void WithdrawnGone(JobId id) override { runner_->WithdrawnGone(id); }
  void JobNamed(JobId, const std::string&) override {}
  void JobPlaced(JobId, const std::vector<std::string>&) override {}

  testing::TempDir dir_;
  testing::FakeClock clock_{kStart};
  config::Config config_;
  std::unique_ptr<store::JobStore> store_;
  std::unique_ptr<EventLoop> loop_;
  testing::NoConnections handler_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<testing::FakeEngine> engine_;
  Inventory cards_;
  std::unique_ptr<Notifications> notes_;
  std::unique_ptr<UsageLedger> ledger_;
  std::unique_ptr<CardWatch> watch_;
  std::unique_ptr<AllocationWatch> allocs_;
  SchedulerCounters counters_;
  JobTable jobs_;
  std::unique_ptr<SessionDesk> sessions_;
  std::unique_ptr<JobRunner> runner_;
  int changes_ = 0;
  std::vector<std::string> refused_;
  Time now_ = kStart;
};

TEST_F(JobRunnerTest, ABatchStartLaunchesTheJobAsItsOwnerOnItsCardAndRecordsIt) {
  const JobId id = Pending();
  Start(id, 1);
  ASSERT_TRUE(engine_->Running(id));
  const exec::LaunchSpec& spec = engine_->jobs().at(id).spec;
  EXPECT_EQ(spec.uid, 20001u);
  EXPECT_EQ(spec.user, "alice");
  EXPECT_EQ(spec.groups, (std::vector<gid_t>{20001, 3000}));
  EXPECT_EQ(spec.argv, (std::vector<std::string>{"python", "train.py"}));
  EXPECT_EQ(spec.output, "/home/alice/out-" + std::to_string(id) + ".log");
  EXPECT_EQ(spec.env.at("CUDA_VISIBLE_DEVICES"), "GPU-1");
  const store::JobRecord rec = Stored(id);
  EXPECT_EQ(rec.state, store::JobState::kRunning);
  EXPECT_EQ(rec.placement.gpu_uuids, std::vector<std::string>{"GPU-1"});
  EXPECT_EQ(jobs_.at(id).rec.state, store::JobState::kRunning);
  EXPECT_NE(History(id).find("Started on GPU 1"), std::string::npos) << History(id);
}

TEST_F(JobRunnerTest, ALaunchTheMachineCannotMakeWaitsAndOneTheEngineRefusesFails) {
  const JobId later = Pending();
  engine_->FailNextLaunch(Unavailable("no space left on device"));
  Start(later, 0);
  EXPECT_FALSE(engine_->Running(later));
  EXPECT_EQ(Stored(later).state, store::JobState::kPending);
  EXPECT_EQ(jobs_.at(later).retry_at, kStart + 10 + JobTable::kStartRetryFirst);
  EXPECT_TRUE(jobs_.at(later).rec.placement.gpu_uuids.empty());
  EXPECT_NE(History(later).find("Not started: cannot launch: no space left on device"), std::string::npos);

  const JobId refused = Pending();
  engine_->FailNextLaunch(InvalidArgument("the working directory is not a directory"));
  Start(refused, 1);
  EXPECT_EQ(jobs_.find(refused), jobs_.end());
  EXPECT_EQ(Stored(refused).state, store::JobState::kFailed);

  const JobId nobody = Pending(false, 4242);  // its owner is gone
  Start(nobody, 1);
  EXPECT_EQ(Stored(nobody).state, store::JobState::kFailed);
  EXPECT_NE(Stored(nobody).end_reason.find("no user with uid 4242"), std::string::npos) << Stored(nobody).end_reason;
}

TEST_F(JobRunnerTest, AnEndFreesTheCardsAtOnceAndIsRecordedAfterThePass) {
  const JobId id = Pending();
  Start(id, 0);
  engine_->Exit(id, 3);
  Deliver(kStart + 600);
  EXPECT_EQ(jobs_.find(id), jobs_.end());  // its card is free for the next pass
  EXPECT_TRUE(runner_->ends_waiting());
  EXPECT_EQ(Stored(id).state, store::JobState::kRunning);  // not recorded yet
  StatusOr<JobEndSeen> seen = runner_->EndOf(id);          // but known to --after-ok
  ASSERT_TRUE(seen.ok());
  EXPECT_TRUE(seen->final);
  EXPECT_FALSE(seen->completed);
  runner_->RecordEnds();
  EXPECT_FALSE(runner_->ends_waiting());
  const store::JobRecord rec = Stored(id);
  EXPECT_EQ(rec.state, store::JobState::kFailed);
  EXPECT_EQ(rec.exit_code, 3);
  EXPECT_EQ(rec.end_time, kStart + 600);
  EXPECT_EQ(engine_->forgotten(), std::vector<JobId>{id});
  EXPECT_EQ(runner_->EndOf(id)->reason, rec.end_reason);  // from the store now
  EXPECT_EQ(runner_->EndOf(9999).status().code(), StatusCode::kNotFound);
}

TEST_F(JobRunnerTest, ARequeuedJobIsHeldUntilItsEndIsRecordedThenPendingAgain) {
  const JobId id = Pending(/*requeue=*/true);
  Start(id, 0);
  runner_->ApplySignal(rota::Signal{id, SIGUSR1, kStart + 200, StopCause::kPreempted, 99, true}, kStart + 100);
  EXPECT_EQ(engine_->jobs().at(id).signals, std::vector<int>{SIGUSR1});
  engine_->DieOf(id, SIGTERM);
  Deliver(kStart + 150);
  ClusterState st;
  runner_->AddHeld(st);
  EXPECT_EQ(st.held, std::vector<JobId>{id});
  runner_->RecordEnds();
  ASSERT_NE(jobs_.find(id), jobs_.end());
  EXPECT_EQ(jobs_.at(id).rec.state, store::JobState::kPending);
  EXPECT_EQ(Stored(id).state, store::JobState::kPending);
  ClusterState after;
  runner_->AddHeld(after);
  EXPECT_TRUE(after.held.empty());
}

TEST_F(JobRunnerTest, AStopIsSigtermThenSigkillAKillWaitLater) {
  const JobId id = Pending();
  Start(id, 0);
  engine_->KeepRunningOn(id, SIGTERM);
  EXPECT_EQ(runner_->NextEscalation(), kNever);
  runner_->BeginStop(jobs_.at(id), kStart + 100);
  runner_->BeginStop(jobs_.at(id), kStart + 101);  // once
  EXPECT_EQ(engine_->jobs().at(id).signals, std::vector<int>{SIGTERM});
  EXPECT_EQ(runner_->NextEscalation(), kStart + 110);
  runner_->EscalateKills(kStart + 109);
  EXPECT_EQ(engine_->jobs().at(id).signals.size(), 1u);
  runner_->EscalateKills(kStart + 110);
  EXPECT_FALSE(engine_->Running(id));  // SIGKILL always kills
  Deliver(kStart + 110);
  runner_->RecordEnds();
  EXPECT_EQ(Stored(id).state, store::JobState::kFailed);
}

TEST_F(JobRunnerTest, ACancelTakesAPendingJobAtOnceAndStopsARunningOne) {
  const JobId pending = Pending();
  const JobId running = Pending();
  Start(running, 0);
  const JobId bobs = Pending(false, 20002);
  const Caller alice = testing::Person("alice", 20001);
  const json reply = runner_->Cancel(alice, {{"job_ids", {pending, running, bobs, "x"}}});
  ASSERT_TRUE(reply.value("ok", false)) << reply.dump();
  const json& results = reply["results"];
  ASSERT_EQ(results.size(), 4u);
  EXPECT_EQ(results[0]["state"], "cancelled");
  EXPECT_EQ(results[1]["state"], "cancelling");
  EXPECT_FALSE(results[2]["ok"].get<bool>());  // bob's: not hers to see
  EXPECT_EQ(results[2]["error"]["code"], "not_found");
  EXPECT_FALSE(results[3]["ok"].get<bool>());
  EXPECT_EQ(refused_.size(), 1u);
  EXPECT_EQ(jobs_.find(pending), jobs_.end());
  EXPECT_EQ(Stored(pending).state, store::JobState::kCancelled);
  EXPECT_FALSE(engine_->Running(running));  // SIGTERM: it is gone
  EXPECT_NE(jobs_.find(running), jobs_.end());  // until the engine says so
  Deliver(kStart + 30);
  runner_->RecordEnds();
  const store::JobRecord stopped = Stored(running);
  EXPECT_EQ(stopped.state, store::JobState::kCancelled);
  EXPECT_NE(stopped.end_reason.find("alice"), std::string::npos) << stopped.end_reason;
  EXPECT_NE(jobs_.find(bobs), jobs_.end());

  // A waiting session: cancelled at once, its client told through the session desk.
  ActiveJob session;
  session.rec.job.id = 77;
  session.rec.job.user = "alice";
  session.rec.uid = 20001;
  session.rec.interactive = true;
  session.session = 5;
  store::JobRecord stored = session.rec;
  stored.command = {"(session)"};
  StatusOr<JobId> sid = store_->Submit(stored, kStart);
  ASSERT_TRUE(sid.ok());
  session.rec.job.id = *sid;
  jobs_.Add(session);
  ASSERT_EQ(jobs_.SessionOf(5), *sid);
  EXPECT_EQ(runner_->Cancel(alice, {{"job_ids", {*sid}}})["results"][0]["state"], "cancelled");
  EXPECT_EQ(jobs_.SessionOf(5), 0);
  EXPECT_EQ(Stored(*sid).state, store::JobState::kCancelled);

  config_.limits.ids_per_request = 2;
  EXPECT_FALSE(runner_->Cancel(alice, {{"job_ids", {1, 2, 3}}}).value("ok", true));
  EXPECT_FALSE(runner_->Cancel(alice, {{"job_ids", json::array()}}).value("ok", true));
}

TEST_F(JobRunnerTest, JobsWhoseAfterOkCanNeverBeSatisfiedAreCancelledInAChain) {
  const JobId first = Pending();
  Start(first, 0);
  const JobId second = Pending(false, 20001, {first});
  const JobId third = Pending(false, 20001, {second});
  runner_->CancelNeverSatisfied(kStart + 20);
  EXPECT_NE(jobs_.find(second), jobs_.end());  // the first still runs
  engine_->Exit(first, 1);
  Deliver(kStart + 60);
  runner_->CancelNeverSatisfied(kStart + 60);  // its end is known before it is recorded
  EXPECT_EQ(jobs_.find(second), jobs_.end());
  EXPECT_EQ(jobs_.find(third), jobs_.end());
  EXPECT_EQ(Stored(second).state, store::JobState::kCancelled);
  EXPECT_NE(Stored(second).end_reason.find("job " + std::to_string(first)), std::string::npos)
      << Stored(second).end_reason;
  EXPECT_EQ(Stored(third).state, store::JobState::kCancelled);
  EXPECT_NE(Stored(third).end_reason.find("job " + std::to_string(second)), std::string::npos)
      << Stored(third).end_reason;
}

}  // namespace
}  // namespace job_runner_test
}  // namespace rota::daemon
