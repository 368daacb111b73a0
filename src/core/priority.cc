// Tested by priority_test.cc.
//
// Fair share follows Slurm's classic formula F = 2^(-U/S) with equal shares among the accounts
// the state knows (those with usage, pending or running jobs): an account that used exactly its
// share gets 0.5, one that used nothing gets 1.
#include "core/priority.h"

#include <algorithm>
#include <cmath>

#include "core/quota.h"
#include "core/usage.h"

namespace rota {

namespace {

bool RuleContains(const TimeOfDayRule& r, int weekday, int minute) {
  auto on = [&r](int day) { return (r.weekdays >> day) & 1u; };
  if (r.start_minute < r.end_minute) return on(weekday) && minute >= r.start_minute && minute < r.end_minute;
  // Wraps past midnight: the evening part belongs to today, the morning part to yesterday's rule.
  if (minute >= r.start_minute) return on(weekday);
  if (minute < r.end_minute) return on((weekday + 6) % 7);
  return false;
}

using UsageMap = std::unordered_map<std::string, Usage>;

// Fair-share factor per account from decayed usage plus running jobs' elapsed GPU-seconds.
// `pending`: the accounts of the pending jobs, or nullptr to read them off state.pending.
template <typename KeyOf>
std::unordered_map<std::string_view, double> FairShares(const ClusterState& state, const UsageMap& usage,
                                                        KeyOf key_of, const Policy& policy, Time now,
                                                        const std::vector<std::string_view>* pending) {
  std::unordered_map<std::string_view, double> used;
  for (const auto& [k, u] : usage) used[k] += DecayedUsage(u, now, policy.fairshare_half_life);
  for (const RunningJob& r : state.running) {
    double elapsed = static_cast<double>(std::max<Time>(0, now - r.start_time));
    used[key_of(r.job)] += AllocationGpus(state, r.alloc) * elapsed;
  }
  if (pending != nullptr) {
    for (std::string_view k : *pending) used.try_emplace(k, 0.0);
  } else {
    for (const Job& j : state.pending) used.try_emplace(key_of(j), 0.0);
  }
  double total = 0;
  for (const auto& [k, v] : used) total += v;
  double n = static_cast<double>(used.size());
  for (auto& [k, v] : used) v = total > 0 ? std::exp2(-(v / total) * n) : 1.0;
  return used;
}

}  // namespace

double TimeOfDayFactor(const Policy& policy, Time now) {
  int weekday = LocalWeekday(now, policy.zone);
  int minute = LocalMinuteOfDay(now, policy.zone);
  for (const TimeOfDayRule& r : policy.time_of_day) {
    if (RuleContains(r, weekday, minute)) return r.factor;
  }
  return 1.0;
}

// The factor depends on the local weekday and minute: it can change when the wall clock shows a
// rule's start or end, at midnight (the weekday), and when the clocks change (a rule's boundary
// in the skipped hour is passed then, and the minute jumps).
Time NextTimeOfDayChange(const Policy& policy, Time now) {
  if (policy.time_of_day.empty()) return kNever;
  const Zone& zone = policy.zone;
  Time best = std::min(zone.NextWallTime(now, 0), zone.NextChange(now));
  for (const TimeOfDayRule& r : policy.time_of_day) {
    for (int m : {r.start_minute, r.end_minute}) {
      best = std::min(best, zone.NextWallTime(now, static_cast<std::int64_t>(m % (24 * 60)) * kMinute));
    }
  }
  return best;
}

bool IsHeavy(const Job& job, double gpus, const Policy& policy) {
  return gpus >= policy.heavy_gpus || job.time_limit >= policy.heavy_time;
}

double SizeLogMax(const Policy& policy) { return std::log1p(std::max(policy.size_max_gpu_hours, 1e-9)); }

double SizeFactor(const Job& job, double gpus, const Policy& policy, double log_size_max) {
  const bool on_prediction = policy.size_by_prediction && job.predicted_run > 0 && job.predicted_run < job.time_limit;
  const Duration sized = on_prediction ? job.predicted_run : job.time_limit;
  const double gpu_hours = gpus * static_cast<double>(sized) / kHour;
  return std::clamp(1.0 - std::log1p(gpu_hours) / log_size_max, 0.0, 1.0);
}

PriorityModel::PriorityModel(const ClusterState& state, const Policy& policy, Time now)
    : PriorityModel(state, policy, now, nullptr, nullptr) {}

PriorityModel::PriorityModel(const ClusterState& state, const Policy& policy, Time now,
                             const std::vector<std::string_view>& pending_users,
                             const std::vector<std::string_view>& pending_projects)
    : PriorityModel(state, policy, now, &pending_users, &pending_projects) {}

PriorityModel::PriorityModel(const ClusterState& state, const Policy& policy, Time now,
                             const std::vector<std::string_view>* pending_users,
                             const std::vector<std::string_view>* pending_projects)
    : state_(state), policy_(policy), now_(now), tod_(TimeOfDayFactor(policy, now)),
      log_size_max_(SizeLogMax(policy)) {
  if (policy.mode != AccountMode::kProject) {
    user_fs_ = FairShares(state, state.user_usage, [](const Job& j) -> std::string_view { return j.user; },
                          policy, now, pending_users);
  }
  if (policy.mode != AccountMode::kUser) {
    project_fs_ = FairShares(state, state.project_usage,
                             [](const Job& j) -> std::string_view { return j.project; }, policy, now,
                             pending_projects);
  }
}

double PriorityModel::Lookup(const Shares& shares, std::string_view key) {
  auto it = shares.find(key);
  return it == shares.end() ? 1.0 : it->second;
}

double PriorityModel::UserFairShare(const std::string& user) const { return Lookup(user_fs_, user); }
double PriorityModel::ProjectFairShare(const std::string& project) const {
  return Lookup(project_fs_, project);
}

PriorityFactors PriorityModel::Factors(const Job& job, double gpus, bool as_explore) const {
  PriorityFactors f;
  f.tier = as_explore ? 0.0 : static_cast<double>(job.tier) / (kTierCount - 1);
  switch (policy_.mode) {
    case AccountMode::kUser: f.fairshare = Lookup(user_fs_, job.user); break;
    case AccountMode::kProject: f.fairshare = Lookup(project_fs_, job.project); break;
    case AccountMode::kHybrid:
      f.fairshare = 0.5 * (Lookup(user_fs_, job.user) + Lookup(project_fs_, job.project));
      break;
  }
  if (policy_.age_max > 0) {
    f.age = std::clamp(static_cast<double>(now_ - job.submit_time) / static_cast<double>(policy_.age_max), 0.0, policy_.age_cap);
  }
  f.sized_on_prediction = policy_.size_by_prediction && job.predicted_run > 0 && job.predicted_run < job.time_limit;
  f.size = SizeFactor(job, gpus, policy_, log_size_max_);
  f.time_of_day = IsHeavy(job, gpus, policy_) ? tod_ : 1.0;
  // Hashing the name is a good part of the cost when a long queue is ranked: most labs have no
  // penalties, and the simulator never has.
  if (!state_.penalty.empty()) {
    if (auto it = state_.penalty.find(job.user); it != state_.penalty.end()) {
      f.penalty = std::clamp(it->second, 0.0, 1.0);
    }
  }
  const Weights& w = policy_.weights;
  f.priority = w.tier * f.tier + f.time_of_day * (w.fairshare * f.fairshare + w.age * f.age + w.size * f.size) -
               w.penalty * f.penalty;
  return f;
}

}  // namespace rota
