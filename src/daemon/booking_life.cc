// The bookings' life in the daemon: loading them, keeping their cards mapped to the inventory,
// advancing them with time (core StepBookings: start, no-show, reminder, end, overrun), and what
// the scheduler sees of them (holds, penalties). Tested by tests/daemon/test_bookings.py.
#include <signal.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "api/protocol.h"
#include "daemon/clock.h"
#include "daemon/daemon.h"

namespace rota::daemon {

namespace {

// Closed bookings stay in memory this long: the weekly hours and the penalty window look back.
constexpr Duration kBookingMemory = 35 * kDay;

}  // namespace

Status Daemon::LoadBookings() {
  StatusOr<std::vector<store::BookingRecord>> rows = store_->LoadBookings(Now() - kBookingMemory);
  if (!rows.ok()) return rows.status();
  bookings_.clear();
  for (store::BookingRecord& r : *rows) {
    RemapBooking(r);
    bookings_[r.entry.id] = std::move(r);
  }
  return Status();
}

void Daemon::RemapBooking(store::BookingRecord& rec) const {
  auto index_of = [this](const std::string& uuid) {
    for (size_t i = 0; i < cards_.gpus.size(); ++i) {
      if (cards_.gpus[i].uuid == uuid) return static_cast<int>(i);
    }
    return -1;
  };
  rec.entry.spec.cards.clear();
  for (const std::string& uuid : rec.asked_cards) {
    if (int i = index_of(uuid); i >= 0) rec.entry.spec.cards.push_back(i);
  }
  rec.entry.alloc.gpus.clear();
  rec.entry.alloc.mig = -1;
  for (const std::string& uuid : rec.gpu_uuids) {
    if (int i = index_of(uuid); i >= 0) rec.entry.alloc.gpus.push_back(i);
  }
  if (!rec.mig_uuid.empty() && !rec.entry.alloc.gpus.empty()) {
    const Gpu& g = cards_.gpus[static_cast<size_t>(rec.entry.alloc.gpus[0])];
    for (size_t k = 0; k < g.mig.size(); ++k) {
      if (g.mig[k].uuid == rec.mig_uuid) rec.entry.alloc.mig = static_cast<int>(k);
    }
  }
}

std::vector<BookingEntry> Daemon::BookingEntries() const {
  std::vector<BookingEntry> out;
  out.reserve(bookings_.size());
  for (const auto& [id, r] : bookings_) out.push_back(r.entry);
  return out;
}

bool Daemon::OnBooking(const store::BookingRecord& b, const store::JobRecord& job) const {
  if (job.job.user != b.entry.spec.user || job.state != store::JobState::kRunning) return false;
  if (!b.mig_uuid.empty()) return job.placement.mig_uuid == b.mig_uuid;
  for (const std::string& uuid : job.placement.gpu_uuids) {
    if (std::find(b.gpu_uuids.begin(), b.gpu_uuids.end(), uuid) != b.gpu_uuids.end()) return true;
  }
  return false;
}

Time Daemon::BookingPass(Time now) {
  // Whose jobs wait because of a booking (the scheduler says that a booking is the reason, not
  // which one): counted for every active booking of someone else, which at worst ends an
  // extension early.
  std::set<std::string> waiting_users;
  for (const auto& [jid, info] : pending_info_) {
    auto job = jobs_.find(jid);
    if (info.reason == WaitReason::kBooking && job != jobs_.end()) waiting_users.insert(job->second.rec.job.user);
  }
  std::unordered_map<std::int64_t, BookingObservation> seen;
  for (const auto& [id, b] : bookings_) {
    if (b.entry.state != BookingState::kActive) continue;
    BookingObservation o;
    for (const auto& [jid, a] : jobs_) o.owner_running = o.owner_running || OnBooking(b, a.rec);
    o.others_waiting = !waiting_users.empty() &&
                       (waiting_users.size() > 1 || !waiting_users.count(b.entry.spec.user));
    seen[id] = o;
  }
  BookingStep step = StepBookings(BookingEntries(), seen, config_.bookings, now);
  for (std::int64_t id : step.mark_used) {
    auto it = bookings_.find(id);
    if (it == bookings_.end() || it->second.entry.used) continue;
    store::BookingRecord rec = it->second;
    rec.entry.used = true;
    (void)SaveBooking(rec, rec.entry.state, "", "rotad", now, false);
  }
  for (std::int64_t id : step.reminders) {
    auto it = bookings_.find(id);
    if (it == bookings_.end()) continue;
    store::BookingRecord rec = it->second;
    rec.entry.reminded = true;
    (void)SaveBooking(rec, rec.entry.state, "Reminder: ends at " + LocalTime(rec.entry.spec.end), "rotad", now, false);
    NotifyBooking("booking_ending_soon", rec, "", "rotad", now);
  }
  for (const BookingTransition& t : step.transitions) {
    auto it = bookings_.find(t.id);
    if (it == bookings_.end()) continue;
    store::BookingRecord rec = it->second;
    rec.entry.state = t.to;
    // Ended on time: at its end (a pass may come a little late); anything else: now.
    if (!IsOpen(t.to)) rec.entry.actual_end = t.to == BookingState::kEnded ? std::min(now, rec.entry.spec.end) : now;
    rec.reason = t.reason;
    if (Status s = SaveBooking(rec, t.from, t.reason, "rotad", now, false); !s.ok()) {
      spdlog::error("booking {}: cannot record {}: {}", t.id, BookingStateName(t.to), s.message());
      continue;
    }
    if (t.to == BookingState::kNoShow || t.to == BookingState::kOverrun) {
      const int strikes = BookingStrikes(BookingEntries(), rec.entry.spec.user, config_.bookings, now);
      if (config_.bookings.penalty_alert > 0 && strikes >= config_.bookings.penalty_alert) {
        spdlog::warn("admins: {} has {} no-shows and overruns in the last {}", rec.entry.spec.user, strikes,
                     FormatSpan(config_.bookings.penalty_window));
        notify::Event e;
        e.name = "booking_strikes";
        e.user = rec.entry.spec.user;  // named in the text; an admin event, not the owner's
        e.booking = rec.entry.id;
        e.minutes = strikes;
        e.when = FormatSpan(config_.bookings.penalty_window);
        Notify(e);
      }
    }
  }
  for (std::int64_t id : step.stop_owner_jobs) {
    auto it = bookings_.find(id);
    if (it == bookings_.end()) continue;
    for (auto& [jid, a] : jobs_) {
      if (!a.Live() || !OnBooking(it->second, a.rec) || a.rec.kill_at != kNever || a.term_sent != 0) continue;
      // Its signal, its grace, then the stop: as a preemption, for the booking's sake.
      a.stop_reason = "Stopped: booking " + std::to_string(id) + " ended and others wait";
      ApplySignal(Signal{jid, a.rec.job.signal, now + a.rec.job.grace, StopCause::kPreempted, 0, a.rec.job.requeue},
                  now);
    }
  }
  // Forget closed bookings nobody looks back at any more.
  std::erase_if(bookings_, [now](const auto& kv) {
    const BookingEntry& e = kv.second.entry;
    return !IsOpen(e.state) && std::max(e.actual_end, e.spec.end) < now - kBookingMemory;
  });
  return step.next_wakeup;
}

}  // namespace rota::daemon
