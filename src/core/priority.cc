// Tested by priority_test.cc.
//
// Fair share follows Slurm's classic formula F = 2^(-U/S) with equal shares among the accounts
// the state knows (those with usage, pending or running jobs): an account that used exactly its
// share gets 0.5, one that used nothing gets 1.
#include "core/priority.h"

#include <algorithm>
#include <cmath>
#include <cstring>

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

}  // namespace

// Fair-share factor per account from decayed usage plus running jobs' elapsed GPU-seconds.
// `pending`: the accounts of the pending jobs, or nullptr to read them off state.pending, each
// job's slot then kept in `pending_slots` (a long queue is ranked by slot, not hashed twice).
// The factors are summed in the map's order, as they always were: the same figures.
template <typename KeyOf>
void PriorityModel::Accounts::Build(const ClusterState& state, const UsageMap& usage, KeyOf key_of,
                                    const Policy& policy, Time now, const std::vector<std::string_view>* pending,
                                    std::vector<std::uint32_t>* pending_slots) {
  auto add = [this](std::string_view k) -> std::uint32_t {
    auto [it, inserted] = slots.try_emplace(k, static_cast<std::uint32_t>(values.size()));
    if (inserted) values.push_back(0.0);
    return it->second;
  };
  for (const auto& [k, u] : usage) values[add(k)] += DecayedUsage(u, now, policy.fairshare_half_life);
  for (const RunningJob& r : state.running) {
    double elapsed = static_cast<double>(std::max<Time>(0, now - r.start_time));
    values[add(key_of(r.job))] += AllocationGpus(state, r.alloc) * elapsed;
  }
  if (pending != nullptr) {
    for (std::string_view k : *pending) add(k);
  } else {
    pending_slots->reserve(state.pending.size());
    for (const Job& j : state.pending) pending_slots->push_back(add(key_of(j)));
  }
  double total = 0;
  for (const auto& [k, slot] : slots) total += values[slot];
  double n = static_cast<double>(slots.size());
  for (const auto& [k, slot] : slots) {
    double& v = values[slot];
    v = total > 0 ? std::exp2(-(v / total) * n) : 1.0;
  }
}

double PriorityModel::Accounts::Of(std::string_view key) const {
  auto it = slots.find(key);
  return it == slots.end() ? 1.0 : values[it->second];
}

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

namespace {

double GpuHoursSized(const Job& job, double gpus, const Policy& policy) {
  const bool on_prediction = policy.size_by_prediction && job.predicted_run > 0 && job.predicted_run < job.time_limit;
  const Duration sized = on_prediction ? job.predicted_run : job.time_limit;
  return gpus * static_cast<double>(sized) / kHour;
}

double SizeOfHours(double gpu_hours, double log_size_max) {
  return std::clamp(1.0 - std::log1p(gpu_hours) / log_size_max, 0.0, 1.0);
}

}  // namespace

double SizeFactor(const Job& job, double gpus, const Policy& policy, double log_size_max) {
  return SizeOfHours(GpuHoursSized(job, gpus, policy), log_size_max);
}

// A queue holds few distinct sizes (card counts or shares times limits), and the logarithm is a
// good part of ranking a long one: each slot remembers the last size that hashed to it. The same
// arithmetic as SizeFactor, so the same value.
double PriorityModel::Size(const Job& job, double gpus) const {
  const double hours = GpuHoursSized(job, gpus, policy_);
  std::uint64_t bits = 0;
  std::memcpy(&bits, &hours, sizeof bits);
  bits *= 0x9E3779B97F4A7C15ull;  // Fibonacci hashing: the high bits pick the slot
  SizeMemo& slot = size_memo_[bits >> (64 - kSizeMemoBits)];
  if (!slot.used || slot.hours != hours) slot = {true, hours, SizeOfHours(hours, log_size_max_)};
  return slot.size;
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
    users_.Build(state, state.user_usage, [](const Job& j) -> std::string_view { return j.user; }, policy, now,
                 pending_users, &pending_user_);
  }
  if (policy.mode != AccountMode::kUser) {
    projects_.Build(state, state.project_usage, [](const Job& j) -> std::string_view { return j.project; },
                    policy, now, pending_projects, &pending_project_);
  }
}

double PriorityModel::UserFairShare(const std::string& user) const { return users_.Of(user); }
double PriorityModel::ProjectFairShare(const std::string& project) const { return projects_.Of(project); }

PriorityFactors PriorityModel::Factors(const Job& job, double gpus, bool as_explore) const {
  double user = 0;
  double project = 0;
  if (policy_.mode != AccountMode::kProject) user = users_.Of(job.user);
  if (policy_.mode != AccountMode::kUser) project = projects_.Of(job.project);
  return Factors(job, user, project, gpus, as_explore);
}

PriorityFactors PriorityModel::PendingFactors(size_t i, double gpus, bool as_explore) const {
  const Job& job = state_.pending[i];
  double user = 0;
  double project = 0;
  if (policy_.mode != AccountMode::kProject) {
    user = pending_user_.empty() ? users_.Of(job.user) : users_.values[pending_user_[i]];
  }
  if (policy_.mode != AccountMode::kUser) {
    project = pending_project_.empty() ? projects_.Of(job.project) : projects_.values[pending_project_[i]];
  }
  return Factors(job, user, project, gpus, as_explore);
}

PriorityFactors PriorityModel::Factors(const Job& job, double user_fs, double project_fs, double gpus,
                                       bool as_explore) const {
  PriorityFactors f;
  f.tier = as_explore ? 0.0 : static_cast<double>(job.tier) / (kTierCount - 1);
  switch (policy_.mode) {
    case AccountMode::kUser: f.fairshare = user_fs; break;
    case AccountMode::kProject: f.fairshare = project_fs; break;
    case AccountMode::kHybrid: f.fairshare = 0.5 * (user_fs + project_fs); break;
  }
  if (policy_.age_max > 0) {
    f.age = std::clamp(static_cast<double>(now_ - job.submit_time) / static_cast<double>(policy_.age_max), 0.0, policy_.age_cap);
  }
  f.sized_on_prediction = policy_.size_by_prediction && job.predicted_run > 0 && job.predicted_run < job.time_limit;
  f.size = Size(job, gpus);
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
