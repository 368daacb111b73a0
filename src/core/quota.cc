// Tested by quota_test.cc.
//
// Spent = GPU-seconds charged this week (Usage) + for each running job the part of its time limit
// that falls in this week (start to start+limit, clipped at the week start). A job's full request
// counts against the week it starts in. Hybrid mode: a user's own quota first; when that is not
// enough the whole job goes on its project's elastic pool (Start::from_pool), so the pool is only
// spent by jobs that need it.
#include "core/quota.h"

#include <algorithm>

#include "core/usage.h"

namespace rota {

double UserQuotaHours(const QuotaPolicy& q, const std::string& user) {
  if (auto it = q.user_hours.find(user); it != q.user_hours.end()) return it->second;
  if (auto r = q.user_role.find(user); r != q.user_role.end()) {
    if (auto it = q.role_hours.find(r->second); it != q.role_hours.end()) return it->second;
  }
  return q.default_hours;
}

double ProjectQuotaHours(const QuotaPolicy& q, const std::string& project) {
  if (auto it = q.project_hours.find(project); it != q.project_hours.end()) return it->second;
  return -1;
}

RequestGpuTable::RequestGpuTable(const ClusterState& state) {
  for (const Gpu& g : state.gpus) {
    if (g.mig.empty()) largest_card_ = std::max(largest_card_, g.memory);
    for (const MigSlice& slice : g.mig) {
      if (g.memory > 0) {
        mig_fraction_.try_emplace(slice.profile, static_cast<double>(slice.memory) / static_cast<double>(g.memory));
      }
    }
  }
}

double RequestGpuTable::Of(const Request& request) const {
  switch (request.kind) {
    case RequestKind::kWholeGpus: return request.gpus;
    case RequestKind::kMemShare:
      return largest_card_ > 0 ? std::min(1.0, static_cast<double>(request.memory) / static_cast<double>(largest_card_))
                               : 1.0;
    case RequestKind::kMig: {
      auto it = mig_fraction_.find(request.mig_profile);
      return it == mig_fraction_.end() ? 1.0 : it->second;
    }
  }
  return 1.0;
}

double RequestGpus(const ClusterState& state, const Request& request) {
  return RequestGpuTable(state).Of(request);
}

double AllocationGpus(const ClusterState& state, const Allocation& alloc) {
  if (alloc.gpus.empty()) return 0;
  const Gpu& g = state.gpus[alloc.gpus[0]];
  if (alloc.mig >= 0 && g.memory > 0) {
    return static_cast<double>(g.mig[alloc.mig].memory) / static_cast<double>(g.memory);
  }
  if (alloc.memory > 0 && g.memory > 0) {
    return std::min(1.0, static_cast<double>(alloc.memory) / static_cast<double>(g.memory));
  }
  return static_cast<double>(alloc.gpus.size());
}

bool QuotasUnlimited(const QuotaPolicy& q) {
  return q.default_hours < 0 && q.role_hours.empty() && q.user_hours.empty() && q.project_hours.empty();
}

QuotaBook::QuotaBook(const ClusterState& state, const Policy& policy, Time now)
    : policy_(policy), week_start_(WeekStart(now, policy)),
      unlimited_(QuotasUnlimited(policy.quota)) {
  if (unlimited_) return;  // nothing to count
  // Hybrid mode: what a user ran on the project pool does not eat into the user's own quota.
  const bool hybrid = policy.mode == AccountMode::kHybrid;
  for (const auto& [user, u] : state.user_usage) {
    user_spent_[user] = WeekUsage(u, week_start_) - (hybrid ? PoolWeekUsage(u, week_start_) : 0.0);
  }
  for (const auto& [project, u] : state.project_usage) {
    project_spent_[project] = policy.mode == AccountMode::kHybrid ? PoolWeekUsage(u, week_start_)
                                                                   : WeekUsage(u, week_start_);
  }
  for (const RunningJob& r : state.running) {
    Time end = r.kill_at != kNever ? r.kill_at : r.start_time + r.job.time_limit;
    Time from = std::max(r.start_time, week_start_);
    if (end <= from) continue;
    double s = AllocationGpus(state, r.alloc) * static_cast<double>(end - from);
    if (!(hybrid && r.from_pool)) user_spent_[r.job.user] += s;
    if (policy.mode == AccountMode::kProject || (hybrid && r.from_pool)) project_spent_[r.job.project] += s;
  }
}

double QuotaBook::Left(const std::unordered_map<std::string, double>& spent, const std::string& key,
                       double quota_hours) const {
  if (quota_hours < 0) return -1;
  auto it = spent.find(key);
  double used = it == spent.end() ? 0 : it->second;
  return std::max(0.0, quota_hours * kHour - used);
}

double QuotaBook::UserLeft(const std::string& user) const {
  return Left(user_spent_, user, UserQuotaHours(policy_.quota, user));
}

double QuotaBook::ProjectLeft(const std::string& project) const {
  return Left(project_spent_, project, ProjectQuotaHours(policy_.quota, project));
}

QuotaVerdict QuotaBook::Check(const Job& job, double need) const {
  if (unlimited_) return QuotaVerdict::kOk;
  auto fits = [need](double left) { return left < 0 || need <= left + 1e-6; };
  switch (policy_.mode) {
    case AccountMode::kUser: return fits(UserLeft(job.user)) ? QuotaVerdict::kOk : QuotaVerdict::kExhausted;
    case AccountMode::kProject:
      return fits(ProjectLeft(job.project)) ? QuotaVerdict::kOk : QuotaVerdict::kExhausted;
    case AccountMode::kHybrid: {
      if (fits(UserLeft(job.user))) return QuotaVerdict::kOk;
      double pool = ProjectLeft(job.project);
      // A project without a configured pool has none in hybrid mode.
      if (pool >= 0 && need <= pool + 1e-6) return QuotaVerdict::kFromPool;
      return QuotaVerdict::kExhausted;
    }
  }
  return QuotaVerdict::kOk;
}

void QuotaBook::Take(const Job& job, double need, bool from_pool) {
  if (unlimited_) return;
  if (!from_pool) user_spent_[job.user] += need;
  if (policy_.mode == AccountMode::kProject || from_pool) project_spent_[job.project] += need;
}

}  // namespace rota
