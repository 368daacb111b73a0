// Which GPUs Slurm gave a running job, node by node (issue 26; docs/design.md, "The Slurm
// engine": which GPUs Slurm gave, and whose cards jobs outside Rota hold): what `scontrol -d show
// job` prints of each node ("Nodes=n[1-2] CPU_IDs=0 Mem=1024 GRES=gpu:1(IDX:0)": nodes given
// alike share one line), checked against what the queue says of the job (its node list and what
// it asks per node), so that a line the job's owner made up (scontrol prints the job's name,
// command and paths, which may hold newlines) names nothing.
//
// Pure: text in, indices out. Tested by job_gpus_test.cc, on lines captured from Slurm 22.05.8.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace rota::slurm {

struct NodeGpus {
  std::string node;
  std::vector<int> gpus;         // the node's indices of the whole GPUs given
  std::vector<int> shard_cards;  // the indices of the GPUs whose shards were given, each once
  bool operator==(const NodeGpus&) const = default;
};

// For every node of `nodelist` (the queue's NodeList, a host list such as "n[1-2]"), in its
// order: the GPUs `detail` says the job has there. An error unless every node line names only
// nodes of the list, each node is on exactly one line, and each node has exactly
// `gpus_per_node` GPUs and the shards of `shard_cards_per_node` cards (a job without either on a
// node may have no line for it).
StatusOr<std::vector<NodeGpus>> GpusGiven(std::string_view detail, std::string_view nodelist,
                                          int gpus_per_node, int shard_cards_per_node = 0);

}  // namespace rota::slurm
