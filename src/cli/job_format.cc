// Tested by job_format_test.cc.
//
// Design: every accessor tolerates a missing or null field (an older or newer daemon may leave
// one out), so a listing never fails because one job lacks a detail; it shows "-" instead.
#include "cli/job_format.h"

#include "client/conda.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "cli/json_fields.h"
#include "cli/text.h"
#include "core/types.h"

namespace rota::cli {

namespace {

using nlohmann::json;

using fields::Int;
using fields::Ints;
using fields::Num;
using fields::Obj;
using fields::Str;

// A command line as a shell would need it typed: words with spaces or quotes in single quotes.
std::string ShellJoin(const json& words) {
  std::string out;
  if (!words.is_array()) return out;
  for (const json& w : words) {
    if (!w.is_string()) continue;
    std::string s = w.get<std::string>();
    bool plain = !s.empty() && s.find_first_of(" \t\n'\"\\$`*?[]{}()<>|&;!#~") == std::string::npos;
    if (!out.empty()) out += ' ';
    if (plain) {
      out += s;
    } else {
      out += '\'';
      for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
      out += '\'';
    }
  }
  return out;
}

std::string SignalText(long long sig) {
  if (sig <= 0) return "-";
  const char* name = sig < 65 ? ::sigabbrev_np(static_cast<int>(sig)) : nullptr;
  return name ? std::string("SIG") + name : std::to_string(sig);
}

bool IsRunning(const json& job) { return Str(job, "state") == "running"; }

}  // namespace

std::string FormatElapsed(Duration d) {
  if (d < 0) d = 0;
  long long days = d / kDay, h = (d % kDay) / kHour, m = (d % kHour) / kMinute, s = d % kMinute;
  char buf[64];
  if (days > 0)
    std::snprintf(buf, sizeof buf, "%lld-%02lld:%02lld:%02lld", days, h, m, s);
  else if (h > 0)
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", h, m, s);
  else
    std::snprintf(buf, sizeof buf, "%lld:%02lld", m, s);
  return buf;
}

std::string FormatLocalTime(Time t) { return FormatTime(t, "%Y-%m-%d %H:%M", "-"); }

std::string FormatShortTime(Time t, Time now) {
  if (t <= 0) return "-";
  if (FormatTime(t, "%Y-%m-%d", "-") == FormatTime(now, "%Y-%m-%d", "-")) return FormatTime(t, "%H:%M", "-");
  return FormatLocalTime(t);
}

std::string StateCode(const json& job) {
  std::string state = Str(job, "state");
  if (state == "pending") return "PD";
  if (state == "running") return Int(job, "kill_at") > 0 ? "CG" : "R";
  std::string upper;
  for (char c : state) upper += static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  return upper.empty() ? "-" : upper;
}

std::string RequestCell(const json& request) {
  if (!request.is_object()) return "-";
  std::string kind = Str(request, "kind");
  if (kind == "gpus") return std::to_string(Int(request, "gpus", 1));
  if (kind == "gpu_mem") return FormatMemory(Int(request, "memory"));
  if (kind == "mig") return Str(request, "profile", "-");
  return "-";
}

std::string ReasonLabel(const std::string& reason) {
  if (reason == "peak_hours") return "PeakHours";
  if (reason.empty()) return "None";
  std::string out;
  bool up = true;
  for (char c : reason) {
    if (c == '_') {
      up = true;
      continue;
    }
    out += up && c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c;
    up = false;
  }
  return out;
}

std::string WhereCell(const json& job) {
  if (!IsRunning(job)) {
    if (Str(job, "state") != "pending") return "";
    const json& pending = Obj(job, "pending");
    // A protected job is next in line within its tier: said after its reason.
    return "(" + ReasonLabel(Str(pending, "reason")) + (pending.value("protected", false) ? ",Protected" : "") + ")";
  }
  std::string gpus = JoinInts(Ints(job, "gpus"), ",");
  if (gpus.empty()) return "-";
  // On a cluster, "@node": the indices are Rota's (as `rota gpus` lists them), not the node's own.
  const std::string node = Str(job, "node");
  const std::string at = node.empty() ? std::string() : "@" + node;
  std::string kind = Str(Obj(job, "request"), "kind");
  if (kind == "gpu_mem") {
    long long mem = Int(job, "gpu_mem");
    if (mem <= 0) mem = Int(Obj(job, "request"), "memory");
    return "gpu" + gpus + ":" + FormatMemory(mem) + at;
  }
  if (kind == "mig") {
    long long index = Int(job, "mig_index", -1);
    return "gpu" + gpus + "/mig" + (index >= 0 ? std::to_string(index) : std::string()) + at;
  }
  return "gpu" + gpus + at;
}

std::string StartCell(const json& job) {
  if (IsRunning(job)) return FormatLocalTime(Int(job, "start_time"));
  const json& pending = Obj(job, "pending");
  if (const long long p50 = Int(Obj(pending, "forecast"), "p50"); p50 > 0) return "~" + FormatLocalTime(p50);
  long long expected = Int(pending, "expected_start");
  if (expected <= 0) return "-";
  bool estimated = pending.value("estimated", false);
  return (estimated ? "~" : "") + FormatLocalTime(expected);
}

std::string P90Cell(const json& job) {
  const long long p90 = Int(Obj(Obj(job, "pending"), "forecast"), "p90");
  return p90 > 0 ? FormatLocalTime(p90) : "-";
}

std::string RuntimeBasisText(const json& job, const std::string& basis, long long samples) {
  const std::string jobs = samples == 1 ? "job" : std::to_string(samples) + " jobs";
  if (basis == "user and name") return "from the last " + jobs + " of " + Str(job, "user") + " named " + Str(job, "name");
  if (basis == "user") return "from the last " + jobs + " of " + Str(job, "user");
  if (basis == "lab") return "from the lab's last " + jobs;
  return "no history yet: its time limit";
}

std::string DeadlineText(const json& job, Time now) {
  const Time deadline = Int(job, "deadline");
  if (deadline <= 0) return "";
  const std::string when = FormatLocalTime(deadline);
  const std::string state = Str(job, "state");
  const Duration limit = Int(job, "time_limit");
  const json& forecast = Obj(Obj(job, "pending"), "forecast");
  if (state == "pending" && Int(forecast, "p50") > 0) {
    const Time likely = Int(forecast, "p50") + Int(forecast, "runtime");
    const Time late = Int(forecast, "p90") > 0 ? Int(forecast, "p90") + Int(forecast, "runtime") : 0;
    if (late == 0 || late > deadline) {
      return when + " (at risk: likely to end by " + FormatLocalTime(likely) +
             (late > 0 ? ", but by " + FormatLocalTime(late) + " if it starts as late as its p90)" : ")");
    }
    return when + " (on track: likely to end by " + FormatLocalTime(likely) + ", by " + FormatLocalTime(late) +
           " if it starts as late as its p90)";
  }
  if (state == "running" && Int(Obj(job, "predicted_end"), "time") > 0) {
    const Time likely = Int(Obj(job, "predicted_end"), "time");
    const Time end = Int(job, "start_time") + limit;
    if (likely > deadline) return when + " (at risk: likely to end by " + FormatLocalTime(likely) + ")";
    if (end > deadline)
      return when + " (on track: likely to end by " + FormatLocalTime(likely) + "; its time limit would allow " +
             FormatLocalTime(end) + ")";
  }
  if (state == "pending") {
    const Time start = Int(Obj(job, "pending"), "expected_start");
    if (start <= 0) return when + (deadline <= now ? " (passed)" : " (at risk: no start can be foreseen yet)");
    if (start + limit > deadline)
      return when + " (at risk: if it starts when expected it may run until " + FormatLocalTime(start + limit) +
             ", its time limit)";
    return when + " (on track: expected to end by " + FormatLocalTime(start + limit) + " at the latest)";
  }
  if (state == "running") {
    const Time end = Int(job, "start_time") + limit;
    if (end > deadline) return when + " (at risk: it may run until " + FormatLocalTime(end) + ", its time limit)";
    return when + " (on track: it ends by " + FormatLocalTime(end) + " at the latest)";
  }
  const Time ended = Int(job, "end_time");
  return when + (ended > deadline ? " (missed: ended " + FormatLocalTime(ended) + ")" : " (met)");
}

std::string RenderQueue(const std::vector<json>& jobs, Time now, bool with_start) {
  std::vector<std::string> header = {"JOBID", "USER", "TIER", "NAME", "ST", "TIME", "GPUS", "WHERE(REASON)"};
  if (with_start) {
    header.push_back("START");
    header.push_back("P90");
  }
  std::vector<std::vector<std::string>> rows;
  for (const json& job : jobs) {
    Time since = IsRunning(job) ? Int(job, "start_time") : Int(job, "submit_time");
    std::vector<std::string> row = {
        std::to_string(Int(job, "id")),
        Str(job, "user", "-"),
        Str(job, "tier", "-"),
        CutToWidth(Str(job, "name", "-"), 20),
        StateCode(job),
        since > 0 ? FormatElapsed(now - since) : "-",
        RequestCell(job.contains("request") ? job["request"] : json()),
        WhereCell(job),
    };
    if (with_start) {
      row.push_back(StartCell(job));
      row.push_back(IsRunning(job) ? "-" : P90Cell(job));
    }
    rows.push_back(std::move(row));
  }
  rows.insert(rows.begin(), header);
  return RenderColumns(rows, {true, false, false, false, false, true, true, false, false, false});
}

std::string RenderHistory(const std::vector<json>& jobs) {
  std::vector<std::vector<std::string>> rows = {
      {"JOBID", "USER", "NAME", "STATE", "WAIT", "RUN", "GPU-HOURS", "REASON"}};
  for (const json& job : jobs) {
    Time submit = Int(job, "submit_time"), start = Int(job, "start_time"), end = Int(job, "end_time");
    std::string wait = "-", run = "-", gpu_hours = "-";
    if (submit > 0 && (start > 0 || end > 0)) wait = FormatElapsed((start > 0 ? start : end) - submit);
    if (start > 0 && end >= start) {
      run = FormatElapsed(end - start);
      const json& request = Obj(job, "request");
      if (job.contains("gpu_hours") && job["gpu_hours"].is_number()) {
        gpu_hours = Fixed(job["gpu_hours"].get<double>(), 2);
      } else if (Str(request, "kind") == "gpus") {
        gpu_hours = Fixed(
            static_cast<double>(Int(request, "gpus", 1)) * static_cast<double>(end - start) / 3600.0, 2);
      }
    }
    rows.push_back({std::to_string(Int(job, "id")), Str(job, "user", "-"),
                    CutToWidth(Str(job, "name", "-"), 20), StateCode(job), wait, run, gpu_hours,
                    Str(job, "end_reason")});
  }
  return RenderColumns(rows, {true, false, false, false, true, true, true, false});
}

std::string RenderShow(const json& job, const json& events, Time now) {
  std::vector<std::pair<std::string, std::string>> lines;
  auto add = [&lines](std::string key, std::string value) {
    lines.emplace_back(std::move(key), std::move(value));
  };
  std::string state = Str(job, "state", "-");
  add("JobId", std::to_string(Int(job, "id")));
  add("Name", Str(job, "name", "-"));
  add("User",
      Str(job, "user", "-") + (job.contains("uid") ? " (uid " + std::to_string(Int(job, "uid")) + ")" : ""));
  add("Project", Str(job, "project").empty() ? "-" : Str(job, "project"));
  add("Tier", Str(job, "tier", "-"));
  add("State", state + (IsRunning(job) && Int(job, "kill_at") > 0
                            ? " (stopping; killed at " + FormatLocalTime(Int(job, "kill_at")) + ")"
                            : ""));
  const json& request = Obj(job, "request");
  std::string kind = Str(request, "kind");
  std::string req = kind == "gpus"      ? CountOf(Int(request, "gpus", 1), "GPU", "GPUs")
                    : kind == "gpu_mem" ? RequestCell(request) + " of GPU memory"
                    : kind == "mig"     ? "MIG slice " + RequestCell(request)
                                        : "-";
  add("Request", req);
  if (Int(job, "mem_per_gpu") > 0) add("MemPerGpu", FormatMemory(Int(job, "mem_per_gpu")));
  add("TimeLimit", Int(job, "time_limit") > 0 ? FormatElapsed(Int(job, "time_limit")) : "-");
  if (std::string deadline = DeadlineText(job, now); !deadline.empty()) add("Deadline", deadline);
  add("Interactive", job.value("interactive", false) ? "yes" : "no");
  add("Signal",
      SignalText(Int(job, "signal")) +
          (Int(job, "signal") > 0 ? " " + std::to_string(Int(job, "grace")) + "s before the kill" : ""));
  add("Requeue", job.value("requeue", false) ? "yes" : "no");
  add("Preemptible", job.value("preemptible", false) ? "yes" : "no");
  std::string after = JoinInts(Ints(job, "after"), ",");
  add("After", after.empty() ? "-" : after);
  if (std::string ok = JoinInts(Ints(job, "after_ok"), ","); !ok.empty())
    add("AfterOk", ok + " (cancelled if one fails)");
  add("Submitted", FormatLocalTime(Int(job, "submit_time")));
  add("Started", FormatLocalTime(Int(job, "start_time")));
  add("Ended", FormatLocalTime(Int(job, "end_time")));
  if (IsRunning(job) && Int(job, "start_time") > 0)
    add("Elapsed", FormatElapsed(now - Int(job, "start_time")));
  if (const json& end = Obj(job, "predicted_end"); IsRunning(job) && Int(end, "time") > 0) {
    add("LikelyEnd", FormatLocalTime(Int(end, "time")) + " (" +
                         RuntimeBasisText(job, Str(end, "basis"), Int(end, "samples")) + ")");
  }
  if (!Str(job, "end_reason").empty()) add("EndReason", Str(job, "end_reason"));
  if (Str(job, "end_reason").find("by its warning signal") != std::string::npos) {
    // The job asked for a warning and did not catch it: say how to use it for a checkpoint.
    const std::string sig = SignalText(Int(job, "signal"));
    const std::string bare = sig.rfind("SIG", 0) == 0 ? sig.substr(3) : sig;
    add("Hint", "the program died of " + sig + ", the warning it asked for " + std::to_string(Int(job, "grace")) +
                    "s before its limit. To save a checkpoint instead, catch it: in Python "
                    "signal.signal(signal." + sig + ", save_and_exit), in a shell script trap 'save' " + bare +
                    ". Without --signal a job gets SIGTERM at its limit.");
  }
  auto exit_code = job.find("exit_code");
  add("ExitCode",
      exit_code != job.end() && exit_code->is_number() ? std::to_string(exit_code->get<long long>()) : "-");
  std::string gpus = JoinInts(Ints(job, "gpus"), ",");
  add("Gpus", gpus.empty() ? "-" : IsRunning(job) ? WhereCell(job) : gpus);
  if (auto uuids = job.find("gpu_uuids"); uuids != job.end() && uuids->is_array() && !uuids->empty()) {
    std::string list;
    for (const json& u : *uuids) {
      if (!u.is_string()) continue;
      if (!list.empty()) list += ",";
      list += u.get<std::string>();
    }
    add("GpuUuids", list);
  }
  if (!Str(job, "mig_uuid").empty()) add("MigUuid", Str(job, "mig_uuid"));
  if (job.contains("command")) {
    // A --conda job (client/conda.h): the user's own command, and the environment it runs in.
    std::vector<std::string> words, command;
    std::string prefix;
    for (const json& w : fields::Arr(job, "command")) words.push_back(w.is_string() ? w.get<std::string>() : "");
    if (client::CondaCommand(words, &prefix, &command)) {
      add("Command", ShellJoin(json(command)));
      add("Conda", TerminalSafe(prefix));
    } else {
      add("Command", ShellJoin(job["command"]));
    }
  }
  if (!Str(job, "image").empty()) add("Image", TerminalSafe(Str(job, "image")));
  if (job.contains("cwd")) add("WorkDir", Str(job, "cwd", "-"));
  if (!Str(job, "output").empty()) add("Output", Str(job, "output"));
  if (!Str(job, "engine_job").empty()) add("RunsAs", Str(job, "engine_job"));
  if (state == "pending") {
    const json& pending = Obj(job, "pending");
    add("Reason", pending.empty() ? "None (not yet scheduled)" : ReasonLabel(Str(pending, "reason")));
    const json& forecast = Obj(pending, "forecast");
    if (Int(forecast, "p50") > 0) {
      // The forecast first (what is likely), then the plan on time limits (what is promised).
      std::string range;
      if (Int(forecast, "p90") > 0 && Int(forecast, "calibrated_on") > 0) {
        range = "; 90% by " + FormatLocalTime(Int(forecast, "p90")) + ", from " +
                std::to_string(Int(forecast, "calibrated_on")) + " past forecasts";
      } else if (Int(forecast, "p90") > 0) {
        range = "; by " + FormatLocalTime(Int(forecast, "p90")) + " if the jobs ahead run to their limits";
      }
      std::string basis;
      if (Int(forecast, "arrivals") > 0) {
        basis = ", foreseeing the last week's " + std::to_string(Int(forecast, "arrivals")) +
                " jobs coming again";
      }
      add("ExpectedStart", FormatLocalTime(Int(forecast, "p50")) + " (likely" + basis + range + ")");
      const long long planned = Int(pending, "expected_start");
      if (planned > 0) {
        add("PlannedStart", FormatLocalTime(planned) + (pending.value("estimated", false)
                                                            ? " (estimated on the time limits of the jobs ahead)"
                                                            : " (reserved: if every job ahead runs to its limit)"));
      }
      add("PredictedRun", FormatElapsed(Int(forecast, "runtime")) + " of its " +
                              FormatElapsed(Int(job, "time_limit")) + " limit (" +
                              RuntimeBasisText(job, Str(forecast, "runtime_basis"), Int(forecast, "runtime_samples")) +
                              ")");
    } else {
      add("ExpectedStart", StartCell(job));
    }
    if (!pending.empty()) {
      add("Priority", Fixed(Num(pending, "priority"), 1));
      const json& f = Obj(pending, "factors");
      std::string factors;
      for (const char* k : {"tier", "fairshare", "age", "size", "penalty", "time_of_day"}) {
        if (!factors.empty()) factors += " ";
        factors += std::string(k) + "=" + Fixed(Num(f, k), 2);
      }
      add("Factors", factors);
      if (Str(pending, "size_on") == "prediction") {
        add("Size", "on the run the owner's history predicts, not the time limit (the lab sizes by prediction; "
                    "reservations stay on limits)");
      }
      if (Int(pending, "promise") > 0) {
        add("Promised", FormatLocalTime(Int(pending, "promise")) +
                            " (when first come first served would have started it: past that it is protected)");
      }
      if (pending.value("protected", false)) {
        add("Protected",
            "yes: it waited past the lab's bound (or would have, by the plan, before it could "
            "start), so it is first in line within its tier and nothing submitted later may delay it");
      }
    }
  }
  std::string out;
  for (const auto& [key, value] : lines) out += key + ": " + value + "\n";
  out += "History:\n";
  if (events.is_array()) {
    for (const json& e : events) {
      std::string from = e.contains("from") && e["from"].is_string() ? e["from"].get<std::string>() : "-";
      out += "  " + FormatTime(Int(e, "time"), "%Y-%m-%d %H:%M:%S", "-") + "  " + from + " \u2192 " +
             Str(e, "to", "-");
      if (!Str(e, "reason").empty()) out += "  " + Str(e, "reason");
      if (!Str(e, "actor").empty()) out += " (by " + Str(e, "actor") + ")";
      out += "\n";
    }
  }
  return out;
}

}  // namespace rota::cli
