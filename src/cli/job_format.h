// How `rota queue`, `rota history` and `rota show` print the daemon's Job objects
// (docs/api.md, "Objects"). Pure: the current time comes in as an argument; local times use the
// process's time zone (localtime_r).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/types.h"

namespace rota::cli {

// Elapsed time as Slurm prints it: "0:07", "12:05", "1:02:03", "2-03:04:05".
std::string FormatElapsed(Duration d);
// "2026-12-01 14:00" in local time; "-" for 0.
std::string FormatLocalTime(Time t);
// "14:05" when `t` is on the same local day as `now`, else "2026-12-01 14:05"; "-" for 0.
std::string FormatShortTime(Time t, Time now);

// PD (pending), R (running), CG (running with kill_at set: stopping); else the state in capitals.
std::string StateCode(const nlohmann::json& job);
// The request: "2" (whole GPUs), "20G" (a memory share), "3g.40gb" (a MIG slice).
std::string RequestCell(const nlohmann::json& request);
// Where a running job runs ("gpu0,1", "gpu3:20G", "gpu2/mig1"; on a cluster "gpu2,3@node2"), or
// why a pending one waits ("(Resources)", "(Priority)", "(Quota)", ...).
std::string WhereCell(const nlohmann::json& job);
// The capitalised reason ("Resources", "PeakHours") of a pending.reason wire value.
std::string ReasonLabel(const std::string& reason);
// The expected start of a pending job: its forecast ("~2026-12-01 14:00", the p50), else the plan
// on time limits ("2026-12-01 14:00" reserved, "~..." estimated), "-" when unknown; the start
// time of a running job.
std::string StartCell(const nlohmann::json& job);
// A pending job's p90 start ("2026-12-01 16:30"), "-" when none.
std::string P90Cell(const nlohmann::json& job);
// What a forecast's run time rests on: "from the last 8 jobs of ana named train", "from the lab's
// last 40 jobs", "no history yet: its time limit".
std::string RuntimeBasisText(const nlohmann::json& job, const std::string& basis, long long samples);

// A job's deadline and whether it may miss it: on the forecast (its p90 start plus its predicted
// run time) where there is one, else on time limits (an upper bound): "2026-12-10 24:00 (at risk:
// ...)"; "" without a deadline.
std::string DeadlineText(const nlohmann::json& job, Time now);

// `rota queue`: JOBID USER TIER NAME ST TIME GPUS WHERE(REASON) [START], aligned by display width.
// NAME is cut at 20 columns.
std::string RenderQueue(const std::vector<nlohmann::json>& jobs, Time now, bool with_start);
// `rota history`: JOBID USER NAME STATE WAIT RUN GPU-HOURS REASON.
std::string RenderHistory(const std::vector<nlohmann::json>& jobs);
// `rota show`: "Key: value" lines, then "History:" with one line per event.
std::string RenderShow(const nlohmann::json& job, const nlohmann::json& events, Time now);

}  // namespace rota::cli
