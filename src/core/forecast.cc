// Tested by forecast_test.cc.
#include "core/forecast.h"

#include <algorithm>
#include <unordered_set>

#include "core/capacity.h"
#include "core/quota.h"
#include "core/scheduler.h"
#include "core/usage.h"

namespace rota {

namespace {

class Forward {
 public:
  Forward(const ClusterState& state, const Policy& policy, Time now, const RuntimeModel& model)
      : s_(state), policy_(policy), model_(model), now_(now) {
    policy_.explain = false;  // decisions only, as the simulator plays
    policy_.estimate_starts = false;
    for (RunningJob& r : s_.running) {
      Time end = LikelyEnd(r.start_time, r.job.time_limit, Predicted(r.job), now);
      if (r.kill_at != kNever) end = std::min(end, std::max(now, r.kill_at));
      ends_.push_back(end);
    }
  }

  std::unordered_map<JobId, Time> Run(const ForecastOptions& o) {
    std::unordered_set<JobId> left(o.targets.begin(), o.targets.end());
    if (o.targets.empty()) {
      for (const Job& j : s_.pending) left.insert(j.id);
    }
    size_t arrived = 0;
    Time t = now_;
    for (int pass = 0; pass < o.max_passes && !left.empty(); ++pass) {
      for (; arrived < o.arrivals.size() && o.arrivals[arrived].submit_time <= t; ++arrived) {
        s_.pending.push_back(o.arrivals[arrived]);
      }
      const Decisions d = Schedule(s_, policy_, t);
      if (!d.starts.empty()) Start(d.starts, t, left);
      for (const Signal& sig : d.signals) {
        if (sig.cause != StopCause::kPreempted) continue;  // a limit: the predicted end comes first
        for (size_t i = 0; i < s_.running.size(); ++i) {
          if (s_.running[i].job.id != sig.job) continue;
          s_.running[i].kill_at = sig.kill_at;
          s_.running[i].signalled = true;
          s_.running[i].preempted = true;
          ends_[i] = std::min(ends_[i], sig.kill_at);
        }
      }
      if (left.empty()) break;
      Time next = arrived < o.arrivals.size() ? o.arrivals[arrived].submit_time : kNever;
      for (Time e : ends_) next = std::min(next, e);
      if (d.next_wakeup > t) next = std::min(next, d.next_wakeup);
      if (next == kNever) break;
      t = std::max(t + 1, next);
      End(t);
    }
    // What is still waiting: the plan's estimate where the play stopped, on predicted run times.
    for (Job& j : s_.pending) j.time_limit = Predicted(j);
    for (size_t i = 0; i < s_.running.size(); ++i) {
      RunningJob& r = s_.running[i];
      r.job.time_limit = std::max<Duration>(1, ends_[i] - r.start_time);
    }
    Policy p = policy_;
    p.explain = true;
    p.estimate_starts = true;
    p.enforce_time_limits = false;  // predicted run times are no limits
    // Fifo starts nothing behind a blocked job, so its plan of every waiting job, each at the
    // earliest after the one ahead, is fifo itself on the predicted run times. Past the plan's
    // depth the scheduler spreads the backlog over every card instead, as if no job ahead ever
    // held one idle: early by days where blocked shares hold most of a card (Alibaba). Up to
    // kFifoPlanDepth jobs, for what it costs.
    if (p.algorithm == Algorithm::kFifo) {
      p.plan_depth =
          std::max(p.plan_depth, static_cast<int>(std::min<size_t>(s_.pending.size(), kFifoPlanDepth)));
    }
    if (!left.empty()) {
      const Decisions d = Schedule(s_, p, t);
      for (const rota::Start& st : d.starts) out_.emplace(st.job, t);
      for (const PendingInfo& info : d.pending) out_.emplace(info.job, info.expected_start);
    }
    for (size_t i = 0; i < arrived; ++i) out_.erase(o.arrivals[i].id);
    return std::move(out_);
  }

 private:
  Duration Predicted(const Job& j) const { return model_.Predict(j.user, j.name, j.time_limit).runtime; }

  void Start(const std::vector<rota::Start>& starts, Time t, std::unordered_set<JobId>& left) {
    std::unordered_map<JobId, const rota::Start*> by_id;
    for (const rota::Start& st : starts) by_id.emplace(st.job, &st);
    size_t kept = 0;
    for (size_t i = 0; i < s_.pending.size(); ++i) {
      Job& j = s_.pending[i];
      auto it = by_id.find(j.id);
      if (it == by_id.end()) {
        if (kept != i) s_.pending[kept] = std::move(j);
        ++kept;
        continue;
      }
      RunningJob r;
      r.alloc = it->second->alloc;
      r.preemptible = it->second->preemptible;
      r.from_pool = it->second->from_pool;
      r.start_time = t;
      ends_.push_back(t + Predicted(j));
      r.job = std::move(j);
      out_.emplace(r.job.id, t);
      left.erase(r.job.id);
      s_.running.push_back(std::move(r));
    }
    s_.pending.resize(kept);
  }

  void End(Time t) {
    for (size_t i = 0; i < s_.running.size();) {
      if (ends_[i] > t) {
        ++i;
        continue;
      }
      // Charged as the daemon charges a run when it ends: fair share moves with the play.
      const RunningJob& r = s_.running[i];
      const double gpus = AllocationGpus(s_, r.alloc);
      ChargeOwners(s_.user_usage, s_.project_usage, r.job, gpus, r.start_time, ends_[i], r.from_pool, policy_);
      if (i + 1 != s_.running.size()) {
        s_.running[i] = std::move(s_.running.back());
        ends_[i] = ends_.back();
      }
      s_.running.pop_back();
      ends_.pop_back();
    }
  }

  ClusterState s_;
  Policy policy_;
  const RuntimeModel& model_;
  Time now_;
  std::vector<Time> ends_;  // parallel to s_.running: when each is predicted to end
  std::unordered_map<JobId, Time> out_;
};

}  // namespace

Time LikelyEnd(Time start, Duration limit, Duration predicted, Time now) {
  limit = std::max<Duration>(1, limit);
  Time end = start + std::min(predicted, limit);
  if (end <= now) end = std::min(start + limit, now + std::max<Duration>(5 * kMinute, (now - start) / 4));
  return std::max(end, now);
}

std::unordered_map<JobId, Time> ForecastStarts(const ClusterState& state, const Policy& policy, Time now,
                                               const RuntimeModel& model, const ForecastOptions& options) {
  return Forward(state, policy, now, model).Run(options);
}

}  // namespace rota
