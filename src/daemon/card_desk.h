// The cards' part of the daemon: everything the daemon does with the GPUs, in one place. It owns
// the GPU source (simulated cards or NVML, made by DaemonDeps::devices), the sampler thread that
// reads it without blocking the loop, the card watch (card_watch.h: the last sample, health,
// drains, who each GPU process belongs to) and the outside watch (outside_watch.h: processes no
// allocation covers). After each sample it carries out what the watches decide: the jobs of a
// card drained by health are stopped (through the daemon), the admins and owners are told, outside
// processes are recorded and, by policy, stopped; and it tells the scheduler which cards it may
// use and how much memory each reports free (Inventory, inventory.h). It answers the card
// requests: gpus, inventory, drain, resume, and the cards' part of status and /metrics.
//
// Runs on the daemon's loop thread (samples arrive through the loop). Tested by cards_test.cc
// (in-process, scripted cards: testing/daemon/fake_cards.h), card_watch_test.cc,
// outside_watch_test.cc and tests/daemon/test_gpus.py (fake NVML and simulated cards).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "config/config.h"
#include "daemon/agent_board.h"
#include "core/status.h"
#include "daemon/active_job.h"
#include "daemon/booking_desk.h"
#include "daemon/card_watch.h"
#include "daemon/engine.h"
#include "daemon/clock.h"
#include "daemon/deps.h"
#include "daemon/event_loop.h"
#include "daemon/identity.h"
#include "daemon/inventory.h"
#include "daemon/job_table.h"
#include "daemon/notifications.h"
#include "daemon/outside_watch.h"
#include "device/devices.h"
#include "device/sampler.h"
#include "store/job_store.h"
#include "web/metrics_text.h"

namespace rota::daemon {

class CardDesk {
 public:
  struct Setup {
    store::JobStore* store = nullptr;  // all must outlive the desk
    const Clock* clock = nullptr;
    const config::Config* config = nullptr;  // the configuration in force (replaced in place on reload)
    Duration kill_wait = 10;                 // an outside process's SIGTERM to its SIGKILL
    EventLoop* loop = nullptr;               // where samples arrive
    DevicesFactory devices;                  // the GPU source for the configuration
    JobTable* jobs = nullptr;
    Inventory* cards = nullptr;       // loaded here; its drains and free memory kept up here
    BookingDesk* bookings = nullptr;  // whose cards are claimed, remapped with the inventory
    AgentBoard* agents = nullptr;     // node agents' readings, laid onto each sample (or none)
    Notifications* notes = nullptr;
    // The cards the scheduler may use changed: a pass is due.
    std::function<void()> changed;
    // Stops a running job whose card failed (its node_fail says why): SIGTERM, then SIGKILL.
    std::function<void(ActiveJob&, Time)> stop;
    // After each good sample, once the watches have seen it (the daemon measures allocations).
    std::function<void(Time)> sampled;
  };
  explicit CardDesk(Setup setup);
  ~CardDesk();

  // Reads the admins' drains from the store.
  Status Open();
  // Makes the GPU source where there is none (or the cards are simulated: their list is the
  // configuration's), takes a first sample and builds the inventory from it; running jobs and
  // bookings are mapped onto it again, and health, drains and outside processes are judged on it.
  // A source that fails leaves no card schedulable, with the reason kept for status and gpus.
  void Load(Time now);
  // After a reload: who owns what is read again; a new GPU source is made when [gpus] changed
  // where it is read from (the sampler is stopped first).
  void Forget(bool source_changed);

  // The sampler thread: one sample every [gpus] sample_interval, through the loop.
  Status StartSampling();
  void StopSampling();  // joins: at most one sample, bounded by the source's deadline
  void SampleSoon();
  std::uint64_t samples_applied() const { return samples_applied_; }
  // The running jobs changed: the simulated cards report the loads they declare from now on.
  void FollowJobs();

  const CardWatch& watch() const { return *watch_; }
  // How many cards no running job holds (for the idle card-seconds of the counters).
  std::size_t IdleCards() const;

  // The cards a cluster's jobs outside Rota hold, and whose (the engine's ClusterHolders). They
  // take no new work, as the counted ones (CountClusterHeld) do, and `rota gpus` names them. A
  // holder of a card in MIG mode holds one of its slices (HoldSlices), not the card.
  void SetClusterHolders(const std::vector<ClusterHolder>& holders);

  // ---- Requests (api/ops.h: who may call each is checked before) ----
  nlohmann::json Gpus(const Caller& caller) const;  // gpus.cc
  nlohmann::json InventoryReply() const;            // gpus.cc
  nlohmann::json Drain(const Caller& caller, const nlohmann::json& request);
  nlohmann::json Resume(const Caller& caller, const nlohmann::json& request);
  // The cards' part of `rota status`: "gpus", "devices" and "devices_error".
  void AddToStatus(nlohmann::json& out) const;
  // The cards' part of GET /metrics: per-card gauges and who holds each (metrics.cc).
  void WriteMetrics(web::MetricsWriter& w) const;

  // Whether the cards are not known yet: a cluster's source has not answered since rotad started
  // (a machine's own cards that cannot be read are no cards).
  bool CardsUnknown() const {
    return cards_.gpus().empty() && !devices_error_.empty() && devices_ && !devices_->FailedSampleFailsCards();
  }

 private:
  Time Now() const { return clock_->Now(); }
  void OnSample();
  void ApplySample(const StatusOr<device::Snapshot>& sample, Time now);
  // The inventory built from `snap` (none: no cards), running jobs and bookings mapped onto it.
  void Reinventory(const device::Snapshot* snap);
  // Whether a sample lists the inventory's cards, in its order.
  static bool SameCards(const std::vector<device::GpuInfo>& sampled, const std::vector<Gpu>& held);
  void StopJobsOnFailedCard(size_t index, Time now);
  void UpdateSchedulable(const device::Snapshot* snap);
  // The cards that a cluster's jobs outside Rota hold (cluster_held_): on each node, as many as
  // it has GPUs in use beyond Rota's jobs and the named holders there, among the cards neither is on.
  void CountClusterHeld(const device::Snapshot& snap);
  // The MIG slices that a cluster's jobs outside Rota hold (cluster_held_slices_): of each card in
  // MIG mode (a node's slices of one type; `held` by its position in the inventory), as many as
  // held, the last ones Rota's jobs are not on (the cluster does not say which).
  void HoldSlices(const std::map<size_t, int>& held);
  // Held by a process outside Rota on this machine, or by a cluster's job outside Rota.
  bool HeldOutside(const std::string& uuid) const {
    return outside_.Holds(uuid) || cluster_held_.count(uuid) > 0 || cluster_holders_.count(uuid) > 0;
  }
  // Whether a job is placed on a card, for the watch: a job's process elsewhere is not covered.
  CardWatch::PlacedOn Placed() const;
  // Outside processes (outside.cc): OutsideWatch decides, this carries it out.
  void WatchOutside(Time now);
  // Whose a process that a cluster node's agent named is: a running Rota job's (its Slurm job is
  // the job's and its uid the owner's), a Slurm job's outside Rota (`slurm`), or nobody's (in
  // no Slurm job: started on the node by hand).
  struct NodeProcessOwner {
    bool slurm = false;
    const ActiveJob* job = nullptr;
  };
  NodeProcessOwner OwnerOf(const device::NodeProcess& np) const;
  // The processes that cluster nodes' agents named on their cards that no Rota allocation covers
  // (none in a Slurm job, or in a Rota job's on a card that job was not given).
  void NodeOutside(std::vector<OutsideWatch::Process>& sample) const;
  // "alice's job 17, bob's booking 3": the running jobs and active bookings on card `uuid`.
  std::string CardClaims(const std::string& uuid, Time now) const;
  void RecordGpuEvent(const std::string& uuid, int gpu_index, const std::string& event,
                      const std::string& reason, Time now);

  store::JobStore* store_;
  const Clock* clock_;
  const config::Config& config_;
  Setup setup_;
  JobTable& jobs_;
  Inventory& cards_;
  std::shared_ptr<device::Devices> devices_;
  std::string devices_error_;  // why the source failed at the last load ("" = it did not)
  std::unique_ptr<device::Sampler> sampler_;
  // What the simulated cards report: the loads the running jobs declare, handed to the sampler
  // thread under a lock.
  struct SimulatedLoads {
    std::mutex mu;
    std::vector<device::SimulatedLoad> loads;
  };
  std::shared_ptr<SimulatedLoads> sim_loads_ = std::make_shared<SimulatedLoads>();
  std::uint64_t samples_applied_ = 0;
  std::unique_ptr<CardWatch> watch_;
  OutsideWatch outside_;
  std::set<std::string> cluster_held_;  // card UUIDs (CountClusterHeld)
  std::set<std::string> cluster_held_slices_;  // MIG slice UUIDs (HoldSlices)
  std::multimap<std::string, ClusterHolder> cluster_holders_;  // by card UUID (SetClusterHolders)
  std::multimap<std::string, ClusterHolder> slice_holders_;    // of cards in MIG mode, one a slice
};

}  // namespace rota::daemon
