#include "daemon/slurm_cards.h"

#include <cstdlib>

#include "daemon/child_command.h"
#include "daemon/slurm_engine.h"

namespace rota::daemon {

std::string SlurmCardUuid(const std::string& node, int index) {
  return "SLURM-" + node + "-" + std::to_string(index);
}

std::string SlicesUuid(const std::string& node, const std::string& type) { return "SLURM-" + node + "-" + type; }

namespace {

// Why a node's cards take no new work ("" when they do): not failing cards, since the node's jobs
// are Slurm's to end (NODE_FAIL), or run on (drained).
std::string OutOfService(const slurm::Node& n) {
  if (n.usable) return "";
  return "Slurm node " + n.name + " is " + n.state + (n.reason.empty() ? "" : ": " + n.reason);
}

// A node's MIG slices of one gres type, as one card in MIG mode with that many slices of its
// profile (Slurm does not say which card each slice is on, nor which slice a job gets: Rota
// counts them per type and node, and asks for one of the type).
device::GpuInfo SlicesOf(const slurm::Node& n, const slurm::Gres& g, const std::string& profile, int index,
                         const std::string& model, MiB memory) {
  device::GpuInfo c;
  c.uuid = SlicesUuid(n.name, g.type);
  c.index = index;
  c.node = n.name;
  c.name = model;
  c.memory_total = memory;
  c.mig_capable = c.mig_enabled = true;
  c.cluster_name = g.type;
  c.cluster_shares = 0;
  // "1g.10gb": 10 GiB a slice.
  const size_t dot = profile.find("g.");
  const MiB slice = static_cast<MiB>(std::atol(profile.c_str() + dot + 2)) * 1024;
  for (int k = 0; k < g.count; ++k) c.mig.push_back({c.uuid + "-" + std::to_string(k), profile, slice, -1, {}});
  c.out_of_service = OutOfService(n);
  return c;
}

}  // namespace

std::vector<device::GpuInfo> CardsOfNodes(const std::vector<slurm::Node>& nodes, const std::string& model,
                                          MiB memory) {
  std::vector<device::GpuInfo> cards;
  for (const slurm::Node& n : nodes) {
    // Cards of their own types are named by them, not a model: the configured one (or an agent's).
    const std::vector<std::string> own = n.CardTypes();
    int local = 0;
    for (const slurm::Gres& g : n.gres) {
      if (g.name != "gpu") continue;
      if (std::string profile = slurm::MigProfile(g.type); !profile.empty()) {
        if (g.count > 0) cards.push_back(SlicesOf(n, g, profile, static_cast<int>(cards.size()), model, memory));
        local += g.count;  // Slurm numbers the slices among the node's GPUs
        continue;
      }
      for (int k = 0; k < g.count; ++k, ++local) {
        device::GpuInfo c;
        c.uuid = SlurmCardUuid(n.name, local);
        c.index = static_cast<int>(cards.size());
        c.node = n.name;
        c.name = g.type.empty() || !own.empty() ? model : g.type;
        c.memory_total = memory;
        // Asked for by its type: exactly this card where each is its own; else one of the type's,
        // which keeps a whole-GPU job off the node's MIG slices (an untyped gpu:N may get them).
        c.cluster_name = g.type;
        c.cluster_shares = own.empty() ? 0 : n.Shards(g.type);
        c.out_of_service = OutOfService(n);
        cards.push_back(std::move(c));
      }
    }
  }
  return cards;
}

StatusOr<device::Snapshot> SlurmCards::Sample() {
  ChildCommand c;
  c.argv = {options_.sinfo, "-h", "-N", "-O", slurm::NodesFormat()};
  if (!options_.partition.empty()) c.argv.insert(c.argv.begin() + 1, "--partition=" + options_.partition);
  c.env = RotadSlurmEnv(options_.slurm_conf);
  c.deadline = options_.deadline;
  ChildResult r = ChildCommands::RunNow(c);
  if (!r.ok()) return Unavailable("sinfo: " + r.Describe());
  StatusOr<std::vector<slurm::Node>> nodes = slurm::ParseNodes(r.out);
  if (!nodes.ok()) return nodes.status();
  device::Snapshot snap;
  snap.driver_version = "slurm";
  snap.gpus = CardsOfNodes(*nodes, options_.model, options_.memory);
  for (const slurm::Node& n : *nodes) {
    if (n.Gpus() > 0) snap.node_gpus_used[n.name] = n.gpus_used;
  }
  return snap;
}

std::string SlurmCards::Describe() const {
  return "Slurm nodes" + (options_.partition.empty() ? std::string() : " of partition " + options_.partition);
}

}  // namespace rota::daemon
