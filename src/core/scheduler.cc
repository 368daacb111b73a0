// Tested by scheduler_test.cc (hand-made states) and scheduler_random_test.cc (against the
// reference scheduler in src/testing on seeded random states).
//
// One pass: (1) stops that are due for running jobs; (2) pending jobs in order (submit time for
// fifo and backfill, multifactor priority for rota); each one either starts now, if it fits
// without touching any capacity promised to a job ahead of it, or gets a reservation at the
// earliest time it fits (every blocked job up to Policy::plan_depth for fifo and rota, only the
// first for backfill: EASY), possibly after preempting lower tiers (rota). Jobs past the depth
// are still started when they fit now, and get an estimated start.
#include "core/scheduler.h"

#include <algorithm>
#include <unordered_set>

#include "core/capacity.h"
#include "core/priority.h"
#include "core/quota.h"
#include "core/usage.h"

namespace rota {

namespace {

// Preemption attempts that found no victim set are expensive; a pass makes at most this many.
constexpr int kMaxFailedPreemptions = 64;

struct Entry {
  int index;  // into state.pending
  double gpus;
  PriorityFactors factors;
  bool over_quota;
};

void HandleRunning(const ClusterState& state, const Policy& policy, Time now, Decisions& out) {
  for (const RunningJob& r : state.running) {
    const Job& j = r.job;
    if (r.kill_at != kNever) {
      if (now >= r.kill_at) {
        out.kills.push_back({j.id, r.preempted ? StopCause::kPreempted : StopCause::kTimeLimit});
      } else {
        out.next_wakeup = std::min(out.next_wakeup, r.kill_at);
      }
      continue;
    }
    if (!policy.enforce_time_limits) continue;
    Time end = r.start_time + j.time_limit;
    Time warn = std::max(r.start_time, end - j.grace);
    if (now >= warn && !r.signalled) {
      // Never kill without warning: a job found past its end (the daemon was down) gets its grace.
      Time kill_at = now >= end ? now + j.grace : end;
      out.signals.push_back({j.id, j.signal, kill_at, StopCause::kTimeLimit, 0, false});
      out.next_wakeup = std::min(out.next_wakeup, kill_at);
    } else if (!r.signalled) {
      out.next_wakeup = std::min(out.next_wakeup, warn);
    } else {
      out.next_wakeup = std::min(out.next_wakeup, std::max(end, now + 1));
    }
  }
}

class Pass {
 public:
  Pass(const ClusterState& state, const Policy& policy, Time now, Decisions& out)
      : state_(state), policy_(policy), now_(now), out_(out), plan_(state, policy, now),
        priority_(state, policy, now), quota_(state, policy, now) {
    for (const Job& j : state.pending) active_.insert(j.id);
    for (const RunningJob& r : state.running) active_.insert(r.job.id);
    for (const Gpu& g : state.gpus) {
      if (!g.drained) usable_gpus_ += g.mig.empty() ? 1.0 : 1.0;
    }
    preempting_.assign(state.running.size(), 0);
  }

  void Run() {
    std::vector<Entry> order = Order();
    const bool fifo = policy_.algorithm == Algorithm::kFifo;
    const int depth = policy_.algorithm == Algorithm::kBackfill ? 1 : std::max(0, policy_.plan_depth);
    int reserved = 0;
    bool blocked_seen = false;
    Time fifo_floor = now_;
    double backlog = 0;  // GPU-seconds of blocked jobs ahead, for estimates past the depth
    Time last_reserved = now_;
    for (const Entry& e : order) {
      const Job& job = state_.pending[e.index];
      PendingInfo info;
      info.job = job.id;
      info.factors = e.factors;
      if (!DependenciesMet(job)) {
        info.reason = WaitReason::kDependency;
        out_.pending.push_back(info);
        continue;
      }
      if (!plan_.Possible(job.request)) {
        info.reason = WaitReason::kImpossible;
        out_.pending.push_back(info);
        continue;
      }
      const Duration d = std::max<Duration>(1, job.time_limit);
      const double need = e.gpus * static_cast<double>(d);
      QuotaVerdict verdict = quota_.Check(job, need);
      bool as_explore = false;
      if (verdict == QuotaVerdict::kExhausted) {
        if (policy_.algorithm == Algorithm::kRota && policy_.quota.overflow_as_explore) {
          as_explore = true;
        } else {
          info.reason = WaitReason::kQuotaExhausted;
          info.expected_start = WeekStart(now_, policy_) + kWeek;
          info.estimated = true;
          quota_blocked_ = true;
          out_.pending.push_back(info);
          continue;
        }
      }
      const int uid = plan_.UserId(job.user);
      const bool physically = plan_.PhysicallyFitsNow(job.request);
      if (!(fifo && blocked_seen) && physically) {
        Placement p = plan_.Earliest(job.request, d, uid, now_, /*now_only=*/true);
        if (p.start == now_) {
          plan_.Commit(p, job.request, now_, now_ + d);
          quota_.Take(job, need, verdict == QuotaVerdict::kFromPool);
          bool preemptible = policy_.algorithm == Algorithm::kRota &&
                             (as_explore || policy_.IsPreemptible(job.tier));
          out_.starts.push_back(
              {job.id, plan_.ToAllocation(p, job.request), preemptible, verdict == QuotaVerdict::kFromPool});
          continue;
        }
      }
      // Blocked: say why.
      if (fifo && blocked_seen) {
        info.reason = WaitReason::kPriority;
      } else if (physically) {
        bool booking = !state_.bookings.empty() &&
                       plan_.Earliest(job.request, d, uid, now_, true, /*ignore_bookings=*/true).start == now_;
        info.reason = booking ? WaitReason::kBooking : WaitReason::kPriority;
      } else {
        info.reason = blocked_seen ? WaitReason::kPriority : WaitReason::kResources;
      }
      if (info.reason == WaitReason::kPriority && e.factors.time_of_day < 1) info.reason = WaitReason::kPeakHours;
      if (policy_.algorithm == Algorithm::kRota && policy_.preemption && !as_explore) {
        if (Preempt(job, d, uid)) info.reason = WaitReason::kResources;
      }
      if (reserved < depth) {
        Placement p = plan_.Earliest(job.request, d, uid, fifo ? fifo_floor : now_, false);
        if (p.start != kNever) {
          plan_.Commit(p, job.request, p.start, p.start + d);
          info.expected_start = p.start;
          last_reserved = std::max(last_reserved, p.start);
          if (fifo) fifo_floor = p.start;
          if (p.start > now_) out_.next_wakeup = std::min(out_.next_wakeup, p.start);
        }
        ++reserved;
      } else if (policy_.algorithm == Algorithm::kBackfill && reserved < policy_.plan_depth) {
        // EASY: later blocked jobs get no reservation, only an estimate from the plan as it is.
        info.expected_start = plan_.Earliest(job.request, d, uid, now_, false).start;
        info.estimated = true;
        ++reserved;
      } else {
        // Past the planning depth: spread the backlog ahead over the usable GPUs.
        Time fluid = now_ + static_cast<Time>(backlog / std::max(1.0, usable_gpus_));
        info.expected_start = std::max(last_reserved, fluid);
        info.estimated = true;
      }
      backlog += need;
      blocked_seen = true;
      out_.pending.push_back(info);
    }
    Wakeups();
  }

 private:
  std::vector<Entry> Order() {
    std::vector<Entry> order;
    order.reserve(state_.pending.size());
    for (size_t i = 0; i < state_.pending.size(); ++i) {
      const Job& j = state_.pending[i];
      double gpus = RequestGpus(state_, j.request);
      double need = gpus * static_cast<double>(std::max<Duration>(1, j.time_limit));
      bool over = quota_.Check(j, need) == QuotaVerdict::kExhausted && policy_.quota.overflow_as_explore &&
                  policy_.algorithm == Algorithm::kRota;
      order.push_back({static_cast<int>(i), gpus, priority_.Factors(j, gpus, over), over});
    }
    const auto& pending = state_.pending;
    if (policy_.algorithm == Algorithm::kRota) {
      std::sort(order.begin(), order.end(), [&pending](const Entry& a, const Entry& b) {
        if (a.factors.priority != b.factors.priority) return a.factors.priority > b.factors.priority;
        const Job& x = pending[a.index];
        const Job& y = pending[b.index];
        return x.submit_time != y.submit_time ? x.submit_time < y.submit_time : x.id < y.id;
      });
    } else {
      std::sort(order.begin(), order.end(), [&pending](const Entry& a, const Entry& b) {
        const Job& x = pending[a.index];
        const Job& y = pending[b.index];
        return x.submit_time != y.submit_time ? x.submit_time < y.submit_time : x.id < y.id;
      });
    }
    return order;
  }

  bool DependenciesMet(const Job& job) const {
    for (JobId dep : job.after) {
      if (dep != job.id && active_.count(dep)) return false;
    }
    return true;
  }

  // Preempts lower-tier preemptible jobs so that `job` can start within their grace, choosing the
  // least work lost (fewest GPU-seconds done, youngest first). Returns whether it preempted.
  bool Preempt(const Job& job, Duration d, int uid) {
    if (failed_preemptions_ >= kMaxFailedPreemptions) return false;
    struct Candidate {
      int running;
      double lost;
      Time start;
    };
    std::vector<Candidate> cands;
    for (size_t ri = 0; ri < state_.running.size(); ++ri) {
      const RunningJob& r = state_.running[ri];
      if (preempting_[ri] || r.kill_at != kNever) continue;
      Tier tier = r.preemptible ? Tier::kExplore : r.job.tier;
      bool preemptible = r.preemptible || policy_.IsPreemptible(r.job.tier);
      if (!preemptible || tier >= job.tier) continue;
      double lost = AllocationGpus(state_, r.alloc) * static_cast<double>(std::max<Time>(0, now_ - r.start_time));
      cands.push_back({static_cast<int>(ri), lost, r.start_time});
    }
    if (cands.empty()) return false;
    Time current = plan_.Earliest(job.request, d, uid, now_, false).start;
    std::sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) {
      return a.lost != b.lost ? a.lost < b.lost : a.start > b.start;
    });
    struct Chosen {
      int running;
      Time old_end;
      Time kill_at;
    };
    std::vector<Chosen> chosen;
    auto deadline = [&chosen, this] {
      Time t = now_;
      for (const Chosen& c : chosen) t = std::max(t, c.kill_at);
      return t;
    };
    auto fits_by = [&](Time t) { return plan_.Earliest(job.request, d, uid, now_, false).start <= t; };
    bool found = false;
    for (const Candidate& c : cands) {
      Time kill_at = now_ + std::max<Duration>(0, state_.running[c.running].job.grace);
      chosen.push_back({c.running, plan_.SetRunningEnd(c.running, std::max(kill_at, now_ + 1)), kill_at});
      if (fits_by(std::max(deadline(), now_ + 1))) {
        found = true;
        break;
      }
    }
    if (!found || current <= std::max(deadline(), now_ + 1)) {
      for (auto it = chosen.rbegin(); it != chosen.rend(); ++it) plan_.SetRunningEnd(it->running, it->old_end);
      ++failed_preemptions_;
      return false;
    }
    // Drop victims that turn out not to be needed (latest chosen first is kept: it completed the set).
    for (size_t i = chosen.size() - 1; i-- > 0;) {
      Time moved = plan_.SetRunningEnd(chosen[i].running, chosen[i].old_end);
      Chosen saved = chosen[i];
      chosen.erase(chosen.begin() + static_cast<long>(i));
      if (!fits_by(std::max(deadline(), now_ + 1))) {
        plan_.SetRunningEnd(saved.running, moved);
        chosen.insert(chosen.begin() + static_cast<long>(i), saved);
      }
    }
    for (const Chosen& c : chosen) {
      const RunningJob& r = state_.running[c.running];
      preempting_[c.running] = 1;
      out_.signals.push_back({r.job.id, r.job.signal, c.kill_at, StopCause::kPreempted, job.id, r.job.requeue});
      out_.next_wakeup = std::min(out_.next_wakeup, c.kill_at);
    }
    return true;
  }

  void Wakeups() {
    if (state_.pending.empty()) return;
    out_.next_wakeup = std::min(out_.next_wakeup, NextTimeOfDayChange(policy_, now_));
    for (const Booking& b : state_.bookings) {
      if (b.start > now_) out_.next_wakeup = std::min(out_.next_wakeup, b.start);
      if (b.end > now_) out_.next_wakeup = std::min(out_.next_wakeup, b.end);
    }
    if (quota_blocked_) out_.next_wakeup = std::min(out_.next_wakeup, WeekStart(now_, policy_) + kWeek);
  }

  const ClusterState& state_;
  const Policy& policy_;
  const Time now_;
  Decisions& out_;
  CapacityPlan plan_;
  PriorityModel priority_;
  QuotaBook quota_;
  std::unordered_set<JobId> active_;
  std::vector<char> preempting_;
  double usable_gpus_ = 0;
  int failed_preemptions_ = 0;
  bool quota_blocked_ = false;
};

}  // namespace

Decisions Schedule(const ClusterState& state, const Policy& policy, Time now) {
  Decisions out;
  HandleRunning(state, policy, now, out);
  Pass(state, policy, now, out).Run();
  return out;
}

}  // namespace rota
