// Tested by store_trace_test.cc and tests/daemon/test_simulate_store.py.
#include "replay/store_trace.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "json/fields.h"

namespace rota::replay {

namespace {

using json_fields::Arr;
using json_fields::Int;
using json_fields::Obj;
// Names are data here (a replay's users, projects, job names), not terminal text: the command
// line makes them safe where it prints them.
std::string Str(const nlohmann::json& j, const char* key) { return json_fields::RawStr(j, key); }

// The memory a MIG profile names ("3g.40gb": 40 GiB), in MiB; 0 when it names none.
MiB ProfileMemory(const std::string& profile) {
  const size_t dot = profile.find('.');
  if (dot == std::string::npos) return 0;
  MiB gb = 0;
  size_t i = dot + 1;
  for (; i < profile.size() && std::isdigit(static_cast<unsigned char>(profile[i])); ++i)
    gb = gb * 10 + (profile[i] - '0');
  return i > dot + 1 ? gb * 1024 : 0;
}

}  // namespace

StatusOr<StoreTrace> StoreTraceFromJson(const nlohmann::json& gpus, const std::vector<nlohmann::json>& jobs,
                                        Time since) {
  StoreTrace out;
  const nlohmann::json& cards = Arr(gpus, "gpus");
  out.gpus = static_cast<int>(cards.size());
  if (out.gpus == 0) return FailedPrecondition("rotad reports no GPUs: there is no cluster to replay on");
  out.gpu_memory = std::max<MiB>(1, Int(cards.front(), "memory_total"));
  std::map<std::string, int> nodes;  // node name -> the replay's node number
  for (const nlohmann::json& c : cards) {
    Gpu g;
    g.index = static_cast<int>(out.cards.size());
    g.uuid = Str(c, "uuid");
    if (g.uuid.empty()) g.uuid = "GPU-replay-" + std::to_string(g.index);
    g.model = Str(c, "name");
    g.memory = std::max<MiB>(1, Int(c, "memory_total"));
    g.node = nodes.emplace(Str(c, "node"), static_cast<int>(nodes.size())).first->second;
    for (const nlohmann::json& m : Arr(c, "mig")) {
      g.mig.push_back({Str(m, "uuid"), Str(m, "profile"), std::max<MiB>(1, Int(m, "memory_total"))});
    }
    out.cards.push_back(std::move(g));
  }
  std::int64_t line = 0;
  for (const nlohmann::json& j : jobs) {
    const Time submit = Int(j, "submit_time"), start = Int(j, "start_time"), end = Int(j, "end_time");
    if (start <= 0 || end < start || submit <= 0) {
      ++out.trace.skipped;
      continue;
    }
    sim::TraceJob t;
    t.line = ++line;
    t.submit = submit;
    t.duration = std::max<Duration>(1, end - start);
    const nlohmann::json& request = Obj(j, "request");
    const std::string kind = Str(request, "kind");
    if (kind == "gpu_mem" || kind == "mig") {
      const MiB memory = kind == "mig" ? ProfileMemory(Str(request, "profile")) : Int(request, "memory");
      // What it held, for the waits as they were: its memory over the first card's.
      t.gpu_fraction =
          std::clamp(static_cast<double>(memory) / static_cast<double>(out.gpu_memory), 0.001, 0.999);
      if (kind == "mig") {
        t.mig_profile = Str(request, "profile");
      } else {
        t.memory = std::max<MiB>(1, memory);
      }
    } else {
      t.gpus = std::max<int>(1, static_cast<int>(Int(request, "gpus", 1)));
    }
    t.user = Str(j, "user");
    t.project = Str(j, "project");
    t.tier = Str(j, "tier");
    t.name = Str(j, "name");
    t.limit = Int(j, "time_limit");
    t.id = Int(j, "id");
    for (const char* field : {"after", "after_ok"}) {
      for (const nlohmann::json& dep : Arr(j, field)) {
        if (dep.is_number_integer()) t.after.push_back(dep.get<std::int64_t>());
      }
    }
    out.first_end = out.first_end == 0 ? end : std::min(out.first_end, end);
    const double held = t.gpus > 0 ? t.gpus : t.gpu_fraction;
    out.recorded.push_back({Int(j, "id"), t.user, submit, start, end, held});
    out.trace.jobs.push_back(std::move(t));
  }
  if (out.trace.jobs.empty()) return NotFound("no job that ran has ended since then: nothing to replay");
  std::stable_sort(out.trace.jobs.begin(), out.trace.jobs.end(),
                   [](const sim::TraceJob& a, const sim::TraceJob& b) { return a.submit < b.submit; });
  out.trace.absolute_times = true;
  if (since > 0 && out.first_end - since > kDay) {
    out.late_days = static_cast<int>((out.first_end - since) / kDay);
    const std::string days = std::to_string(out.late_days);
    out.trace.notes.push_back("nothing ended in the first " + days +
                              " days asked for (the store's history may begin later): the replay starts " +
                              days + " days after the start asked for");
  }
  if (out.trace.skipped > 0) {
    out.trace.notes.push_back(std::to_string(out.trace.skipped) + " jobs that never ran left out");
  }
  return out;
}

int MigSlices(const std::vector<Gpu>& cards) {
  int n = 0;
  for (const Gpu& g : cards) n += static_cast<int>(g.mig.size());
  return n;
}

std::vector<sim::SimBooking> StoreBookingsFromJson(const nlohmann::json& reply, Time until) {
  std::vector<sim::SimBooking> out;
  for (const nlohmann::json& b : Arr(reply, "bookings")) {
    const std::string state = Str(b, "state");
    if (state == "rejected" || state == "cancelled") continue;
    const nlohmann::json& request = Obj(b, "request");
    const std::string kind = Str(request, "kind");
    sim::SimBooking s;
    s.user = Str(b, "user");
    if (kind == "gpus") {
      s.gpus = std::max<int>(1, static_cast<int>(Int(request, "gpus", 1)));
    } else if (kind == "gpu_mem" && Int(request, "memory") > 0) {
      s.memory = Int(request, "memory");
    } else if (kind == "mig" && !Str(request, "profile").empty()) {
      s.mig_profile = Str(request, "profile");
    } else {
      continue;  // a request this replay cannot read
    }
    s.start = Int(b, "start");
    s.end = Int(b, "end");
    s.made = std::min<Time>(Int(b, "created"), s.start);
    s.show = state != "no_show";
    if (s.end <= s.start || s.start <= 0 || s.start >= until) continue;
    out.push_back(std::move(s));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const sim::SimBooking& a, const sim::SimBooking& b) { return a.made < b.made; });
  return out;
}

}  // namespace rota::replay
