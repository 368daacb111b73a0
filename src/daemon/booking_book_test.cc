// Tests of the daemon's bookings in memory over a real store: what is loaded and for how long
// closed ones are kept, every change written before it is held, cards mapped by UUID as the
// inventory changes.
#include "daemon/booking_book.h"

#include <gtest/gtest.h>

#include "testing/builders.h"
#include "testing/temp_dir.h"

namespace rota::daemon {
namespace booking_book_test {
namespace {

constexpr Time kNow = 1'796'115'600;  // 2026-12-01 09:00 UTC

store::BookingRecord OnCards(std::vector<std::string> uuids, Time start, Time end,
                             BookingState state = BookingState::kConfirmed) {
  store::BookingRecord r;
  r.entry.spec.user = "alice";
  r.entry.spec.request.gpus = static_cast<int>(uuids.size());
  r.entry.spec.start = start;
  r.entry.spec.end = end;
  r.entry.state = state;
  r.gpu_uuids = std::move(uuids);
  r.asked_cards = r.gpu_uuids;
  r.decided_by = "rotad";
  return r;
}

class BookingBookTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = store::JobStore::Open(dir_.File("rota.db"));
    ASSERT_TRUE(s.ok()) << s.status().message();
    store_ = std::move(*s);
  }
  rota::testing::TempDir dir_;
  std::unique_ptr<store::JobStore> store_;
};

TEST_F(BookingBookTest, AddedAndSavedBookingsAreStoredAndHeld) {
  BookingBook book(*store_);
  std::vector<Gpu> cards = rota::testing::Cards(4);
  StatusOr<std::int64_t> id = book.Add(OnCards({"GPU-2"}, kNow + kDay, kNow + kDay + kHour), "alice", kNow);
  ASSERT_TRUE(id.ok()) << id.status().message();
  ASSERT_NE(book.Find(*id), nullptr);
  EXPECT_EQ(book.Find(*id)->entry.id, *id);
  EXPECT_EQ(book.Entries().size(), 1u);

  store::BookingRecord r = *book.Find(*id);
  r.entry.state = BookingState::kCancelled;
  r.entry.actual_end = kNow;
  ASSERT_TRUE(book.Save(r, BookingState::kConfirmed, "Cancelled by alice", "alice", kNow, true).ok());
  EXPECT_EQ(book.Find(*id)->entry.state, BookingState::kCancelled);
  StatusOr<store::BookingRecord> stored = store_->GetBooking(*id);
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->entry.state, BookingState::kCancelled);
  StatusOr<std::vector<store::BookingEvent>> events = store_->BookingEvents(*id);
  ASSERT_TRUE(events.ok());
  EXPECT_EQ(events->back().reason, "Cancelled by alice");

  // A change the store refuses (no such booking there) is not held either.
  store::BookingRecord ghost = r;
  ghost.entry.id = 999;
  EXPECT_FALSE(book.Save(ghost, BookingState::kConfirmed, "x", "alice", kNow, false).ok());
  EXPECT_EQ(book.Find(999), nullptr);
}

TEST_F(BookingBookTest, LoadKeepsOpenBookingsAndRecentlyClosedOnes) {
  BookingBook writer(*store_);
  std::vector<Gpu> cards = rota::testing::Cards(2);
  const std::int64_t open = *writer.Add(OnCards({"GPU-0"}, kNow + kDay, kNow + kDay + kHour), "alice", kNow - 60 * kDay);
  const std::int64_t recent =
      *writer.Add(OnCards({"GPU-1"}, kNow - 3 * kDay, kNow - 3 * kDay + kHour, BookingState::kEnded), "alice", kNow - 4 * kDay);
  const std::int64_t old = *writer.Add(
      OnCards({"GPU-1"}, kNow - 50 * kDay, kNow - 50 * kDay + kHour, BookingState::kEnded), "alice", kNow - 51 * kDay);
  BookingBook book(*store_);
  ASSERT_TRUE(book.Load(kNow, cards).ok());
  EXPECT_NE(book.Find(open), nullptr);
  EXPECT_NE(book.Find(recent), nullptr);
  EXPECT_EQ(book.Find(old), nullptr);
  // Forgetting lets go of the closed ones kMemory after their end, never of open ones.
  book.Forget(kNow - 3 * kDay + kHour + BookingBook::kMemory);
  EXPECT_NE(book.Find(recent), nullptr);
  book.Forget(kNow - 3 * kDay + kHour + BookingBook::kMemory + 1);
  EXPECT_EQ(book.Find(recent), nullptr);
  book.Forget(kNow + 400 * kDay);
  EXPECT_NE(book.Find(open), nullptr);
}

TEST_F(BookingBookTest, CardsAreMappedByUuidAsTheInventoryChanges) {
  BookingBook book(*store_);
  std::vector<Gpu> cards = rota::testing::Cards(4);
  store::BookingRecord r = OnCards({}, kNow + kDay, kNow + kDay + kHour);
  BookingBook::Place(r, Allocation{{1, 3}, -1, 0}, cards);
  EXPECT_EQ(r.gpu_uuids, (std::vector<std::string>{"GPU-1", "GPU-3"}));
  const std::int64_t id = *book.Add(r, "alice", kNow);
  // GPU-1 is gone and the others move up: the booking holds what is left, at its new place.
  std::vector<Gpu> fewer = {cards[0], cards[2], cards[3]};
  book.Remap(fewer);
  EXPECT_EQ(book.Find(id)->entry.alloc.gpus, std::vector<int>{2});
  book.Remap(cards);
  EXPECT_EQ(book.Find(id)->entry.alloc.gpus, (std::vector<int>{1, 3}));
}

TEST_F(BookingBookTest, AMigSliceIsFoundOnItsCard) {
  std::vector<Gpu> cards = rota::testing::Cards(2);
  cards[1].mig = {{"MIG-a", "3g.40gb", 40960}, {"MIG-b", "3g.40gb", 40960}};
  store::BookingRecord r = OnCards({}, kNow + kDay, kNow + kDay + kHour);
  BookingBook::Place(r, Allocation{{1}, 1, 0}, cards);
  EXPECT_EQ(r.mig_uuid, "MIG-b");
  r.entry.alloc = {};
  BookingBook::Remap(r, cards);
  EXPECT_EQ(r.entry.alloc.gpus, std::vector<int>{1});
  EXPECT_EQ(r.entry.alloc.mig, 1);
}

}  // namespace
}  // namespace booking_book_test
}  // namespace rota::daemon
