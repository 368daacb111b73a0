#include "slurm/job_gpus.h"

#include <map>
#include <set>

#include "slurm/parsable.h"
#include "slurm/reservations.h"  // ExpandHostlist

namespace rota::slurm {

StatusOr<std::vector<NodeGpus>> GpusGiven(std::string_view detail, std::string_view nodelist,
                                          int gpus_per_node, int shard_cards_per_node) {
  StatusOr<std::vector<std::string>> nodes = ExpandHostlist(nodelist);
  if (!nodes.ok()) return nodes.status();
  if (nodes->empty()) return FailedPrecondition("the job is on no node yet");
  StatusOr<std::vector<NodeGres>> lines = ParseJobNodeGres(detail);
  if (!lines.ok()) return lines.status();
  const std::set<std::string> of_job(nodes->begin(), nodes->end());
  std::map<std::string, const NodeGres*> line_of;
  for (const NodeGres& line : *lines) {
    // At most the job's own nodes: a line the user made up ("Nodes=x[1-99999],y[1-99999]...")
    // is refused before it is expanded.
    StatusOr<std::vector<std::string>> named = ExpandHostlist(line.nodes, nodes->size());
    if (!named.ok()) return named.status();
    for (const std::string& node : *named) {
      if (of_job.count(node) == 0)
        return InvalidArgument("a GPU line for node " + node + ", not one of " + std::string(nodelist));
      if (!line_of.emplace(node, &line).second) return InvalidArgument("two GPU lines for node " + node);
    }
  }
  std::vector<NodeGpus> out;
  for (const std::string& node : *nodes) {
    NodeGpus n{node, {}, {}};
    if (auto it = line_of.find(node); it != line_of.end()) {
      n.gpus = it->second->gpu_indices;
      const std::set<int> shared(it->second->shard_indices.begin(), it->second->shard_indices.end());
      n.shard_cards.assign(shared.begin(), shared.end());
    }
    if (static_cast<int>(n.gpus.size()) != gpus_per_node) {
      return InvalidArgument("scontrol names " + std::to_string(n.gpus.size()) + " GPUs on node " + node +
                             " where the job has " + std::to_string(gpus_per_node));
    }
    if (static_cast<int>(n.shard_cards.size()) != shard_cards_per_node) {
      return InvalidArgument("scontrol names the shards of " + std::to_string(n.shard_cards.size()) +
                             " GPUs on node " + node + " where the job has those of " +
                             std::to_string(shard_cards_per_node));
    }
    out.push_back(std::move(n));
  }
  return out;
}

}  // namespace rota::slurm
