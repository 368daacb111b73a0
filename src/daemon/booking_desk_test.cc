// The booking desk alone (booking_desk.h), over a real store in a temporary directory and a fake
// clock, with two cards: a booking within the rules, a dry run, an overlap refused with what is
// in the way, who may see and cancel what, and the bookings' life with time (a no-show; an
// overrun whose owner's jobs must stop, across a restart of the desk). The same rules through a
// whole daemon: lifecycle_test.cc and tests/daemon/test_bookings.py. A pass over the jobs: the
// booking used, and its owner's job stopped past its end once someone waits.
#include "daemon/booking_desk.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "testing/builders.h"
#include "testing/daemon/parts.h"
#include "testing/fake_clock.h"
#include "testing/temp_dir.h"

namespace rota::daemon {
namespace booking_desk_test {
namespace {

using nlohmann::json;
using testing::Person;

constexpr Time kStart = 1796115600;  // Tuesday 2026-12-01 09:00 UTC
constexpr Time kTomorrow = kStart + kDay;

class BookingDeskTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = testing::OpenStore(dir_);
    ASSERT_NE(store_, nullptr);
    cards_.gpus() = testing::Cards(2);  // GPU-0 and GPU-1
    notes_ = testing::QuietNotifications(*store_, clock_, config_);
    Restart();
  }

  // A new desk over the same store, as a restarted rotad makes it.
  void Restart() {
    BookingDesk::Setup s;
    s.store = store_.get();
    s.clock = &clock_;
    s.config = &config_;
    s.cards = &cards_;
    s.notes = notes_.get();
    s.jobs = &jobs_;
    s.stop = [this](ActiveJob& a, Time) { stopped_.push_back(a.rec.job.id); };
    s.changed = [this] { ++changes_; };
    desk_ = std::make_unique<BookingDesk>(std::move(s));
    ASSERT_TRUE(desk_->Load(clock_.Now()).ok());
  }

  json Book(const Caller& who, json booking, bool dry_run = false) {
    return desk_->Book(who, {{"op", "book"}, {"booking", std::move(booking)}, {"dry_run", dry_run}});
  }
  std::string StateOf(std::int64_t id) {
    const json reply = desk_->ListBookings(alice_, {{"op", "bookings"}, {"id", id}});
    return reply["bookings"][0].value("state", "");
  }

  testing::TempDir dir_{"rota-booking-desk"};
  testing::FakeClock clock_{kStart};
  config::Config config_;  // the defaults: no admin needed a day ahead, 15 minutes' no-show grace
  Inventory cards_;
  std::unique_ptr<store::JobStore> store_;
  std::unique_ptr<Notifications> notes_;
  std::unique_ptr<BookingDesk> desk_;
  JobTable jobs_;
  std::vector<JobId> stopped_;
  int changes_ = 0;
  const Caller alice_ = Person("alice", 20001);
  const Caller bob_ = Person("bob", 20002);
  const Caller root_ = Person("root", 0, true);
};

TEST_F(BookingDeskTest, ABookingWithinTheRulesIsConfirmedAndADryRunStoresNothing) {
  const json dry = Book(alice_, {{"gpus", 2}, {"start", kTomorrow}, {"end", kTomorrow + 2 * kHour}}, true);
  ASSERT_TRUE(dry.value("ok", false)) << dry.dump();
  EXPECT_TRUE(dry["dry_run"].get<bool>());
  EXPECT_EQ(dry["booking"]["state"], "confirmed");
  EXPECT_EQ(changes_, 0);
  EXPECT_TRUE(desk_->book().all().empty());

  // 2^32 + 1 GPUs is not 1 GPU (it was, read as an int).
  const json huge = Book(alice_, {{"gpus", 4294967297LL}, {"start", kTomorrow}, {"end", kTomorrow + 2 * kHour}});
  EXPECT_FALSE(huge.value("ok", true)) << huge.dump();
  EXPECT_EQ(huge["error"].value("message", ""), "\"gpus\" must be a number of GPUs from 1 to 4096") << huge.dump();

  const json booked = Book(alice_, {{"gpus", 2}, {"start", kTomorrow}, {"end", kTomorrow + 2 * kHour}});
  ASSERT_TRUE(booked.value("ok", false)) << booked.dump();
  EXPECT_EQ(booked["booking"]["state"], "confirmed");
  EXPECT_EQ(booked["booking"]["gpus"], json::array({0, 1}));
  EXPECT_EQ(booked["booking"]["gpu_hours"], 4.0);
  EXPECT_EQ(changes_, 1);  // a new hold for the scheduler
  const std::int64_t id = booked["booking"]["id"];
  EXPECT_EQ(desk_->book().Entries().size(), 1u);

  // Listed for alice; not in bob's own list, but in everyone's.
  const json week = {{"op", "bookings"}, {"from", kStart}, {"to", kStart + 7 * kDay}};
  EXPECT_EQ(desk_->ListBookings(alice_, week)["bookings"].size(), 1u);
  EXPECT_EQ(desk_->ListBookings(bob_, week)["bookings"].size(), 0u);
  json all = week;
  all["all"] = true;
  const json everyone = desk_->ListBookings(bob_, all);
  ASSERT_EQ(everyone["bookings"].size(), 1u);
  EXPECT_FALSE(everyone["bookings"][0]["mine"].get<bool>());

  // Kept across a restart.
  Restart();
  EXPECT_EQ(StateOf(id), "confirmed");
}

TEST_F(BookingDeskTest, AnOverlapIsRefusedNamingWhatIsInTheWayAndFreeStarts) {
  ASSERT_TRUE(
      Book(alice_, {{"gpus", 2}, {"start", kTomorrow}, {"end", kTomorrow + 2 * kHour}}).value("ok", false));
  const json refused =
      Book(bob_, {{"gpus", 1}, {"start", kTomorrow + kHour}, {"end", kTomorrow + 3 * kHour}});
  EXPECT_FALSE(refused.value("ok", true)) << refused.dump();
  EXPECT_EQ(refused["error"]["code"], "failed_precondition");
  const std::string message = refused["error"]["message"];
  EXPECT_NE(message.find("the capacity is booked then (by booking 1 (alice, GPU 0,1, 2026-12-02 09:00 to "
                         "2026-12-02 11:00))"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("free starts nearby: 2026-12-02 11:00"), std::string::npos) << message;
  EXPECT_EQ(desk_->book().all().size(), 1u);
}

TEST_F(BookingDeskTest, OnlyTheOwnerOrAnAdminCancels) {
  const json booked = Book(alice_, {{"gpus", 1}, {"start", kTomorrow}, {"end", kTomorrow + kHour}});
  const std::int64_t id = booked["booking"]["id"];
  const json not_hers = desk_->Unbook(bob_, {{"op", "unbook"}, {"booking_id", id}});
  EXPECT_EQ(not_hers["error"]["code"], "permission_denied") << not_hers.dump();
  EXPECT_EQ(not_hers["error"]["message"], "booking " + std::to_string(id) + " belongs to alice");
  EXPECT_EQ(StateOf(id), "confirmed");
  const json cancelled = desk_->Unbook(alice_, {{"op", "unbook"}, {"booking_id", id}});
  ASSERT_TRUE(cancelled.value("ok", false)) << cancelled.dump();
  EXPECT_EQ(StateOf(id), "cancelled");
  // Once cancelled it cannot be cancelled again, not even by an admin.
  const json again = desk_->Unbook(root_, {{"op", "unbook"}, {"booking_id", id}});
  EXPECT_EQ(again["error"]["code"], "failed_precondition") << again.dump();
}

TEST_F(BookingDeskTest, UnusedItIsANoShowUsedAndOverrunWhileOthersWaitItsOwnersJobsStop) {
  const std::int64_t unused =
      Book(alice_, {{"gpus", 1}, {"start", kTomorrow}, {"end", kTomorrow + 2 * kHour}})["booking"]["id"];
  const std::int64_t used =
      Book(bob_, {{"gpus", 1}, {"start", kTomorrow}, {"end", kTomorrow + 2 * kHour}})["booking"]["id"];
  BookingDesk::Advanced step = desk_->Advance({}, kStart);
  EXPECT_EQ(step.next_wakeup, kTomorrow);
  clock_.Set(kTomorrow);
  step = desk_->Advance({}, kTomorrow);
  EXPECT_EQ(StateOf(unused), "active");
  EXPECT_EQ(StateOf(used), "active");
  // bob runs on his; alice never comes.
  std::unordered_map<std::int64_t, BookingObservation> seen;
  seen[used].owner_running = true;
  clock_.Set(kTomorrow + 15 * kMinute);
  step = desk_->Advance(seen, clock_.Now());
  EXPECT_EQ(StateOf(unused), "no_show");
  EXPECT_EQ(StateOf(used), "active");
  // Past its end bob still runs there and carol waits: his jobs there must stop.
  Restart();
  seen[used].others_waiting = true;
  clock_.Set(kTomorrow + 2 * kHour);
  step = desk_->Advance(seen, clock_.Now());
  EXPECT_EQ(StateOf(used), "overrun");
  EXPECT_EQ(step.stop_owner_jobs, std::vector<std::int64_t>{used});
}

TEST_F(BookingDeskTest, APassSeesTheJobsOnEachBookingAndStopsAnOverrunsWhenOthersWait) {
  const std::int64_t id =
      Book(bob_, {{"gpus", 1}, {"start", kTomorrow}, {"end", kTomorrow + 2 * kHour}})["booking"]["id"];
  const std::vector<std::string> uuids = desk_->book().Find(id)->gpu_uuids;
  ASSERT_EQ(uuids.size(), 1u);
  auto running = [&](JobId job, const std::string& user, const std::string& uuid) {
    ActiveJob a;
    a.rec.job.id = job;
    a.rec.job.user = user;
    a.rec.state = store::JobState::kRunning;
    a.rec.placement.gpu_uuids = {uuid};
    jobs_.Add(a);
  };
  running(1, "bob", uuids[0]);                                      // on his booking
  running(2, "alice", uuids[0] == "GPU-0" ? "GPU-1" : "GPU-0");  // on the other card
  EXPECT_EQ(desk_->Pass(kStart), kTomorrow);
  clock_.Set(kTomorrow);
  desk_->Pass(clock_.Now());  // started
  clock_.Set(kTomorrow + 20 * kMinute);
  desk_->Pass(clock_.Now());
  EXPECT_EQ(StateOf(id), "active");  // used: not a no-show
  // Past its end, nobody waiting: he may go on.
  clock_.Set(kTomorrow + 2 * kHour);
  desk_->Pass(clock_.Now());
  EXPECT_TRUE(stopped_.empty());
  // Carol waits for a card: his job there stops, with why.
  ActiveJob carols;
  carols.rec.job.id = 3;
  carols.rec.job.user = "carol";
  carols.rec.job.request.gpus = 1;
  jobs_.Add(carols);
  AfterOk after_ok;
  PendingInfo waits;
  waits.job = 3;
  waits.reason = WaitReason::kResources;
  jobs_.NoteWaiting({waits}, after_ok, clock_.Now());
  desk_->Pass(clock_.Now() + 60);
  EXPECT_EQ(StateOf(id), "overrun");
  EXPECT_EQ(stopped_, std::vector<JobId>{1});
  EXPECT_NE(jobs_.at(1).stop_reason.find("booking " + std::to_string(id) + " ended and others wait"),
            std::string::npos);
  EXPECT_TRUE(jobs_.at(2).stop_reason.empty());
}

}  // namespace
}  // namespace booking_desk_test
}  // namespace rota::daemon
