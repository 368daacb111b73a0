// Slurm's nodes as the Slurm engine's GPU source reads them: each node of the partition with its
// state, why it is down or drained, and its GPUs (gres), from `sinfo -h -N [-p PARTITION] -O
// <NodesFormat()>`. Pure functions over text.
//
// What 22.05 prints: StateLong is "idle", "mixed", "allocated", "drained", "draining", "down",
// ..., with a suffix when the node does not respond ("idle*"), is powered off or powering ("~",
// "#", "%"), is to be rebooted ("@"), ...; Reason "none" when there is none; Gres "gpu:4" or
// "gpu:a100:4(S:0-1)"; GresUsed "gpu:3" (untyped: no indices in 22.05) or
// "gpu:a100:2(IDX:0-1)"; a node in two partitions is listed once for each.
//
// Tested by nodes_test.cc.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "slurm/parsable.h"

namespace rota::slurm {

struct Node {
  std::string name;
  std::string state;   // as printed, suffix included: "idle", "down*", "drained"
  std::string reason;  // "" when Slurm gives none
  std::vector<Gres> gres;
  int gpus_used = 0;  // whole GPUs that Slurm's jobs hold now (GresUsed): Rota's and any other
  // The node takes jobs: its base state is idle, mixed, allocated or completing (also planned or
  // reserved), without a suffix that says it does not respond, is powered down or is going to
  // be; not down, drained, draining, failed or failing.
  bool usable = false;
  // Its whole GPUs: the gres "gpu" items (several types on one node are listed in order) but
  // MIG slices (MigProfile).
  int Gpus() const;
  // Each GPU as its own gres type, in the node's order ("gpu:card0:1,gpu:card1:1,..."): then a
  // job can be sent to exactly the cards Rota chose (--gres=gpu:card2:1,gpu:card3:1), and a memory
  // share to one card's shards (--gres=shard:card2:3). Empty when any GPU item is untyped, counts
  // more than one or repeats a type (Slurm would choose among them). Slurm numbers a node's GPUs
  // (IDX, CUDA_VISIBLE_DEVICES) in this order, as seen on 22.05.8 even where gres.conf lists
  // them in another.
  std::vector<std::string> CardTypes() const;  // MIG slices apart
  // The shards (gres "shard") of that type on the node; 0 when none.
  int Shards(const std::string& type) const;
};

// The MIG profile a gpu gres type names: "1g.10gb" for "1g.10gb", "a100_1g.10gb" (NVML's
// autodetection writes the card's model first) or "1g.10gb+me"; "" for any other type. Such items
// are MIG slices of that profile, not whole GPUs.
std::string MigProfile(std::string_view type);
// Whether `g` counts whole GPUs ("gpu" of a type that is no MIG profile), or MIG slices.
bool IsWholeGpu(const Gres& g);
bool IsGpuSlice(const Gres& g);

inline constexpr char kNodesDelimiter = '\x1f';
std::string NodesFormat();
// Nodes in the order first listed, each once. A line that cannot be read fails it all.
StatusOr<std::vector<Node>> ParseNodes(std::string_view text);

// Whether Slurm's state (as printed) is one in which the node takes jobs (Node::usable).
bool UsableState(std::string_view state);

}  // namespace rota::slurm
