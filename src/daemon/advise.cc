// `advise` (docs/api.md): rent or wait, for waiting jobs (core/advice.h). The wait weighed is the
// forecast's p90 (foresight.h), else the scheduler's last plan (time limits); the backlog ahead is
// the GPU-hours the running jobs may still hold and the pending jobs expected to start first; the
// cost of renting comes from the lab's price table, read on each request so that an edit counts
// at once (a small file; a bad row is named, the rest used). Tested by tests/daemon/test_advise.py
// and tests/daemon/test_forecast.py.
#include <algorithm>
#include <cmath>

#include "api/protocol.h"
#include "config/prices.h"
#include "core/advice.h"
#include "core/quota.h"
#include "daemon/daemon.h"
#include "daemon/shipped.h"

#ifndef ROTA_PRICES
#define ROTA_PRICES "/usr/share/rota/gpu-prices.csv"
#endif

namespace rota::daemon {

using nlohmann::json;

namespace {

// The model of a card that could hold `r` (the first in the inventory that could).
std::string ModelFor(const std::vector<Gpu>& gpus, const Request& r) {
  for (const Gpu& g : gpus) {
    if (r.kind == RequestKind::kMig && g.mig.empty()) continue;
    if (r.kind == RequestKind::kMemShare && g.memory < r.memory) continue;
    return g.model;
  }
  return gpus.empty() ? "" : gpus[0].model;
}

}  // namespace

json Daemon::Advise(const Caller& caller, const json& request) {
  const Time now = Now();
  std::vector<JobId> ids;
  if (auto it = request.find("job_id"); it != request.end()) {
    if (!it->is_number_integer()) return api::ErrorReply(InvalidArgument("\"job_id\" must be a job id"));
    StatusOr<store::JobRecord> rec = views_->Visible(caller, it->get<JobId>());
    if (!rec.ok()) return api::ErrorReply(rec.status());
    ids.push_back(it->get<JobId>());
  } else {
    const bool all = request.value("all", false);
    if (all && !caller.admin) return api::ErrorReply(PermissionDenied("advice on everyone's jobs is for admins"));
    for (const auto& [id, a] : jobs_) {
      if (a.rec.state == store::JobState::kPending && !a.rec.interactive && (all || a.rec.uid == caller.uid))
        ids.push_back(id);
    }
    std::sort(ids.begin(), ids.end());
  }

  const std::string path =
      config_.advice.prices.empty() ? ShippedPath(ROTA_PRICES, "gpu-prices.csv") : config_.advice.prices;
  StatusOr<config::PriceTable> prices = config::LoadPrices(path);
  json out = api::OkReply({{"now", now}, {"threshold_seconds", config_.advice.wait_threshold}, {"prices", path}});
  if (!prices.ok()) {
    out["prices_error"] = prices.status().message();
  } else if (!prices->problems.empty()) {
    out["prices_problems"] = prices->problems;
  }

  // What the running jobs may still hold, in GPU-hours (up to their limits).
  const ClusterState& state = cards_.state();
  double running_hours = 0;
  for (const auto& [id, a] : jobs_) {
    if (a.rec.state != store::JobState::kRunning || a.rec.placement.alloc.gpus.empty()) continue;
    const Time end = a.rec.start_time + a.rec.job.time_limit;
    if (end > now) running_hours += AllocationGpus(state, a.rec.placement.alloc) * static_cast<double>(end - now) / 3600;
  }

  json jobs = json::array();
  for (JobId id : ids) {
    auto found = jobs_.find(id);
    json j = {{"job_id", id}};
    if (found == jobs_.end() || found->second.rec.state != store::JobState::kPending) {
      j["state"] = found == jobs_.end() ? "ended" : store::JobStateName(found->second.rec.state);
      j["advise"] = false;
      jobs.push_back(std::move(j));
      continue;
    }
    const store::JobRecord& rec = found->second.rec;
    const PendingInfo* waiting = jobs_.Waiting(id);
    const Time expected = waiting != nullptr ? waiting->expected_start : kNever;
    double backlog = running_hours;
    // Ahead: planned to start earlier, or at the same time and first in the queue's order.
    const double priority = waiting != nullptr ? waiting->factors.priority : 0;
    for (const auto& [other, info] : jobs_.waiting()) {
      if (other == id || info.expected_start == kNever) continue;
      if (expected != kNever && info.expected_start > expected) continue;
      if (info.expected_start == expected &&
          (info.factors.priority < priority || (info.factors.priority == priority && other > id)))
        continue;
      auto o = jobs_.find(other);
      if (o == jobs_.end()) continue;
      backlog += RequestGpus(state, o->second.rec.job.request) * static_cast<double>(o->second.rec.job.time_limit) / 3600;
    }
    const double gpus = RequestGpus(state, rec.job.request);
    const int cards = std::max(1, static_cast<int>(std::ceil(gpus - 1e-9)));
    const double hours = static_cast<double>(rec.job.time_limit) / 3600;
    const std::string model = ModelFor(state.gpus, rec.job.request);
    j["state"] = "pending";
    j["name"] = rec.job.name;
    j["user"] = rec.job.user;
    j["expected_start"] = expected == kNever ? json(nullptr) : json(expected);
    j["estimated"] = waiting != nullptr && waiting->estimated;
    j["wait_seconds"] = expected == kNever ? json(nullptr) : json(std::max<Time>(0, expected - now));
    j["backlog_gpu_hours"] = backlog;
    j["cards"] = cards;
    j["gpu_model"] = model;
    j["hours"] = hours;
    // The forecast (foresight.h), where the lab's history says more than the limits: its p90 is
    // the wait the advice weighs, and its p90 plus the predicted run time what a deadline is
    // judged on. Without one, the plan on time limits (an upper bound).
    const Foresight::Entry* forecast = foresight_->Of(id, now);
    Time late = expected;               // the start the advice weighs
    Duration run = rec.job.time_limit;  // and the run after it
    if (forecast != nullptr && forecast->range.p90 != kNever && Foresight::Telling(*forecast)) {
      j["forecast"] = foresight_->ToJson(*forecast);
      late = forecast->range.p90;
      run = forecast->runtime.runtime;
    }
    bool at_risk = false;
    if (rec.deadline > 0) {
      at_risk = late == kNever || late + run > rec.deadline;
      j["deadline"] = rec.deadline;
      j["deadline_at_risk"] = at_risk;
    }
    // Renting is worth a thought when the wait passes the threshold, or nobody can say when it
    // ends, or the owner's deadline is at risk.
    j["advise"] = late == kNever || late - now > config_.advice.wait_threshold || at_risk;
    json options = json::array();
    if (prices.ok()) {
      for (const RentOption& o : RentOptions(prices->rows, model, cards, hours, 3)) {
        options.push_back({{"provider", o.price.provider},
                           {"region", o.price.region},
                           {"instance_type", o.price.instance},
                           {"gpu_model", o.price.gpu_model},
                           {"gpu_count", o.price.gpu_count},
                           {"instances", o.instances},
                           {"price_per_hour", o.price.hourly},
                           {"spot_price", o.price.spot < 0 ? json(nullptr) : json(o.price.spot)},
                           {"currency", o.price.currency},
                           {"date", o.price.date},
                           {"cost", o.cost},
                           {"spot_cost", o.spot_cost < 0 ? json(nullptr) : json(o.spot_cost)}});
      }
    }
    j["options"] = std::move(options);
    jobs.push_back(std::move(j));
  }
  out["jobs"] = std::move(jobs);
  return out;
}

}  // namespace rota::daemon
