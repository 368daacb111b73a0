// Tested by usage_report_test.cc.
//
// Design: one pass over the runs. A run's GPU-seconds are split over the local days it overlaps
// (running ones up to `now`); its wait counts on the day it started; its measurements (busy,
// measured, idle GPU-seconds, known only as a whole) count on the day it ended, or today for a
// running job. The week's hours are the store's charged counters plus the running jobs' part
// since the week began, so the report agrees with the quota check the scheduler makes.
#include "core/usage_report.h"

#include <algorithm>
#include <optional>

#include "core/quota.h"
#include "core/usage.h"

namespace rota {

namespace {

constexpr double kHourSeconds = 3600.0;

struct Sums {
  double wait = 0;
  int started = 0;
  double measured = 0;
  double busy = 0;
  double idle = 0;
  int no_shows = 0;
  int overruns = 0;

  void AddMeasures(const UsageRun& r) {
    measured += r.measured_gpu_seconds;
    busy += r.busy_gpu_seconds;
    idle += r.idle_gpu_seconds;
  }
  UsageTotals Totals() const {
    UsageTotals t;
    t.avg_wait_seconds = started > 0 ? wait / started : 0;
    if (measured > 0) t.allocated_util = 100.0 * busy / measured;
    t.idle_gpu_hours = idle / kHourSeconds;
    t.no_shows = no_shows;
    t.overruns = overruns;
    return t;
  }
};

std::optional<double> Quota(double hours) {
  if (hours < 0) return std::nullopt;
  return hours;
}

}  // namespace

UsageReport BuildUsageReport(const UsageInput& input, const Policy& policy) {
  UsageReport out;
  out.now = input.now;
  out.week_start = WeekStart(input.now, policy);
  const int days = std::max(1, input.days);
  // The report's local days: day d is [starts[d], starts[d + 1]) (23 or 25 hours on the days
  // daylight saving begins or ends).
  const Zone& zone = policy.zone;
  const std::int64_t first_day = zone.Day(input.now) - (days - 1);
  std::vector<Time> starts(static_cast<size_t>(days) + 1);
  for (int d = 0; d <= days; ++d) starts[static_cast<size_t>(d)] = zone.FromLocal((first_day + d) * kDay);
  const Time first = starts.front();
  // The day index of `t` in the report, or -1 outside it.
  auto day_of = [&](Time t) -> int {
    if (t < first || t >= starts.back()) return -1;
    return static_cast<int>(zone.Day(t) - first_day);
  };

  out.days.resize(static_cast<size_t>(days));
  std::vector<Sums> day_sums(static_cast<size_t>(days));
  for (int d = 0; d < days; ++d) out.days[static_cast<size_t>(d)].start = starts[static_cast<size_t>(d)];

  std::map<std::string, Sums> user_sums;
  std::map<std::string, UserUsage> users;
  std::map<std::string, ProjectUsage> projects;
  auto user = [&](const std::string& name) -> UserUsage& {
    UserUsage& u = users[name];
    u.name = name;
    return u;
  };
  Sums all;
  // Adds `gpus` held by `who` over [start, end) to the days of the report it covers; the hours
  // added, or nullopt where it covers none.
  auto add_to_days = [&](const std::string& who, double gpus, Time start, Time end) -> std::optional<double> {
    std::optional<double> added;
    for (Time t = std::max(start, first); t < end;) {
      const int d = day_of(t);
      if (d < 0) break;
      const Time until = std::min(end, starts[static_cast<size_t>(d) + 1]);
      const double hours = gpus * static_cast<double>(until - t) / kHourSeconds;
      out.days[static_cast<size_t>(d)].gpu_hours[who] += hours;
      added = added.value_or(0) + hours;
      t = until;
    }
    return added;
  };

  for (const auto& [name, usage] : input.users) {
    UserUsage& u = user(name);
    u.week_gpu_hours += WeekUsage(usage, out.week_start) / kHourSeconds;
    u.pool_gpu_hours += PoolWeekUsage(usage, out.week_start) / kHourSeconds;
  }
  for (const auto& [name, usage] : input.projects) {
    ProjectUsage& p = projects[name];
    p.name = name;
    p.week_gpu_hours += WeekUsage(usage, out.week_start) / kHourSeconds;
  }

  for (const UsageRun& r : input.runs) {
    if (r.start <= 0) continue;  // never ran: no hours, no wait yet
    const Time end = std::min(r.end, input.now);
    UserUsage& u = user(r.user);
    Sums& us = user_sums[r.user];
    // A running job is charged only when it ends: add its part of this week now.
    if (r.end == kNever && end > r.start && end > out.week_start) {
      const double week_part = WeekPartHours(r.gpus, r.start, end, out.week_start);
      u.week_gpu_hours += week_part;
      if (r.from_pool) u.pool_gpu_hours += week_part;
      if (!r.project.empty()) {
        ProjectUsage& p = projects[r.project];
        p.name = r.project;
        p.week_gpu_hours += week_part;
      }
    }
    add_to_days(r.user, r.gpus, r.start, end);
    // Wait, on the day it started.
    if (int d = day_of(r.start); d >= 0) {
      const double wait = static_cast<double>(std::max<Time>(0, r.start - r.submit));
      for (Sums* s : {&day_sums[static_cast<size_t>(d)], &us, &all}) {
        s->wait += wait;
        ++s->started;
      }
      ++u.jobs;
    }
    // Measurements, on the day it ended (today while it runs).
    if (int d = day_of(r.end == kNever ? input.now : r.end); d >= 0) {
      for (Sums* s : {&day_sums[static_cast<size_t>(d)], &us, &all}) s->AddMeasures(r);
    }
  }

  // Runs outside Rota: their hours per day and per user. An ended one's charge is in the week's
  // usage; a running one is charged only when it ends: its part of this week is added now.
  for (const UsageOutsideRun& r : input.outside) {
    const Time end = std::min(r.end, input.now);
    if (auto hours = add_to_days(r.user, r.gpus, r.start, end)) user(r.user).outside_gpu_hours += *hours;
    if (r.running && end > r.start && end > out.week_start) {
      user(r.user).week_gpu_hours += WeekPartHours(r.gpus, r.start, end, out.week_start);
    }
  }

  for (const UsageBookingOutcome& b : input.bookings) {
    if (day_of(b.start) < 0) continue;
    user(b.user);
    Sums& us = user_sums[b.user];
    for (Sums* s : {&us, &all}) {
      s->no_shows += b.no_show ? 1 : 0;
      s->overruns += b.overrun ? 1 : 0;
    }
  }

  for (auto& [name, u] : users) {
    u.quota_gpu_hours = Quota(UserQuotaHours(policy.quota, name));
    u.totals = user_sums[name].Totals();
    out.users.push_back(u);
  }
  for (auto& [name, p] : projects) {
    p.quota_gpu_hours = Quota(ProjectQuotaHours(policy.quota, name));
    out.projects.push_back(p);
  }
  for (size_t d = 0; d < out.days.size(); ++d) {
    const UsageTotals t = day_sums[d].Totals();
    out.days[d].avg_wait_seconds = t.avg_wait_seconds;
    out.days[d].allocated_util = t.allocated_util;
  }
  out.totals = all.Totals();
  return out;
}

}  // namespace rota
