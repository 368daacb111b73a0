// Tested by advise_format_test.cc.
#include "cli/advise_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "cli/job_format.h"
#include "cli/json_fields.h"
#include "cli/text.h"
#include "core/types.h"

namespace rota::cli {

namespace {

std::string Money(double v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, v >= 100 ? "%.0f" : "%.2f", v);
  return buf;
}

// "4", "12", "0.5": one decimal under ten, none when it is zero (3.99 reads "4", not "4.0").
std::string Hours(double h) {
  const double r = std::round(h * 10) / 10;
  char buf[32];
  std::snprintf(buf, sizeof buf, r >= 10 || r == std::floor(r) ? "%.0f" : "%.1f", r);
  return buf;
}

}  // namespace

std::string FormatAdvice(const nlohmann::json& reply) {
  using fields::Arr;
  using fields::Bool;
  using fields::Int;
  using fields::Obj;
  using fields::Num;
  using fields::Str;
  std::string out;
  if (!Str(reply, "prices_error").empty()) out += "rota: no price table: " + Str(reply, "prices_error") + "\n";
  const auto& problems = Arr(reply, "prices_problems");
  if (!problems.empty())
    out += "rota: " + std::to_string(problems.size()) + " row(s) of the price table left out (" + Str(reply, "prices") +
           "; the admins see which with --json)\n";
  const auto& jobs = Arr(reply, "jobs");
  if (jobs.empty()) out += "No waiting jobs.\n";
  const Duration threshold = Int(reply, "threshold_seconds");
  for (const nlohmann::json& j : jobs) {
    std::string head = "Job " + std::to_string(Int(j, "job_id"));
    if (!Str(j, "name").empty()) head += " (" + Str(j, "name") + ")";
    if (Str(j, "state") != "pending") {
      out += head + ": not waiting (" + Str(j, "state") + ").\n";
      continue;
    }
    if (!Str(j, "user").empty()) head += ", " + Str(j, "user");
    const bool known = j.contains("expected_start") && j["expected_start"].is_number();
    if (known) {
      out += head + ": expected to start in about " + FormatDuration(Int(j, "wait_seconds")) + " (" +
             FormatLocalTime(Int(j, "expected_start")) +
             (Bool(j, "estimated") ? ", estimated from the time limits of the jobs ahead)" : ", reserved)") + ".\n";
    } else {
      out += head + ": no start can be foreseen yet (the jobs ahead or the cards do not allow one).\n";
    }
    const nlohmann::json& forecast = Obj(j, "forecast");
    const bool foreseen = Int(forecast, "p50") > 0 && Int(forecast, "p90") > 0;
    if (foreseen) {
      const Time now = Int(reply, "now");
      out += "  Likely to start in about " + FormatDuration(std::max<Time>(0, Int(forecast, "p50") - now)) +
             " (" + FormatLocalTime(Int(forecast, "p50")) + "), 90% by " + FormatLocalTime(Int(forecast, "p90")) +
             ", and to run about " + FormatDuration(Int(forecast, "runtime")) + ", from the lab's history.\n";
    }
    out += "  The lab's backlog ahead of it: " + Hours(Num(j, "backlog_gpu_hours")) + " GPU-hours.\n";
    if (Int(j, "deadline") > 0 && foreseen) {
      const Time late = Int(forecast, "p90") + Int(forecast, "runtime");
      out += "  Its deadline, " + FormatLocalTime(Int(j, "deadline")) +
             (Bool(j, "deadline_at_risk") ? ", is at risk: started at its p90, it would end about "
                                          : ", is within reach: started at its p90, it would end about ") +
             FormatLocalTime(late) + ".\n";
    } else if (Int(j, "deadline") > 0) {
      const Duration limit = static_cast<Duration>(std::llround(Num(j, "hours") * 3600));
      out += "  Its deadline, " + FormatLocalTime(Int(j, "deadline")) +
             (!Bool(j, "deadline_at_risk") ? ", is within reach: it should end by " +
                                                 FormatLocalTime(Int(j, "expected_start") + limit) + " at the latest.\n"
              : known ? ", is at risk: started then, it may run until " +
                            FormatLocalTime(Int(j, "expected_start") + limit) + " (its time limit).\n"
                      : ", is at risk: no start can be foreseen.\n");
    }
    const std::string what = std::to_string(Int(j, "cards")) + " x " + Str(j, "gpu_model", "GPU") + " for " +
                             FormatDuration(static_cast<Duration>(std::llround(Num(j, "hours") * 3600))) +
                             " (its time limit)";
    const auto& options = Arr(j, "options");
    if (!Bool(j, "advise")) {
      out += "  That is within " + FormatDuration(threshold) + ": waiting is the better deal.\n";
      continue;
    }
    const Time weighed = foreseen ? Int(forecast, "p90") - Int(reply, "now") : Int(j, "wait_seconds");
    if (Bool(j, "deadline_at_risk") && known && weighed <= threshold)
      out += "  The wait is short, but not short enough for the deadline.\n";
    if (options.empty()) {
      out += "  The price table has no instance with " + Str(j, "gpu_model", "these cards") +
             ": ask the admins to add one.\n";
      continue;
    }
    out += "  Renting " + what + " would cost about:\n";
    for (const nlohmann::json& o : options) {
      std::string line = "    " + Money(Num(o, "cost")) + " " + Str(o, "currency") + "  " + Str(o, "provider") + " " +
                         Str(o, "region") + " " + std::to_string(Int(o, "instances")) + " x " + Str(o, "instance_type") +
                         " (" + std::to_string(Int(o, "gpu_count")) + " x " + Str(o, "gpu_model") + ")";
      if (o.contains("spot_cost") && o["spot_cost"].is_number())
        line += ", spot about " + Money(Num(o, "spot_cost"));
      out += line + "; prices of " + Str(o, "date") + "\n";
    }
  }
  return out;
}

}  // namespace rota::cli
