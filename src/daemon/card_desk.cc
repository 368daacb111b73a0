// The cards' part of the daemon (card_desk.h): the GPU source and its sampler, what follows each
// sample, and the admins' drains. Requests never wait for the driver: they read the last sample.
#include "daemon/card_desk.h"

#include <spdlog/spdlog.h>
#include <sys/epoll.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <set>

#include "api/protocol.h"
#include "api/request_fields.h"
#include "core/health.h"

namespace rota::daemon {

using nlohmann::json;

CardDesk::CardDesk(Setup setup)
    : store_(setup.store),
      clock_(setup.clock),
      config_(*setup.config),
      setup_(std::move(setup)),
      jobs_(*setup_.jobs),
      cards_(*setup_.cards),
      watch_(std::make_unique<CardWatch>(*store_)) {}

CardDesk::~CardDesk() { StopSampling(); }

Status CardDesk::Open() { return watch_->LoadDrains(); }

void CardDesk::Load(Time now) {
  StopSampling();  // the source is called from one thread at a time
  if (config_.gpu_source == config::GpuSource::kSimulated || !devices_) {
    // The simulated cards report the load the running jobs declare in their environment.
    std::shared_ptr<SimulatedLoads> loads = sim_loads_;
    devices_ = setup_.devices(config_, [loads] {
      std::lock_guard<std::mutex> lock(loads->mu);
      return loads->loads;
    });
    FollowJobs();
  }
  StatusOr<device::Snapshot> snap = devices_->Sample();
  if (snap.ok() && setup_.agents) setup_.agents->LayOnto(snap->gpus);
  Reinventory(snap.ok() ? &*snap : nullptr);
  if (!snap.ok()) {
    devices_error_ = snap.status().message();
    spdlog::error("GPUs: {}: {}; no GPU is schedulable until this is fixed (then send SIGHUP)",
                  devices_->Describe(), devices_error_);
  } else {
    devices_error_.clear();
    spdlog::info("GPUs: {} from {}, driver {}", cards_.gpus().size(), devices_->Describe(),
                 snap->driver_version);
  }
  // Health, drains and who is on each card, from this first sample.
  ApplySample(snap, now);
  setup_.changed();
}

void CardDesk::Reinventory(const device::Snapshot* snap) {
  cards_.Load(snap);
  for (auto& [id, a] : jobs_) {
    if (a.rec.state == store::JobState::kRunning) cards_.Remap(a.rec);
  }
  if (setup_.bookings) setup_.bookings->Remap();
}

void CardDesk::Forget(bool source_changed) {
  watch_->Forget();  // accounts may have changed too
  if (source_changed) {
    StopSampling();
    devices_.reset();
  }
}

Status CardDesk::StartSampling() {
  if (sampler_ || !devices_) return Status();
  sampler_ = std::make_unique<device::Sampler>(devices_, std::chrono::seconds(config_.sample_interval));
  if (Status s = sampler_->Start(); !s.ok()) {
    sampler_.reset();
    return s;
  }
  return setup_.loop->Add(sampler_->fd(), EPOLLIN, [this](std::uint32_t) { OnSample(); });
}

void CardDesk::StopSampling() {
  if (!sampler_) return;
  setup_.loop->Remove(sampler_->fd());
  sampler_.reset();  // joins: at most one sample, bounded by the source's deadline
}

void CardDesk::OnSample() {
  std::optional<StatusOr<device::Snapshot>> sample = sampler_->Take();
  if (!sample) return;
  if (sample->ok() && setup_.agents) setup_.agents->LayOnto((*sample)->gpus);
  ApplySample(*sample, Now());
  ++samples_applied_;
}

void CardDesk::SampleSoon() {
  if (sampler_) sampler_->SampleSoon();
}

void CardDesk::FollowJobs() {
  if (config_.gpu_source != config::GpuSource::kSimulated) return;
  std::vector<device::SimulatedLoad> loads;
  for (const auto& [id, a] : jobs_) {
    if (a.rec.state != store::JobState::kRunning) continue;
    std::vector<std::string> uuids = a.rec.placement.gpu_uuids;
    if (!a.rec.placement.mig_uuid.empty()) uuids = {a.rec.placement.mig_uuid};
    for (const std::string& uuid : uuids) {
      if (auto load = device::ParseSimulatedLoad(a.rec.env, static_cast<int>(a.rec.pid), uuid))
        loads.push_back(*load);
    }
  }
  std::lock_guard<std::mutex> lock(sim_loads_->mu);
  sim_loads_->loads = std::move(loads);
}

void CardDesk::ApplySample(const StatusOr<device::Snapshot>& sample, Time now) {
  if (!sample.ok() && !devices_->FailedSampleFailsCards()) {
    // Slurm's controller did not answer sinfo: the cards are as last seen (their jobs run on).
    if (devices_error_ != sample.status().message()) {
      spdlog::warn("GPUs: {}: {}; the cards are kept as last read", devices_->Describe(),
                   sample.status().message());
    }
    devices_error_ = sample.status().message();
    return;
  }
  if (!devices_->FailedSampleFailsCards() && sample.ok() && !devices_error_.empty()) {
    spdlog::info("GPUs: {} can be read again", devices_->Describe());
    devices_error_.clear();
  }
  // A cluster's cards are the nodes it has now: none when it did not answer at rotad's start, more
  // when a node joins the partition. This machine's cards change only with a reload.
  if (!devices_->FailedSampleFailsCards() && sample.ok() && !SameCards(sample->gpus, cards_.gpus())) {
    spdlog::info("GPUs: {} now lists {} GPU(s) (was {}): the inventory follows", devices_->Describe(),
                 sample->gpus.size(), cards_.gpus().size());
    Reinventory(&*sample);
    setup_.changed();
  }
  CardWatch::RunningJobs running;
  for (const auto& [id, a] : jobs_) {
    if (a.rec.state != store::JobState::kRunning) continue;
    running.cgroups[id] = a.rec.cgroup;
    if (a.rec.pid > 0) running.pids[a.rec.pid] = id;  // a batch job's shepherd, a session's client
  }
  watch_->TakeSample(sample, running, now);
  // A source that hung on one card: that card failed; the others were not read this time, which
  // says nothing about them (NVML serialises calls, so one wedged card blocks every read).
  const int stuck = sample.ok() ? -1 : devices_->StuckCard();
  const CardWatch::Observation seen =
      watch_->ObserveCards(cards_.gpus(), stuck, HealthRules{config_.drain_after, config_.drain_after}, now);
  if (seen.changed) setup_.changed();
  for (const auto& [index, why] : seen.newly_drained) {
    notify::Event e;
    e.name = "gpu_drained";
    e.gpus = std::to_string(cards_.gpus()[index].index);
    e.reason = why;
    setup_.notes->Notify(e);
  }
  for (size_t index : seen.drained) StopJobsOnFailedCard(index, now);
  if (sample.ok()) WatchOutside(now);
  UpdateSchedulable(sample.ok() ? &watch_->last_sample() : nullptr);
  if (sample.ok()) setup_.sampled(now);
}

bool CardDesk::SameCards(const std::vector<device::GpuInfo>& sampled, const std::vector<Gpu>& held) {
  if (sampled.size() != held.size()) return false;
  for (size_t i = 0; i < held.size(); ++i) {
    if (sampled[i].uuid != held[i].uuid) return false;
  }
  return true;
}

void CardDesk::StopJobsOnFailedCard(size_t index, Time now) {
  const Gpu& g = cards_.gpus()[index];
  for (auto& [id, a] : jobs_) {
    if (!a.Live() || !a.node_fail.empty() || !a.cancelled_by.empty()) continue;
    if (!a.rec.placement.OnCard(g.uuid)) continue;
    a.node_fail = "GPU " + std::to_string(g.index) + " failed: " + watch_->State(g.uuid).health.error;
    spdlog::warn("job {} ({}): stopping: {}", id, a.rec.job.user, a.node_fail);
    setup_.stop(a, now);
  }
}

void CardDesk::CountClusterHeld(const device::Snapshot& snap) {
  cluster_held_.clear();
  if (snap.node_gpus_used.empty()) return;
  std::set<std::string> rota_cards;
  for (const auto& [id, a] : jobs_) {
    if (a.rec.state == store::JobState::kRunning)
      rota_cards.insert(a.rec.placement.gpu_uuids.begin(), a.rec.placement.gpu_uuids.end());
  }
  // Cards whose outside holder Slurm named are counted as such, not guessed again.
  auto known = [&](const std::string& uuid) {
    return rota_cards.count(uuid) > 0 || cluster_holders_.count(uuid) > 0;
  };
  // Whole cards only: the count is of whole GPUs (a node's MIG slices are one card of slices).
  for (const auto& [node, used] : snap.node_gpus_used) {
    int beyond = used;
    for (const device::GpuInfo& info : snap.gpus) {
      if (info.node == node && info.mig.empty() && known(info.uuid)) --beyond;
    }
    // From the node's last card down: Slurm gives a job the lowest free indices first.
    for (auto it = snap.gpus.rbegin(); it != snap.gpus.rend() && beyond > 0; ++it) {
      if (it->node != node || !it->mig.empty() || known(it->uuid)) continue;
      cluster_held_.insert(it->uuid);
      --beyond;
    }
  }
}

void CardDesk::SetClusterHolders(const std::vector<ClusterHolder>& holders) {
  cluster_holders_.clear();
  slice_holders_.clear();
  std::map<size_t, int> slices;  // held of each card in MIG mode, by its position
  for (const ClusterHolder& h : holders) {
    const auto g = std::find_if(cards_.gpus().begin(), cards_.gpus().end(), [&](const Gpu& c) { return c.uuid == h.card; });
    if (g != cards_.gpus().end() && !g->mig.empty()) {
      ++slices[static_cast<size_t>(g - cards_.gpus().begin())];
      slice_holders_.emplace(h.card, h);
    } else {
      cluster_holders_.emplace(h.card, h);
    }
  }
  HoldSlices(slices);
  UpdateSchedulable(watch_->sample_error().empty() ? &watch_->last_sample() : nullptr);
}

void CardDesk::HoldSlices(const std::map<size_t, int>& held) {
  cluster_held_slices_.clear();
  std::set<std::string> rota_slices;
  for (const auto& [id, a] : jobs_) {
    if (a.rec.state == store::JobState::kRunning && !a.rec.placement.mig_uuid.empty())
      rota_slices.insert(a.rec.placement.mig_uuid);
  }
  for (const auto& [card, count] : held) {
    const std::vector<MigSlice>& mig = cards_.gpus()[card].mig;
    int left = count;
    for (auto m = mig.rbegin(); m != mig.rend() && left > 0; ++m) {
      if (rota_slices.count(m->uuid) > 0) continue;
      cluster_held_slices_.insert(m->uuid);
      --left;
    }
  }
}

void CardDesk::UpdateSchedulable(const device::Snapshot* snap) {
  if (snap != nullptr) CountClusterHeld(*snap);
  // The device's free memory only matters for placing shares; a pass for every sample would
  // cost CPU for nothing when no job waits. Asked once, and only where a card's memory moved.
  std::optional<bool> any_pending;
  auto waiting = [&] {
    if (!any_pending) any_pending = jobs_.AnyPending();
    return *any_pending;
  };
  for (Gpu& g : cards_.gpus()) {
    const CardWatch::CardState& c = watch_->State(g.uuid);
    // A card held outside Rota (a process here, a cluster job) or out of service takes no new work.
    const device::GpuInfo* read = snap != nullptr ? watch_->Sampled(g.uuid) : nullptr;
    const bool drained = c.Out() || HeldOutside(g.uuid) || (read != nullptr && !read->out_of_service.empty());
    MiB free = -1;
    if (read != nullptr && c.health.state == HealthState::kHealthy && read->mig.empty())
      free = read->memory_free;
    if (drained != g.drained || (free != g.reported_free && waiting())) setup_.changed();
    g.drained = drained;
    g.reported_free = free;
    for (MigSlice& m : g.mig) {
      const bool held = cluster_held_slices_.count(m.uuid) > 0;
      if (held != m.drained) setup_.changed();
      m.drained = held;
    }
  }
}

CardWatch::PlacedOn CardDesk::Placed() const {
  return [this](JobId id, const std::string& uuid) {
    auto job = jobs_.find(id);
    return job != jobs_.end() && job->second.rec.placement.OnCard(uuid);
  };
}

std::size_t CardDesk::IdleCards() const {
  std::set<std::string> busy;
  for (const auto& [id, a] : jobs_) {
    if (a.rec.state != store::JobState::kRunning) continue;
    busy.insert(a.rec.placement.gpu_uuids.begin(), a.rec.placement.gpu_uuids.end());
  }
  std::size_t idle = 0;
  for (const Gpu& g : cards_.gpus()) idle += busy.count(g.uuid) ? 0 : 1;
  return idle;
}

json CardDesk::Drain(const Caller& caller, const json& request) {
  StatusOr<std::string> name_field = api::fields::Text(request, "gpu");
  if (!name_field.ok()) return api::ErrorReply(name_field.status());
  StatusOr<std::string> reason_field = api::fields::Text(request, "reason");
  if (!reason_field.ok()) return api::ErrorReply(reason_field.status());
  const std::string name = *name_field, reason = *reason_field;
  if (name.empty()) return api::ErrorReply(InvalidArgument("drain needs a GPU (an index or a UUID)"));
  if (reason.empty())
    return api::ErrorReply(InvalidArgument("drain needs a reason (users see it next to the card)"));
  StatusOr<size_t> index = cards_.Find(name);
  if (!index.ok()) return api::ErrorReply(index.status());
  Gpu& g = cards_.gpus()[*index];
  if (Status s = watch_->Drain(g, caller.Who(), reason, Now()); !s.ok()) return api::ErrorReply(s);
  g.drained = true;
  setup_.changed();
  json out = api::OkReply();
  out["gpu"] = g.index;
  out["uuid"] = g.uuid;
  return out;
}

json CardDesk::Resume(const Caller& caller, const json& request) {
  StatusOr<std::string> name_field = api::fields::Text(request, "gpu");
  if (!name_field.ok()) return api::ErrorReply(name_field.status());
  const std::string name = *name_field;
  if (name.empty()) return api::ErrorReply(InvalidArgument("resume needs a GPU (an index or a UUID)"));
  StatusOr<size_t> index = cards_.Find(name);
  if (!index.ok()) return api::ErrorReply(index.status());
  const Gpu& g = cards_.gpus()[*index];
  if (Status s = watch_->Resume(g, watch_->Leftovers(g.uuid, Placed()), caller.Who(), Now()); !s.ok()) {
    return api::ErrorReply(s);
  }
  UpdateSchedulable(watch_->sample_error().empty() ? &watch_->last_sample() : nullptr);
  setup_.changed();
  json out = api::OkReply();
  out["gpu"] = g.index;
  out["uuid"] = g.uuid;
  return out;
}

void CardDesk::AddToStatus(json& out) const {
  json gpus = json::array();
  for (const Gpu& g : cards_.gpus()) {
    json mig = json::array();
    for (const MigSlice& m : g.mig)
      mig.push_back({{"uuid", m.uuid}, {"profile", m.profile}, {"memory", m.memory}});
    gpus.push_back({{"index", g.index},
                    {"uuid", g.uuid},
                    {"model", g.model},
                    {"memory", g.memory},
                    {"mig", mig},
                    {"drained", g.drained},
                    {"held_outside", HeldOutside(g.uuid)}});
  }
  out["gpus"] = std::move(gpus);
  out["devices"] = devices_ ? devices_->Describe() : std::string("none");
  if (!devices_error_.empty()) out["devices_error"] = devices_error_;
}

}  // namespace rota::daemon
