// The bookings' life in the daemon: advancing them with time (the core's StepBookings decides:
// start, no-show, reminder, end, overrun; this carries it out: records, notices, stops). The
// bookings themselves are held by BookingBook (booking_book.h). Tested in-process by
// lifecycle_test.cc and with real processes by tests/daemon/test_bookings.py.
#include <signal.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "api/protocol.h"
#include "daemon/clock.h"
#include "daemon/daemon.h"

namespace rota::daemon {

bool Daemon::OnBooking(const store::BookingRecord& b, const store::JobRecord& job) const {
  if (job.job.user != b.entry.spec.user || job.state != store::JobState::kRunning) return false;
  if (!b.mig_uuid.empty()) return job.placement.mig_uuid == b.mig_uuid;
  for (const std::string& uuid : job.placement.gpu_uuids) {
    if (std::find(b.gpu_uuids.begin(), b.gpu_uuids.end(), uuid) != b.gpu_uuids.end()) return true;
  }
  return false;
}

Time Daemon::BookingPass(Time now) {
  // Who waits for capacity that an active booking may be keeping: jobs the scheduler says wait
  // for a booking (it does not say which: counted for every active booking of someone else, which
  // at worst ends an extension early), and jobs that wait for free capacity and would fit on the
  // booking's cards: past its end, the owner's job running there is what they wait for.
  struct Waiting {
    const std::string* user;
    WaitReason reason;
    const Request* request;
  };
  std::vector<Waiting> waiting;
  for (const auto& [jid, info] : pending_info_) {
    auto job = jobs_.find(jid);
    if (job == jobs_.end() || (info.reason != WaitReason::kBooking && info.reason != WaitReason::kResources)) continue;
    waiting.push_back({&job->second.rec.job.user, info.reason, &job->second.rec.job.request});
  }
  std::unordered_map<std::int64_t, BookingObservation> seen;
  for (const auto& [id, b] : book_->all()) {
    if (b.entry.state != BookingState::kActive) continue;
    BookingObservation o;
    for (const auto& [jid, a] : jobs_) o.owner_running = o.owner_running || OnBooking(b, a.rec);
    const int cards = static_cast<int>(b.gpu_uuids.size());
    for (const Waiting& w : waiting) {
      if (*w.user == b.entry.spec.user) continue;
      const bool fits = w.request->kind != RequestKind::kWholeGpus || w.request->gpus <= cards;
      o.others_waiting = o.others_waiting || w.reason == WaitReason::kBooking || (cards > 0 && fits);
    }
    seen[id] = o;
  }
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
    (void)SaveBooking(rec, rec.entry.state, "Reminder: ends at " + LocalTime(rec.entry.spec.end), "rotad", now, false);
    NotifyBooking("booking_ending_soon", rec, "", "rotad", now);
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
  for (std::int64_t id : step.stop_owner_jobs) {
    const store::BookingRecord* b = book_->Find(id);
    if (b == nullptr) continue;
    for (auto& [jid, a] : jobs_) {
      if (!a.Live() || !OnBooking(*b, a.rec) || a.rec.kill_at != kNever || a.term_sent != 0) continue;
      // Its signal, its grace, then the stop: as a preemption, for the booking's sake.
      a.stop_reason = "Stopped: booking " + std::to_string(id) + " ended and others wait";
      ApplySignal(Signal{jid, a.rec.job.signal, now + a.rec.job.grace, StopCause::kPreempted, 0, a.rec.job.requeue},
                  now);
    }
  }
  book_->Forget(now);  // closed bookings nobody looks back at any more
  return step.next_wakeup;
}

}  // namespace rota::daemon
