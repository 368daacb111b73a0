// The notifications part alone (notifications.h), over a real store in a temporary directory, a
// fake clock and fake channels: which events a job's end becomes, the time-limit reminder and the
// quota notices (once, and not again after a restart), `rota notify test` answered through the
// loop with its tag. Who hears of an event is notify_routing_test's.
#include "daemon/notifications.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/config.h"
#include "core/usage.h"
#include "testing/daemon/fake_channel.h"
#include "testing/daemon/parts.h"
#include "testing/fake_clock.h"
#include "testing/temp_dir.h"

namespace rota::daemon {
namespace notifications_test {
namespace {

using nlohmann::json;

constexpr Time kStart = 1796115600;  // Tuesday 2026-12-01 09:00 UTC

// A lab in Shanghai; alice has 10 GPU-hours a week, and her events go to the webhook "lab".
constexpr char kConfig[] = R"(
[policy]
timezone = "Asia/Shanghai"
[users.alice]
quota = 10
language = "en"
[notify]
user_channels = ["lab"]
user_events = ["quota_80", "quota_100", "time_limit_soon", "job_ended", "job_failed", "job_requeued", "job_preempted"]
[notify.channels.lab]
type = "webhook"
url = "http://127.0.0.1:9/lab"
)";

class NotificationsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_ = testing::ParsedConfig(kConfig);
    store_ = testing::OpenStore(dir_);
    ASSERT_NE(store_, nullptr);
    Restart();
  }

  // A new part over the same store, as a restarted rotad makes it.
  void Restart() {
    notes_.reset();
    Notifications::Setup setup;
    setup.store = store_.get();
    setup.clock = &clock_;
    setup.channels = [this](const notify::ChannelSpec&) -> StatusOr<std::unique_ptr<notify::Channel>> {
      auto c = std::make_unique<testing::FakeChannel>(clock_);
      channel_ = c.get();
      return std::unique_ptr<notify::Channel>(std::move(c));
    };
    setup.host = "gpu1";
    setup.note_job = [this](JobId id, const std::string& line, Time now) {
      notes_written_.push_back(line);
      ASSERT_TRUE(store_->NoteJob(id, line, "rotad", now).ok());
    };
    setup.gpus_of = [](const store::JobRecord&) { return std::string("0"); };
    notes_ = std::make_unique<Notifications>(std::move(setup), config_);
    ASSERT_TRUE(notes_->Load().ok());
  }

  // The events of the outbox's rows, in order.
  std::vector<std::string> Queued() {
    std::vector<std::string> out;
    const StatusOr<std::vector<store::OutboxRow>> rows = notes_->outbox()->List(std::nullopt);
    EXPECT_TRUE(rows.ok());
    if (rows.ok()) {
      for (const store::OutboxRow& r : *rows) out.push_back(r.event);
    }
    return out;
  }

  // alice's running job in the store, started at kStart with `limit`.
  ActiveJob RunningJob(Duration limit) {
    store::JobRecord rec;
    rec.job.user = "alice";
    rec.uid = 20001;
    rec.job.name = "train";
    rec.command = {"train"};
    rec.job.time_limit = limit;
    StatusOr<JobId> id = store_->Submit(rec, kStart);
    EXPECT_TRUE(id.ok());
    ActiveJob a;
    a.rec = rec;
    a.rec.job.id = *id;
    a.rec.state = store::JobState::kRunning;
    a.rec.start_time = kStart;
    return a;
  }

  // alice's usage this week: `hours` GPU-hours.
  store::UsageMaps AliceUsed(double hours, Time now) {
    store::UsageMaps usage;
    usage.users["alice"].week_start = WeekStart(now, config_.policy);
    usage.users["alice"].week_gpu_seconds = hours * 3600;
    return usage;
  }

  testing::TempDir dir_{"rota-notifications"};
  testing::FakeClock clock_{kStart};
  config::Config config_;
  std::unique_ptr<store::JobStore> store_;
  std::unique_ptr<Notifications> notes_;
  testing::FakeChannel* channel_ = nullptr;
  std::vector<std::string> notes_written_;
};

TEST_F(NotificationsTest, AJobsEndIsToldAsItsOwnerExpectsIt) {
  ActiveJob a = RunningJob(kHour);
  notes_->NotifyJobEnd(a.rec, store::JobState::kCancelled, "Cancelled", "alice", false);
  EXPECT_TRUE(Queued().empty());  // she cancelled it herself
  notes_->NotifyJobEnd(a.rec, store::JobState::kCompleted, "Completed", "rotad", false);
  notes_->NotifyJobEnd(a.rec, store::JobState::kPreempted, "Reclaimed: idle for 30m", "rotad", false);
  notes_->NotifyJobEnd(a.rec, store::JobState::kPreempted, "Preempted by job 9", "rotad", false);
  notes_->NotifyJobEnd(a.rec, store::JobState::kNodeFail, "NodeFail: GPU 0 failed", "rotad", true);
  EXPECT_EQ(Queued(), (std::vector<std::string>{"job_ended", "job_failed", "job_preempted", "job_failed",
                                                "job_requeued"}));
  const StatusOr<std::vector<store::OutboxRow>> rows = notes_->outbox()->List(std::nullopt);
  ASSERT_TRUE(rows.ok() && rows->size() == 5u);
  EXPECT_NE((*rows)[1].body.find("stopped"), std::string::npos)
      << (*rows)[1].body;  // reclaimed: not "preempted"
}

TEST_F(NotificationsTest, TheTimeLimitReminderComesOnceAndNotAgainAfterARestart) {
  std::map<JobId, ActiveJob> jobs;
  ActiveJob a = RunningJob(2 * kHour);
  const JobId id = a.rec.job.id;
  jobs[id] = a;
  // Due time_limit_warning (10 minutes) before the limit.
  EXPECT_EQ(notes_->RemindTimeLimits(jobs, kStart), kStart + 2 * kHour - 600);
  EXPECT_TRUE(Queued().empty());
  clock_.Set(kStart + 2 * kHour - 600);
  EXPECT_EQ(notes_->RemindTimeLimits(jobs, clock_.Now()), kNever);
  EXPECT_EQ(Queued(), std::vector<std::string>{"time_limit_soon"});
  ASSERT_EQ(notes_written_.size(), 2u);  // the reminder, and who was told of it
  EXPECT_EQ(notes_written_[0], "Reminder: time limit in 10 min, at 2026-12-01 19:00");  // Asia/Shanghai
  EXPECT_EQ(notes_written_[1].rfind("Told alice", 0), 0u) << notes_written_[1];
  EXPECT_EQ(notes_->RemindTimeLimits(jobs, clock_.Now() + 60), kNever);
  EXPECT_EQ(Queued().size(), 1u);

  // A restart: the audit trail says it was sent.
  clock_.Advance(60);
  Restart();
  notes_->RemindTimeLimits(jobs, clock_.Now());
  EXPECT_EQ(Queued().size(), 1u);

  // A job that ended is forgotten; one too short for the warning gets none.
  jobs.clear();
  ActiveJob quick = RunningJob(5 * kMinute);
  jobs[quick.rec.job.id] = quick;
  EXPECT_EQ(notes_->RemindTimeLimits(jobs, kStart + 4 * kMinute), kNever);
  EXPECT_EQ(Queued().size(), 1u);
}

TEST_F(NotificationsTest, QuotaNoticesComeOncePerWeekAndLevelAndNotAgainAfterARestart) {
  notes_->CheckQuota("alice", AliceUsed(7.9, kStart), kStart);
  EXPECT_TRUE(Queued().empty());
  notes_->CheckQuota("alice", AliceUsed(8.1, kStart), kStart);
  notes_->CheckQuota("alice", AliceUsed(9, kStart), kStart);
  EXPECT_EQ(Queued(), std::vector<std::string>{"quota_80"});
  notes_->CheckQuota("alice", AliceUsed(10, kStart), kStart);
  EXPECT_EQ(Queued(), (std::vector<std::string>{"quota_80", "quota_100"}));
  Restart();
  notes_->CheckQuota("alice", AliceUsed(12, kStart), kStart);
  EXPECT_EQ(Queued().size(), 2u);
  // The next week starts again.
  const Time next_week = kStart + 7 * kDay;
  notes_->CheckQuota("alice", AliceUsed(8.5, next_week), next_week);
  EXPECT_EQ(Queued(), (std::vector<std::string>{"quota_80", "quota_100", "quota_80"}));
  // Nobody else has a quota: bob is never told.
  store::UsageMaps bob;
  bob.users["bob"].week_start = WeekStart(next_week, config_.policy);
  bob.users["bob"].week_gpu_seconds = 1000 * 3600.0;
  notes_->CheckQuota("bob", bob, next_week);
  EXPECT_EQ(Queued().size(), 3u);
}

TEST_F(NotificationsTest, ATestIsAnsweredThroughTheLoopWithItsTag) {
  EXPECT_EQ(notes_->Test(7, "alice", {{"op", "notify_test"}})["error"]["code"], "failed_precondition");
  StatusOr<std::unique_ptr<EventLoop>> loop = EventLoop::Create();
  ASSERT_TRUE(loop.ok());
  int woken = 0;
  ASSERT_TRUE(notes_->Configure(**loop, [&] { ++woken; }).ok());
  const json unknown = notes_->Test(7, "alice", {{"channel", "mail"}});
  EXPECT_EQ(unknown["error"]["code"], "not_found") << unknown.dump();
  EXPECT_NE(unknown["error"]["message"].get<std::string>().find("configured: lab"), std::string::npos);

  EXPECT_TRUE(notes_->Test(7, "alice", {{"tag", 41}}).is_null());  // answered later
  std::vector<Notifications::TestReply> replies;
  for (int turns = 0; replies.empty() && turns < 500; ++turns) {
    (*loop)->RunOnce(10);
    if (woken > 0) replies = notes_->TakeTestReplies();
  }
  ASSERT_EQ(replies.size(), 1u);
  EXPECT_EQ(replies[0].conn, 7u);
  const json& r = replies[0].reply;
  EXPECT_EQ(r["tag"], 41) << r.dump();
  ASSERT_EQ(r["results"].size(), 1u) << r.dump();
  EXPECT_EQ(r["results"][0]["channel"], "lab");
  EXPECT_TRUE(r["results"][0]["ok"].get<bool>());
  ASSERT_NE(channel_, nullptr);
  ASSERT_EQ(channel_->attempts().size(), 1u);
  EXPECT_EQ(channel_->attempts()[0].message.mentions,
            std::vector<std::string>{});  // a webhook mentions nobody
  EXPECT_TRUE(notes_->Stop().empty());    // nothing was left waiting
}

}  // namespace
}  // namespace notifications_test
}  // namespace rota::daemon
