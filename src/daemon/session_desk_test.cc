// The sessions' part alone (session_desk.h), over a real store, a real event loop and real
// processes for the clients (this test's own process, children it forks): a session started
// (recorded, its client kept), its end said by the client (the exit code becomes the end), a
// client gone before its start (cancelled, never moved or killed), a closed connection (a pending
// session cancelled, a running one ended), and a restart's re-adoption (the client watched until
// it exits; a pid no longer the client's ends the session). The same through real `rota run`
// clients: tests/daemon/test_sessions.py.
#include "daemon/session_desk.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memory>
#include <optional>
#include <string>

#include "exec/process.h"
#include "testing/daemon/fake_engine.h"
#include "testing/daemon/parts.h"
#include "testing/fake_clock.h"
#include "testing/temp_dir.h"

namespace rota::daemon {
namespace session_desk_test {
namespace {

using nlohmann::json;

constexpr Time kStart = 1796115600;

struct NoEvents final : EngineEvents {
  void JobReleased(JobId, Time) override {}
  void JobEnded(JobId, const JobExit&) override {}
  void WithdrawnGone(JobId) override {}
  void JobNamed(JobId, const std::string&) override {}
  void JobPlaced(JobId, const std::vector<std::string>&) override {}
};

// A child that sleeps until killed, as a session's client.
pid_t SleepingChild() {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::pause();
    ::_exit(0);
  }
  return pid;
}

class SessionDeskTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = testing::OpenStore(dir_);
    ASSERT_NE(store_, nullptr);
    loop_ = testing::NewLoop();
    ASSERT_NE(loop_, nullptr);
    server_ = std::make_unique<Server>(*loop_, handler_);
    engine_ = std::make_unique<testing::FakeEngine>(*loop_, events_);
    const device::Snapshot snap = testing::IdleCards(2);
    cards_.Load(&snap);
    notes_ = testing::QuietNotifications(*store_, clock_, config_);
    ledger_ = testing::LoadedLedger(*store_, config_, cards_.state(), *notes_);
    ASSERT_NE(ledger_, nullptr);
    SessionDesk::Setup s;
    s.store = store_.get();
    s.clock = &clock_;
    s.config = &config_;
    s.loop = loop_.get();
    s.server = server_.get();
    s.engine = engine_.get();
    s.jobs = &jobs_;
    s.cards = &cards_;
    s.ledger = ledger_.get();
    s.counters = &counters_;
    s.changed = [this] { ++changes_; };
    s.finish = [this](ActiveJob& a, const exec::ExitInfo& info, Time) {
      finished_ = a.rec.job.id;
      exit_ = info;
      if (a.rec.interactive) desk_->Ended(a);
      jobs_.Take(jobs_.find(a.rec.job.id));
    };
    s.stop = [this](ActiveJob& a, Time) { stopped_ = a.rec.job.id; };
    desk_ = std::make_unique<SessionDesk>(std::move(s));
  }

  void TearDown() override {
    for (pid_t pid : children_) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  }

  // A pending session of this process's user on connection `conn`, its client `client` (a
  // pidfd on it is taken here).
  JobId Pending(ConnId conn, pid_t client) {
    store::JobRecord rec;
    rec.job.user = "alice";
    rec.uid = ::getuid();
    rec.job.request.gpus = 1;
    rec.job.time_limit = kHour;
    rec.interactive = true;
    rec.command = {"(session)"};
    StatusOr<JobId> id = store_->Submit(rec, kStart);
    EXPECT_TRUE(id.ok());
    rec.job.id = *id;
    ActiveJob a;
    a.rec = rec;
    a.session = conn;
    a.session_pid = client;
    StatusOr<int> fd = exec::OpenPidfd(client);
    EXPECT_TRUE(fd.ok());
    a.session_process = std::make_shared<exec::UniqueFd>(fd.ok() ? *fd : -1);
    jobs_.Add(std::move(a));
    return *id;
  }

  void StartOn(JobId id, int card) {
    ActiveJob& a = jobs_.at(id);
    rota::Start start;
    start.job = id;
    start.alloc.gpus = {card};
    a.rec.placement = cards_.PlacementOf(start.alloc);
    desk_->Start(a, start, kStart + 10);
  }

  store::JobRecord Stored(JobId id) {
    StatusOr<store::JobRecord> rec = store_->Get(id);
    EXPECT_TRUE(rec.ok());
    return rec.ok() ? *rec : store::JobRecord{};
  }

  testing::TempDir dir_;
  testing::FakeClock clock_{kStart};
  config::Config config_;
  std::unique_ptr<store::JobStore> store_;
  std::unique_ptr<EventLoop> loop_;
  testing::NoConnections handler_;
  std::unique_ptr<Server> server_;
  NoEvents events_;
  std::unique_ptr<testing::FakeEngine> engine_;
  Inventory cards_;
  std::unique_ptr<Notifications> notes_;
  std::unique_ptr<UsageLedger> ledger_;
  SchedulerCounters counters_;
  JobTable jobs_;
  std::unique_ptr<SessionDesk> desk_;
  std::vector<pid_t> children_;
  int changes_ = 0;
  JobId finished_ = 0;
  JobId stopped_ = 0;
  std::optional<exec::ExitInfo> exit_;
};

TEST_F(SessionDeskTest, AStartedSessionIsRecordedAndTheClientsExitCodeEndsIt) {
  const JobId id = Pending(5, ::getpid());
  StartOn(id, 1);
  ASSERT_EQ(jobs_.at(id).rec.state, store::JobState::kRunning);
  const store::JobRecord rec = Stored(id);
  EXPECT_EQ(rec.state, store::JobState::kRunning);
  EXPECT_EQ(rec.pid, ::getpid());
  EXPECT_EQ(rec.placement.gpu_uuids, std::vector<std::string>{"GPU-1"});
  EXPECT_EQ(rec.start_time, kStart + 10);

  EXPECT_FALSE(desk_->End(6, json::object()).value("ok", true));  // holds no session
  const json reply = desk_->End(5, {{"exit_code", 130}});
  ASSERT_TRUE(reply.value("ok", false)) << reply.dump();
  EXPECT_EQ(finished_, id);
  ASSERT_TRUE(exit_.has_value());
  EXPECT_EQ(exit_->kind, exec::ExitInfo::Kind::kSignalled);  // 128 + SIGINT: interrupted
  EXPECT_EQ(exit_->signal, SIGINT);
  EXPECT_EQ(jobs_.SessionOf(5), 0);
}

TEST_F(SessionDeskTest, AClientGoneBeforeItsStartCancelsTheSessionAndIsNeverTouched) {
  const pid_t client = SleepingChild();
  const JobId id = Pending(5, client);
  ::kill(client, SIGKILL);
  ::waitpid(client, nullptr, 0);  // its pid is free for anyone now
  const int before = changes_;
  StartOn(id, 0);
  EXPECT_EQ(jobs_.find(id), jobs_.end());
  const store::JobRecord rec = Stored(id);
  EXPECT_EQ(rec.state, store::JobState::kCancelled);
  EXPECT_NE(rec.end_reason.find("client process exited before the allocation"), std::string::npos)
      << rec.end_reason;
  EXPECT_GT(changes_, before);
}

TEST_F(SessionDeskTest, AClosedConnectionCancelsAPendingSessionAndEndsARunningOne) {
  const JobId waiting = Pending(5, ::getpid());
  const JobId running = Pending(6, ::getpid());
  StartOn(running, 0);
  desk_->Closed(5);
  desk_->Closed(6);
  desk_->Closed(7);  // no session: nothing
  EXPECT_EQ(jobs_.begin(), jobs_.end());
  EXPECT_EQ(Stored(waiting).state, store::JobState::kCancelled);
  EXPECT_EQ(Stored(waiting).end_reason, "Session closed");
  EXPECT_EQ(Stored(running).state, store::JobState::kCancelled);
  EXPECT_EQ(Stored(running).end_reason, "Session closed");
  EXPECT_EQ(finished_, 0);  // ended here, not through the daemon's end of a job
}

TEST_F(SessionDeskTest, ARestartReadoptsARunningClientUntilItExits) {
  const pid_t client = SleepingChild();
  children_.push_back(client);
  const JobId id = Pending(0, client);
  StartOn(id, 0);
  ActiveJob copy = jobs_.at(id);  // what a restarted rotad loads from the store
  copy.session = 0;
  copy.session_process.reset();
  jobs_.Take(jobs_.find(id));
  ActiveJob& a = jobs_.Add(std::move(copy));
  ASSERT_TRUE(desk_->Adopt(a, kStart + 60));
  EXPECT_GE(jobs_.at(id).client_pidfd, 0);
  EXPECT_EQ(finished_, 0);

  ::kill(client, SIGKILL);
  for (int i = 0; i < 100 && finished_ == 0; ++i) loop_->RunOnce(50);
  EXPECT_EQ(finished_, id);
  ASSERT_TRUE(exit_.has_value());
  EXPECT_EQ(exit_->kind, exec::ExitInfo::Kind::kExited);
}

TEST_F(SessionDeskTest, ARestartEndsASessionWhoseClientIsGone) {
  const pid_t client = SleepingChild();
  const JobId id = Pending(0, client);
  StartOn(id, 0);
  ::kill(client, SIGKILL);
  ::waitpid(client, nullptr, 0);
  EXPECT_FALSE(desk_->Adopt(jobs_.at(id), kStart + 60));
  EXPECT_EQ(jobs_.find(id), jobs_.end());
  EXPECT_EQ(Stored(id).state, store::JobState::kCancelled);
  EXPECT_EQ(Stored(id).end_reason, "Session ended while rotad was down");
}

TEST_F(SessionDeskTest, AReadoptedSessionIsStoppedThroughItsClientProcessItself) {
  const pid_t client = SleepingChild();
  ActiveJob a;  // re-adopted: no connection to tell
  a.rec.job.id = 9;
  a.rec.state = store::JobState::kRunning;
  a.rec.interactive = true;
  a.rec.pid = client;
  desk_->TellCancelled(a, "nothing to tell");  // no connection: nothing happens
  desk_->Term(a);
  int status = 0;
  ASSERT_EQ(::waitpid(client, &status, 0), client);
  EXPECT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
}

}  // namespace
}  // namespace session_desk_test
}  // namespace rota::daemon
