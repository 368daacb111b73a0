#include "device/node_readings.h"

#include <signal.h>

#include <algorithm>
#include <map>
#include <set>

namespace rota::device {

using nlohmann::json;

namespace {

// A host name as Slurm and DNS allow it: letters, digits, '-', '.', '_', at most 64.
bool HostName(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                    c == '.' || c == '_';
    if (!ok) return false;
  }
  return true;
}

// `key` of `o` as an integer in [lo, hi], or `absent` when missing or null.
StatusOr<long long> Int(const json& o, const char* key, long long lo, long long hi, long long absent) {
  auto it = o.find(key);
  if (it == o.end() || it->is_null()) return absent;
  if (!it->is_number_integer()) return InvalidArgument(std::string("\"") + key + "\" must be an integer");
  const long long v = it->get<long long>();
  if (v < lo || v > hi) {
    return InvalidArgument(std::string("\"") + key + "\" must be in " + std::to_string(lo) + ".." +
                           std::to_string(hi));
  }
  return v;
}

StatusOr<std::string> Text(const json& o, const char* key, size_t most) {
  auto it = o.find(key);
  if (it == o.end() || it->is_null()) return std::string();
  if (!it->is_string()) return InvalidArgument(std::string("\"") + key + "\" must be a string");
  std::string s = it->get<std::string>();
  if (s.size() > most) return InvalidArgument(std::string("\"") + key + "\" is too long");
  return s;
}

// A user name as the node's passwd may have it: letters, digits, '_', '-', '.', a final '$'.
bool UserName(const std::string& s) {
  if (s.size() > 64) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                    c == '-' || c == '.' || (c == '$' && i + 1 == s.size());
    if (!ok) return false;
  }
  return true;
}

bool Digits(std::string_view s, size_t most) {
  if (s.empty() || s.size() > most) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

constexpr long long kMiBMost = 1LL << 30;  // a petabyte: no card is near it

StatusOr<NodeProcess> ProcessFromJson(const json& p) {
  if (!p.is_object()) return InvalidArgument("each process must be an object");
  NodeProcess x;
  StatusOr<long long> pid = Int(p, "pid", 1, 1LL << 22, 0), start = Int(p, "start_time", 0, 1LL << 62, 0),
                      uid = Int(p, "uid", -1, 0xFFFFFFFFLL, -1), mem = Int(p, "used_memory", -1, kMiBMost, -1);
  for (const StatusOr<long long>* v : {&pid, &start, &uid, &mem}) {
    if (!v->ok()) return v->status();
  }
  if (*pid == 0) return InvalidArgument("each process needs its \"pid\"");
  StatusOr<std::string> user = Text(p, "user", 64), job = Text(p, "slurm_job", 20);
  if (!user.ok()) return user.status();
  if (!job.ok()) return job.status();
  if (!UserName(*user)) return InvalidArgument("\"user\" must be a user name");
  if (!job->empty() && !Digits(*job, 20)) return InvalidArgument("\"slurm_job\" must be a Slurm job id");
  x.pid = static_cast<int>(*pid);
  x.start_time = static_cast<unsigned long long>(*start);
  x.uid = *uid;
  x.used_memory = *mem;
  x.user = *user;
  x.slurm_job = *job;
  return x;
}

}  // namespace

json StopOrdersToJson(const std::vector<StopOrder>& orders) {
  json out = json::array();
  for (const StopOrder& o : orders) {
    out.push_back({{"pid", o.pid}, {"start_time", o.start_time}, {"signal", o.signal}});
  }
  return out;
}

std::vector<StopOrder> OrdersToCarryOut(const json& reply, const NodeReadings& sent) {
  std::vector<StopOrder> out;
  if (!reply.is_object()) return out;
  auto list = reply.find("stop");
  if (list == reply.end() || !list->is_array()) return out;
  for (const json& o : *list) {
    if (!o.is_object() || out.size() >= kMaxCardProcesses * kMaxNodeCards) break;
    StatusOr<long long> pid = Int(o, "pid", 1, 1LL << 22, 0), start = Int(o, "start_time", 0, 1LL << 62, -1),
                        sig = Int(o, "signal", 1, 64, 0);
    if (!pid.ok() || !start.ok() || !sig.ok() || *pid <= 0 || *start < 0 || (*sig != SIGTERM && *sig != SIGKILL)) {
      continue;
    }
    StopOrder order{static_cast<int>(*pid), static_cast<unsigned long long>(*start), static_cast<int>(*sig)};
    bool named = false;
    for (const CardReading& c : sent.cards) {
      for (const NodeProcess& p : c.procs) {
        named = named || (p.pid == order.pid && p.start_time == order.start_time && p.uid > 0 && p.slurm_job.empty());
      }
    }
    if (named && std::find(out.begin(), out.end(), order) == out.end()) out.push_back(order);
  }
  return out;
}

std::string SlurmJobOfCgroup(std::string_view cgroup) {
  size_t at = 0;
  while (at < cgroup.size()) {
    size_t end = cgroup.find('/', at);
    if (end == std::string_view::npos) end = cgroup.size();
    const std::string_view part = cgroup.substr(at, end - at);
    if (part.size() > 4 && part.substr(0, 4) == "job_" && Digits(part.substr(4), 20)) return std::string(part.substr(4));
    at = end + 1;
  }
  return "";
}

NodeReadings ReadingsOf(const std::string& node, const Snapshot& snap, Time sampled, const ProcessReader& who) {
  NodeReadings r;
  r.node = node;
  r.sampled = sampled;
  int i = 0;
  for (const GpuInfo& g : snap.gpus) {
    CardReading c;
    c.index = i++;
    c.name = g.name;
    c.memory_total = g.memory_total;
    c.memory_used = g.memory_used;
    c.util_gpu = g.util_gpu;
    c.util_memory = g.util_memory;
    c.temperature = g.temperature;
    c.power_mw = g.power_mw;
    c.processes = static_cast<int>(g.processes.size());
    if (who) {
      for (const ProcessInfo& p : g.processes) {
        if (c.procs.size() >= kMaxCardProcesses) break;
        std::optional<NodeProcess> np = who(p);
        if (!np || np->pid <= 0 || np->pid > (1 << 22)) continue;
        // What the head would refuse is left out, not sent: one odd name must not cost the node
        // its readings.
        if (!UserName(np->user)) np->user.clear();
        if (!np->slurm_job.empty() && !Digits(np->slurm_job, 20)) np->slurm_job.clear();
        if (np->uid < -1 || np->uid > 0xFFFFFFFFLL) np->uid = -1;
        if (np->used_memory < -1 || np->used_memory > kMiBMost) np->used_memory = -1;
        c.procs.push_back(std::move(*np));
      }
    }
    if (!g.health.ok()) c.health = g.health.message();
    r.cards.push_back(std::move(c));
  }
  return r;
}

json ReadingsToJson(const NodeReadings& r) {
  json cards = json::array();
  for (const CardReading& c : r.cards) {
    json procs = json::array();
    for (const NodeProcess& p : c.procs) {
      procs.push_back({{"pid", p.pid},
                       {"start_time", p.start_time},
                       {"uid", p.uid},
                       {"user", p.user},
                       {"slurm_job", p.slurm_job},
                       {"used_memory", p.used_memory}});
    }
    cards.push_back({{"index", c.index},
                     {"name", c.name},
                     {"memory_total", c.memory_total},
                     {"memory_used", c.memory_used},
                     {"util_gpu", c.util_gpu},
                     {"util_memory", c.util_memory},
                     {"temperature", c.temperature},
                     {"power_mw", c.power_mw},
                     {"processes", c.processes},
                     {"procs", std::move(procs)},
                     {"health", c.health}});
  }
  return {{"v", 1}, {"node", r.node}, {"sampled", r.sampled}, {"cards", cards}};
}

StatusOr<NodeReadings> ReadingsFromJson(const json& j) {
  if (!j.is_object()) return InvalidArgument("the readings must be a JSON object");
  NodeReadings r;
  StatusOr<std::string> node = Text(j, "node", 64);
  if (!node.ok()) return node.status();
  if (!HostName(*node)) return InvalidArgument("\"node\" must be the node's host name");
  r.node = *node;
  StatusOr<long long> sampled = Int(j, "sampled", 0, 1LL << 40, 0);
  if (!sampled.ok()) return sampled.status();
  r.sampled = *sampled;
  auto cards = j.find("cards");
  if (cards == j.end() || !cards->is_array()) return InvalidArgument("\"cards\" must be an array");
  if (cards->size() > kMaxNodeCards)
    return InvalidArgument("at most " + std::to_string(kMaxNodeCards) + " cards a node");
  std::set<int> seen;
  for (const json& c : *cards) {
    if (!c.is_object()) return InvalidArgument("each card must be an object");
    CardReading x;
    StatusOr<long long> index = Int(c, "index", 0, kMaxNodeCards - 1, -1);
    if (!index.ok()) return index.status();
    if (*index < 0 || !seen.insert(static_cast<int>(*index)).second)
      return InvalidArgument("each card needs an \"index\" of its own");
    x.index = static_cast<int>(*index);
    StatusOr<std::string> name = Text(c, "name", 128), health = Text(c, "health", 512);
    if (!name.ok()) return name.status();
    if (!health.ok()) return health.status();
    x.name = *name;
    x.health = *health;
    struct Field {
      const char* key;
      long long lo, hi;
      long long* into;
    };
    long long total = 0, used = -1, util = -1, util_mem = -1, temp = -1, power = -1, procs = -1;
    for (const Field& f :
         {Field{"memory_total", 0, kMiBMost, &total}, Field{"memory_used", -1, kMiBMost, &used},
          Field{"util_gpu", -1, 100, &util}, Field{"util_memory", -1, 100, &util_mem},
          Field{"temperature", -1, 200, &temp}, Field{"power_mw", -1, 10'000'000, &power},
          Field{"processes", -1, 100'000, &procs}}) {
      StatusOr<long long> v = Int(c, f.key, f.lo, f.hi, *f.into);
      if (!v.ok()) return v.status();
      *f.into = *v;
    }
    x.memory_total = total;
    x.memory_used = used;
    x.util_gpu = static_cast<int>(util);
    x.util_memory = static_cast<int>(util_mem);
    x.temperature = static_cast<int>(temp);
    x.power_mw = static_cast<int>(power);
    x.processes = static_cast<int>(procs);
    if (auto list = c.find("procs"); list != c.end() && !list->is_null()) {
      if (!list->is_array()) return InvalidArgument("\"procs\" must be an array");
      if (list->size() > kMaxCardProcesses) {
        return InvalidArgument("at most " + std::to_string(kMaxCardProcesses) + " processes a card");
      }
      for (const json& p : *list) {
        StatusOr<NodeProcess> np = ProcessFromJson(p);
        if (!np.ok()) return np.status();
        x.procs.push_back(std::move(*np));
      }
    }
    r.cards.push_back(std::move(x));
  }
  return r;
}

void ApplyReadings(const NodeReadings& r, std::vector<GpuInfo>& cards) {
  std::map<int, const CardReading*> by_index;
  for (const CardReading& c : r.cards) by_index[c.index] = &c;
  int position = 0;
  for (GpuInfo& g : cards) {
    if (g.node != r.node) continue;
    auto it = by_index.find(position++);
    if (it == by_index.end()) continue;
    const CardReading& c = *it->second;
    g.memory_used = c.memory_used;
    if (c.memory_used >= 0 && c.memory_total > 0) {
      if (g.memory_total <= 0) g.memory_total = c.memory_total;
      g.memory_free = std::max<MiB>(0, c.memory_total - c.memory_used);
    }
    g.util_gpu = c.util_gpu;
    g.util_memory = c.util_memory;
    g.temperature = c.temperature;
    g.power_mw = c.power_mw;
    g.node_processes = c.procs;
  }
}

}  // namespace rota::device
