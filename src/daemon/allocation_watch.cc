#include "daemon/allocation_watch.h"

#include <signal.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>

#include "api/protocol.h"
#include "core/quota.h"

namespace rota::daemon {

using nlohmann::json;

namespace {

// A gap between samples longer than this (the sampler stalled, rotad was stopped) is not
// counted: the measures say what was seen, not what is guessed.
constexpr Duration kMaxSampleGap = 60;

// The action after a warning: "stuck_action" when the memory was (nearly) full all along.
std::string ActionEvent(const IdleWatch& w, const WatchRules& rules) {
  return w.mean_memory() >= rules.stuck_memory ? "stuck_action" : "idle_action";
}

std::string Percent(double fraction) {
  return std::to_string(static_cast<int>(std::lround(fraction * 100))) + "%";
}

}  // namespace

AllocationWatch::AllocationWatch(Setup setup)
    : store_(setup.store),
      config_(*setup.config),
      jobs_(*setup.jobs),
      cards_(*setup.cards),
      watch_(*setup.watch),
      notes_(setup.notes),
      note_job_(std::move(setup.note_job)),
      stop_(std::move(setup.stop)) {}

AllocationWatch::Reading AllocationWatch::Read(JobId id, const ActiveJob& a) const {
  Reading r;
  const store::Placement& p = a.rec.placement;
  // The job's own processes where the card is shared (a slice, a share): their per-process
  // utilisation and memory are the only honest measure of this job.
  auto own = [&](const std::vector<device::ProcessInfo>& processes) {
    int util = -1;
    MiB used = -1;
    for (const device::ProcessInfo& proc : processes) {
      if (watch_.Owner(proc.pid).job != id) continue;
      if (proc.sm_util >= 0) util = std::max(util, 0) + proc.sm_util;
      if (proc.used_memory >= 0) used = std::max<MiB>(used, 0) + proc.used_memory;
    }
    return std::make_pair(std::min(util, 100), used);
  };
  if (!p.mig_uuid.empty()) {
    for (const device::GpuInfo& info : watch_.last_sample().gpus) {
      for (const device::MigInstance& m : info.mig) {
        if (m.uuid != p.mig_uuid) continue;
        auto [util, used] = own(m.processes);
        r.util = util;
        r.used = used;
        if (m.memory_used >= 0 && m.memory_total > 0)
          r.memory = static_cast<double>(m.memory_used) / m.memory_total;
      }
    }
    return r;
  }
  if (p.alloc.memory > 0) {  // a share
    for (const std::string& uuid : p.gpu_uuids) {
      const device::GpuInfo* info = watch_.Sampled(uuid);
      if (info == nullptr) continue;
      auto [util, used] = own(info->processes);
      r.util = util;
      r.used = used;
      // Alone on the card: the card's utilisation is the job's.
      bool alone = true;
      for (const auto& [jid, other] : jobs_) {
        if (jid == id || other.rec.state != store::JobState::kRunning) continue;
        alone = alone && !other.rec.placement.OnCard(uuid);
      }
      if (r.util < 0 && alone) r.util = info->util_gpu;
      if (used >= 0) r.memory = static_cast<double>(used) / p.alloc.memory;
    }
    return r;
  }
  double util = 0;
  int cards = 0;
  MiB used = 0, total = 0;
  for (const std::string& uuid : p.gpu_uuids) {
    const device::GpuInfo* info = watch_.Sampled(uuid);
    if (info == nullptr) continue;
    if (info->util_gpu >= 0) {
      util += info->util_gpu;
      ++cards;
    }
    if (info->memory_used >= 0 && info->memory_total > 0) {
      used += info->memory_used;
      total += info->memory_total;
    }
  }
  if (cards > 0) r.util = static_cast<int>(std::lround(util / cards));
  if (total > 0) {
    r.memory = static_cast<double>(used) / total;
    r.used = used;
  }
  return r;
}

void AllocationWatch::Measure(Time now) {
  for (auto& [id, a] : jobs_) {
    if (a.rec.state != store::JobState::kRunning) continue;
    const Time last = a.measured_at;
    a.measured_at = now;
    if (last <= 0 || now <= last || now - last > kMaxSampleGap) continue;
    const Reading r = Read(id, a);
    if (r.util < 0) continue;
    const double gpu_seconds =
        AllocationGpus(cards_.state(), a.rec.placement.alloc) * static_cast<double>(now - last);
    a.measures.measured_gpu_seconds += gpu_seconds;
    a.measures.busy_gpu_seconds += gpu_seconds * std::min(r.util, 100) / 100.0;
    if (r.util < config_.watch.idle_util) a.measures.idle_gpu_seconds += gpu_seconds;
  }
}

void AllocationWatch::SaveMeasures(ActiveJob& a) {
  if (a.measures.measured_gpu_seconds <= 0) return;
  if (Status s = store_->AddJobMeasures(a.rec.job.id, a.measures); !s.ok()) {
    spdlog::error("job {}: cannot record its GPU measures: {}", a.rec.job.id, s.message());
  }
  a.measures = {};
}

void AllocationWatch::Watch(Time now) {
  const WatchRules& rules = config_.watch;
  std::erase_if(watches_, [this](const auto& kv) {
    auto it = jobs_.find(kv.first);
    return it == jobs_.end() || it->second.rec.state != store::JobState::kRunning;
  });
  for (auto& [id, a] : jobs_) {
    if (!a.Live() || a.term_sent != 0 || a.rec.kill_at != kNever) continue;
    const Reading r = Read(id, a);
    auto [it, fresh] = watches_.try_emplace(id, a.rec.start_time);
    IdleWatch& w = it->second;
    const WatchAlert alert = w.Observe(now, r.util, r.memory, rules);
    const std::string window = FormatDuration(rules.idle_after);
    const std::string measured =
        "GPU utilisation " + std::to_string(static_cast<int>(std::lround(w.mean_util()))) +
        "% over the last " + window +
        (w.mean_memory() >= 0 ? ", memory " + Percent(w.mean_memory()) + " in use" : "");
    const std::string action = rules.reclaim ? "it is stopped (its signal, grace, then the stop" +
                                                   std::string(a.rec.job.requeue ? "; requeued)" : ")")
                                             : "the admins are told";
    const int keeps = w.keeps_left(now, rules, config_.policy.zone);
    switch (alert) {
      case WatchAlert::kIdleWarning:
      case WatchAlert::kStuckWarning:
        note_job_(id,
                  std::string(alert == WatchAlert::kStuckWarning ? "Maybe stuck: " : "Idle: ") + measured +
                      "; `rota keep " + std::to_string(id) + "` keeps it (" + std::to_string(keeps) +
                      " left today), else at " + FormatDuration(rules.act_after) + " idle " + action,
                  now);
        {
          notify::Event e =
              notes_->JobEvent(alert == WatchAlert::kStuckWarning ? "stuck_warning" : "idle_warning", a.rec);
          e.minutes = rules.idle_after / 60;
          e.reason = measured + "; at " + FormatDuration(rules.act_after) + " idle " + action;
          notes_->Notify(e);
        }
        break;
      case WatchAlert::kAction:
        if (rules.reclaim) {
          a.stop_reason = "Reclaimed: idle for " + FormatDuration(rules.act_after) + " (" + measured + ")";
          note_job_(id, a.stop_reason, now);
          notify::Event e = notes_->JobEvent(ActionEvent(w, rules), a.rec);
          e.reason = a.stop_reason;
          notes_->Notify(e);
          stop_(a, now);
        } else {
          note_job_(
              id, "Idle for " + FormatDuration(rules.act_after) + " (" + measured + "); the admins were told",
              now);
          spdlog::warn("admins: job {} of {} holds GPU(s) {} idle for {}", id, a.rec.job.user,
                       cards_.IndexList(a.rec.placement.alloc), FormatDuration(rules.act_after));
          notify::Event e = notes_->JobEvent(ActionEvent(w, rules), a.rec);
          e.reason =
              "idle for " + FormatDuration(rules.act_after) + " (" + measured + "); the admins were told";
          notes_->Notify(e);
        }
        break;
      case WatchAlert::kBusyAgain:
        note_job_(id, "Busy again: " + measured + "; the idle warning is withdrawn", now);
        break;
      case WatchAlert::kNone:
        break;
    }
    // A share that uses more than it declared endangers its neighbours on the card.
    const MiB declared = a.rec.placement.alloc.memory;
    const bool over = declared > 0 && r.used >= 0 &&
                      static_cast<double>(r.used) > static_cast<double>(declared) * rules.over_memory;
    if (r.used >= 0 && !over) a.over_memory_since = 0;  // back under: the clock starts again
    if (!over) continue;
    if (a.over_memory_since == 0) a.over_memory_since = now;
    const std::string uses =
        "uses " + FormatMemory(r.used) + " of the " + FormatMemory(declared) + " it declared";
    const std::string then = rules.over_memory_stop ? "it is stopped (its signal, grace, then the stop" +
                                                          std::string(a.rec.job.requeue ? "; requeued)" : ")")
                                                    : "the admins are told";
    if (!a.over_memory_noted) {
      a.over_memory_noted = true;
      note_job_(id,
                "Over its memory: " + uses + "; others on GPU " + cards_.IndexList(a.rec.placement.alloc) +
                    " may run out; if it stays over for " + FormatDuration(rules.over_memory_after) + ", " +
                    then,
                now);
      spdlog::warn("admins: job {} of {} uses {} on a {} share", id, a.rec.job.user, FormatMemory(r.used),
                   FormatMemory(declared));
      notify::Event e = notes_->JobEvent("over_memory", a.rec);
      e.reason = uses;
      notes_->Notify(e);
    } else if (!a.over_memory_acted && now - a.over_memory_since >= rules.over_memory_after) {
      a.over_memory_acted = true;
      const std::string how_long = FormatDuration(now - a.over_memory_since);
      notify::Event e = notes_->JobEvent("over_memory_action", a.rec);
      if (rules.over_memory_stop) {
        a.stop_reason = "Stopped: over its memory for " + how_long + " (" + uses + ")";
        note_job_(id, a.stop_reason, now);
        e.reason = "stopped";
        stop_(a, now);
      } else {
        note_job_(id, "Over its memory for " + how_long + " (" + uses + "); the admins were told", now);
        spdlog::warn("admins: job {} of {} over its memory for {}", id, a.rec.job.user, how_long);
        e.reason = "the admins were told";
      }
      e.minutes = (now - a.over_memory_since) / kMinute;
      notes_->Notify(e);
    }
  }
}

json AllocationWatch::Keep(const Caller& caller, JobId id, Time now) {
  auto job = jobs_.find(id);
  if (job == jobs_.end() || job->second.rec.state != store::JobState::kRunning) {
    return api::ErrorReply(FailedPrecondition("job " + std::to_string(id) + " is not running"));
  }
  auto [it, fresh] = watches_.try_emplace(id, job->second.rec.start_time);
  if (Status s = it->second.Keep(now, config_.watch, config_.policy.zone); !s.ok()) return api::ErrorReply(s);
  const int left = it->second.keeps_left(now, config_.watch, config_.policy.zone);
  const std::string who = caller.Who();
  note_job_(id,
            "Kept by " + who + ": the idle clock restarts (" + std::to_string(left) + " keeps left today)",
            now);
  json out = api::OkReply();
  out["job_id"] = id;
  out["keeps_left"] = left;
  return out;
}

}  // namespace rota::daemon
