// Tested by usage_test.cc.
//
// Decay is exponential with a half-life (Slurm's PriorityDecayHalfLife): a value v recorded at
// time a is worth v * 2^-((t - a) / h) at time t. Charges are applied at the end of a run, so a
// long run counts fully at its end; Schedule() adds the elapsed part of running jobs itself.
#include "core/usage.h"

#include <algorithm>
#include <cmath>

namespace rota {

namespace {
// 1970-01-01 was a Thursday (weekday 3 when Monday is 0).
int WeekdayOfDay(std::int64_t day) { return static_cast<int>(((day % 7) + 7 + 3) % 7); }
}  // namespace

int LocalWeekday(Time t, const Zone& zone) { return WeekdayOfDay(zone.Day(t)); }

int LocalMinuteOfDay(Time t, const Zone& zone) {
  const std::int64_t local = zone.ToLocal(t);
  return static_cast<int>((local - FloorDiv(local, kDay) * kDay) / kMinute);
}

Time LocalMidnight(Time t, const Zone& zone) { return zone.DayStart(t); }

// Design: counted in local days, not in 86,400 s steps back, so that a week holding a change of
// daylight saving still starts at midnight.
Time WeekStart(Time t, const Policy& policy) {
  const std::int64_t day = policy.zone.Day(t);
  const int back = (WeekdayOfDay(day) - policy.quota.week_start_day + 7) % 7;
  return policy.zone.FromLocal((day - back) * kDay);
}

double DecayedUsage(const Usage& usage, Time now, Duration half_life) {
  if (usage.decayed_gpu_seconds <= 0) return 0;
  if (half_life <= 0 || now <= usage.as_of) return usage.decayed_gpu_seconds;
  double halves = static_cast<double>(now - usage.as_of) / static_cast<double>(half_life);
  return usage.decayed_gpu_seconds * std::exp2(-halves);
}

double WeekPartHours(double gpus, Time start, Time end, Time week_start) {
  const Time from = std::max(start, week_start);
  return end > from ? gpus * static_cast<double>(end - from) / 3600.0 : 0;
}

double WeekUsage(const Usage& usage, Time week_start) {
  return usage.week_start == week_start ? usage.week_gpu_seconds : 0;
}

double PoolWeekUsage(const Usage& usage, Time week_start) {
  return usage.week_start == week_start ? usage.pool_gpu_seconds : 0;
}

void ChargeRun(Usage& usage, double gpus, Time start, Time end, bool from_pool, const Policy& policy) {
  double total = gpus * static_cast<double>(end - start);
  usage.decayed_gpu_seconds = DecayedUsage(usage, end, policy.fairshare_half_life) + total;
  usage.as_of = std::max(usage.as_of, end);
  Time week = WeekStart(end, policy);
  if (usage.week_start != week) {
    if (week < usage.week_start) return;  // a late charge for an earlier week: no longer counts
    usage.week_start = week;
    usage.week_gpu_seconds = 0;
    usage.pool_gpu_seconds = 0;
  }
  double in_week = gpus * static_cast<double>(end - std::max(start, week));
  usage.week_gpu_seconds += in_week;
  if (from_pool) usage.pool_gpu_seconds += in_week;
}

void ChargeOwners(std::unordered_map<std::string, Usage>& users,
                  std::unordered_map<std::string, Usage>& projects, const Job& job, double gpus, Time start,
                  Time end, bool from_pool, const Policy& policy) {
  ChargeRun(users[job.user], gpus, start, end, from_pool, policy);
  if (!job.project.empty()) ChargeRun(projects[job.project], gpus, start, end, from_pool, policy);
}

}  // namespace rota
