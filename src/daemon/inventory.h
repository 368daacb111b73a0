// The GPU inventory: the server's cards as the scheduler counts them (positions in a vector,
// which allocations index), built from a sample of the GPU source at start and at each reload,
// with each card's device node (what a job's cgroup is refused of the cards it was not given).
// It answers where an allocation is in durable terms (card UUIDs, a MIG slice's UUID), what a
// job on it sees (CUDA_VISIBLE_DEVICES by UUID, ROTA_*), and maps stored placements to the
// inventory of the day (a card that disappeared is left out). Pure: no I/O. Tested by
// inventory_test.cc, and through a whole daemon by lifecycle_test.cc and tests/daemon/test_jobs.py.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/cluster.h"
#include "core/status.h"
#include "device/devices.h"
#include "store/job_record.h"

namespace rota::daemon {

class Inventory {
 public:
  // The cards of `snap`, in its order (NVLink peers found by PCI bus id); none for no sample.
  void Load(const device::Snapshot* snap);

  // The cards (only .gpus is filled: what AllocationGpus and CapacityPlan need).
  const ClusterState& state() const { return state_; }
  std::vector<Gpu>& gpus() { return state_.gpus; }
  const std::vector<Gpu>& gpus() const { return state_.gpus; }

  // Position of the card named `name`: its index or UUID (a MIG slice's UUID names its card).
  StatusOr<size_t> Find(const std::string& name) const;
  // The machine of `alloc`'s cards ("" for this one): where a cluster engine sends the job.
  const std::string& NodeOf(const Allocation& alloc) const;
  // The named machines all of whose cards `alloc` holds whole (none for a share or a slice): what
  // a booking on `alloc` can reserve in a cluster's own scheduler.
  std::vector<std::string> WholeNodesOf(const Allocation& alloc) const;
  // "0,1": the device indices of `alloc`'s cards.
  std::string IndexList(const Allocation& alloc) const;
  // `alloc` by card UUID (and its slice's UUID), as the store keeps it.
  store::Placement PlacementOf(const Allocation& alloc) const;
  // Maps `rec`'s stored placement to positions in this inventory.
  void Remap(store::JobRecord& rec) const;
  // What a job on its placement is told: CUDA_VISIBLE_DEVICES (UUIDs, or its slice's), the PCI
  // order, ROTA_JOB_ID, ROTA_GPUS (indices), ROTA_GPU_MEM (a share), ROTA_MIG_PROFILE (a slice).
  std::map<std::string, std::string> Env(const store::JobRecord& rec) const;
  // The device nodes (major, minor) of the cards `alloc` was not given (cards whose node is
  // unknown, as simulated ones, are left out).
  std::vector<std::pair<unsigned, unsigned>> OtherCardsDevices(const Allocation& alloc) const;
  // The minors of `alloc`'s own cards' device nodes, where known.
  std::vector<int> OwnMinors(const Allocation& alloc) const;

  // A cluster's cards (device::GpuInfo::cluster_name and cluster_shares). ClusterNamesOf: how its
  // scheduler is asked for `alloc`'s cards (exactly them, or ones of their types; a slice's:
  // one of its type), one name each; none when any of them has no name (the scheduler then
  // chooses). ClusterSharesOf: the shares of its card that a memory
  // share `alloc` is given, its memory's part of the card rounded up (0 when it is no share or
  // the card has none).
  std::vector<std::string> ClusterNamesOf(const Allocation& alloc) const;
  int ClusterSharesOf(const Allocation& alloc) const;
  // What `count` shards of the card of gres type `type` on cluster node `node` are in GPUs (a
  // job outside Rota that holds them is charged so much): count over the card's shards, at most
  // the card. Untyped (`type` ""): of the node's first card with shards. 0 where no such card
  // with shards is known.
  double ShardGpus(const std::string& node, const std::string& type, int count) const;
  // What `count` MIG slices of gres type `type` on cluster node `node` are in GPUs: each what a
  // Rota job on one of them is charged (AllocationGpus). 0 where the node has no slices of it.
  double SliceGpus(const std::string& node, const std::string& type, int count) const;
  // Why no memory share can run on these cards ("" when they can): a cluster's card that its
  // scheduler cannot share (Slurm's without shards of their own type). Shares are refused at
  // submission then: the core would place them on any card.
  std::string WhyNoShares() const;
  // The memory a share of `memory` is given: whole shares of a cluster's card (of the cards with
  // the largest shares), so that what the core counts on a card is what the cluster gives;
  // `memory` itself on this machine's cards.
  MiB ShareGiven(MiB memory) const;

 private:
  ClusterState state_;
  std::vector<int> minors_;  // by position: /dev/nvidia<minor>, -1 unknown
  std::vector<std::string> cluster_names_;  // by position, as device::GpuInfo has them
  std::vector<int> cluster_shares_;
  std::vector<std::string> node_names_;  // Gpu::node -> the machine's name ("" this one)
};

// The host memory a job on `alloc` may use, in bytes: its memory per GPU (else
// `default_per_gpu`) times its cards (at least one).
std::int64_t HostMemoryLimit(const store::JobRecord& rec, const Allocation& alloc, MiB default_per_gpu);

}  // namespace rota::daemon
