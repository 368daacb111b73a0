// The time ahead (issue 29, "a calendar of the time ahead"): besides the bookings, the jobs that
// will hold cards in a window: each running job on its cards until its time limit ends, with its
// likely end where the lab's history predicts one (foresight.h); each waiting job at its likely
// start for its predicted run time where there is a forecast ("likely": true, its p90 and the end
// its limit allows), else at the scheduler's expected start for its time limit; marked expected
// (not promised) and on no card (the plan reserves capacity, not cards). For `bookings` with
// "ahead": true (`rota bookings --week`, the page's week view). Everyone may see them, as everyone
// sees the queue. Tested by tests/daemon/test_bookings.py and tests/daemon/test_forecast.py.
#include "api/job_json.h"
#include "core/forecast.h"
#include "daemon/daemon.h"

namespace rota::daemon {

using nlohmann::json;

json Daemon::TimeAhead(Time from, Time to) {
  json out = json::array();
  const Time now = Now();
  for (const auto& [id, a] : jobs_) {
    const store::JobRecord& rec = a.rec;
    json j = {{"job_id", id}, {"user", rec.job.user}, {"name", rec.job.name},
              {"request", api::RequestToJson(rec.job.request)}};
    if (rec.state == store::JobState::kRunning && a.Live() && !rec.placement.alloc.gpus.empty()) {
      const Time end = std::max(now, rec.start_time + rec.job.time_limit);
      if (rec.start_time >= to || end <= from) continue;
      json cards = json::array();
      for (int g : rec.placement.alloc.gpus) cards.push_back(cards_.gpus()[static_cast<size_t>(g)].index);
      j.update({{"state", "running"}, {"start", rec.start_time}, {"end", end}, {"gpus", cards},
                {"mig_uuid", rec.placement.mig_uuid}, {"gpu_mem", rec.placement.alloc.memory}});
      if (const RuntimePrediction p = foresight_->Runtime(rec.job, now); p.basis != RuntimeBasis::kLimit)
        j["likely_end"] = LikelyEnd(rec.start_time, rec.job.time_limit, p.runtime, now);
    } else if (rec.state == store::JobState::kPending) {
      const PendingInfo* waiting = jobs_.Waiting(id);
      const Foresight::Entry* f = foresight_->Of(id, now);
      if (f != nullptr && Foresight::Telling(*f) && f->range.p50 != kNever) {
        const Time start = std::max(now, f->range.p50);
        const Time end = start + f->runtime.runtime;
        if (start >= to || end <= from) continue;
        j.update({{"state", "pending"}, {"start", start}, {"end", end}, {"likely", true},
                  {"limit_end", start + rec.job.time_limit},
                  {"p90", f->range.p90 == kNever ? json(nullptr) : json(f->range.p90)}});
        out.push_back(std::move(j));
        continue;
      }
      if (waiting == nullptr || waiting->expected_start == kNever) continue;
      const Time start = std::max(now, waiting->expected_start);
      const Time end = start + rec.job.time_limit;
      if (start >= to || end <= from) continue;
      j.update({{"state", "pending"}, {"start", start}, {"end", end}, {"estimated", waiting->estimated}});
    } else {
      continue;
    }
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace rota::daemon
