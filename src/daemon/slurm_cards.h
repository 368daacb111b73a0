// The GPUs of a Slurm partition as a GPU source ([gpus] source = "slurm", with the Slurm engine):
// every node's gres GPUs, each a card of the inventory on its node, read with `sinfo -N` at each
// sample (on the sampler's thread, with the engine's deadline: never on the daemon's loop). A node
// that does not take jobs (down, drained, not responding) reads as cards out of service: no new
// work goes there, but they are not failing cards, whose jobs rotad would stop: Slurm ends what
// runs on a node that fails (NODE_FAIL), and a drained node's jobs run on. A failed sinfo is a
// failed sample, as a driver that does not answer.
//
// Slurm tells how many GPUs, of which gres type, not their memory, load or processes: the model of
// untyped GPUs and the memory come from [engine] gpu_model and gpu_memory; load and processes
// are unknown (-1), so nothing is reclaimed as idle on readings Slurm cannot give.
//
// Tested by slurm_cards_test.cc (CardsOfNodes) and through rotad by tests/daemon/test_slurm.py.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "core/types.h"
#include "device/devices.h"
#include "slurm/nodes.h"

namespace rota::daemon {

struct SlurmCardsOptions {
  std::string sinfo;       // absolute
  std::string slurm_conf;  // "" = Slurm's default
  std::string partition;   // "" = every partition
  std::chrono::milliseconds deadline{10'000};
  std::string model = "GPU";
  MiB memory = 0;
};

// The cards of `nodes`, node by node in their order, each node's gres in order: UUID
// "SLURM-<node>-<i>" (i counts the node's GPUs from 0), index its position in the whole list.
// On a node whose every GPU is its own gres type (slurm::Node::CardTypes), each card's
// cluster_name is its type and cluster_shares its shards; elsewhere Slurm chooses the cards and
// no share can be asked of one (cluster_shares 0).
// A node's MIG slices of one gres type are one card in MIG mode, "SLURM-<node>-<type>", with
// that many slices of the type's profile.
std::string SlurmCardUuid(const std::string& node, int index);
std::string SlicesUuid(const std::string& node, const std::string& type);
std::vector<device::GpuInfo> CardsOfNodes(const std::vector<slurm::Node>& nodes, const std::string& model,
                                          MiB memory);

class SlurmCards final : public device::Devices {
 public:
  explicit SlurmCards(SlurmCardsOptions options) : options_(std::move(options)) {}
  StatusOr<device::Snapshot> Sample() override;
  std::string Describe() const override;
  bool FailedSampleFailsCards() const override { return false; }

 private:
  SlurmCardsOptions options_;
};

}  // namespace rota::daemon
