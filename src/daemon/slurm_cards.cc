#include "daemon/slurm_cards.h"

#include <cstdlib>

#include "daemon/child_command.h"
#include "daemon/slurm_engine.h"

namespace rota::daemon {

std::string SlurmCardUuid(const std::string& node, int index) {
  return "SLURM-" + node + "-" + std::to_string(index);
}

std::vector<device::GpuInfo> CardsOfNodes(const std::vector<slurm::Node>& nodes, const std::string& model,
                                          MiB memory) {
  std::vector<device::GpuInfo> cards;
  for (const slurm::Node& n : nodes) {
    // Cards of their own types are named by them, not a model: the configured one (or an agent's).
    const std::vector<std::string> own = n.CardTypes();
    int local = 0;
    for (const slurm::Gres& g : n.gres) {
      if (g.name != "gpu") continue;
      for (int k = 0; k < g.count; ++k, ++local) {
        device::GpuInfo c;
        c.uuid = SlurmCardUuid(n.name, local);
        c.index = static_cast<int>(cards.size());
        c.node = n.name;
        c.name = g.type.empty() || !own.empty() ? model : g.type;
        c.memory_total = memory;
        c.cluster_name = own.empty() ? "" : g.type;
        c.cluster_shares = own.empty() ? 0 : n.Shards(g.type);
        // Not a failing card: the node's jobs are Slurm's to end (NODE_FAIL), or run on (drained).
        if (!n.usable)
          c.out_of_service =
              "Slurm node " + n.name + " is " + n.state + (n.reason.empty() ? "" : ": " + n.reason);
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
