// Usage accounting: fair-share usage that decays with a half-life, and GPU-seconds charged in
// the current quota week. Pure arithmetic on Usage values (cluster.h); the daemon and the
// simulator call ChargeRun() when a job's run ends and keep the Usage in their state.
#pragma once

#include <string>
#include <unordered_map>

#include "core/cluster.h"
#include "core/policy.h"
#include "core/types.h"

namespace rota {

// Local-time helpers in the server's zone. Weekday: 0 = Monday ... 6 = Sunday.
int LocalWeekday(Time t, const Zone& zone);
int LocalMinuteOfDay(Time t, const Zone& zone);
// The instant of the local midnight that starts the day containing `t`.
Time LocalMidnight(Time t, const Zone& zone);

// Start of the quota week containing `t`: local midnight of policy.quota.week_start_day.
Time WeekStart(Time t, const Policy& policy);

// `usage.decayed_gpu_seconds` decayed from `usage.as_of` to `now` (never grows when now < as_of).
double DecayedUsage(const Usage& usage, Time now, Duration half_life);

// GPU-seconds charged in the week starting at `week_start` (0 when usage is from another week).
double WeekUsage(const Usage& usage, Time week_start);
double PoolWeekUsage(const Usage& usage, Time week_start);
// GPU-hours of a run of `gpus` GPU-equivalents over [start, end) that fall in the week starting at
// `week_start` (0 when none do): a running job's part of the week so far, before it is charged.
double WeekPartHours(double gpus, Time start, Time end, Time week_start);

// Charges a run of `gpus` GPU-equivalents over [start, end) to `usage`: the decayed usage at
// `end`, and the part of the run inside the week of `end` to the week counter (and to the pool
// counter when `from_pool`). REQUIRES: start <= end.
void ChargeRun(Usage& usage, double gpus, Time start, Time end, bool from_pool, const Policy& policy);

// ChargeRun to the run's owner in `users` and, when it has one, its project in `projects`: what
// the daemon's ledger, the simulator and the forecast's play charge when a run ends.
void ChargeOwners(std::unordered_map<std::string, Usage>& users,
                  std::unordered_map<std::string, Usage>& projects, const Job& job, double gpus, Time start,
                  Time end, bool from_pool, const Policy& policy);

}  // namespace rota
