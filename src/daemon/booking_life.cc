// The booking desk (booking_desk.h): its making, and advancing the bookings with time (the
// core's StepBookings decides: start, no-show, reminder, end, overrun; this records them and
// tells people; the daemon stops the jobs, booking_pass.cc). The bookings themselves are held by
// BookingBook (booking_book.h). Tested in-process by
// lifecycle_test.cc and with real processes by tests/daemon/test_bookings.py.
#include <signal.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "api/protocol.h"
#include "daemon/clock.h"
#include "daemon/booking_desk.h"

namespace rota::daemon {

bool OnBooking(const store::BookingRecord& b, const store::JobRecord& job) {
  if (job.job.user != b.entry.spec.user || job.state != store::JobState::kRunning) return false;
  if (!b.mig_uuid.empty()) return job.placement.mig_uuid == b.mig_uuid;
  for (const std::string& uuid : job.placement.gpu_uuids) {
    if (std::find(b.gpu_uuids.begin(), b.gpu_uuids.end(), uuid) != b.gpu_uuids.end()) return true;
  }
  return false;
}

BookingDesk::BookingDesk(Setup setup)
    : store_(setup.store),
      clock_(setup.clock),
      config_(*setup.config),
      cards_(*setup.cards),
      notes_(setup.notes),
      jobs_(setup.jobs),
      stop_(std::move(setup.stop)),
      changed_(std::move(setup.changed)),
      book_(std::make_unique<BookingBook>(*setup.store)) {}

Status BookingDesk::Load(Time now) { return book_->Load(now, cards_.gpus()); }

void BookingDesk::Remap() { book_->Remap(cards_.gpus()); }

BookingDesk::Advanced BookingDesk::Advance(const std::unordered_map<std::int64_t, BookingObservation>& seen,
                                           Time now) {
  BookingStep step = StepBookings(book_->Entries(), seen, config_.bookings, now);
  for (std::int64_t id : step.mark_used) {
    const store::BookingRecord* b = book_->Find(id);
    if (b == nullptr || b->entry.used) continue;
    store::BookingRecord rec = *b;
    rec.entry.used = true;
    (void)SaveBooking(rec, rec.entry.state, "", "rotad", now, false);
  }
  for (std::int64_t id : step.reminders) {
    const store::BookingRecord* b = book_->Find(id);
    if (b == nullptr) continue;
    store::BookingRecord rec = *b;
    rec.entry.reminded = true;
    (void)SaveBooking(rec, rec.entry.state, "Reminder: ends at " + LocalTime(rec.entry.spec.end), "rotad", now, false,
                      "booking_ending_soon");
  }
  for (const BookingTransition& t : step.transitions) {
    const store::BookingRecord* b = book_->Find(t.id);
    if (b == nullptr) continue;
    store::BookingRecord rec = *b;
    rec.entry.state = t.to;
    // Ended on time: at its end (a pass may come a little late); anything else: now.
    if (!IsOpen(t.to)) rec.entry.actual_end = t.to == BookingState::kEnded ? std::min(now, rec.entry.spec.end) : now;
    rec.reason = t.reason;
    if (Status s = SaveBooking(rec, t.from, t.reason, "rotad", now, false); !s.ok()) {
      spdlog::error("booking {}: cannot record {}: {}", t.id, BookingStateName(t.to), s.message());
      continue;
    }
    if (t.to == BookingState::kNoShow || t.to == BookingState::kOverrun) {
      const int strikes = BookingStrikes(book_->Entries(), rec.entry.spec.user, config_.bookings, now);
      if (config_.bookings.penalty_alert > 0 && strikes >= config_.bookings.penalty_alert) {
        spdlog::warn("admins: {} has {} no-shows and overruns in the last {}", rec.entry.spec.user, strikes,
                     FormatSpan(config_.bookings.penalty_window));
        notify::Event e;
        e.name = "booking_strikes";
        e.user = rec.entry.spec.user;  // named in the text; an admin event, not the owner's
        e.booking = rec.entry.id;
        e.minutes = strikes;
        e.when = FormatSpan(config_.bookings.penalty_window);
        notes_->Notify(e);
      }
    }
  }
  book_->Forget(now);  // closed bookings nobody looks back at any more
  return Advanced{step.stop_owner_jobs, step.next_wakeup};
}

}  // namespace rota::daemon
