// The bookings' part of a scheduling pass (booking_desk.h): what the jobs show of each active
// booking (its owner's job running on it, others waiting for its capacity) advances the
// bookings; the owner's jobs on a booking that overran while others wait are stopped. Tested by
// booking_desk_test.cc and, in-process through a whole daemon, lifecycle_test.cc.
#include "daemon/booking_desk.h"

namespace rota::daemon {

bool BookingDesk::AnyActive() const {
  for (const auto& [id, b] : book().all()) {
    if (b.entry.state == BookingState::kActive) return true;
  }
  return false;
}

Time BookingDesk::Pass(Time now) {
  JobTable& jobs = *jobs_;
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
  // Who waits is asked only where a booking is active: the notes may have to be made for it.
  if (AnyActive()) {
    for (const auto& [jid, info] : jobs.waiting()) {
      auto job = jobs.find(jid);
      if (job == jobs.end() || (info.reason != WaitReason::kBooking && info.reason != WaitReason::kResources))
        continue;
      waiting.push_back({&job->second.rec.job.user, info.reason, &job->second.rec.job.request});
    }
  }
  std::unordered_map<std::int64_t, BookingObservation> seen;
  for (const auto& [id, b] : book().all()) {
    if (b.entry.state != BookingState::kActive) continue;
    BookingObservation o;
    for (const auto& [jid, a] : jobs) o.owner_running = o.owner_running || OnBooking(b, a.rec);
    const int cards = static_cast<int>(b.gpu_uuids.size());
    for (const Waiting& w : waiting) {
      if (*w.user == b.entry.spec.user) continue;
      const bool fits = w.request->kind != RequestKind::kWholeGpus || w.request->gpus <= cards;
      o.others_waiting = o.others_waiting || w.reason == WaitReason::kBooking || (cards > 0 && fits);
    }
    seen[id] = o;
  }
  const Advanced step = Advance(seen, now);
  for (std::int64_t id : step.stop_owner_jobs) {
    const store::BookingRecord* b = book().Find(id);
    if (b == nullptr) continue;
    for (auto& [jid, a] : jobs) {
      if (!a.Live() || !OnBooking(*b, a.rec) || a.rec.kill_at != kNever || a.term_sent != 0) continue;
      // Its signal, its grace, then the stop: as a preemption, for the booking's sake.
      a.stop_reason = "Stopped: booking " + std::to_string(id) + " ended and others wait";
      stop_(a, now);
    }
  }
  return step.next_wakeup;
}

}  // namespace rota::daemon
