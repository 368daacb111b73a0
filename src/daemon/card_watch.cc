#include "daemon/card_watch.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "daemon/identity.h"

namespace rota::daemon {

namespace {

// How far up the parent chain a GPU process is followed to find its job's shepherd or session:
// deep enough for launcher -> python -> worker trees, bounded against cycles in a racing /proc.
constexpr int kMaxAncestors = 32;

bool Held(const device::GpuInfo& info) {
  if (!info.processes.empty()) return true;
  return std::any_of(info.mig.begin(), info.mig.end(),
                     [](const device::MigInstance& m) { return !m.processes.empty(); });
}

}  // namespace

CardWatch::ProcessReader CardWatch::SystemProcesses() {
  ProcessReader r;
  r.identity = [](pid_t pid) { return exec::ReadProcess(pid); };
  r.start_time = [](pid_t pid) { return exec::ProcessStartTime(pid); };
  r.user_name = [](uid_t uid) { return UserName(uid); };
  return r;
}

CardWatch::CardWatch(store::JobStore& store, ProcessReader reader)
    : store_(store), reader_(std::move(reader)) {}

Status CardWatch::LoadDrains() {
  StatusOr<std::vector<store::GpuDrain>> drains = store_.LoadDrains();
  if (!drains.ok()) return drains.status();
  for (const store::GpuDrain& d : *drains) {
    CardState& c = cards_[d.uuid];
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

void CardWatch::Forget() {
  user_names_.clear();
  known_.clear();
}

void CardWatch::TakeSample(const StatusOr<device::Snapshot>& sample, const RunningJobs& running, Time now) {
  if (!sample.ok()) {
    if (sample_error_ != sample.status().message())
      spdlog::error("GPUs: sample failed: {}", sample.status().message());
    sample_error_ = sample.status().message();
    return;
  }
  last_sample_ = *sample;
  sampled_at_ = now;
  sample_error_.clear();
  std::unordered_map<int, ProcessOwner> owners;
  std::unordered_map<int, KnownProcess> known;
  auto add = [&](const std::vector<device::ProcessInfo>& processes) {
    for (const device::ProcessInfo& p : processes) {
      if (owners.count(p.pid)) continue;
      // The same process as last time (same start time) keeps its owner while that job runs:
      // one small read instead of walking /proc again.
      StatusOr<unsigned long long> started = reader_.start_time(p.pid);
      auto it = known_.find(p.pid);
      if (started.ok() && it != known_.end() && it->second.start_time == *started) {
        const ProcessOwner& was = it->second.owner;
        if (was.job == 0 || running.cgroups.count(was.job)) {
          owners[p.pid] = was;
          known[p.pid] = it->second;
          continue;
        }
      }
      owners[p.pid] = Attribute(p.pid, running);
      if (started.ok() && owners[p.pid].uid >= 0) known[p.pid] = KnownProcess{*started, owners[p.pid]};
    }
  };
  for (const device::GpuInfo& info : last_sample_.gpus) {
    add(info.processes);
    for (const device::MigInstance& m : info.mig) add(m.processes);
    for (int xid : info.xids)
      spdlog::warn("GPU {} ({}): Xid {} reported by the driver", info.index, info.uuid, xid);
  }
  owners_ = std::move(owners);
  known_ = std::move(known);  // processes no longer on a card are forgotten
}

CardWatch::ProcessOwner CardWatch::Attribute(int pid, const RunningJobs& running) {
  ProcessOwner owner;
  StatusOr<exec::ProcessIdentity> id = reader_.identity(pid);
  if (!id.ok()) return owner;
  owner.uid = id->uid;
  auto name = user_names_.find(id->uid);
  if (name == user_names_.end()) {
    name = user_names_.emplace(id->uid, reader_.user_name(id->uid).value_or(std::to_string(id->uid))).first;
  }
  owner.user = name->second;
  // Through the job's cgroup: everything the job started, however it daemonised.
  for (const auto& [job, cgroup] : running.cgroups) {
    if (exec::InCgroup(id->cgroup, cgroup)) {
      owner.job = job;
      return owner;
    }
  }
  // Without cgroups: up the parent chain to a shepherd or a session's client.
  pid_t at = pid;
  for (int depth = 0; depth < kMaxAncestors && at > 1; ++depth) {
    if (auto it = running.pids.find(at); it != running.pids.end()) {
      owner.job = it->second;
      return owner;
    }
    StatusOr<exec::ProcessIdentity> parent = depth == 0 ? id : reader_.identity(at);
    if (!parent.ok()) break;
    at = parent->ppid;
  }
  return owner;
}

CardWatch::Observation CardWatch::ObserveCards(const std::vector<Gpu>& cards, int stuck,
                                               const HealthRules& rules, Time now) {
  Observation out;
  for (size_t i = 0; i < cards.size(); ++i) {
    const Gpu& g = cards[i];
    if (stuck >= 0 && g.index != stuck) continue;
    std::string error = sample_error_;
    bool held = false;
    if (error.empty()) {
      const device::GpuInfo* info = Sampled(g.uuid);
      if (info == nullptr) {
        error = "missing from enumeration";
      } else {
        if (!info->health.ok()) error = info->health.message();
        held = Held(*info);
      }
    }
    CardState& c = cards_[g.uuid];
    const std::string previous_error = c.health.error;
    const HealthChange change = ObserveHealth(c.health, error, held, rules);
    if (change.changed()) {
      out.changed = true;
      if (change.to == HealthState::kDrained) {
        spdlog::error("GPU {} ({}): drained after {} failed samples: {}; its jobs are stopped", g.index,
                      g.uuid, c.health.failures, error);
        store::GpuDrain d{g.uuid, store::GpuDrain::Kind::kHealth, "rotad", error, now};
        if (Status s = store_.SaveDrain(d, g.index); !s.ok())
          spdlog::error("recording the drain: {}", s.message());
        out.newly_drained.emplace_back(
            i, "drained after " + std::to_string(c.health.failures) + " failed samples: " + error);
      } else if (change.from == HealthState::kDrained) {
        spdlog::warn("GPU {} ({}): healthy and empty again; back in service", g.index, g.uuid);
        if (Status s = store_.RemoveDrain(g.uuid, store::GpuDrain::Kind::kHealth, g.index, "rotad",
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
        if (Status s = store_.AddGpuEvent({now, g.uuid, g.index, HealthStateName(change.to), why, "rotad"});
            !s.ok()) {
          spdlog::error("recording a GPU event: {}", s.message());
        }
      }
    }
    if (c.health.state == HealthState::kDrained) out.drained.push_back(i);
  }
  return out;
}

const device::GpuInfo* CardWatch::Sampled(const std::string& uuid) const {
  for (const device::GpuInfo& info : last_sample_.gpus) {
    if (info.uuid == uuid) return &info;
  }
  return nullptr;
}

CardWatch::ProcessOwner CardWatch::Owner(int pid) const {
  auto it = owners_.find(pid);
  return it == owners_.end() ? ProcessOwner{} : it->second;
}

const CardWatch::CardState& CardWatch::State(const std::string& uuid) const {
  static const CardState kFine;
  auto it = cards_.find(uuid);
  return it == cards_.end() ? kFine : it->second;
}

std::vector<std::pair<device::ProcessInfo, CardWatch::ProcessOwner>> CardWatch::Uncovered(
    const device::GpuInfo& info, const PlacedOn& placed_on) const {
  std::vector<std::pair<device::ProcessInfo, ProcessOwner>> out;
  std::vector<device::ProcessInfo> processes = info.processes;
  for (const device::MigInstance& m : info.mig)
    processes.insert(processes.end(), m.processes.begin(), m.processes.end());
  for (const device::ProcessInfo& p : processes) {
    const ProcessOwner owner = Owner(p.pid);
    if (owner.job != 0 && placed_on(owner.job, info.uuid)) continue;  // its own job
    out.emplace_back(p, owner);
  }
  return out;
}

std::vector<std::string> CardWatch::Leftovers(const std::string& uuid, const PlacedOn& placed_on) const {
  std::vector<std::string> out;
  const device::GpuInfo* info = Sampled(uuid);
  if (info == nullptr) return out;
  for (const auto& [p, owner] : Uncovered(*info, placed_on)) {
    const std::string what = ProcessLabel(p.pid, owner.user, owner.job);
    if (std::find(out.begin(), out.end(), what) == out.end()) out.push_back(what);
  }
  return out;
}

std::string CardWatch::ProcessLabel(int pid, const std::string& user, JobId job) {
  std::string label = "pid " + std::to_string(pid);
  if (!user.empty()) label += " (" + user + (job != 0 ? ", job " + std::to_string(job) : "") + ")";
  return label;
}

Status CardWatch::Drain(const Gpu& g, const std::string& actor, const std::string& reason, Time now) {
  store::GpuDrain d{g.uuid, store::GpuDrain::Kind::kAdmin, actor, reason, now};
  if (Status s = store_.SaveDrain(d, g.index); !s.ok())
    return Unavailable("cannot record the drain: " + s.message());
  cards_[g.uuid].admin_drain = d;
  spdlog::warn("GPU {} ({}): drained by {}: {}", g.index, g.uuid, actor, reason);
  return Status();
}

Status CardWatch::Resume(const Gpu& g, const std::vector<std::string>& leftovers, const std::string& actor,
                         Time now) {
  CardState& c = cards_[g.uuid];
  const std::string label = "GPU " + std::to_string(g.index);
  if (!c.admin_drain && c.health.state == HealthState::kHealthy)
    return FailedPrecondition(label + " is not drained");
  // The current reading decides, not the stored error: a card that reads fine now may return.
  if (c.health.failures > 0) {
    return FailedPrecondition(label + " is not healthy: " + c.health.error +
                              " (it comes back once it reads fine and nothing is left on it)");
  }
  if (!leftovers.empty()) {
    std::string list;
    for (const std::string& l : leftovers) list += (list.empty() ? "" : ", ") + l;
    return FailedPrecondition(label + " is still held by " + list +
                              " outside its Rota jobs; stop them first");
  }
  if (c.admin_drain) {
    if (Status s = store_.RemoveDrain(g.uuid, store::GpuDrain::Kind::kAdmin, g.index, actor, "resumed", now);
        !s.ok()) {
      return Unavailable("cannot record the resume: " + s.message());
    }
    c.admin_drain.reset();
  }
  if (c.health.state != HealthState::kHealthy) {
    if (c.health.state == HealthState::kDrained) {
      if (Status s =
              store_.RemoveDrain(g.uuid, store::GpuDrain::Kind::kHealth, g.index, actor, "resumed", now);
          !s.ok()) {
        return Unavailable("cannot record the resume: " + s.message());
      }
    }
    c.health = GpuHealth{};
  }
  spdlog::warn("GPU {} ({}): resumed by {}", g.index, g.uuid, actor);
  return Status();
}

}  // namespace rota::daemon
