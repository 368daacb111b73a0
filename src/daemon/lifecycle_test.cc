// The daemon's lifecycle rules, driven in-process on virtual time (testing::InProcessDaemon: the
// real daemon, store and scheduling, a fake clock and a fake engine): time limits with and
// without a warning signal, the kill after kill_wait, a job that ends on its own, a booking's
// no-show and its end reminder. What needs real processes (shepherds, cgroups, permissions with
// real users, restarts) is tested in tests/daemon.
#include <signal.h>

#include <gtest/gtest.h>

#include <string>

#include "testing/daemon/in_process.h"

namespace rota::daemon {
namespace lifecycle_test {
namespace {

using nlohmann::json;
using testing::InProcessDaemon;

constexpr Time kStart = testing::kTuesdayMorning;
const std::string kTwoCards = testing::SimulatedCards(2);

json OneGpuFor(Duration limit) { return {{"request", {{"gpus", 1}}}, {"time_limit", limit}}; }


TEST(LifecycleTest, AJobStartsAtOnceAndEndsOnItsOwn) {
  InProcessDaemon d(kTwoCards, kStart);
  ASSERT_TRUE(d.ok());
  const JobId id = d.Submit("alice", OneGpuFor(kHour));
  EXPECT_EQ(d.State(id), "running");
  ASSERT_TRUE(d.engine().Running(id));
  EXPECT_EQ(d.engine().jobs().at(id).spec.user, "alice");
  EXPECT_EQ(d.engine().jobs().at(id).spec.env.at("CUDA_VISIBLE_DEVICES").substr(0, 4), "GPU-");
  d.Advance(20 * kMinute);
  d.engine().Exit(id, 0);
  d.Settle();
  const json job = d.Show(id);
  EXPECT_EQ(job["state"], "completed") << job.dump();
  EXPECT_EQ(job["end_time"], kStart + 20 * kMinute) << job.dump();
  EXPECT_EQ(d.engine().forgotten(), std::vector<JobId>{id});  // its files go once its end is recorded
}

TEST(LifecycleTest, TheWarningSignalComesGraceBeforeTheLimitThenTheJobIsStopped) {
  InProcessDaemon d(kTwoCards, kStart);
  ASSERT_TRUE(d.ok());
  json job = OneGpuFor(kHour);
  job["signal"] = SIGUSR1;
  job["grace"] = 120;
  const JobId id = d.Submit("alice", job);
  ASSERT_TRUE(d.engine().Running(id));
  d.AdvanceTo(kStart + kHour - 121);
  EXPECT_TRUE(d.engine().jobs().at(id).signals.empty());
  d.AdvanceTo(kStart + kHour - 120);
  EXPECT_EQ(d.engine().jobs().at(id).signals, std::vector<int>{SIGUSR1});
  d.AdvanceTo(kStart + kHour - 1);
  ASSERT_TRUE(d.engine().Running(id));  // it caught the warning and saves its work
  d.AdvanceTo(kStart + kHour);
  EXPECT_FALSE(d.engine().Running(id));  // SIGTERM at the limit
  const json shown = d.Show(id);
  EXPECT_EQ(shown["state"], "timeout") << shown.dump();
  EXPECT_EQ(shown["end_time"], kStart + kHour);
}

TEST(LifecycleTest, WithoutAWarningSignalNothingComesBeforeTheLimit) {
  InProcessDaemon d(kTwoCards, kStart);
  ASSERT_TRUE(d.ok());
  const JobId id = d.Submit("alice", OneGpuFor(2 * kMinute));  // a 2-minute job, no --signal
  d.AdvanceTo(kStart + 2 * kMinute - 1);
  ASSERT_TRUE(d.engine().Running(id));
  EXPECT_TRUE(d.engine().jobs().at(id).signals.empty());
  d.AdvanceTo(kStart + 2 * kMinute);
  EXPECT_FALSE(d.engine().Running(id));
  EXPECT_EQ(d.State(id), "timeout");
}

TEST(LifecycleTest, AJobThatIgnoresSigtermIsKilledAfterKillWait) {
  InProcessDaemon d(kTwoCards, kStart);
  ASSERT_TRUE(d.ok());
  const JobId id = d.Submit("alice", OneGpuFor(kHour));
  d.engine().KeepRunningOn(id, SIGTERM);
  d.AdvanceTo(kStart + kHour);
  ASSERT_TRUE(d.engine().Running(id));
  EXPECT_EQ(d.engine().jobs().at(id).signals, std::vector<int>{SIGTERM});
  d.AdvanceTo(kStart + kHour + 9);  // kill_wait is 10 s
  ASSERT_TRUE(d.engine().Running(id));
  d.AdvanceTo(kStart + kHour + 10);
  EXPECT_FALSE(d.engine().Running(id));
  EXPECT_EQ(d.State(id), "timeout");
}

TEST(LifecycleTest, AFreedCardGoesToTheNextJobAtTheSameInstant) {
  InProcessDaemon d(kTwoCards, kStart);
  ASSERT_TRUE(d.ok());
  const JobId a = d.Submit("alice", {{"request", {{"gpus", 2}}}, {"time_limit", kHour}});
  const JobId b = d.Submit("bob", OneGpuFor(kHour));
  EXPECT_EQ(d.State(b), "pending");
  d.Advance(10 * kMinute);
  d.engine().Release(a, d.clock().Now());  // its processes are gone: its cards are free at once
  d.Settle();
  EXPECT_TRUE(d.engine().Running(b));
  d.engine().Exit(a, 3);
  d.Settle();
  const json shown = d.Show(a);
  EXPECT_EQ(shown["state"], "failed") << shown.dump();
  EXPECT_EQ(d.Show(b)["start_time"], kStart + 10 * kMinute);
}

TEST(LifecycleTest, AnUnusedBookingIsANoShowAfterItsGrace) {
  InProcessDaemon d(kTwoCards, kStart);
  ASSERT_TRUE(d.ok());
  const Time tomorrow = kStart + kDay;  // booked the day before: no admin needed
  json reply = d.Call("alice", {{"op", "book"},
                                {"booking", {{"gpus", 1}, {"start", tomorrow}, {"end", tomorrow + 2 * kHour}}}});
  ASSERT_TRUE(reply.value("ok", false)) << reply.dump();
  const std::int64_t bid = reply["booking"]["id"];
  EXPECT_EQ(reply["booking"]["state"], "confirmed");
  auto state = [&] { return d.Call("alice", {{"op", "bookings"}, {"id", bid}})["bookings"][0]["state"]; };
  d.AdvanceTo(tomorrow);
  EXPECT_EQ(state(), "active");
  d.AdvanceTo(tomorrow + 15 * kMinute - 1);
  EXPECT_EQ(state(), "active");
  d.AdvanceTo(tomorrow + 15 * kMinute);  // no_show_grace: 15 minutes
  EXPECT_EQ(state(), "no_show");
  // The card is anyone's again: bob's job starts on it while the booking's time runs.
  const JobId b = d.Submit("bob", OneGpuFor(kHour));
  const JobId b2 = d.Submit("bob", OneGpuFor(kHour));
  EXPECT_TRUE(d.engine().Running(b));
  EXPECT_TRUE(d.engine().Running(b2));
}

TEST(LifecycleTest, ABookingOwnersJobRunsOnItsCardsAndOthersWait) {
  InProcessDaemon d(kTwoCards, kStart);
  ASSERT_TRUE(d.ok());
  const Time tomorrow = kStart + kDay;
  json reply = d.Call("alice", {{"op", "book"},
                                {"booking", {{"gpus", 2}, {"start", tomorrow}, {"end", tomorrow + 2 * kHour}}}});
  ASSERT_TRUE(reply.value("ok", false)) << reply.dump();
  d.AdvanceTo(tomorrow - kHour);
  // bob's 2-hour job would run into the booking: it waits; a 30-minute one fits before it.
  const JobId long_job = d.Submit("bob", OneGpuFor(2 * kHour));
  const JobId short_job = d.Submit("bob", OneGpuFor(30 * kMinute));
  EXPECT_EQ(d.State(long_job), "pending");
  EXPECT_EQ(d.State(short_job), "running");
  d.AdvanceTo(tomorrow);
  const JobId mine = d.Submit("alice", {{"request", {{"gpus", 2}}}, {"time_limit", 2 * kHour}});
  EXPECT_EQ(d.State(mine), "running");
  EXPECT_EQ(d.State(long_job), "pending");
}

// Release discipline: the owner is reminded 10 minutes before the end; a job that outlives its
// booking while others wait is stopped as a preemption (its signal, its grace, then SIGTERM) and
// the booking is an overrun (a strike against the owner); without anyone waiting it runs on.
TEST(LifecycleTest, ABookingsOverrunStopsTheOwnersJobOnlyWhenOthersWait) {
  InProcessDaemon d(kTwoCards, kStart);
  ASSERT_TRUE(d.ok());
  const Time start = kStart + kDay + kHour;  // tomorrow 10:00
  auto book = [&](Time from) {
    json reply = d.Call("alice", {{"op", "book"}, {"booking", {{"gpus", 2}, {"start", from}, {"end", from + 2 * kHour}}}});
    EXPECT_TRUE(reply.value("ok", false)) << reply.dump();
    return reply["booking"].value("id", std::int64_t{0});
  };
  auto booking = [&](std::int64_t id) { return d.Call("alice", {{"op", "bookings"}, {"id", id}})["bookings"][0]; };
  json job = {{"request", {{"gpus", 2}}}, {"time_limit", 4 * kHour}, {"signal", SIGUSR1}, {"grace", 120}};

  // Nobody waits: the booking's end passes and alice's job runs on.
  const std::int64_t quiet = book(start);
  d.AdvanceTo(start);
  const JobId first = d.Submit("alice", job);
  ASSERT_TRUE(d.engine().Running(first));
  d.AdvanceTo(start + 2 * kHour + 10 * kMinute);
  EXPECT_TRUE(d.engine().Running(first));
  EXPECT_TRUE(d.engine().jobs().at(first).signals.empty());
  EXPECT_EQ(booking(quiet)["state"], "active");
  d.engine().Exit(first, 0);
  d.Settle();
  d.Advance(kHour);
  EXPECT_EQ(booking(quiet)["state"], "ended");

  // The next day bob waits: reminder at 11:50, at 12:00 the overrun, SIGUSR1, SIGTERM at 12:02.
  const Time next = start + kDay;
  const std::int64_t busy = book(next);
  d.AdvanceTo(next);
  const JobId mine = d.Submit("alice", job);
  ASSERT_TRUE(d.engine().Running(mine));
  d.AdvanceTo(next + kHour);
  const JobId bobs = d.Submit("bob", OneGpuFor(kHour));
  EXPECT_EQ(d.State(bobs), "pending");
  d.AdvanceTo(next + 2 * kHour - 10 * kMinute);
  const json reminded = booking(busy);
  EXPECT_TRUE(reminded["events"].back().value("reason", "").starts_with("Reminder: ends at")) << reminded.dump();
  d.AdvanceTo(next + 2 * kHour);
  EXPECT_EQ(booking(busy)["state"], "overrun");
  EXPECT_EQ(d.engine().jobs().at(mine).signals, std::vector<int>{SIGUSR1});
  d.AdvanceTo(next + 2 * kHour + 119);
  EXPECT_TRUE(d.engine().Running(mine));
  EXPECT_EQ(d.State(bobs), "pending");
  d.AdvanceTo(next + 2 * kHour + 120);
  EXPECT_FALSE(d.engine().Running(mine));
  const json stopped = d.Show(mine);
  EXPECT_EQ(stopped["end_reason"], "Stopped: booking " + std::to_string(busy) + " ended and others wait")
      << stopped.dump();
  EXPECT_EQ(d.State(bobs), "running");
  EXPECT_EQ(d.Show(bobs)["start_time"], next + 2 * kHour + 120);
}

// A change of a booking and its notice are one commit: an admin's rejection (synced to disk
// before the reply) and the reminder before the end (bookkeeping) each reach the owner. The
// first failed when the notice came into the change's transaction ("Safety level may not be
// changed inside a transaction"), until that transaction took the change's durability.
TEST(LifecycleTest, ABookingsChangeAndItsNoticeAreOneCommit) {
  InProcessDaemon d(kTwoCards + R"(
[notify]
language = "en"
user_channels = ["lab"]
user_events = ["booking_rejected", "booking_ending_soon"]
[notify.channels.lab]
type = "webhook"
url = "http://127.0.0.1:9/lab"
)",
                    kStart);
  ASSERT_TRUE(d.ok());
  testing::FakeChannel* lab = d.channel("lab");
  ASSERT_NE(lab, nullptr);
  auto book = [&](Time from) {
    const json r = d.Call("alice", {{"op", "book"}, {"booking", {{"gpus", 1}, {"start", from}, {"end", from + kHour}}}});
    EXPECT_TRUE(r.value("ok", false)) << r.dump();
    return r["booking"].value("id", std::int64_t{0});
  };
  auto told = [&](const std::string& event) {
    return d.WaitFor([&] {
      for (const testing::FakeChannel::Attempt& a : lab->attempts()) {
        if (a.message.event == event && a.delivered) return true;
      }
      return false;
    });
  };
  const std::int64_t today = book(kStart + kHour);  // the same day: an admin decides
  const json rejected = d.Call("root", {{"op", "reject"}, {"booking_id", today}, {"reason", "the cards are serviced"}});
  ASSERT_TRUE(rejected.value("ok", false)) << rejected.dump();
  EXPECT_TRUE(told("booking_rejected"));
  const std::int64_t tomorrow = book(kStart + kDay);
  d.AdvanceTo(kStart + kDay);
  d.Submit("alice", OneGpuFor(2 * kHour));       // she comes
  d.AdvanceTo(kStart + kDay + 50 * kMinute);  // reminder: 10 minutes before the end
  EXPECT_TRUE(told("booking_ending_soon"));
  const json events = d.Call("alice", {{"op", "bookings"}, {"id", tomorrow}})["bookings"][0]["events"];
  EXPECT_TRUE(events.back().value("reason", "").starts_with("Reminder: ends at")) << events.dump();
}

// The seed's rule: under 5% for 15 minutes, the owner is warned; idle for 30 minutes without an
// answer (`rota keep`), the job is reclaimed (here: [watch] action = "reclaim").
TEST(LifecycleTest, AnIdleJobIsWarnedAfter15MinutesAndReclaimedAfter30) {
  InProcessDaemon d(kTwoCards + "[watch]\naction = \"reclaim\"\n", kStart);
  ASSERT_TRUE(d.ok());
  json job = OneGpuFor(4 * kHour);
  job["env"] = {{"ROTA_SIM_GPU_UTIL", "1"}};  // the simulated card shows 1% while it runs
  const JobId idle = d.Submit("alice", job);
  job["env"] = {{"ROTA_SIM_GPU_UTIL", "90"}};
  const JobId busy = d.Submit("bob", job);
  auto history = [&](JobId id) {
    const json reply = d.Call("root", {{"op", "show"}, {"job_id", id}});
    std::string all;
    for (const json& e : reply["events"]) all += e.value("reason", "") + "\n";
    return all;
  };
  const std::string kWarning = "Idle: GPU utilisation 1% over the last 15m, memory 0% in use; `rota keep";
  d.AdvanceSampling(14 * kMinute, kMinute);
  EXPECT_EQ(history(idle).find(kWarning), std::string::npos) << history(idle);
  d.AdvanceSampling(2 * kMinute, kMinute);
  EXPECT_NE(history(idle).find(kWarning), std::string::npos) << history(idle);
  EXPECT_TRUE(d.engine().jobs().at(idle).signals.empty());  // a warning, not a signal
  d.AdvanceSampling(13 * kMinute, kMinute);  // 29 minutes idle
  ASSERT_TRUE(d.engine().Running(idle));
  d.AdvanceSampling(2 * kMinute, kMinute);
  EXPECT_FALSE(d.engine().Running(idle)) << history(idle);
  const json shown = d.Show(idle);
  EXPECT_EQ(shown["end_reason"], "Reclaimed: idle for 30m (GPU utilisation 1% over the last 15m, memory 0% in use)")
      << shown.dump();
  EXPECT_EQ(shown["end_time"], kStart + 30 * kMinute);
  EXPECT_TRUE(d.engine().Running(busy));
  EXPECT_EQ(history(busy).find("Idle"), std::string::npos) << history(busy);
}

}  // namespace
}  // namespace lifecycle_test
}  // namespace rota::daemon
