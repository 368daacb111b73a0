// The daemon's side of the card watch (card_watch.h): samples arrive from the sampler thread
// (never blocking the loop) and go to the watch, which attributes each GPU process and moves each
// card's health; here the daemon carries out what follows (the jobs of a drained card stopped,
// the admins told) and the scheduler learns which cards are usable and how much memory the
// device says is free. Admins drain and resume cards here too. Tested by cards_test.cc
// (in-process) and tests/daemon/test_gpus.py (fake NVML and simulated cards).
#include <sys/epoll.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "api/protocol.h"
#include "api/request_fields.h"
#include "daemon/clock.h"
#include "daemon/daemon.h"
#include "exec/procfs.h"

namespace rota::daemon {

using nlohmann::json;

Status Daemon::StartSampler() {
  if (sampler_ || !devices_) return Status();
  sampler_ = std::make_unique<device::Sampler>(devices_, std::chrono::seconds(config_.sample_interval));
  if (Status s = sampler_->Start(); !s.ok()) {
    sampler_.reset();
    return s;
  }
  return loop_->Add(sampler_->fd(), EPOLLIN, [this](std::uint32_t) { OnSample(); });
}

void Daemon::StopSampler() {
  if (!sampler_) return;
  if (loop_) loop_->Remove(sampler_->fd());
  sampler_.reset();  // joins: at most one sample, bounded by the source's deadline
}

void Daemon::OnSample() {
  std::optional<StatusOr<device::Snapshot>> sample = sampler_->Take();
  if (!sample) return;
  ApplySample(*sample, Now());
  ++samples_applied_;
}

void Daemon::SampleSoon() {
  if (sampler_) sampler_->SampleSoon();
}

void Daemon::UpdateSimulatedLoads() {
  if (config_.gpu_source != config::GpuSource::kSimulated) return;
  std::vector<device::SimulatedLoad> loads;
  for (const auto& [id, a] : jobs_) {
    if (a.rec.state != store::JobState::kRunning) continue;
    std::vector<std::string> uuids = a.rec.placement.gpu_uuids;
    if (!a.rec.placement.mig_uuid.empty()) uuids = {a.rec.placement.mig_uuid};
    for (const std::string& uuid : uuids) {
      if (auto load = device::ParseSimulatedLoad(a.rec.env, static_cast<int>(a.rec.pid), uuid)) loads.push_back(*load);
    }
  }
  std::lock_guard<std::mutex> lock(sim_loads_->mu);
  sim_loads_->loads = std::move(loads);
}

void Daemon::ApplySample(const StatusOr<device::Snapshot>& sample, Time now) {
  if (sample.ok()) counters_.CardsSampled(IdleCards(), now);
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
  if (seen.changed) dirty_ = true;
  for (const auto& [index, why] : seen.newly_drained) {
    notify::Event e;
    e.name = "gpu_drained";
    e.gpus = std::to_string(cards_.gpus()[index].index);
    e.reason = why;
    notes_->Notify(e);
  }
  for (size_t index : seen.drained) StopJobsOnFailedCard(index, now);
  if (sample.ok()) WatchOutside(now);
  UpdateSchedulable(sample.ok() ? &watch_->last_sample() : nullptr);
  if (sample.ok()) {
    allocs_->Measure(now);
    allocs_->Watch(now);
  }
}

void Daemon::StopJobsOnFailedCard(size_t index, Time now) {
  const Gpu& g = cards_.gpus()[index];
  for (auto& [id, a] : jobs_) {
    if (!a.Live() || !a.node_fail.empty() || !a.cancelled_by.empty()) continue;
    if (!a.rec.placement.OnCard(g.uuid)) continue;
    a.node_fail = "GPU " + std::to_string(g.index) + " failed: " + watch_->State(g.uuid).health.error;
    spdlog::warn("job {} ({}): stopping: {}", id, a.rec.job.user, a.node_fail);
    BeginStop(a, now);
  }
}

void Daemon::UpdateSchedulable(const device::Snapshot* snap) {
  for (Gpu& g : cards_.gpus()) {
    const CardWatch::CardState& c = watch_->State(g.uuid);
    // A card held by a process outside Rota takes no new work (as drained, for the scheduler).
    const bool drained = c.Out() || outside_.Holds(g.uuid);
    MiB free = -1;
    if (snap != nullptr && c.health.state == HealthState::kHealthy) {
      if (const device::GpuInfo* info = watch_->Sampled(g.uuid); info != nullptr && info->mig.empty()) {
        free = info->memory_free;
      }
    }
    // The device's free memory only matters for placing shares; a pass for every sample would
    // cost CPU for nothing when no job waits.
    const bool waiting = !jobs_.waiting_order().empty();
    if (drained != g.drained || (waiting && free != g.reported_free)) dirty_ = true;
    g.drained = drained;
    g.reported_free = free;
  }
}

CardWatch::PlacedOn Daemon::Placed() const {
  return [this](JobId id, const std::string& uuid) {
    auto job = jobs_.find(id);
    return job != jobs_.end() && job->second.rec.placement.OnCard(uuid);
  };
}

json Daemon::Drain(const Caller& caller, const json& request) {
  StatusOr<std::string> name_field = api::fields::Text(request, "gpu");
  if (!name_field.ok()) return api::ErrorReply(name_field.status());
  StatusOr<std::string> reason_field = api::fields::Text(request, "reason");
  if (!reason_field.ok()) return api::ErrorReply(reason_field.status());
  const std::string name = *name_field, reason = *reason_field;
  if (name.empty()) return api::ErrorReply(InvalidArgument("drain needs a GPU (an index or a UUID)"));
  if (reason.empty()) return api::ErrorReply(InvalidArgument("drain needs a reason (users see it next to the card)"));
  StatusOr<size_t> index = cards_.Find(name);
  if (!index.ok()) return api::ErrorReply(index.status());
  Gpu& g = cards_.gpus()[*index];
  if (Status s = watch_->Drain(g, caller.Who(), reason, Now()); !s.ok()) return api::ErrorReply(s);
  g.drained = true;
  dirty_ = true;
  json out = api::OkReply();
  out["gpu"] = g.index;
  out["uuid"] = g.uuid;
  return out;
}

json Daemon::Resume(const Caller& caller, const json& request) {
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
  dirty_ = true;
  json out = api::OkReply();
  out["gpu"] = g.index;
  out["uuid"] = g.uuid;
  return out;
}

}  // namespace rota::daemon
