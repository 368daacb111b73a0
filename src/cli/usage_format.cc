// Tested by usage_format_test.cc.
#include "cli/usage_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "cli/json_fields.h"
#include "cli/text.h"
#include "core/types.h"

namespace rota::cli {

namespace {

std::string Hours(double h) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", h);
  return buf;
}

std::string OptionalHours(const nlohmann::json& row, const char* key) {
  auto it = row.find(key);
  return it == row.end() || !it->is_number() ? "-" : Hours(it->get<double>());
}

std::string Percent(const nlohmann::json& row, const char* key) {
  auto it = row.find(key);
  return it == row.end() || !it->is_number() ? "-" : std::to_string(static_cast<int>(std::lround(it->get<double>()))) + "%";
}

std::string Wait(double seconds) { return seconds <= 0 ? "-" : FormatDuration(static_cast<Duration>(std::lround(seconds))); }

}  // namespace

std::string FormatUsage(const nlohmann::json& reply, int days_shown) {
  std::string out = "This week (since " + FormatTime(fields::Int(reply, "week_start"), "%a %m-%d %H:%M", "?") +
                    "), GPU-hours:\n";
  // OUTSIDE: GPU-hours of the user's jobs outside Rota (a cluster's plain sbatch) in the period;
  // shown only where someone has some (never on one server of Rota's own).
  const nlohmann::json& rows = fields::Arr(reply, "users");
  const bool outside = std::any_of(rows.begin(), rows.end(),
                                   [](const nlohmann::json& u) { return fields::Num(u, "outside_gpu_hours") > 0; });
  std::vector<std::string> header{"USER", "WEEK", "QUOTA", "POOL", "JOBS"};
  if (outside) header.push_back("OUTSIDE");
  for (const char* h : {"AVG WAIT", "UTIL", "IDLE GPU-H", "NO-SHOWS", "OVERRUNS"}) header.push_back(h);
  Table users(std::move(header));
  for (const nlohmann::json& u : rows) {
    std::vector<std::string> row{fields::Str(u, "name"), Hours(fields::Num(u, "week_gpu_hours")),
                                 OptionalHours(u, "quota_gpu_hours"), Hours(fields::Num(u, "pool_gpu_hours")),
                                 std::to_string(fields::Int(u, "jobs"))};
    if (outside) row.push_back(Hours(fields::Num(u, "outside_gpu_hours")));
    for (std::string cell : {Wait(fields::Num(u, "avg_wait_seconds")), Percent(u, "allocated_util"),
                             Hours(fields::Num(u, "idle_gpu_hours")), std::to_string(fields::Int(u, "no_shows")),
                             std::to_string(fields::Int(u, "overruns"))}) {
      row.push_back(std::move(cell));
    }
    users.AddRow(std::move(row));
  }
  out += users.Render();
  if (!fields::Arr(reply, "projects").empty()) {
    Table projects({"PROJECT", "WEEK", "QUOTA"});
    for (const nlohmann::json& p : fields::Arr(reply, "projects")) {
      projects.AddRow({fields::Str(p, "name"), Hours(fields::Num(p, "week_gpu_hours")), OptionalHours(p, "quota_gpu_hours")});
    }
    out += "\n" + projects.Render();
  }
  const nlohmann::json& days = fields::Arr(reply, "days");
  if (!days.empty() && days_shown > 0) {
    Table by_day({"DAY", "GPU-H", "AVG WAIT", "UTIL"});
    const size_t from = days.size() > static_cast<size_t>(days_shown) ? days.size() - static_cast<size_t>(days_shown) : 0;
    for (size_t i = from; i < days.size(); ++i) {
      const nlohmann::json& d = days[i];
      by_day.AddRow({fields::Str(d, "day"), Hours(fields::Num(d, "total_gpu_hours")),
                     Wait(fields::Num(d, "avg_wait_seconds")), Percent(d, "allocated_util")});
    }
    out += "\n" + by_day.Render();
  }
  const nlohmann::json& t = fields::Obj(reply, "totals");
  out += "\nLab, last " + std::to_string(fields::Int(reply, "days_covered")) + " days: average wait " +
         Wait(fields::Num(t, "avg_wait_seconds")) + ", utilisation of allocated GPUs " + Percent(t, "allocated_util") +
         ", " + Hours(fields::Num(t, "idle_gpu_hours")) + " idle GPU-hours, " + std::to_string(fields::Int(t, "no_shows")) +
         " no-shows, " + std::to_string(fields::Int(t, "overruns")) + " overruns\n";
  return out;
}

}  // namespace rota::cli
