// The GPU layer's interface: what Rota reads from the cards. One implementation per source (NVML
// loaded at run time, simulated cards from the config); the daemon samples through this
// interface only, so tests and the demo run the same daemon code without a GPU.
//
// Units: memory in MiB, utilisation in percent (-1 when the source cannot say), temperature in
// degrees Celsius, power in milliwatts.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/types.h"

namespace rota::device {

struct ProcessInfo {
  int pid = 0;
  MiB used_memory = -1;  // -1 unknown (NVML may not say, e.g. without permission)
  int sm_util = -1;      // per-process SM utilisation where the source gives it
};

// A compute process on a cluster node's card, as the node's agent read it there
// (node_readings.h). Its pid is the node's: never looked up, nor signalled, on this machine.
struct NodeProcess {
  int pid = 0;
  unsigned long long start_time = 0;  // on the node (clock ticks after its boot): with the pid, one process
  std::int64_t uid = -1;
  std::string user;       // as the node names the uid; "" unknown
  std::string slurm_job;  // the Slurm job it runs in (digits), "" none
  MiB used_memory = -1;   // -1 unknown
  bool operator==(const NodeProcess&) const = default;
};

struct MigInstance {
  std::string uuid;
  std::string profile;  // e.g. "3g.40gb"
  MiB memory_total = 0;
  MiB memory_used = -1;
  std::vector<ProcessInfo> processes;
};

struct GpuInfo {
  std::string uuid;
  int index = 0;
  // The machine it is in: "" for this one; a Slurm node's name for the cards of a cluster
  // (daemon/slurm_cards.h).
  std::string node;
  std::string pci_bus_id;  // "00000000:3B:00.0"
  std::string name;        // "NVIDIA A100-SXM4-80GB"
  MiB memory_total = 0;
  MiB memory_used = -1;
  MiB memory_free = -1;
  int util_gpu = -1;
  int util_memory = -1;
  int temperature = -1;
  int power_mw = -1;
  int minor = -1;  // its device node is /dev/nvidia<minor> (major 195); -1 unknown (simulated cards)
  bool mig_capable = false;
  bool mig_enabled = false;
  std::vector<MigInstance> mig;
  std::vector<std::string> nvlink_peers;  // PCI bus ids of the cards this one has NVLink to
  std::vector<ProcessInfo> processes;     // compute processes on the whole card
  std::vector<NodeProcess> node_processes;  // a cluster node's card: its processes, from the node's agent
  long long ecc_uncorrected = -1;         // uncorrected ECC errors since the driver loaded; -1 unknown
  std::vector<int> xids;                  // Xid errors the driver reported since the last sample
  // OK, or why this card could not be read completely (lost, reset needed, call timed out), or why
  // it cannot be trusted (uncorrected ECC errors, a hardware Xid). A card that errors is still
  // listed, so the daemon can move it towards drained.
  Status health;
  // Takes no new work, though it is not failing: its jobs run on (a Slurm node drained or down,
  // whose jobs Slurm itself ends where it must). Why, when set.
  std::string out_of_service;
  // A cluster's card: how its scheduler is asked for this card (Slurm's gres type: exactly this
  // card where it is its own type, else one of that type, or for a card in MIG mode one of its
  // slices; "" when untyped: Slurm then chooses among the node's free GPUs), and how many shares
  // of it the scheduler can give (Slurm's gres/shard on the card's own gres type; 0: none, so no
  // memory share can run on it). -1: a card of this machine, shared as Rota places the shares.
  std::string cluster_name;
  int cluster_shares = -1;
};

struct Snapshot {
  std::string driver_version;  // empty when unknown
  std::vector<GpuInfo> gpus;
  // A cluster's source: how many GPUs of each node its scheduler's jobs hold now, Rota's own
  // included (Slurm's GresUsed). Empty for this machine's cards, whose processes say who holds them.
  std::map<std::string, int> node_gpus_used;
};

// A source of GPU information. Implementations must be safe to call from one thread at a time
// and must never block the caller for longer than their configured deadline.
class Devices {
 public:
  virtual ~Devices() = default;
  Devices() = default;
  Devices(const Devices&) = delete;
  Devices& operator=(const Devices&) = delete;

  // Reads every card. Fails as a whole only when the source is unusable (library missing,
  // initialisation failed, the driver hung beyond the deadline); per-card problems are reported
  // in GpuInfo::health.
  virtual StatusOr<Snapshot> Sample() = 0;
  // "nvml (/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1)", "simulated".
  virtual std::string Describe() const = 0;
  // After a Sample() that failed because the source hung: the index of the card it hung on, or
  // -1 when that is unknown (or nothing hangs). Safe to call from any thread.
  virtual int StuckCard() const { return -1; }
  // Whether a failed Sample() counts against the cards (a driver that does not answer: they move
  // towards drained, their jobs stopped). A source read through a cluster's controller says false:
  // a controller that does not answer says nothing of the cards, and what is known is kept.
  virtual bool FailedSampleFailsCards() const { return true; }
};

}  // namespace rota::device
