// The usage report (usage_ledger.h: `rota usage`, the web page's Usage view), from the ledger's
// usage (usage_ledger.h) and what the samples measured of each run (allocation_watch.h: every
// running allocation's GPU-seconds as sampled, busy and idle, stored when its run ends).
// Tested by tests/daemon/test_usage.py; the arithmetic by core/usage_report_test.cc.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "api/protocol.h"
#include "core/capacity.h"
#include "core/civil_date.h"
#include "core/quota.h"
#include "core/usage.h"
#include "core/usage_report.h"
#include "daemon/clock.h"
#include "daemon/usage_ledger.h"

namespace rota::daemon {

using nlohmann::json;

namespace {

constexpr int kDefaultDays = 28;
constexpr int kMaxDays = 366;

json Optional(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json TotalsJson(const UsageTotals& t) {
  return {{"avg_wait_seconds", t.avg_wait_seconds},
          {"allocated_util", Optional(t.allocated_util)},
          {"idle_gpu_hours", t.idle_gpu_hours},
          {"no_shows", t.no_shows},
          {"overruns", t.overruns}};
}

}  // namespace

std::map<std::string, double> UsageLedger::WeekHours(const JobTable& jobs, Time now,
                                                     const std::vector<store::OutsideRun>& outside_running) const {
  const Time week = WeekStart(now, setup_.config->policy);
  std::map<std::string, double> hours;
  for (const auto& [name, u] : usage_.users) hours[name] += WeekUsage(u, week) / 3600.0;
  for (const auto& [id, a] : jobs) {
    const store::JobRecord& rec = a.rec;
    if (rec.state != store::JobState::kRunning || rec.start_time <= 0 || rec.placement.alloc.gpus.empty()) continue;
    hours[rec.job.user] += WeekPartHours(AllocationGpus(*setup_.cards, rec.placement.alloc), rec.start_time, now, week);
  }
  for (const store::OutsideRun& o : outside_running) {
    if (o.end > o.start) hours[o.user] += WeekPartHours(o.gpus, o.start, std::min(o.end, now), week);
  }
  return hours;
}

json UsageLedger::Report(const Caller& caller, const json& request, const JobTable& jobs, Time now,
                         const std::vector<store::OutsideRun>& outside_running) {
  int days = kDefaultDays;
  if (auto it = request.find("days"); it != request.end()) {
    if (!it->is_number_integer() || it->get<std::int64_t>() < 1 || it->get<std::int64_t>() > kMaxDays) {
      return api::ErrorReply(InvalidArgument("\"days\" must be a whole number from 1 to " + std::to_string(kMaxDays)));
    }
    days = it->get<int>();
  }
  const Zone& zone = setup_.config->policy.zone;
  const Time first = zone.FromLocal((zone.Day(now) - (days - 1)) * kDay);  // the first local day's start

  UsageInput in;
  in.now = now;
  in.days = days;
  StatusOr<std::vector<store::JobRecord>> ended = setup_.store->History(first);
  if (!ended.ok()) return api::ErrorReply(ended.status());
  StatusOr<std::map<JobId, store::JobMeasures>> measures = setup_.store->LoadJobMeasures(first);
  if (!measures.ok()) return api::ErrorReply(measures.status());
  auto add_run = [&](const store::JobRecord& rec, const store::JobMeasures* live) {
    UsageRun r;
    r.user = rec.job.user;
    r.project = rec.job.project;
    r.submit = rec.job.submit_time;
    r.start = rec.start_time;
    r.end = store::IsFinal(rec.state) && rec.end_time > 0 ? rec.end_time : kNever;
    r.gpus = rec.placement.alloc.gpus.empty() ? 0 : AllocationGpus(*setup_.cards, rec.placement.alloc);
    r.from_pool = rec.from_pool;
    store::JobMeasures m;
    if (auto it = measures->find(rec.job.id); it != measures->end()) m = it->second;
    if (live != nullptr) {
      m.measured_gpu_seconds += live->measured_gpu_seconds;
      m.busy_gpu_seconds += live->busy_gpu_seconds;
      m.idle_gpu_seconds += live->idle_gpu_seconds;
    }
    r.measured_gpu_seconds = m.measured_gpu_seconds;
    r.busy_gpu_seconds = m.busy_gpu_seconds;
    r.idle_gpu_seconds = m.idle_gpu_seconds;
    in.runs.push_back(std::move(r));
  };
  for (const store::JobRecord& rec : *ended) add_run(rec, nullptr);
  for (const auto& [id, a] : jobs) add_run(a.rec, &a.measures);
  StatusOr<std::vector<store::BookingRecord>> bookings = setup_.store->BookingsBetween(first, now + 1);
  if (!bookings.ok()) return api::ErrorReply(bookings.status());
  for (const store::BookingRecord& b : *bookings) {
    in.bookings.push_back({b.entry.spec.user, b.entry.spec.start, b.entry.state == BookingState::kNoShow,
                           b.entry.state == BookingState::kOverrun});
  }
  StatusOr<std::vector<store::OutsideRun>> outside = setup_.store->OutsideRunsSince(first);
  if (!outside.ok()) return api::ErrorReply(outside.status());
  for (const store::OutsideRun& o : *outside) in.outside.push_back({o.user, o.gpus, o.start, o.end, false});
  for (const store::OutsideRun& o : outside_running) in.outside.push_back({o.user, o.gpus, o.start, o.end, true});
  for (const auto& [name, u] : usage_.users) in.users[name] = u;
  for (const auto& [name, u] : usage_.projects) in.projects[name] = u;
  const UsageReport report = BuildUsageReport(in, setup_.config->policy);

  // Everyone sees the lab's totals and days; the per-user rows and hours are one's own unless one
  // is an admin (a user sees only what is theirs). Projects: those one worked for this period.
  std::set<std::string> own_projects;
  for (const UsageRun& r : in.runs) {
    if (r.user == caller.name && !r.project.empty()) own_projects.insert(r.project);
  }
  const auto visible = [&](const std::string& user) { return caller.admin || user == caller.name; };
  json users = json::array();
  for (const UserUsage& u : report.users) {
    if (!visible(u.name)) continue;
    json row = {{"name", u.name},
                {"week_gpu_hours", u.week_gpu_hours},
                {"quota_gpu_hours", Optional(u.quota_gpu_hours)},
                {"pool_gpu_hours", u.pool_gpu_hours},
                {"outside_gpu_hours", u.outside_gpu_hours},
                {"jobs", u.jobs}};
    row.update(TotalsJson(u.totals));
    users.push_back(std::move(row));
  }
  json projects = json::array();
  for (const ProjectUsage& p : report.projects) {
    if (!caller.admin && !own_projects.contains(p.name)) continue;
    projects.push_back({{"name", p.name},
                        {"week_gpu_hours", p.week_gpu_hours},
                        {"quota_gpu_hours", Optional(p.quota_gpu_hours)}});
  }
  json day_list = json::array();
  for (const DayUsage& d : report.days) {
    json hours = json::object();
    double total = 0;
    for (const auto& [user, h] : d.gpu_hours) {
      total += h;
      if (visible(user)) hours[user] = h;
    }
    day_list.push_back({{"day", FormatLocalDate(d.start, zone)},
                        {"start", d.start},
                        {"gpu_hours", std::move(hours)},
                        {"total_gpu_hours", total},
                        {"avg_wait_seconds", d.avg_wait_seconds},
                        {"allocated_util", Optional(d.allocated_util)}});
  }
  json out = api::OkReply();
  out["now"] = report.now;
  out["week_start"] = report.week_start;
  out["days_covered"] = days;
  out["users"] = std::move(users);
  out["projects"] = std::move(projects);
  out["days"] = std::move(day_list);
  out["totals"] = TotalsJson(report.totals);
  return out;
}

}  // namespace rota::daemon
