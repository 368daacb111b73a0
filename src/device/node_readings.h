// GPU readings of one cluster node, as its agent (`rotad --agent`) sends them to the head rotad
// over HTTP (docs/http.md, "POST /agent/readings"; issue 26, GPUs on every node). Pure: the
// wire form both ways, read with bounds (an agent is a program on another machine: its body is
// outside input), and the readings laid onto the head's cards of that node.
//
// What travels: per card, in the node's device order (which is Slurm's gres order when gres.conf
// lists /dev/nvidia0..N), its model, memory, load, temperature and power, and how many compute
// processes it has. Not the processes themselves: their pids are the node's, and the head's
// rules that act on a process (outside processes) would read the head's /proc for them.
//
// Tested by node_readings_test.cc.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
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
};

struct NodeReadings {
  std::string node;
  Time sampled = 0;  // by the agent's clock (shown, never trusted for staleness)
  std::vector<CardReading> cards;
};

inline constexpr size_t kMaxNodeCards = 64;

NodeReadings ReadingsOf(const std::string& node, const Snapshot& snap, Time sampled);
nlohmann::json ReadingsToJson(const NodeReadings& r);
// Refuses what is not a readings object, or has a node name that is empty or not a host name,
// more than kMaxNodeCards cards, an index out of 0..kMaxNodeCards-1 or twice, or numbers out of
// their ranges.
StatusOr<NodeReadings> ReadingsFromJson(const nlohmann::json& j);

// Lays `r` onto the cards of `cards` whose node is r.node, by the card's position among its
// node's cards: load, memory used, temperature, power (the rest of a card is the cluster's).
// A card the readings do not have keeps its unknowns.
void ApplyReadings(const NodeReadings& r, std::vector<GpuInfo>& cards);

}  // namespace rota::device
