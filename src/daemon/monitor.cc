// The daemon's eyes on the cards: samples arrive from the sampler thread (never blocking the
// loop), each GPU process is attributed (PID -> user -> job or "outside Rota"), each card's health
// moves through core/health.h, and the scheduler learns which cards are usable and how much
// memory the device says is free. Admins drain and resume cards here too. Tested by
// tests/daemon/test_gpus.py (fake NVML and simulated cards).
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

namespace {

// How far up the parent chain a GPU process is followed to find its job's shepherd or session:
// deep enough for launcher -> python -> worker trees, bounded against cycles in a racing /proc.
constexpr int kMaxAncestors = 32;

bool Held(const device::GpuInfo& info) {
  if (!info.processes.empty()) return true;
  return std::any_of(info.mig.begin(), info.mig.end(), [](const device::MigInstance& m) { return !m.processes.empty(); });
}

}  // namespace

Status Daemon::LoadDrains() {
  StatusOr<std::vector<store::GpuDrain>> drains = store_->LoadDrains();
  if (!drains.ok()) return drains.status();
  for (const store::GpuDrain& d : *drains) {
    CardState& c = card_state_[d.uuid];
    if (d.kind == store::GpuDrain::Kind::kAdmin) {
      c.admin_drain = d;
    } else {
      // Drained by health before the restart: it stays so until it proves healthy and empty.
      c.health.state = HealthState::kDrained;
      c.health.error = d.reason;
    }
    spdlog::info("GPU {}: drained by {} since {}: {}", d.uuid, d.actor, d.since, d.reason);
  }
  return Status();
}

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
  if (sample.ok()) {
    last_sample_ = *sample;
    sampled_at_ = now;
    counters_.CardsSampled(IdleCards(), now);
    sample_error_.clear();
    Attribute(last_sample_);
    for (const device::GpuInfo& info : last_sample_.gpus) {
      for (int xid : info.xids) spdlog::warn("GPU {} ({}): Xid {} reported by the driver", info.index, info.uuid, xid);
    }
  } else {
    if (sample_error_ != sample.status().message()) {
      spdlog::error("GPUs: sample failed: {}", sample.status().message());
    }
    sample_error_ = sample.status().message();
  }
  // A source that hung on one card: that card failed; the others were not read this time, which
  // says nothing about them (NVML serialises calls, so one wedged card blocks every read).
  const int stuck = sample.ok() ? -1 : devices_->StuckCard();
  for (size_t i = 0; i < cards_.gpus.size(); ++i) {
    std::string error = sample_error_;
    bool held = false;
    if (stuck >= 0 && cards_.gpus[i].index != stuck) continue;
    if (error.empty()) {
      const device::GpuInfo* info = SampledCard(cards_.gpus[i].uuid);
      if (info == nullptr) {
        error = "missing from enumeration";
      } else {
        if (!info->health.ok()) error = info->health.message();
        held = Held(*info);
      }
    }
    ObserveCard(i, error, held, now);
  }
  if (sample.ok()) WatchOutside(now);
  UpdateSchedulable(sample.ok() ? &last_sample_ : nullptr);
  if (sample.ok()) {
    MeasureAllocations(now);
    WatchAllocations(now);
  }
}

void Daemon::ObserveCard(size_t index, const std::string& error, bool held, Time now) {
  const Gpu& g = cards_.gpus[index];
  CardState& c = card_state_[g.uuid];
  const std::string previous_error = c.health.error;
  const HealthChange change =
      ObserveHealth(c.health, error, held, HealthRules{config_.drain_after, config_.drain_after});
  if (change.changed()) {
    const char* to = HealthStateName(change.to);
    if (change.to == HealthState::kDrained) {
      spdlog::error("GPU {} ({}): drained after {} failed samples: {}; its jobs are stopped", g.index, g.uuid,
                    c.health.failures, error);
      store::GpuDrain d{g.uuid, store::GpuDrain::Kind::kHealth, "rotad", error, now};
      if (Status s = store_->SaveDrain(d, g.index); !s.ok()) spdlog::error("recording the drain: {}", s.message());
      notify::Event e;
      e.name = "gpu_drained";
      e.gpus = std::to_string(g.index);
      e.reason = "drained after " + std::to_string(c.health.failures) + " failed samples: " + error;
      notes_->Notify(e);
    } else if (change.from == HealthState::kDrained) {
      spdlog::warn("GPU {} ({}): healthy and empty again; back in service", g.index, g.uuid);
      if (Status s = store_->RemoveDrain(g.uuid, store::GpuDrain::Kind::kHealth, g.index, "rotad",
                                         "healthy and empty again", now);
          !s.ok()) {
        spdlog::error("recording the end of the drain: {}", s.message());
      }
    } else {
      if (change.to == HealthState::kSuspect) {
        spdlog::warn("GPU {} ({}): suspect: {}; no new work until it reads fine", g.index, g.uuid, error);
      } else {
        spdlog::info("GPU {} ({}): reads fine again", g.index, g.uuid);
      }
      const std::string& why = change.to == HealthState::kSuspect ? error : previous_error;
      if (Status s = store_->AddGpuEvent({now, g.uuid, g.index, to, why, "rotad"}); !s.ok()) {
        spdlog::error("recording a GPU event: {}", s.message());
      }
    }
    dirty_ = true;
  }
  if (c.health.state == HealthState::kDrained) StopJobsOnFailedCard(index, now);
}

void Daemon::StopJobsOnFailedCard(size_t index, Time now) {
  const Gpu& g = cards_.gpus[index];
  for (auto& [id, a] : jobs_) {
    if (!a.Live() || !a.node_fail.empty() || !a.cancelled_by.empty()) continue;
    if (!a.rec.placement.OnCard(g.uuid)) continue;
    a.node_fail = "GPU " + std::to_string(g.index) + " failed: " + card_state_[g.uuid].health.error;
    spdlog::warn("job {} ({}): stopping: {}", id, a.rec.job.user, a.node_fail);
    BeginStop(a, now);
  }
}

void Daemon::UpdateSchedulable(const device::Snapshot* snap) {
  for (Gpu& g : cards_.gpus) {
    const CardState& c = card_state_[g.uuid];
    // A card held by a process outside Rota takes no new work (as drained, for the scheduler).
    const bool drained = c.admin_drain.has_value() || c.health.state != HealthState::kHealthy ||
                         outside_.Holds(g.uuid);
    MiB free = -1;
    if (snap != nullptr && c.health.state == HealthState::kHealthy) {
      if (const device::GpuInfo* info = SampledCard(g.uuid); info != nullptr && info->mig.empty()) {
        free = info->memory_free;
      }
    }
    // The device's free memory only matters for placing shares; a pass for every sample would
    // cost CPU for nothing when no job waits.
    const bool waiting = !pending_order_.empty();
    if (drained != g.drained || (waiting && free != g.reported_free)) dirty_ = true;
    g.drained = drained;
    g.reported_free = free;
  }
}

const device::GpuInfo* Daemon::SampledCard(const std::string& uuid) const {
  for (const device::GpuInfo& info : last_sample_.gpus) {
    if (info.uuid == uuid) return &info;
  }
  return nullptr;
}

void Daemon::Attribute(const device::Snapshot& snap) {
  // The pids that stand for a job: a batch job's shepherd, a session's client.
  std::map<std::int64_t, JobId> job_pids;
  for (const auto& [id, a] : jobs_) {
    if (a.rec.state == store::JobState::kRunning && a.rec.pid > 0) job_pids[a.rec.pid] = id;
  }
  std::unordered_map<int, ProcessOwner> owners;
  std::unordered_map<int, KnownProcess> known;
  auto add = [&](const std::vector<device::ProcessInfo>& processes) {
    for (const device::ProcessInfo& p : processes) {
      if (owners.count(p.pid)) continue;
      // The same process as last time (same start time) keeps its owner while that job runs:
      // one small read instead of walking /proc again.
      StatusOr<unsigned long long> started = exec::ProcessStartTime(p.pid);
      auto it = known_processes_.find(p.pid);
      if (started.ok() && it != known_processes_.end() && it->second.start_time == *started) {
        const ProcessOwner& was = it->second.owner;
        auto job = jobs_.find(was.job);
        if (was.job == 0 || (job != jobs_.end() && job->second.rec.state == store::JobState::kRunning)) {
          owners[p.pid] = was;
          known[p.pid] = it->second;
          continue;
        }
      }
      owners[p.pid] = OwnerOf(p.pid, job_pids);
      if (started.ok() && owners[p.pid].uid >= 0) known[p.pid] = KnownProcess{*started, owners[p.pid]};
    }
  };
  for (const device::GpuInfo& info : snap.gpus) {
    add(info.processes);
    for (const device::MigInstance& m : info.mig) add(m.processes);
  }
  owners_ = std::move(owners);
  known_processes_ = std::move(known);  // processes no longer on a card are forgotten
}

Daemon::ProcessOwner Daemon::OwnerOf(int pid, const std::map<std::int64_t, JobId>& job_pids) {
  ProcessOwner owner;
  StatusOr<exec::ProcessIdentity> id = exec::ReadProcess(pid);
  if (!id.ok()) return owner;
  owner.uid = id->uid;
  auto name = user_names_.find(id->uid);
  if (name == user_names_.end()) {
    name = user_names_.emplace(id->uid, UserName(id->uid).value_or(std::to_string(id->uid))).first;
  }
  owner.user = name->second;
  // Through the job's cgroup: everything the job started, however it daemonised.
  for (const auto& [jid, a] : jobs_) {
    if (a.rec.state == store::JobState::kRunning && exec::InCgroup(id->cgroup, a.rec.cgroup)) {
      owner.job = jid;
      return owner;
    }
  }
  // Without cgroups: up the parent chain to a shepherd or a session's client.
  pid_t at = pid;
  for (int depth = 0; depth < kMaxAncestors && at > 1; ++depth) {
    if (auto it = job_pids.find(at); it != job_pids.end()) {
      owner.job = it->second;
      return owner;
    }
    StatusOr<exec::ProcessIdentity> parent = depth == 0 ? id : exec::ReadProcess(at);
    if (!parent.ok()) break;
    at = parent->ppid;
  }
  return owner;
}

StatusOr<size_t> Daemon::FindCard(const std::string& name) const {
  for (size_t i = 0; i < cards_.gpus.size(); ++i) {
    const Gpu& g = cards_.gpus[i];
    if (g.uuid == name || std::to_string(g.index) == name) return i;
    for (const MigSlice& m : g.mig) {
      if (m.uuid == name) return i;
    }
  }
  std::string known;
  for (const Gpu& g : cards_.gpus) known += (known.empty() ? "" : ", ") + std::to_string(g.index);
  return NotFound("no GPU '" + name + "' on this server (GPUs: " + (known.empty() ? "none" : known) +
                  "; use an index or a UUID)");
}

std::vector<std::pair<device::ProcessInfo, Daemon::ProcessOwner>> Daemon::Uncovered(const device::GpuInfo& info) const {
  std::vector<std::pair<device::ProcessInfo, ProcessOwner>> out;
  std::vector<device::ProcessInfo> processes = info.processes;
  for (const device::MigInstance& m : info.mig) processes.insert(processes.end(), m.processes.begin(), m.processes.end());
  for (const device::ProcessInfo& p : processes) {
    auto it = owners_.find(p.pid);
    const ProcessOwner owner = it == owners_.end() ? ProcessOwner{} : it->second;
    if (owner.job != 0) {
      auto job = jobs_.find(owner.job);
      if (job != jobs_.end() && job->second.rec.placement.OnCard(info.uuid)) continue;  // its own job
    }
    out.emplace_back(p, owner);
  }
  return out;
}

std::string Daemon::ProcessLabel(int pid, const std::string& user, JobId job) {
  std::string label = "pid " + std::to_string(pid);
  if (!user.empty()) label += " (" + user + (job != 0 ? ", job " + std::to_string(job) : "") + ")";
  return label;
}

std::vector<std::string> Daemon::Leftovers(size_t index) const {
  std::vector<std::string> out;
  const device::GpuInfo* info = SampledCard(cards_.gpus[index].uuid);
  if (info == nullptr) return out;
  for (const auto& [p, owner] : Uncovered(*info)) {
    const std::string what = ProcessLabel(p.pid, owner.user, owner.job);
    if (std::find(out.begin(), out.end(), what) == out.end()) out.push_back(what);
  }
  return out;
}

json Daemon::Drain(const Caller& caller, const json& request) {
  StatusOr<std::string> name_field = api::fields::Text(request, "gpu");
  if (!name_field.ok()) return api::ErrorReply(name_field.status());
  StatusOr<std::string> reason_field = api::fields::Text(request, "reason");
  if (!reason_field.ok()) return api::ErrorReply(reason_field.status());
  const std::string name = *name_field, reason = *reason_field;
  if (name.empty()) return api::ErrorReply(InvalidArgument("drain needs a GPU (an index or a UUID)"));
  if (reason.empty()) return api::ErrorReply(InvalidArgument("drain needs a reason (users see it next to the card)"));
  StatusOr<size_t> index = FindCard(name);
  if (!index.ok()) return api::ErrorReply(index.status());
  Gpu& g = cards_.gpus[*index];
  const std::string actor = caller.Who();
  store::GpuDrain d{g.uuid, store::GpuDrain::Kind::kAdmin, actor, reason, Now()};
  if (Status s = store_->SaveDrain(d, g.index); !s.ok()) {
    return api::ErrorReply(Unavailable("cannot record the drain: " + s.message()));
  }
  card_state_[g.uuid].admin_drain = d;
  g.drained = true;
  dirty_ = true;
  spdlog::warn("GPU {} ({}): drained by {}: {}", g.index, g.uuid, actor, reason);
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
  StatusOr<size_t> index = FindCard(name);
  if (!index.ok()) return api::ErrorReply(index.status());
  const Gpu& g = cards_.gpus[*index];
  CardState& c = card_state_[g.uuid];
  const std::string label = "GPU " + std::to_string(g.index);
  if (!c.admin_drain && c.health.state == HealthState::kHealthy) {
    return api::ErrorReply(FailedPrecondition(label + " is not drained"));
  }
  // The current reading decides, not the stored error: a card that reads fine now may return.
  if (c.health.failures > 0) {
    return api::ErrorReply(FailedPrecondition(label + " is not healthy: " + c.health.error +
                                              " (it comes back once it reads fine and nothing is left on it)"));
  }
  if (std::vector<std::string> left = Leftovers(*index); !left.empty()) {
    std::string list;
    for (const std::string& l : left) list += (list.empty() ? "" : ", ") + l;
    return api::ErrorReply(FailedPrecondition(label + " is still held by " + list +
                                              " outside its Rota jobs; stop them first"));
  }
  const std::string actor = caller.Who();
  const Time now = Now();
  if (c.admin_drain) {
    if (Status s = store_->RemoveDrain(g.uuid, store::GpuDrain::Kind::kAdmin, g.index, actor, "resumed", now); !s.ok()) {
      return api::ErrorReply(Unavailable("cannot record the resume: " + s.message()));
    }
    c.admin_drain.reset();
  }
  if (c.health.state != HealthState::kHealthy) {
    if (c.health.state == HealthState::kDrained) {
      if (Status s = store_->RemoveDrain(g.uuid, store::GpuDrain::Kind::kHealth, g.index, actor, "resumed", now);
          !s.ok()) {
        return api::ErrorReply(Unavailable("cannot record the resume: " + s.message()));
      }
    }
    c.health = GpuHealth{};
  }
  UpdateSchedulable(sample_error_.empty() ? &last_sample_ : nullptr);
  dirty_ = true;
  spdlog::warn("GPU {} ({}): resumed by {}", g.index, g.uuid, actor);
  json out = api::OkReply();
  out["gpu"] = g.index;
  out["uuid"] = g.uuid;
  return out;
}

}  // namespace rota::daemon
