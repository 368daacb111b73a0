// The daemon's bookings in memory: the open ones and those closed in the last kMemory (the
// weekly hours and the penalty window look back that far), kept in step with the store (each
// change is written there first), with their cards mapped from UUIDs to positions in the GPU
// inventory. A part of the daemon that owns its state; what a booking's life does (start,
// no-show, reminder, end, overrun) is decided by the core (core/booking.h: StepBookings) and
// carried out by the daemon (booking_life.cc). Not thread-safe (the daemon's loop thread).
// Tested by booking_book_test.cc.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/booking.h"
#include "core/cluster.h"
#include "core/status.h"
#include "store/job_store.h"

namespace rota::daemon {

class BookingBook {
 public:
  // How long closed bookings are kept in memory after their end.
  static constexpr Duration kMemory = 35 * kDay;

  // `store` must outlive the book.
  explicit BookingBook(store::JobStore& store) : store_(store) {}

  // Reads the bookings of the last kMemory before `now` from the store, in place of those held.
  Status Load(Time now, const std::vector<Gpu>& cards);
  // The inventory changed: maps every booking's cards again (a card gone is left out).
  void Remap(const std::vector<Gpu>& cards);
  // Maps `rec`'s card UUIDs to positions in `cards` (for a record read from the store).
  static void Remap(store::BookingRecord& rec, const std::vector<Gpu>& cards);
  // Puts `rec` on `alloc` (positions in `cards`), with the UUIDs that keep it there.
  static void Place(store::BookingRecord& rec, const Allocation& alloc, const std::vector<Gpu>& cards);

  // A new booking: stored with its creation event by `actor`, then held. Its id.
  StatusOr<std::int64_t> Add(store::BookingRecord rec, const std::string& actor, Time now);
  // A change of a held booking (or its state from `from`): stored with an event (`reason`, by
  // `actor`; none when `reason` is empty), then held. `durable`: synced to disk before return.
  // `with`, when given, writes in the same commit (the notice of the change: a crash between two
  // commits would keep the change and lose the notice).
  Status Save(const store::BookingRecord& rec, BookingState from, const std::string& reason,
              const std::string& actor, Time now, bool durable, const std::function<void()>& with = {});
  // Lets go of the closed bookings that ended more than kMemory before `now`.
  void Forget(Time now);

  // The held booking `id`; nullptr when it is not held (closed long ago, or none).
  const store::BookingRecord* Find(std::int64_t id) const;
  const std::map<std::int64_t, store::BookingRecord>& all() const { return bookings_; }
  // What the core plans with: every held booking's entry.
  std::vector<BookingEntry> Entries() const;

 private:
  store::JobStore& store_;
  std::map<std::int64_t, store::BookingRecord> bookings_;
};

}  // namespace rota::daemon
