// Tested by foresight_test.cc and tests/daemon/test_forecast.py.
#include "daemon/foresight.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "core/arrivals.h"
#include "core/forecast.h"

namespace rota::daemon {

namespace {

constexpr Duration kFirstLook = 60 * kDay;
constexpr Duration kOverlap = kHour;  // read again before the cursor: ends recorded late
constexpr int kPage = 1000;
// A forward play at most this many passes: past it the plan on predicted run times estimates.
constexpr int kMaxPasses = 500;
// ... and at most about this many job-visits (passes times the jobs in the state): a queue of
// 10,000 jobs plays 20 passes, a lab's hundred 500, so that one forecast costs the daemon's loop
// tens of milliseconds, not seconds.
constexpr size_t kMaxWork = 200'000;
// A state of more jobs than this is forecast again at most every kRefresh seconds of the daemon's
// clock (its view in between is the last forecast); a lab's queue is forecast after every pass.
constexpr size_t kLongQueue = 2'000;
constexpr Duration kRefresh = 10;
// Forecasts foresee the last week's jobs coming again (core/arrivals.h).
const ArrivalOptions kArrivals;

// Whether an ended job's run says how long such jobs run: it ran, and ended by itself or at its
// limit (a cancel or a preemption cut it short for reasons of its own).
bool RanItsCourse(const store::JobRecord& r) {
  if (r.start_time <= 0 || r.end_time < r.start_time) return false;
  return r.state == JobState::kCompleted || r.state == JobState::kFailed || r.state == JobState::kTimeout;
}

}  // namespace

Foresight::Foresight(Setup setup) : setup_(std::move(setup)) {}

void Foresight::Learn(Time now) {
  learn_due_ = false;
  if (!loaded_) {
    cursor_ = {now - kFirstLook, 0};
    loaded_ = true;
  }
  const Time from = cursor_.first - (cursor_.second == 0 ? 0 : kOverlap);
  std::erase_if(seen_, [from](const auto& e) { return e.second < from; });
  std::erase_if(arrived_, [now](const auto& e) { return e.second.submit_time <= now - kArrivals.period; });
  std::pair<Time, JobId> after{from, 0};
  while (true) {
    StatusOr<store::JobStore::HistoryPageResult> page =
        setup_.store->HistoryPage(from, std::nullopt, after, kPage);
    if (!page.ok()) {
      spdlog::warn("forecasts: reading the ended jobs: {}", page.status().message());
      return;
    }
    for (const store::JobRecord& r : page->jobs) {
      after = {r.end_time, r.job.id};
      cursor_ = std::max(cursor_, after);
      if (!seen_.emplace(r.job.id, r.end_time).second) continue;
      // A job that ran is one the lab submitted (one cancelled while it waited competed for nothing).
      if (r.start_time > 0 && r.job.submit_time > now - kArrivals.period) arrived_.emplace(r.job.id, r.job);
      if (RanItsCourse(r)) {
        model_.Add({r.job.user, r.job.name, r.job.time_limit, r.end_time - r.start_time});
        stale_ = true;
      }
      if (r.forecast_at > 0 && r.forecast_start > 0 && r.start_time >= r.forecast_at) {
        calibration_.Add(r.forecast_start - r.forecast_at, r.start_time - r.forecast_at);
      }
    }
    if (!page->more) return;
  }
}

RuntimePrediction Foresight::Runtime(const Job& job, Time now) {
  if (learn_due_) Learn(now);
  return model_.Predict(job.user, job.name, job.time_limit);
}

void Foresight::Compute(Time now) {
  Learn(now);
  const ClusterState state = setup_.state();
  ForecastOptions options;
  if (ArrivalsOvertake(setup_.config->policy)) options.arrivals = Arrivals(state, now);
  arrivals_ = static_cast<int>(options.arrivals.size());
  const size_t jobs =
      std::max<size_t>(1, state.pending.size() + state.running.size() + options.arrivals.size() / 2);
  jobs_seen_ = jobs;
  ++computations_;
  options.max_passes = static_cast<int>(std::clamp<size_t>(kMaxWork / jobs, 20, kMaxPasses));
  const std::unordered_map<JobId, Time> starts =
      ForecastStarts(state, setup_.config->policy, now, model_, options);
  entries_.clear();
  for (const Job& j : state.pending) {
    Entry e;
    if (auto it = starts.find(j.id); it != starts.end()) e.forecast = it->second;
    e.runtime = model_.Predict(j.user, j.name, j.time_limit);
    entries_.emplace(j.id, e);
  }
  made_at_ = now;
  stale_ = false;
}

std::vector<Job> Foresight::Arrivals(const ClusterState& state, Time now) {
  std::vector<Job> recent;
  recent.reserve(arrived_.size() + state.pending.size() + state.running.size());
  JobId last = 0;
  auto add = [&](const Job& j) {
    last = std::max(last, j.id);
    if (j.submit_time > now - kArrivals.period) recent.push_back(j);
  };
  for (const auto& [id, j] : arrived_) add(j);
  for (const Job& j : state.pending) add(j);
  for (const RunningJob& r : state.running) add(r.job);
  return RepeatArrivals(recent, now, last + 1, kArrivals);
}

Time Foresight::next_due() const { return made_at_ + kRefresh; }

bool Foresight::Due(Time now) const {
  return stale_ && (made_at_ == 0 || jobs_seen_ <= kLongQueue || now - made_at_ >= kRefresh);
}

void Foresight::Refresh(JobId id, Entry& e) const {
  // The plan on limits is the last pass's, which may be newer than the forecast.
  const PendingInfo* plan = setup_.jobs->Waiting(id);
  e.range = calibration_.Range(made_at_, e.forecast, plan != nullptr ? plan->expected_start : kNever);
}

const std::unordered_map<JobId, Foresight::Entry>& Foresight::All(Time now, Time* made_at) {
  if (Due(now)) Compute(now);
  if (made_at != nullptr) *made_at = made_at_;
  return entries_;
}

const Foresight::Entry* Foresight::Of(JobId id, Time now) {
  if (Due(now)) Compute(now);
  auto it = entries_.find(id);
  if (it == entries_.end()) return nullptr;
  Refresh(id, it->second);
  return &it->second;
}

nlohmann::json Foresight::ToJson(const Entry& e) const {
  auto time = [](Time t) { return t == kNever ? nlohmann::json(nullptr) : nlohmann::json(t); };
  return {{"start", time(e.forecast)},
          {"p50", time(e.range.p50)},
          {"p90", time(e.range.p90)},
          {"calibrated_on", e.range.samples},
          {"arrivals", arrivals_},
          {"runtime", e.runtime.runtime},
          {"runtime_basis", RuntimeBasisName(e.runtime.basis)},
          {"runtime_samples", e.runtime.samples}};
}

}  // namespace rota::daemon
