// The bookings' part of the daemon: everything a booking goes through, in one place. It owns the
// bookings in memory (BookingBook, booking_book.h) and answers the booking requests (book, with
// dry runs, and list: bookings.cc; cancel, release, extend, approve, reject: booking_changes.cc;
// the calendar's CSV and iCalendar files: bookings_io.cc), and it advances the bookings with time
// (booking_life.cc: the core's StepBookings decides start, no-show, reminder, end and overrun;
// this records them and tells people), and in each scheduling pass it looks at the jobs to see
// what each active booking is used for and stops an overrun's jobs when others wait
// (booking_pass.cc; the stop itself is the job runner's).
//
// The rules are the core's (core/booking.h); this turns requests into specs, applies verdicts to
// the store first and to memory second, and says what happened in words a student understands.
// Runs on the daemon's loop thread. Tested by booking_book_test.cc, booking_desk_test.cc,
// lifecycle_test.cc (in-process) and tests/daemon/test_bookings.py (real processes).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "config/config.h"
#include "core/booking.h"
#include "core/cluster.h"
#include "core/status.h"
#include "daemon/booking_book.h"
#include "daemon/clock.h"
#include "daemon/identity.h"
#include "daemon/inventory.h"
#include "daemon/job_table.h"
#include "daemon/notifications.h"
#include "store/job_store.h"

namespace rota::daemon {

// Whether `job` runs on booking `b`'s capacity: the booking's owner's running job on its cards
// (or its slice).
bool OnBooking(const store::BookingRecord& b, const store::JobRecord& job);

class BookingDesk {
 public:
  struct Setup {
    store::JobStore* store = nullptr;        // must outlive the desk
    const Clock* clock = nullptr;            // must outlive the desk
    const config::Config* config = nullptr;  // the configuration in force (replaced in place on reload)
    const Inventory* cards = nullptr;        // the inventory, kept up to date by the daemon
    Notifications* notes = nullptr;
    // The jobs (Pass: whose jobs run on an active booking, who waits for its capacity); may be
    // null where Pass is not used.
    JobTable* jobs = nullptr;
    // Stops an overrun booking's owner's job: its signal, its grace, then the stop, as for a
    // preemption (its stop_reason says why).
    std::function<void(ActiveJob&, Time)> stop;
    // The bookings the scheduler holds capacity for changed: a pass is due.
    std::function<void()> changed;
  };
  explicit BookingDesk(Setup setup);

  // Reads the bookings of the last weeks from the store (BookingBook::Load).
  Status Load(Time now);
  // The inventory changed: every booking's cards are mapped again.
  void Remap();
  const BookingBook& book() const { return *book_; }

  // ---- Requests (api/ops.h: who may call each is checked before) ----
  nlohmann::json Book(const Caller& caller, const nlohmann::json& request);
  nlohmann::json ListBookings(const Caller& caller, const nlohmann::json& request);
  nlohmann::json Unbook(const Caller& caller, const nlohmann::json& request);
  nlohmann::json ReleaseBooking(const Caller& caller, const nlohmann::json& request);
  nlohmann::json ExtendBooking(const Caller& caller, const nlohmann::json& request);
  nlohmann::json DecideBooking(const Caller& caller, const nlohmann::json& request, bool approve);
  nlohmann::json ExportBookings(const Caller& caller, const nlohmann::json& request);
  nlohmann::json ImportBookings(const Caller& caller, const nlohmann::json& request);

  // ---- With time ----
  struct Advanced {
    // Active bookings past their end whose owner's running jobs must stop (others wait).
    std::vector<std::int64_t> stop_owner_jobs;
    Time next_wakeup = kNever;  // when the next booking is due
  };
  // One step of every booking's life at `now`, given what the daemon sees of each active one
  // (its owner running on it, others waiting for its capacity): recorded, and told.
  Advanced Advance(const std::unordered_map<std::int64_t, BookingObservation>& seen, Time now);
  // The bookings' part of a scheduling pass (booking_pass.cc): what the jobs show of each active
  // booking (its owner running on it, others waiting for its capacity) goes to Advance, and the
  // owner's jobs on a booking that overran while others wait are stopped. When it is due again.
  Time Pass(Time now);
  // Whether a booking is active (the pass then explains the queue: the next Pass reads who waits).
  bool AnyActive() const;

 private:
  Time Now() const { return clock_->Now(); }
  StatusOr<BookingSpec> BookingSpecFrom(const Caller& caller, const nlohmann::json& booking, Time now);
  nlohmann::json BookingJson(const store::BookingRecord& rec, const Caller& caller) const;
  StatusOr<const store::BookingRecord*> OwnBooking(const Caller& caller, const nlohmann::json& request);
  // Saves a change of `rec` (BookingBook::Save) and tells its owner of it in the same commit:
  // `notice` (an event name), else the notice of its new state when someone else changed it.
  Status SaveBooking(store::BookingRecord& rec, BookingState from, const std::string& reason,
                     const std::string& actor, Time now, bool durable, const char* notice = nullptr);
  std::string DescribeBooking(
      const store::BookingRecord& rec) const;  // "12 (alice, GPU 0,1, 12-01 14:00-18:00)"
  std::string LocalTime(Time t) const;
  void NotifyBooking(const std::string& name, const store::BookingRecord& rec, const std::string& reason,
                     const std::string& actor, Time now);

  store::JobStore* store_;
  const Clock* clock_;
  const config::Config& config_;
  const Inventory& cards_;
  Notifications* notes_;
  JobTable* jobs_;
  std::function<void(ActiveJob&, Time)> stop_;
  std::function<void()> changed_;
  std::unique_ptr<BookingBook> book_;
};

}  // namespace rota::daemon
