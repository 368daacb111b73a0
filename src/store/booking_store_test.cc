#include <gtest/gtest.h>

#include "store/job_store.h"
#include "testing/temp_dir.h"

namespace rota::store {
namespace booking_store_test {
namespace {

constexpr Time kT0 = 1'764'576'000;  // 2025-12-01 08:00 UTC

BookingRecord TwoCards(std::string user = "alice") {
  BookingRecord r;
  r.entry.spec.user = std::move(user);
  r.entry.spec.project = "nlp";
  r.entry.spec.note = "需要两张卡, \"quoted\"";
  r.entry.spec.tier = Tier::kThesis;
  r.entry.spec.request.kind = RequestKind::kWholeGpus;
  r.entry.spec.request.gpus = 2;
  r.entry.spec.start = kT0;
  r.entry.spec.end = kT0 + 4 * kHour;
  r.entry.state = BookingState::kConfirmed;
  r.uid = 1001;
  r.asked_cards = {"GPU-a", "GPU-b"};
  r.gpu_uuids = {"GPU-a", "GPU-b"};
  r.decided_by = "rotad";
  r.reason = "within the rules";
  return r;
}

TEST(BookingStore, AddGetUpdateAndEvents) {
  testing::TempDir dir;
  auto store = JobStore::Open(dir.File("rota.db"));
  ASSERT_TRUE(store.ok()) << store.status().message();
  BookingRecord r = TwoCards();
  auto id = (*store)->AddBooking(r, "alice", kT0 - kDay);
  ASSERT_TRUE(id.ok()) << id.status().message();
  auto got = (*store)->GetBooking(*id);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->entry.id, *id);
  EXPECT_EQ(got->entry.spec.user, "alice");
  EXPECT_EQ(got->entry.spec.note, r.entry.spec.note);
  EXPECT_EQ(got->entry.spec.tier, Tier::kThesis);
  EXPECT_EQ(got->entry.spec.request.gpus, 2);
  EXPECT_EQ(got->entry.spec.start, kT0);
  EXPECT_EQ(got->entry.spec.end, kT0 + 4 * kHour);
  EXPECT_EQ(got->entry.state, BookingState::kConfirmed);
  EXPECT_EQ(got->gpu_uuids, (std::vector<std::string>{"GPU-a", "GPU-b"}));
  EXPECT_EQ(got->asked_cards, r.asked_cards);
  EXPECT_EQ(got->created, kT0 - kDay);
  EXPECT_EQ(got->uid, 1001);

  got->entry.state = BookingState::kActive;
  got->entry.used = true;
  ASSERT_TRUE((*store)->UpdateBooking(*got, BookingState::kConfirmed, "Started", "rotad", kT0, false).ok());
  got->entry.state = BookingState::kReleased;
  got->entry.actual_end = kT0 + kHour;
  ASSERT_TRUE((*store)->UpdateBooking(*got, BookingState::kActive, "Released by alice", "alice", kT0 + kHour, true).ok());
  auto again = (*store)->GetBooking(*id);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->entry.state, BookingState::kReleased);
  EXPECT_EQ(again->entry.actual_end, kT0 + kHour);
  EXPECT_TRUE(again->entry.used);

  auto events = (*store)->BookingEvents(*id);
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 3u);
  EXPECT_FALSE((*events)[0].from.has_value());
  EXPECT_EQ((*events)[0].to, BookingState::kConfirmed);
  EXPECT_EQ((*events)[0].reason, "Booked: within the rules");
  EXPECT_EQ((*events)[1], (BookingEvent{*id, kT0, BookingState::kConfirmed, BookingState::kActive, "Started", "rotad"}));
  EXPECT_EQ((*events)[2].to, BookingState::kReleased);
  EXPECT_EQ((*events)[2].actor, "alice");
}

TEST(BookingStore, LoadsOpenAndRecentAndFindsOverlaps) {
  testing::TempDir dir;
  auto store = JobStore::Open(dir.File("rota.db"));
  ASSERT_TRUE(store.ok());
  BookingRecord old = TwoCards("bob");
  old.entry.spec.start = kT0 - 40 * kDay;
  old.entry.spec.end = old.entry.spec.start + kHour;
  old.entry.state = BookingState::kEnded;
  old.entry.actual_end = old.entry.spec.end;
  BookingRecord recent = TwoCards("carol");
  recent.entry.spec.start = kT0 - 2 * kDay;
  recent.entry.spec.end = recent.entry.spec.start + kHour;
  recent.entry.state = BookingState::kNoShow;
  recent.entry.actual_end = recent.entry.spec.start + 15 * kMinute;
  BookingRecord open = TwoCards("alice");
  ASSERT_TRUE((*store)->AddBooking(old, "bob", kT0 - 50 * kDay).ok());
  ASSERT_TRUE((*store)->AddBooking(recent, "carol", kT0 - 3 * kDay).ok());
  auto open_id = (*store)->AddBooking(open, "alice", kT0 - kDay);
  ASSERT_TRUE(open_id.ok());
  auto loaded = (*store)->LoadBookings(kT0 - 35 * kDay);
  ASSERT_TRUE(loaded.ok());
  ASSERT_EQ(loaded->size(), 2u);
  EXPECT_EQ((*loaded)[0].entry.spec.user, "carol");
  EXPECT_EQ((*loaded)[1].entry.spec.user, "alice");
  auto between = (*store)->BookingsBetween(kT0 + kHour, kT0 + 2 * kHour);
  ASSERT_TRUE(between.ok());
  ASSERT_EQ(between->size(), 1u);
  EXPECT_EQ((*between)[0].entry.id, *open_id);
  EXPECT_TRUE((*store)->BookingsBetween(kT0 + 4 * kHour, kT0 + 5 * kHour)->empty());  // end is exclusive
  EXPECT_EQ((*store)->GetBooking(999).status().code(), StatusCode::kNotFound);
  BookingRecord ghost = TwoCards();
  ghost.entry.id = 999;
  EXPECT_EQ((*store)->UpdateBooking(ghost, std::nullopt, "x", "rotad", kT0, true).code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace booking_store_test
}  // namespace rota::store
