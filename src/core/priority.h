// Multifactor priority (in the spirit of Slurm's priority/multifactor and `sprio`):
//
//   priority = w_tier * tier + tod * (w_fairshare * fairshare + w_age * age + w_size * size)
//              - w_penalty * penalty
//
// Each factor is in [0, 1]:
//   tier       explore 0, regular 0.5, thesis 1 (a job over quota running as explore counts 0);
//   fairshare  2^(-U/S): U the account's share of all decayed usage (plus running jobs' elapsed
//              GPU-seconds), S its share of the cluster (equal among known accounts); heavy
//              recent users rank lower. Hybrid mode averages the user's and the project's;
//   age        time in the queue over Policy::age_max, capped at 1;
//   size       1 - log(1 + gpu_hours) / log(1 + size_max_gpu_hours): small requests first; the
//              hours are the limit's, or the predicted run's (Policy::size_by_prediction);
//   penalty    the owner's overtime / no-show penalty, given in the state;
//   tod        the time-of-day multiplier, applied to heavy jobs only (>= heavy_gpus GPUs or a
//              limit >= heavy_time) so that in the afternoon short jobs go first and long ones
//              gain at night. The tier term is outside it, so tiers stay ordered.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/cluster.h"
#include "core/decisions.h"
#include "core/policy.h"

namespace rota {

// The multiplier of the first time-of-day rule that contains `now` (1 if none does).
double TimeOfDayFactor(const Policy& policy, Time now);
// The next time after `now` at which TimeOfDayFactor may change (a rule boundary).
Time NextTimeOfDayChange(const Policy& policy, Time now);

bool IsHeavy(const Job& job, double gpus, const Policy& policy);

// The size factor of a job asking for `gpus` GPU-equivalents (see above); `log_size_max` is
// log1p of Policy::size_max_gpu_hours (SizeLogMax), computed once by callers that rank many jobs.
double SizeFactor(const Job& job, double gpus, const Policy& policy, double log_size_max);
double SizeLogMax(const Policy& policy);

// Computes factors for the jobs of one state at one time. Borrows `state` and `policy`, which
// must outlive it.
class PriorityModel {
 public:
  PriorityModel(const ClusterState& state, const Policy& policy, Time now);
  // The same model where the accounts of the pending jobs are given (each once) instead of read
  // off state.pending: a caller that keeps them (QueueIndex) spares a pass the walk of the queue.
  PriorityModel(const ClusterState& state, const Policy& policy, Time now,
                const std::vector<std::string_view>& pending_users,
                const std::vector<std::string_view>& pending_projects);

  // `as_explore`: the job runs over quota in the explore tier.
  PriorityFactors Factors(const Job& job, double gpus, bool as_explore) const;
  // The same for state.pending[i], found by the slot its accounts got when the model read the
  // queue (the first constructor): a pass that ranks a long queue hashes each name once.
  PriorityFactors PendingFactors(size_t i, double gpus, bool as_explore) const;
  double UserFairShare(const std::string& user) const;
  double ProjectFairShare(const std::string& project) const;

 private:
  PriorityModel(const ClusterState& state, const Policy& policy, Time now,
                const std::vector<std::string_view>* pending_users,
                const std::vector<std::string_view>* pending_projects);
  // The fair-share factor of each account (user or project): a slot per account.
  struct Accounts {
    std::unordered_map<std::string_view, std::uint32_t> slots;
    std::vector<double> values;  // by slot
    template <typename KeyOf>
    void Build(const ClusterState& state, const std::unordered_map<std::string, Usage>& usage, KeyOf key_of,
               const Policy& policy, Time now, const std::vector<std::string_view>* pending,
               std::vector<std::uint32_t>* pending_slots);
    double Of(std::string_view key) const;  // 1 for an account it does not know
  };
  PriorityFactors Factors(const Job& job, double user_fs, double project_fs, double gpus, bool as_explore) const;
  double Size(const Job& job, double gpus) const;  // SizeFactor, remembered (size_memo_)

  const ClusterState& state_;
  const Policy& policy_;
  Time now_;
  double tod_;
  double log_size_max_;  // log1p of Policy::size_max_gpu_hours: once, not once per job
  Accounts users_;
  Accounts projects_;
  std::vector<std::uint32_t> pending_user_;     // by pending job: its user's slot (first constructor)
  std::vector<std::uint32_t> pending_project_;  // and its project's
  struct SizeMemo {
    bool used = false;
    double hours = 0;
    double size = 0;
  };
  static constexpr int kSizeMemoBits = 8;
  // Not thread-safe, as the rest: a model ranks one pass's jobs on one thread.
  mutable std::array<SizeMemo, 1 << kSizeMemoBits> size_memo_{};
};

}  // namespace rota
