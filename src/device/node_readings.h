// GPU readings of one cluster node, as its agent (`rotad --agent`) sends them to the head rotad
// over HTTP (docs/http.md, "POST /agent/readings"; issue 26, GPUs on every node). Pure: the
// wire form both ways, read with bounds (an agent is a program on another machine: its body is
// outside input), and the readings laid onto the head's cards of that node.
//
// What travels: per card, in the node's device order (which is Slurm's gres order when gres.conf
// lists /dev/nvidia0..N), its model, memory, load, temperature and power, how many compute
// processes it has, and who each is, as the agent read it in the node's /proc (NodeProcess: pid
// and start time, uid and user, the Slurm job it runs in). The head judges them (outside
// processes) and never looks their pids up in its own /proc.
//
// Tested by node_readings_test.cc.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "core/types.h"
#include "device/devices.h"

namespace rota::device {

struct CardReading {
  int index = 0;  // on its node: 0, 1, ...
  std::string name;
  MiB memory_total = 0;
  MiB memory_used = -1;
  int util_gpu = -1;
  int util_memory = -1;
  int temperature = -1;
  int power_mw = -1;
  int processes = -1;  // compute processes on it; -1 unknown
  std::string health;  // "" when healthy, else why not
  std::vector<NodeProcess> procs;  // the processes the agent could read (at most kMaxCardProcesses)
};

struct NodeReadings {
  std::string node;
  Time sampled = 0;  // by the agent's clock (shown, never trusted for staleness)
  std::vector<CardReading> cards;
};

inline constexpr size_t kMaxNodeCards = 64;
inline constexpr size_t kMaxCardProcesses = 64;

// Who a process on the node is (the agent reads its /proc); nullopt when it cannot be read (gone).
using ProcessReader = std::function<std::optional<NodeProcess>(const ProcessInfo&)>;
// `who` may be empty: then no processes are named, only counted.
NodeReadings ReadingsOf(const std::string& node, const Snapshot& snap, Time sampled, const ProcessReader& who = {});
nlohmann::json ReadingsToJson(const NodeReadings& r);
// Refuses what is not a readings object, or has a node name that is empty or not a host name,
// more than kMaxNodeCards cards, an index out of 0..kMaxNodeCards-1 or twice, numbers out of
// their ranges, more than kMaxCardProcesses processes on a card, or a process whose user is not
// a user name or whose Slurm job is not a number.
StatusOr<NodeReadings> ReadingsFromJson(const nlohmann::json& j);

// Lays `r` onto the cards of `cards` whose node is r.node, by the card's position among its
// node's cards: load, memory used, temperature, power, processes (the rest of a card is the
// cluster's). A card the readings do not have keeps its unknowns.
void ApplyReadings(const NodeReadings& r, std::vector<GpuInfo>& cards);

// The head's word to a node's agent (in its reply to the readings): stop an outside process, by
// [watch] outside_action = "stop" (docs/design.md, "Processes on the nodes").
struct StopOrder {
  int pid = 0;
  unsigned long long start_time = 0;
  int signal = 0;  // SIGTERM or SIGKILL
  bool operator==(const StopOrder&) const = default;
};
nlohmann::json StopOrdersToJson(const std::vector<StopOrder>& orders);
// What an agent carries out of the head's reply `reply` to the readings `sent`: only orders for
// a process it named in them (the same pid and start time) that is in no Slurm job and not
// root's (or of an unknown uid), with SIGTERM or SIGKILL; everything else in the reply is
// ignored. So that a head, or whoever answers in its place, can never make the agent signal
// anything but an outside process on its own cards.
std::vector<StopOrder> OrdersToCarryOut(const nlohmann::json& reply, const NodeReadings& sent);

// The Slurm job a process runs in, from its cgroup path (/proc/PID/cgroup's v2 line): the
// "job_<id>" component Slurm's cgroup plugins make ("/system.slice/slurmstepd.scope/job_42/
// step_0/user/task_0", "/slurm/uid_1000/job_42/..."); "" when there is none.
std::string SlurmJobOfCgroup(std::string_view cgroup);

}  // namespace rota::device
