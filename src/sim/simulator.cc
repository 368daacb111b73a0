// Tested by simulator_test.cc (hand-computed traces) and the Philly slice test.
//
// The state handed to Schedule() is kept between calls and changed in place: pending and
// running jobs are removed by swapping with the last element, so an event costs one pass of the
// core plus O(changes). Usage is charged when a run ends, as the daemon does.
#include "sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <queue>
#include <unordered_map>

#include "core/quota.h"
#include "core/scheduler.h"
#include "core/usage.h"

namespace rota::sim {

namespace {

// splitmix64: small, seeded, reproducible everywhere.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : s_(seed) {}
  std::uint64_t Next() {
    std::uint64_t z = (s_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

 private:
  std::uint64_t s_;
};

struct SimJob {
  const TraceJob* trace = nullptr;
  Job job;
  Duration remaining = 0;  // run time still to do
  Time first_start = -1;
  Time run_start = -1;     // start of the current run
  Time signalled_at = -1;  // preemption signal of the current run
};

class Replay {
 public:
  Replay(const Trace& trace, const SimConfig& config) : trace_(trace), config_(config), rng_(config.seed) {
    policy_ = config.policy;
    policy_.enforce_time_limits = false;
    policy_.estimate_starts = false;
    for (int i = 0; i < config.gpus; ++i) {
      Gpu g;
      g.index = i;
      g.uuid = "GPU-sim-" + std::to_string(i);
      g.model = "simulated";
      g.memory = config.gpu_memory;
      g.node = config.gpus_per_node > 0 ? i / config.gpus_per_node : 0;
      state_.gpus.push_back(std::move(g));
    }
  }

  SimResult Run() {
    SimResult result;
    result.policy = AlgorithmName(policy_.algorithm);
    jobs_.resize(trace_.jobs.size());
    pending_pos_.assign(trace_.jobs.size() + 1, 0);
    removed_.assign(trace_.jobs.size() + 1, 0);
    for (size_t i = 0; i < trace_.jobs.size(); ++i) {
      const TraceJob& t = trace_.jobs[i];
      SimJob& s = jobs_[i];
      s.trace = &t;
      s.job.id = static_cast<JobId>(i + 1);
      s.job.user = !t.user.empty() ? t.user : (!t.project.empty() ? t.project : "user");
      s.job.project = t.project;
      s.job.submit_time = trace_.absolute_times ? t.submit : config_.epoch + t.submit;
      s.job.tier = ParseTier(t.tier).value_or(Tier::kRegular);
      s.job.requeue = true;
      if (t.gpus > 0) {
        s.job.request.kind = RequestKind::kWholeGpus;
        s.job.request.gpus = t.gpus;
      } else {
        s.job.request.kind = RequestKind::kMemShare;
        s.job.request.memory =
            std::max<MiB>(1, static_cast<MiB>(std::llround(t.gpu_fraction * static_cast<double>(config_.gpu_memory))));
      }
      s.remaining = std::max<Duration>(1, t.duration);
    }
    // Trace jobs are sorted by submit; relative offsets keep that order.
    size_t next_arrival = 0;
    Time now = jobs_.empty() ? 0 : jobs_[0].job.submit_time;
    Time idle_since = kNever;  // since when nothing runs, starts or is left to arrive
    while (true) {
      Finish(now, result);
      while (next_arrival < jobs_.size() && jobs_[next_arrival].job.submit_time <= now) {
        Arrive(jobs_[next_arrival], now);
        ++next_arrival;
      }
      Decisions d = Schedule(state_, policy_, now);
      ++result.schedule_calls;
      Apply(d, now, result);
      Compact();
      // The next event.
      Time next = kNever;
      if (next_arrival < jobs_.size()) next = jobs_[next_arrival].job.submit_time;
      for (const RunningJob& r : state_.running) {
        const SimJob& s = jobs_[r.job.id - 1];
        next = std::min(next, s.run_start + s.remaining);
        if (r.kill_at != kNever) next = std::min(next, r.kill_at);
      }
      if (d.next_wakeup > now) next = std::min(next, d.next_wakeup);
      if (next == kNever) break;
      if (state_.running.empty() && next_arrival >= jobs_.size() && d.starts.empty() &&
          !(d.next_wakeup > now && d.next_wakeup != kNever)) {
        break;
      }
      // Jobs left waiting on an idle cluster wait for a quota week (the only thing that changes
      // when nothing runs or arrives). Once a whole week has passed idle, nothing more can start:
      // without this, a job larger than a week's quota would wake the replay every week forever.
      if (state_.running.empty() && next_arrival >= jobs_.size() && d.starts.empty()) {
        idle_since = std::min(idle_since, now);
        if (now - idle_since > 2 * kWeek) break;
      } else {
        idle_since = kNever;
      }
      now = std::max(now + 1, next);
    }
    result.unfinished = static_cast<std::int64_t>(state_.pending.size());
    result.metrics = ComputeMetrics(outcomes_, static_cast<double>(config_.gpus));
    // An outcome spans first start to end, which for a requeued job includes its time back in the
    // queue: utilisation comes from the runs actually charged instead.
    if (result.metrics.makespan > 0) {
      const double capacity =
          static_cast<double>(config_.gpus) * static_cast<double>(result.metrics.makespan);
      result.metrics.utilisation = busy_gpu_seconds_ / capacity;
    }
    if (config_.keep_outcomes) result.outcomes = std::move(outcomes_);
    return result;
  }

 private:
  Duration Estimate(const SimJob& s) {
    Duration actual = s.remaining;
    switch (config_.estimates) {
      case Estimates::kExact: return actual;
      case Estimates::kNoisy: {
        double f = 1.0 + rng_.Uniform() * std::max(0.0, config_.noise_max - 1.0);
        return std::max<Duration>(1, static_cast<Duration>(std::ceil(static_cast<double>(actual) * f)));
      }
      case Estimates::kHistory: {
        auto it = history_.find(s.job.user);
        if (it == history_.end() || it->second.empty()) return config_.history_default;
        double sum = 0;
        for (Duration x : it->second) sum += static_cast<double>(x);
        return std::max<Duration>(1, static_cast<Duration>(sum / static_cast<double>(it->second.size())));
      }
    }
    return actual;
  }

  void Arrive(SimJob& s, Time /*now*/) {
    s.job.time_limit = Estimate(s);
    pending_pos_[static_cast<size_t>(s.job.id)] = state_.pending.size();
    state_.pending.push_back(s.job);
  }

  // Marks a pending job for removal; Compact() removes the marked ones keeping the others in
  // order (arrival order, which keeps the core's sort by submit time cheap).
  void RemovePending(JobId id) {
    removed_[static_cast<size_t>(id)] = 1;
    any_removed_ = true;
  }

  void Compact() {
    if (!any_removed_) return;
    auto& p = state_.pending;
    size_t out = 0;
    for (size_t i = 0; i < p.size(); ++i) {
      const size_t id = static_cast<size_t>(p[i].id);
      if (removed_[id]) {
        removed_[id] = 0;
        continue;
      }
      if (out != i) p[out] = std::move(p[i]);
      pending_pos_[id] = out++;
    }
    p.resize(out);
    any_removed_ = false;
  }

  RunningJob TakeRunning(size_t i) {
    RunningJob r = std::move(state_.running[i]);
    if (i + 1 != state_.running.size()) state_.running[i] = std::move(state_.running.back());
    state_.running.pop_back();
    return r;
  }

  void Charge(const RunningJob& r, Time end) {
    double gpus = AllocationGpus(state_, r.alloc);
    ChargeRun(state_.user_usage[r.job.user], gpus, r.start_time, end, r.from_pool, policy_);
    if (!r.job.project.empty()) {
      ChargeRun(state_.project_usage[r.job.project], gpus, r.start_time, end, r.from_pool, policy_);
    }
    busy_gpu_seconds_ += gpus * static_cast<double>(end - r.start_time);
  }

  // Ends runs that completed or were killed by `now`.
  void Finish(Time now, SimResult& result) {
    for (size_t i = 0; i < state_.running.size();) {
      const RunningJob& r = state_.running[i];
      SimJob& s = jobs_[r.job.id - 1];
      Time done = s.run_start + s.remaining;
      if (done <= now && (r.kill_at == kNever || done <= r.kill_at)) {
        RunningJob ended = TakeRunning(i);
        Charge(ended, done);
        Complete(s, done, AllocationGpus(state_, ended.alloc));
        continue;
      }
      if (r.kill_at != kNever && r.kill_at <= now) {
        RunningJob ended = TakeRunning(i);
        Charge(ended, ended.kill_at);
        ++result.preemptions;
        // It checkpointed when signalled: the work up to the signal is kept.
        Time kept_until = s.signalled_at >= 0 ? s.signalled_at : ended.kill_at;
        s.remaining = std::max<Duration>(1, s.remaining - (kept_until - s.run_start));
        if (ended.job.requeue) {
          Job again = ended.job;  // original submit time kept
          pending_pos_[static_cast<size_t>(again.id)] = state_.pending.size();
          state_.pending.push_back(std::move(again));
        } else {
          Complete(s, ended.kill_at, AllocationGpus(state_, ended.alloc));
        }
        continue;
      }
      ++i;
    }
  }

  void Complete(SimJob& s, Time end, double gpus) {
    outcomes_.push_back({s.job.id, s.job.user, s.job.submit_time, s.first_start, end, gpus});
    auto& h = history_[s.job.user];
    h.push_back(s.trace->duration);
    if (static_cast<int>(h.size()) > config_.history_window) h.pop_front();
  }

  void Apply(const Decisions& d, Time now, SimResult& result) {
    for (const PendingInfo& p : d.pending) {
      if (p.reason == WaitReason::kImpossible) {
        RemovePending(p.job);
        ++result.rejected;
      }
    }
    for (const Start& st : d.starts) {
      SimJob& s = jobs_[st.job - 1];
      RunningJob r;
      r.job = state_.pending[pending_pos_[static_cast<size_t>(st.job)]];
      RemovePending(st.job);
      r.alloc = st.alloc;
      r.start_time = now;
      r.preemptible = st.preemptible;
      r.from_pool = st.from_pool;
      if (s.first_start < 0) s.first_start = now;
      s.run_start = now;
      s.signalled_at = -1;
      state_.running.push_back(std::move(r));
    }
    for (const Signal& sig : d.signals) {
      for (RunningJob& r : state_.running) {
        if (r.job.id != sig.job) continue;
        r.signalled = true;
        r.kill_at = sig.kill_at;
        r.preempted = sig.cause == StopCause::kPreempted;
        if (r.preempted) jobs_[r.job.id - 1].signalled_at = now;
      }
    }
    // Kills that are due are carried out by Finish() at the next event (kill_at <= now).
  }

  const Trace& trace_;
  const SimConfig& config_;
  Policy policy_;
  Rng rng_;
  ClusterState state_;
  std::vector<SimJob> jobs_;
  std::vector<size_t> pending_pos_;  // by job id: index in state_.pending (valid until Compact)
  std::vector<char> removed_;        // by job id: marked by RemovePending
  bool any_removed_ = false;
  std::unordered_map<std::string, std::deque<Duration>> history_;
  std::vector<JobOutcome> outcomes_;
  double busy_gpu_seconds_ = 0;
};

}  // namespace

const char* EstimatesName(Estimates e) {
  switch (e) {
    case Estimates::kExact: return "exact";
    case Estimates::kNoisy: return "noisy";
    case Estimates::kHistory: return "history";
  }
  return "exact";
}

StatusOr<SimResult> Simulate(const Trace& trace, const SimConfig& config) {
  if (config.gpus < 1) return InvalidArgument("--gpus must be at least 1");
  if (config.gpus_per_node < 1) return InvalidArgument("--gpus-per-node must be at least 1");
  if (config.gpu_memory < 1) return InvalidArgument("--gpu-mem must be positive");
  return Replay(trace, config).Run();
}

}  // namespace rota::sim
