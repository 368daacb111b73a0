// The notifier's retries and rate limits on virtual time, in-process (testing::InProcessDaemon
// with its channels made as testing::FakeChannel): a message whose channel fails is tried again
// after the backoff ([notify] first_backoff, doubling, +-25% jitter) until it goes through, a
// channel that keeps failing is reported to the admins once, and a channel's per_minute spreads
// a burst of messages over the minutes. Hours of backoff in well under a second.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "testing/daemon/in_process.h"

namespace rota::daemon {
namespace notify_retry_test {
namespace {

using nlohmann::json;
using testing::FakeChannel;
using testing::InProcessDaemon;

constexpr Time kStart = testing::kTuesdayMorning;

// One card; alice's job_ended messages to channel "lab", channel_failing to "admins".
constexpr char kNotify[] = R"(
[notify]
admin_channels = ["admins"]
admin_events = ["channel_failing"]
user_channels = ["lab"]
user_events = ["job_ended"]
first_backoff = "30s"
max_backoff = "1h"
fail_after = 3
[notify.channels.lab]
type = "webhook"
url = "http://127.0.0.1:9/lab"
[notify.channels.admins]
type = "webhook"
url = "http://127.0.0.1:9/admins"
)";

// The outbox rows of `channel` as root reads them (`rota notify log`).
json Rows(InProcessDaemon& d, const std::string& channel) {
  json out = json::array();
  const json reply = d.Call("root", {{"op", "notify_log"}, {"since", 0}});
  for (const json& m : reply.value("messages", json::array())) {
    if (m.value("channel", "") == channel) out.push_back(m);
  }
  return out;
}

// A daemon whose channel "lab" fails its next `failures` attempts with `why`, and a job of
// alice's that ends at kStart: one job_ended message for "lab".
class NotifyRetryTest : public ::testing::Test {
 protected:
  void EndAJobWhileLabFails(int failures, Status why) {
    ASSERT_TRUE(d_.ok());
    lab_ = d_.channel("lab");
    ASSERT_NE(lab_, nullptr);
    lab_->FailNext(failures, std::move(why));
    const JobId id = d_.Submit("alice", {{"request", {{"gpus", 1}}}, {"time_limit", kHour}});
    ASSERT_TRUE(d_.engine().Running(id));
    d_.engine().Exit(id, 0);
    d_.Settle();
  }
  InProcessDaemon d_{testing::SimulatedCards(1) + kNotify, kStart};
  FakeChannel* lab_ = nullptr;
};

TEST_F(NotifyRetryTest, AFailedMessageIsTriedAgainAfterTheBackoffUntilItGoesThrough) {
  ASSERT_NO_FATAL_FAILURE(EndAJobWhileLabFails(2, Unavailable("HTTP 500")));
  InProcessDaemon& d = d_;
  FakeChannel* lab = lab_;
  ASSERT_TRUE(d.WaitFor([&] { return lab->attempts().size() == 1; }));
  EXPECT_EQ(lab->attempts()[0].at, kStart);
  EXPECT_EQ(lab->attempts()[0].message.event, "job_ended");

  // The second attempt: 30 s +-25% after the first.
  ASSERT_TRUE(d.WaitFor([&] { return Rows(d, "lab").size() == 1 && Rows(d, "lab")[0]["attempts"] == 1; }));
  const Time second = Rows(d, "lab")[0]["next_attempt"];
  EXPECT_GE(second, kStart + 22);
  EXPECT_LE(second, kStart + 38);
  d.AdvanceTo(second - 1);
  EXPECT_EQ(lab->attempts().size(), 1u);  // nothing before it is due
  d.AdvanceTo(second);
  ASSERT_TRUE(d.WaitFor([&] { return lab->attempts().size() == 2; }));
  EXPECT_EQ(lab->attempts()[1].at, second);

  // The third: the backoff doubled, 60 s +-25%; this one goes through.
  ASSERT_TRUE(d.WaitFor([&] { return Rows(d, "lab")[0]["attempts"] == 2; }));
  const Time third = Rows(d, "lab")[0]["next_attempt"];
  EXPECT_GE(third, second + 45);
  EXPECT_LE(third, second + 75);
  d.AdvanceTo(third);
  ASSERT_TRUE(d.WaitFor([&] { return Rows(d, "lab")[0]["state"] == "sent"; }));
  EXPECT_EQ(lab->attempts().size(), 3u);
  EXPECT_TRUE(lab->attempts()[2].delivered);
  EXPECT_EQ(Rows(d, "lab")[0]["delivered"], third);
  // Two failures in a row are not yet a failing channel (fail_after = 3).
  EXPECT_TRUE(Rows(d, "admins").empty());
}

TEST_F(NotifyRetryTest, AChannelThatKeepsFailingIsReportedToTheAdminsOnce) {
  ASSERT_NO_FATAL_FAILURE(EndAJobWhileLabFails(100, Unavailable("HTTP 502")));
  InProcessDaemon& d = d_;
  FakeChannel* lab = lab_;
  // Follow the retries for an hour of virtual time.
  for (Time until = kStart + kHour; d.clock().Now() < until;) {
    d.WaitFor([&] {
      const json rows = Rows(d, "lab");
      return !rows.empty() && rows[0]["attempts"].get<int>() == static_cast<int>(lab->attempts().size());
    });
    const json rows = Rows(d, "lab");
    ASSERT_FALSE(rows.empty());
    const Time next = rows[0]["next_attempt"];
    d.AdvanceTo(std::min(until, std::max(next, d.clock().Now() + 1)));
  }
  const std::size_t tries = lab->attempts().size();
  EXPECT_GE(tries, 6u);  // 0, ~30 s, ~1.5 min, ~3.5 min, ~7.5 min, ~15.5 min, ~31.5 min
  EXPECT_LE(tries, 8u);
  for (std::size_t i = 2; i < tries; ++i) {
    const Time gap = lab->attempts()[i].at - lab->attempts()[i - 1].at;
    const Time before = lab->attempts()[i - 1].at - lab->attempts()[i - 2].at;
    EXPECT_GE(gap, before) << "the backoff grows: attempt " << i;  // doubling beats the jitter
  }
  ASSERT_TRUE(d.WaitFor([&] { return !Rows(d, "admins").empty(); }));
  const json admins = Rows(d, "admins");
  EXPECT_EQ(admins.size(), 1u) << admins.dump();  // once, however often it fails after
  EXPECT_EQ(admins[0]["event"], "channel_failing");
  FakeChannel* to_admins = d.channel("admins");
  ASSERT_NE(to_admins, nullptr);
  ASSERT_TRUE(d.WaitFor([&] { return to_admins->attempts().size() == 1; }));
  EXPECT_NE(to_admins->attempts()[0].message.text.find("lab"), std::string::npos) << to_admins->attempts()[0].message.text;
}

TEST(NotifyRateTest, AChannelsRateLimitSpreadsABurstOverTheMinutes) {
  // per_minute = 2: one message at once, then one a minute (notify/delivery.h: TokenBucket).
  std::string notify = kNotify;
  const std::string lab_url = "url = \"http://127.0.0.1:9/lab\"\n";
  notify.replace(notify.find(lab_url), lab_url.size(), lab_url + "per_minute = 2\n");
  InProcessDaemon d(testing::SimulatedCards(3) + notify, kStart);
  ASSERT_TRUE(d.ok());
  FakeChannel* lab = d.channel("lab");
  ASSERT_NE(lab, nullptr);
  for (int i = 0; i < 3; ++i) {
    const JobId id = d.Submit("alice", {{"request", {{"gpus", 1}}}, {"time_limit", kHour}});
    d.engine().Exit(id, 0);
  }
  d.Settle();
  ASSERT_TRUE(d.WaitFor([&] { return lab->attempts().size() == 1; }));
  EXPECT_EQ(lab->attempts()[0].at, kStart);
  // The other two wait for the next token, a minute on.
  ASSERT_TRUE(d.WaitFor([&] {
    int deferred = 0;
    for (const json& r : Rows(d, "lab")) deferred += r["state"] == "pending" && r["next_attempt"] == kStart + 60;
    return deferred == 2;
  }));
  d.AdvanceTo(kStart + 59);
  EXPECT_EQ(lab->attempts().size(), 1u);
  d.AdvanceTo(kStart + 60);
  ASSERT_TRUE(d.WaitFor([&] { return lab->attempts().size() == 2; }));
  EXPECT_EQ(lab->attempts()[1].at, kStart + 60);
  ASSERT_TRUE(d.WaitFor([&] {
    const json rows = Rows(d, "lab");
    return std::any_of(rows.begin(), rows.end(), [](const json& r) {
      return r["state"] == "pending" && r["next_attempt"] == kStart + 120;
    });
  }));
  d.AdvanceTo(kStart + 120);
  ASSERT_TRUE(d.WaitFor([&] { return lab->attempts().size() == 3; }));
  EXPECT_EQ(lab->attempts()[2].at, kStart + 120);
}

}  // namespace
}  // namespace notify_retry_test
}  // namespace rota::daemon
