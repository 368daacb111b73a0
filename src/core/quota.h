// Weekly GPU-hour quotas. A job may start only if its whole request (GPU-equivalents times its
// time limit) fits in what is left of its account's quota this week, counting running jobs at
// their limits: what is promised is spent. See docs/design.md, "Quota".
#pragma once

#include <string>
#include <unordered_map>

#include "core/cluster.h"
#include "core/policy.h"

namespace rota {

// Weekly quota in GPU-hours; negative means unlimited.
double UserQuotaHours(const QuotaPolicy& q, const std::string& user);
double ProjectQuotaHours(const QuotaPolicy& q, const std::string& project);

// GPU-equivalents of a request on this cluster (1 per whole card; memory / card memory for a
// share, on the largest card; slice memory / card memory for a MIG profile).
double RequestGpus(const ClusterState& state, const Request& request);

// RequestGpus for many requests on one state: the largest card and the slice fractions are
// looked up once, not once per job. Borrows nothing after construction.
class RequestGpuTable {
 public:
  explicit RequestGpuTable(const ClusterState& state);
  double Of(const Request& request) const;

 private:
  MiB largest_card_ = 0;                                 // largest card not in MIG mode
  std::unordered_map<std::string, double> mig_fraction_;  // first slice of each profile
};
double AllocationGpus(const ClusterState& state, const Allocation& alloc);

// Whether no quota of `q` limits anyone: no default, role, user or project hours.
bool QuotasUnlimited(const QuotaPolicy& q);

enum class QuotaVerdict { kOk, kFromPool, kExhausted };

// What is left of every account's quota during one scheduling pass.
class QuotaBook {
 public:
  QuotaBook(const ClusterState& state, const Policy& policy, Time now);

  // Whether `need` GPU-seconds for `job` fit in what is left.
  QuotaVerdict Check(const Job& job, double need) const;
  // Records that `job` starts with `need` GPU-seconds (after Check said it may).
  void Take(const Job& job, double need, bool from_pool);
  // GPU-seconds left for the user (user and hybrid modes) or project; negative = unlimited.
  double UserLeft(const std::string& user) const;
  double ProjectLeft(const std::string& project) const;
  Time week_start() const { return week_start_; }
  // No quota is configured at all: every Check() is kOk.
  bool Unlimited() const { return unlimited_; }

 private:
  double Left(const std::unordered_map<std::string, double>& spent, const std::string& key,
              double quota_hours) const;

  const Policy& policy_;
  Time week_start_;
  bool unlimited_;
  std::unordered_map<std::string, double> user_spent_;     // GPU-seconds this week incl. running
  std::unordered_map<std::string, double> project_spent_;  // project mode: all; hybrid: pool only
};

}  // namespace rota
