// The lab's usage report (`rota usage`, the web page's Usage view): GPU-hours per user and
// project this quota week against their quotas, and per local day over the last weeks, with the
// wait, utilisation, idle hours, no-shows and overruns behind them. Pure: the daemon gathers the
// jobs, bookings and usage counters and passes `now`; tested by usage_report_test.cc.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/cluster.h"
#include "core/policy.h"
#include "core/types.h"

namespace rota {

// One job's run as the report sees it. A job never started has start == 0; a running one has
// end == kNever (counted up to `now`).
struct UsageRun {
  std::string user;
  std::string project;
  Time submit = 0;
  Time start = 0;
  Time end = kNever;
  double gpus = 0;  // GPU-equivalents held (a share or a slice counts its fraction of a card)
  bool from_pool = false;  // borrowed from the explore pool
  // What the GPU samples said while it ran, in GPU-seconds (0 when it was never measured):
  // sampled at all, busy (utilisation-weighted), and under the idle threshold.
  double measured_gpu_seconds = 0;
  double busy_gpu_seconds = 0;
  double idle_gpu_seconds = 0;
};

// A run of a cluster's job outside Rota (plain sbatch/srun): GPU-hours only (no wait, no
// measures: Rota neither queued nor sampled it as a job of its own).
struct UsageOutsideRun {
  std::string user;
  double gpus = 0;
  Time start = 0;
  Time end = 0;        // ended; or, running, the last time it was seen running
  bool running = false;  // not charged yet: its part of the week so far counts, as a running job's
};

struct UsageBookingOutcome {
  std::string user;
  Time start = 0;
  bool no_show = false;
  bool overrun = false;
};

struct UsageInput {
  Time now = 0;
  int days = 28;  // the report covers the local days [today - days + 1, today]
  std::vector<UsageRun> runs;  // every job that ran or waited in the period, and all running ones
  std::vector<UsageBookingOutcome> bookings;
  std::vector<UsageOutsideRun> outside;  // runs outside Rota that ended in the period
  // The week's charged GPU-seconds (core/usage.h), by user and by project.
  std::map<std::string, Usage> users;
  std::map<std::string, Usage> projects;
};

struct UsageTotals {
  double avg_wait_seconds = 0;              // jobs started in the period
  std::optional<double> allocated_util;     // percent: busy / measured GPU-seconds; none measured
  double idle_gpu_hours = 0;
  int no_shows = 0;
  int overruns = 0;
};

struct UserUsage {
  std::string name;
  double week_gpu_hours = 0;         // charged this quota week, running jobs included
  std::optional<double> quota_gpu_hours;  // nullopt: unlimited
  double pool_gpu_hours = 0;         // of which borrowed from the explore pool
  int jobs = 0;                      // jobs started in the period
  double outside_gpu_hours = 0;      // held by its jobs outside Rota in the period (also in the days)
  UsageTotals totals;                // this user's part of the period
};

struct ProjectUsage {
  std::string name;
  double week_gpu_hours = 0;
  std::optional<double> quota_gpu_hours;
};

struct DayUsage {
  Time start = 0;  // its local midnight (the API names it by its local date)
  std::map<std::string, double> gpu_hours;  // by user, running jobs up to now
  double avg_wait_seconds = 0;              // jobs started that day (0: none)
  std::optional<double> allocated_util;     // jobs that ended that day
};

struct UsageReport {
  Time now = 0;
  Time week_start = 0;
  std::vector<UserUsage> users;  // by name
  std::vector<ProjectUsage> projects;
  std::vector<DayUsage> days;    // oldest first
  UsageTotals totals;
};

UsageReport BuildUsageReport(const UsageInput& input, const Policy& policy);

}  // namespace rota
