// The `usage` operation (docs/api.md): GPU-hours this week against quota per user and project,
// waits, no-shows and overruns, and per-day GPU-hours and waits over the last `days` days, for
// the web page's Usage view. Built from the store's history and the jobs in memory; nothing is
// sampled for it beyond what the watch already reads (utilisation of the allocated GPUs, per
// day and user since rotad started: CountAllocationUse in metrics.cc). Tested by
// tests/daemon/test_http.py (UsageTest).
//
// Privacy: admins see every user; others see their own row and their own hours per day, with
// the lab's total per day (the page shows the rest as "others"). Projects are lab-wide.
#include <algorithm>
#include <cstdio>

#include "api/protocol.h"
#include "core/quota.h"
#include "core/usage.h"
#include "daemon/clock.h"
#include "daemon/daemon.h"

namespace rota::daemon {

using nlohmann::json;

namespace {

struct Tally {
  double week_seconds = 0;  // GPU-seconds in the current quota week (jobs still running included)
  int jobs = 0;             // jobs started in the window
  double wait_sum = 0;
  int waits = 0;
  int no_shows = 0;
  int overruns = 0;
};

struct Day {
  Time start = 0;
  std::map<std::string, double> gpu_seconds;  // by user
  double wait_sum = 0;
  int waits = 0;
};

json Avg(double sum, int n) { return n > 0 ? json(sum / n) : json(nullptr); }

json Quota(double hours) { return hours < 0 ? json(nullptr) : json(hours); }

}  // namespace

json Daemon::Usage(const Caller& caller, const json& request) {
  const std::int64_t days_asked = request.value("days", 28);
  if (days_asked < 1 || days_asked > 92) return api::ErrorReply("invalid_argument", "\"days\" must be 1 to 92");
  const Time now = Now();
  const int offset = config_.policy.utc_offset;
  const Time week_start = WeekStart(now, config_.policy);
  // Days in local time, oldest first, the last one being today.
  std::vector<Day> days(static_cast<size_t>(days_asked));
  const Time today = LocalMidnight(now, offset);
  for (size_t i = 0; i < days.size(); ++i) days[i].start = today - static_cast<Time>(days.size() - 1 - i) * kDay;
  const Time since = days.front().start;

  StatusOr<std::vector<store::JobRecord>> ended = store_->History(since);
  if (!ended.ok()) return api::ErrorReply(ended.status());
  std::vector<const store::JobRecord*> runs;
  for (const store::JobRecord& r : *ended) runs.push_back(&r);
  for (const auto& [id, a] : jobs_) {
    if (a.rec.state == store::JobState::kRunning) runs.push_back(&a.rec);
  }

  std::map<std::string, Tally> users;
  std::map<std::string, double> projects;  // week GPU-seconds, running jobs' part
  for (const store::JobRecord* r : runs) {
    if (r->start_time <= 0) continue;
    const Time end = r->end_time > 0 ? r->end_time : now;
    double gpus = r->placement.alloc.gpus.empty() ? static_cast<double>(r->placement.gpu_uuids.size())
                                                  : AllocationGpus(cards_, r->placement.alloc);
    Tally& t = users[r->job.user];
    if (r->start_time >= since) {
      ++t.jobs;
      if (r->job.submit_time > 0 && r->start_time >= r->job.submit_time) {
        const double wait = static_cast<double>(r->start_time - r->job.submit_time);
        t.wait_sum += wait;
        ++t.waits;
        for (Day& d : days) {
          if (r->start_time >= d.start && r->start_time < d.start + kDay) {
            d.wait_sum += wait;
            ++d.waits;
          }
        }
      }
    }
    for (Day& d : days) {
      const Time from = std::max(r->start_time, d.start);
      const Time to = std::min(end, d.start + kDay);
      if (to > from) d.gpu_seconds[r->job.user] += gpus * static_cast<double>(to - from);
    }
    if (r->end_time == 0) {
      // Running: charged to the week only when it ends, so add its part of this week now.
      const double part = gpus * static_cast<double>(now - std::max(r->start_time, week_start));
      if (part > 0) {
        t.week_seconds += part;
        if (!r->job.project.empty()) projects[r->job.project] += part;
      }
    }
  }
  for (const auto& [name, u] : usage_.users) users[name].week_seconds += WeekUsage(u, week_start);
  for (const auto& [id, b] : bookings_) {
    if (b.entry.spec.start < since) continue;
    if (b.entry.state == BookingState::kNoShow) ++users[b.entry.spec.user].no_shows;
    if (b.entry.state == BookingState::kOverrun) ++users[b.entry.spec.user].overruns;
  }

  // Utilisation of the allocated GPUs, measured from the samples (since rotad started).
  std::map<std::string, UseTally> use;  // by user, over the window
  std::map<Time, UseTally> use_day;     // by day, the whole lab
  UseTally use_all;
  for (const auto& [day, by_user] : use_by_day_) {
    if (day < since) continue;
    for (const auto& [name, t] : by_user) {
      for (UseTally* sum : {&use[name], &use_day[day], &use_all}) {
        sum->sampled_gpu_seconds += t.sampled_gpu_seconds;
        sum->util_gpu_seconds += t.util_gpu_seconds;
        sum->idle_gpu_seconds += t.idle_gpu_seconds;
      }
      users.try_emplace(name);
    }
  }
  auto util = [](const UseTally& t) {
    return t.sampled_gpu_seconds > 0 ? json(100 * t.util_gpu_seconds / t.sampled_gpu_seconds) : json(nullptr);
  };
  auto idle_hours = [](const UseTally& t) {
    return t.sampled_gpu_seconds > 0 ? json(t.idle_gpu_seconds / 3600) : json(nullptr);
  };

  json out_users = json::array();
  Tally total;
  for (const auto& [name, t] : users) {
    total.wait_sum += t.wait_sum;
    total.waits += t.waits;
    total.no_shows += t.no_shows;
    total.overruns += t.overruns;
    if (!caller.admin && name != caller.name) continue;
    const auto it = usage_.users.find(name);
    const double pool = it == usage_.users.end() ? 0 : PoolWeekUsage(it->second, week_start);
    out_users.push_back({{"name", name},
                         {"week_gpu_hours", t.week_seconds / 3600},
                         {"quota_gpu_hours", Quota(UserQuotaHours(config_.policy.quota, name))},
                         {"pool_gpu_hours", pool / 3600},
                         {"jobs", t.jobs},
                         {"avg_wait_seconds", Avg(t.wait_sum, t.waits)},
                         {"allocated_util", util(use[name])},
                         {"idle_gpu_hours", idle_hours(use[name])},
                         {"no_shows", t.no_shows},
                         {"overruns", t.overruns}});
  }
  for (const auto& [name, u] : usage_.projects) projects[name] += WeekUsage(u, week_start);
  for (const auto& [name, p] : config_.projects) projects.try_emplace(name, 0.0);
  json out_projects = json::array();
  for (const auto& [name, seconds] : projects) {
    out_projects.push_back({{"name", name},
                            {"week_gpu_hours", seconds / 3600},
                            {"quota_gpu_hours", Quota(ProjectQuotaHours(config_.policy.quota, name))}});
  }
  json out_days = json::array();
  for (const Day& d : days) {
    json hours = json::object();
    double all = 0;
    for (const auto& [name, s] : d.gpu_seconds) {
      all += s;
      if (caller.admin || name == caller.name) hours[name] = s / 3600;
    }
    char label[64];
    const Time local = d.start + offset;
    const std::int64_t z = local / kDay + 719468;  // civil date from days since the epoch
    const std::int64_t era = z / 146097;
    const std::int64_t doe = z - era * 146097;
    const std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const std::int64_t mp = (5 * doy + 2) / 153;
    const std::int64_t day = doy - (153 * mp + 2) / 5 + 1;
    const std::int64_t month = mp < 10 ? mp + 3 : mp - 9;
    const std::int64_t year = yoe + era * 400 + (month <= 2 ? 1 : 0);
    std::snprintf(label, sizeof label, "%04lld-%02lld-%02lld", static_cast<long long>(year),
                  static_cast<long long>(month), static_cast<long long>(day));
    out_days.push_back({{"start", d.start},
                        {"day", label},
                        {"gpu_hours", hours},
                        {"total_gpu_hours", all / 3600},
                        {"avg_wait_seconds", Avg(d.wait_sum, d.waits)},
                        {"allocated_util", util(use_day[d.start])}});
  }
  json reply = api::OkReply();
  reply["week_start"] = week_start;
  reply["totals"] = {{"avg_wait_seconds", Avg(total.wait_sum, total.waits)},
                     {"allocated_util", util(use_all)},
                     {"idle_gpu_hours", idle_gpu_seconds_ / 3600},
                     {"no_shows", total.no_shows},
                     {"overruns", total.overruns}};
  reply["users"] = std::move(out_users);
  reply["projects"] = std::move(out_projects);
  reply["days"] = std::move(out_days);
  return reply;
}

}  // namespace rota::daemon
