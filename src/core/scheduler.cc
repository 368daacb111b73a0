// Tested by scheduler_test.cc (hand-made states) and scheduler_random_test.cc (against the
// reference scheduler in src/testing on seeded random states).
//
// One pass: (1) stops that are due for running jobs; (2) pending jobs in order (submit time for
// fifo and backfill, multifactor priority for rota); each one either starts now, if it fits
// without touching any capacity promised to a job ahead of it, or gets a reservation at the
// earliest time it fits (every blocked job up to Policy::plan_depth for fifo and rota, only the
// first for backfill: EASY), possibly after preempting lower tiers (rota). Jobs past the depth
// are still started when they fit now, and get an estimated start.
//
// Bookings (rota with preemption): a job that would start preemptible may start on capacity
// someone else booked (Holds::kBorrow) when nothing else holds it and the booking's owner has no
// job waiting; its reservation, a promise, still respects every booking of others. When the
// booking's owner has a job that the borrowers block, it preempts them whatever its tier (a
// booking claim, see Preempt).
#include "core/scheduler.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "core/capacity.h"
#include "core/priority.h"
#include "core/promise.h"
#include "core/queue_index.h"
#include "core/quota.h"
#include "core/usage.h"

namespace rota {

namespace {

// Preemption attempts that found no victim set are expensive; a pass makes at most this many.
constexpr int kMaxFailedPreemptions = 64;
// Searches of the plan that preemption may make in one pass (each is a scan of every unit).
constexpr int kMaxPreemptionSearches = 512;

// A pending job in the pass's order; kept small because a long queue is ordered every pass.
struct Entry {
  double tier;  // the tier factor (rota), 0 otherwise: tiers come first
  double key;   // priority (rota), 0 otherwise
  Time submit;
  JobId id;
  int index;      // into state.pending, factors_ and gpus_
  bool guard;     // protected by the bound on overtaking (rota; core/promise.h, ProtectedFrom)
  bool possible;  // CapacityPlan::Possible: some unit could ever hold it
};

// Submitted earlier, or at the same second with a lower id: fifo's order, and every other's last.
bool SubmittedBefore(Time a_submit, JobId a_id, Time b_submit, JobId b_id) {
  return a_submit != b_submit ? a_submit < b_submit : a_id < b_id;
}

// The pass's order: tier first, then the protected jobs by submit time, then priority (which ranks
// by tier as well with the default weights; the order makes tiers first whatever the weights).
bool Before(const Entry& a, const Entry& b) {
  if (a.tier != b.tier) return a.tier > b.tier;
  if (a.guard != b.guard) return a.guard;
  if (!a.guard && a.key != b.key) return a.key > b.key;
  return SubmittedBefore(a.submit, a.id, b.submit, b.id);
}

// The pass's order, one entry at a time, so that a pass that stops early (Pass::Run) does not pay
// for ordering the whole queue: entries already in order are walked as they are, others come
// off a heap in O(log n) each. A pass that will walk everything sorts once instead, and so does
// one that turns out to walk far (popping a whole heap costs several times a sort). Jobs already
// in submit order, for a policy that orders by it (fifo and backfill; the simulator keeps its
// queue so), need no entries at all: each is made when its turn comes.
class Queue {
 public:
  // The jobs themselves, in order (submit time, then id).
  Queue(const std::vector<Job>& jobs, const CapacityPlan& plan)
      : jobs_(&jobs), plan_(&plan), end_(jobs.size()), sorted_(true) {}

  // Runs already in order among themselves, merged (QueueIndex): `guards` are entries of their
  // own, the jobs they hold are skipped in the runs; `make` makes the entry of a job of a run.
  using MakeEntry = std::function<Entry(const QueueIndex::Item&)>;
  Queue(const QueueIndex& index, std::vector<Entry> guards, MakeEntry make)
      : make_(std::move(make)), end_(0), sorted_(true) {
    for (const Entry& g : guards) skip_.push_back(g.id);
    for (const Entry& g : guards) heads_.push_back({nullptr, {}, g});
    index.ForRuns([this](const QueueIndex::Run& run) {
      Head h{&run, run.begin(), {}};
      if (Advance(h)) heads_.push_back(h);
    });
    std::make_heap(heads_.begin(), heads_.end(), HeadAfter{});
    merging_ = true;
  }

  // `sorted`: whether the entries are in order already.
  Queue(std::vector<Entry> entries, bool sorted, bool walk_all)
      : entries_(std::move(entries)), end_(entries_.size()), sorted_(sorted) {
    if (!sorted_ && walk_all) {
      std::sort(entries_.begin(), entries_.end(), InOrder{});
      sorted_ = true;
    }
    if (!sorted_) std::make_heap(entries_.begin(), entries_.end(), After{});
  }

  // The next entry in order, or nullptr; valid until the next call.
  const Entry* Next() {
    if (merging_) return NextMerged();
    if (jobs_ != nullptr) return next_ < end_ ? Make(next_++) : nullptr;
    if (sorted_) return next_ < end_ ? &entries_[next_++] : nullptr;
    if (end_ == 0) return nullptr;
    if (++popped_ > std::max<size_t>(64, entries_.size() / 16)) {
      SortRest();
      return Next();
    }
    std::pop_heap(entries_.begin(), entries_.begin() + static_cast<long>(end_), After{});
    return &entries_[--end_];
  }

  // The entries not given out yet, in order.
  template <typename Fn>
  void ForRest(Fn&& fn) {
    if (!sorted_) SortRest();
    while (const Entry* e = Next()) fn(*e);
  }

 private:
  const Entry* Make(size_t i) {
    const Job& j = (*jobs_)[i];
    made_ = {0.0, 0.0, j.submit_time, j.id, static_cast<int>(i), false, plan_->Possible(j.request)};
    return &made_;
  }

  // From a heap to sorted: the entries given out lie past end_, and stay valid.
  void SortRest() {
    std::sort(entries_.begin(), entries_.begin() + static_cast<long>(end_), InOrder{});
    sorted_ = true;
  }

  // The orders as types rather than function pointers, so that the sort and the heap inline them.
  struct InOrder {
    bool operator()(const Entry& a, const Entry& b) const { return Before(a, b); }
  };
  // The heap's order: its front is the entry that comes first.
  struct After {
    bool operator()(const Entry& a, const Entry& b) const { return Before(b, a); }
  };

  // A run of the index being merged, at its next job (`entry`); a guard has no run.
  struct Head {
    const QueueIndex::Run* run;
    QueueIndex::Run::const_iterator it;
    Entry entry;
  };
  struct HeadAfter {
    bool operator()(const Head& a, const Head& b) const { return Before(b.entry, a.entry); }
  };

  // Moves `h` to its run's next job that is not a guard; false at the run's end.
  bool Advance(Head& h) {
    while (h.it != h.run->end() && std::find(skip_.begin(), skip_.end(), h.it->id) != skip_.end()) ++h.it;
    if (h.it == h.run->end()) return false;
    h.entry = make_(*h.it);
    ++h.it;
    return true;
  }

  const Entry* NextMerged() {
    if (heads_.empty()) return nullptr;
    std::pop_heap(heads_.begin(), heads_.end(), HeadAfter{});
    Head& h = heads_.back();
    made_ = h.entry;
    if (h.run != nullptr && Advance(h)) {
      std::push_heap(heads_.begin(), heads_.end(), HeadAfter{});
    } else {
      heads_.pop_back();
    }
    return &made_;
  }

  bool merging_ = false;  // the runs of an index (see above)
  std::vector<Head> heads_;
  std::vector<JobId> skip_;  // guards, skipped in the runs
  MakeEntry make_;
  const std::vector<Job>* jobs_ = nullptr;  // the jobs are the order (see above)
  const CapacityPlan* plan_ = nullptr;
  Entry made_{};
  std::vector<Entry> entries_;
  size_t next_ = 0;  // sorted: the next entry to give out
  size_t end_;       // sorted: the end of the entries; a heap: its size (given out ones follow it)
  bool sorted_;
  size_t popped_ = 0;  // off the heap
};

// Requests that could not start now in this pass, for one view of the bookings. Within a pass
// commitments only grow (until a preemption, which forgets them), so a request at least as large
// for at least as long cannot start now either: a long queue of similar jobs is rejected without
// a search.
class FailedShapes {
 public:
  bool Known(const Request& r, Duration d) const {
    switch (r.kind) {
      case RequestKind::kWholeGpus: {
        if (whole_.empty()) return false;
        // Requests larger than any seen use the last entry: the minimum over all smaller ones.
        size_t n = std::min<size_t>(static_cast<size_t>(std::max(r.gpus, 0)), whole_.size() - 1);
        return whole_[n] <= d;
      }
      case RequestKind::kMemShare:
        for (const auto& [mem, fd] : shares_) {
          if (r.memory >= mem && d >= fd) return true;
        }
        return false;
      case RequestKind::kMig: {
        auto it = mig_.find(r.mig_profile);
        return it != mig_.end() && d >= it->second;
      }
    }
    return false;
  }

  void Remember(const Request& r, Duration d) {
    ++changes_;
    switch (r.kind) {
      case RequestKind::kWholeGpus: {
        // whole_[n]: the shortest duration known to fail for some request of <= n cards.
        size_t n = static_cast<size_t>(std::max(r.gpus, 0));
        if (whole_.size() <= n) {
          // New entries carry the prefix minimum of the smaller requests.
          whole_.resize(n + 1, whole_.empty() ? kNever : whole_.back());
        }
        for (size_t k = n; k < whole_.size(); ++k) whole_[k] = std::min(whole_[k], d);
        break;
      }
      case RequestKind::kMemShare:
        if (shares_.size() < 64) shares_.emplace_back(r.memory, d);
        break;
      case RequestKind::kMig: {
        auto [it, inserted] = mig_.try_emplace(r.mig_profile, d);
        if (!inserted) it->second = std::min(it->second, d);
        break;
      }
    }
  }

  void Clear() {
    ++changes_;
    whole_.clear();
    shares_.clear();
    mig_.clear();
  }

  // How often it changed (the pass's early stop checks again only then).
  long changes() const { return changes_; }

 private:
  long changes_ = 0;
  std::vector<Duration> whole_;  // by card count (see Remember)
  std::vector<std::pair<MiB, Duration>> shares_;
  std::unordered_map<std::string, Duration> mig_;
};

// The request shapes of a queue, each with the shortest time limit among its jobs, gathered while
// a pass without a queue index orders the queue (QueueIndex keeps its own): what the early stop
// asks of every shape (Pass::NothingWaitingFits). Whole-card requests by count, shares and slices
// in a short list; a queue with more distinct shapes than that gives up (`complete` false), and
// its walk does not stop on shapes.
class QueueShapes {
 public:
  void Add(const Request& r, Duration limit) {
    if (r.kind == RequestKind::kWholeGpus) {
      const size_t n = static_cast<size_t>(std::max(r.gpus, 0));
      if (n >= kMaxWhole) {
        complete_ = false;
        return;
      }
      if (whole_.size() <= n) whole_.resize(n + 1, kNever);
      whole_[n] = std::min(whole_[n], limit);
      return;
    }
    for (Shape& s : others_) {
      if (s.request.kind == r.kind && s.request.memory == r.memory && s.request.mig_profile == r.mig_profile) {
        s.shortest = std::min(s.shortest, limit);
        return;
      }
    }
    if (others_.size() >= kMaxOthers) {
      complete_ = false;
      return;
    }
    others_.push_back({r, limit});
  }

  bool complete() const { return complete_; }

  // fn(const Request&, Duration shortest), as QueueIndex::ForShapes.
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    Request whole;
    for (size_t n = 0; n < whole_.size(); ++n) {
      if (whole_[n] == kNever) continue;
      whole.gpus = static_cast<int>(n);
      fn(whole, whole_[n]);
    }
    for (const Shape& s : others_) fn(s.request, s.shortest);
  }

 private:
  static constexpr size_t kMaxWhole = 4096;
  static constexpr size_t kMaxOthers = 64;
  struct Shape {
    Request request;
    Duration shortest;
  };
  std::vector<Duration> whole_;  // by card count: the shortest limit, kNever where none asks
  std::vector<Shape> others_;
  bool complete_ = true;
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
    // The warning `grace` before the end, but never before half the limit has passed: a job gets a
    // fair part of its time before a signal it asked for (a 1-minute job with USR1@120 at 30 s).
    Time warn = std::max(r.start_time + j.time_limit / 2, end - j.grace);
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
  // `kept`: a plan kept between passes, brought to this state (CapacityPlan::Sync), or null.
  // `foreseen`: jobs protected before they are due (Policy::protect_foreseen; see Schedule).
  Pass(const ClusterState& state, const Policy& policy, Time now, Decisions& out, const QueueIndex* index,
       CapacityPlan* kept, std::vector<JobId> foreseen = {})
      : state_(state),
        policy_(policy),
        now_(now),
        out_(out),
        foresee_(policy.protect_foreseen && policy.algorithm == Algorithm::kRota && Protecting(policy)),
        foreseen_(std::move(foreseen)),
        own_plan_(kept == nullptr ? std::make_unique<CapacityPlan>(state, policy, now) : nullptr),
        plan_(kept == nullptr ? *own_plan_ : *kept),
        quota_(state, policy, now),
        request_gpus_(state) {
    std::sort(foreseen_.begin(), foreseen_.end());  // for Foreseen
    // Serves refuses quotas and bookings; the cards' possibility needs the plan.
    if (index != nullptr && index->Serves(state, policy, now) && index->AllPossible(plan_)) {
      index_ = index;
    }
    // Fair shares cost a pass over every account; the baselines only need them for display.
    if (policy.algorithm == Algorithm::kRota || policy.estimate_starts) {
      if (index_ != nullptr) {
        priority_.emplace(state, policy, now, index_->Users(), index_->Projects());
      } else {
        priority_.emplace(state, policy, now);
      }
    }
    for (const Gpu& g : state.gpus) usable_gpus_ += g.drained ? 0.0 : 1.0;
    preempting_.assign(state.running.size(), 0);
    // Running jobs that preemption may ever pick: scanned once, not once per blocked job.
    for (size_t ri = 0; ri < state.running.size(); ++ri) {
      const RunningJob& r = state.running[ri];
      if (r.preemptible || policy.IsPreemptible(r.job.tier)) preemptible_running_.push_back(static_cast<int>(ri));
    }
    // Jobs warned of their time limit in this same decision (HandleRunning ran first) are already
    // being stopped: Preempt may count on their end but must not signal them a second time.
    limit_stop_.assign(state.running.size(), kNever);
    std::unordered_map<JobId, Time> stopping;
    for (const Signal& s : out.signals) stopping[s.job] = s.kill_at;
    for (size_t ri = 0; ri < state.running.size(); ++ri) {
      auto it = stopping.find(state.running[ri].job.id);
      if (it != stopping.end()) limit_stop_[ri] = it->second;
    }
    // Units of the bookings still ahead or under way, for booking claims (Preempt).
    for (const Booking& b : state.bookings) {
      if (b.end <= now) continue;
      std::vector<int> units;
      plan_.ForAllocation(b.alloc, [&units](int ui, MiB, bool) { units.push_back(ui); });
      if (!units.empty()) live_bookings_.push_back({&b, std::move(units)});
    }
    // A booking whose owner has a job waiting is claimed: it binds borrowers too. Borrowed, it
    // would be taken back as soon as the owner's job came up (a claim preempts the borrower), and
    // a borrower ranked above that job (the owner over quota, ranked as explore) would start on it
    // again in the next pass, be preempted again, and so on without end.
    if (plan_.HasBookings()) {
      for (const Job& j : state.pending) {
        if (DependenciesMet(j)) plan_.ClaimBookingsOf(plan_.UserId(j.user));
      }
    }
  }

  // Protection foreseen (Policy::protect_foreseen), after Run: of the jobs that may be protected,
  // not due yet, that this pass reserved later than they will be due, the longest waiting, as
  // many as fit in the room the protected jobs left.
  std::vector<JobId> ToForesee() {
    const size_t places = static_cast<size_t>(std::max(0, policy_.protect_max));
    const size_t room = places - std::min(guarded_, places);
    std::vector<JobId> out;
    if (late_.empty() || room == 0) return out;
    std::sort(late_.begin(), late_.end());
    for (size_t i = 0; i < late_.size() && i < room; ++i) out.push_back(late_[i].second);
    return out;
  }

  void Run() {
    const bool explain = policy_.explain;
    Queue queue = Order();
    if (explain) out_.pending.reserve(state_.pending.size());
    const bool fifo = policy_.algorithm == Algorithm::kFifo;
    // Reservations that decisions depend on: backfill protects its first blocked job, rota every
    // blocked job to the depth. Fifo starts nothing behind a blocked job, so its reservations only
    // give expected starts.
    int depth = std::max(0, policy_.plan_depth);
    if (policy_.algorithm == Algorithm::kBackfill) depth = 1;
    if (policy_.algorithm == Algorithm::kFifo && !policy_.estimate_starts) depth = std::min(depth, 1);
    int reserved = 0;
    bool blocked_seen = false;
    Time fifo_floor = now_;
    double backlog = 0;  // GPU-seconds of blocked jobs ahead, for estimates past the depth
    Time last_reserved = now_;
    // Pending jobs are listed when explained; the ones that can never run always are.
    auto report = [&](const PendingInfo& info) {
      if (explain || info.reason == WaitReason::kImpossible) out_.pending.push_back(info);
    };
    // Unexplained, the walk stops once the rest of the queue can change no decision: every
    // reservation that decisions depend on is made (to the depth) and nothing more can start,
    // because fifo starts nothing behind a blocked job or because no card, share or slice is free
    // now. Not while a quota may still set the week's wake-up or preemption make room (until the
    // pass's preemption budget is spent: Preempt tries no more then). What is left is only to
    // list the jobs that can never run.
    const bool may_stop = !explain && quota_.Unlimited();
    const bool may_preempt =
        policy_.algorithm == Algorithm::kRota && policy_.preemption && !preemptible_running_.empty();
    auto rest_changes_nothing = [&] {
      if (!may_stop || reserved < depth || (may_preempt && !PreemptionSpent())) return false;
      if (fifo) return blocked_seen;
      return plan_.NothingFreeNow() || NothingWaitingFits();
    };
    while (!rest_changes_nothing()) {
      const Entry* next = queue.Next();
      if (next == nullptr) break;
      const Entry& e = *next;
      const Job& job = state_.pending[e.index];
      const PriorityFactors& factors = FactorsOf(e.index);
      PendingInfo info;
      info.job = job.id;
      info.factors = factors;
      if (!e.possible) --impossible_left_;
      if (!DependenciesMet(job)) {
        info.reason = WaitReason::kDependency;
        report(info);
        continue;
      }
      if (!e.possible) {
        info.reason = WaitReason::kImpossible;
        report(info);
        continue;
      }
      const Duration d = std::max<Duration>(1, job.time_limit);
      const double need = Gpus(e.index) * static_cast<double>(d);
      if (!explain && fifo && blocked_seen && reserved >= depth) {
        // Nothing starts behind fifo's first blocked job and it reserves no more: what is left to
        // learn is only whether the quota week must wake the next pass.
        if (quota_.Check(job, need) == QuotaVerdict::kExhausted) quota_blocked_ = true;
        continue;
      }
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
          report(info);
          continue;
        }
      }
      const int uid = plan_.UserId(job.user);
      const bool physically = plan_.PhysicallyFitsNow(job.request);
      // Whether it would start preemptible; then it may start on capacity booked by others (it is
      // preempted when the owner needs it), but only where preemption can take it back. Only
      // needed for a job that may fit now: most of a long queue is rejected before.
      const bool preemptible = physically && policy_.algorithm == Algorithm::kRota &&
                               (as_explore || policy_.IsPreemptible(job.tier));
      const bool borrow = preemptible && policy_.preemption;
      if (!(fifo && blocked_seen) && physically) {
        // The failed shapes of the job's view of the bookings: every booking binds (a user
        // without bookings), or none does (a borrower). Without bookings both views are one.
        // Users with bookings of their own see a view of their own, and are not cached.
        // Claimed bookings bind every borrower but their owner, whose view is his own.
        FailedShapes* failed = borrow && plan_.HasBookings() ? (plan_.Claimed(uid) ? nullptr : &failed_[1])
                               : uid < 0                    ? &failed_[0]
                                                            : nullptr;
        Placement p;
        if (!(failed && failed->Known(job.request, d))) {
          p = plan_.Earliest(job.request, d, uid, now_, /*now_only=*/true,
                             borrow ? Holds::kBorrow : Holds::kOthers);
          if (p.start != now_ && failed) {
            failed->Remember(job.request, d);
            // What fails with no booking binding fails with all of them binding too.
            if (failed == &failed_[1]) failed_[0].Remember(job.request, d);
          }
        }
        if (p.start == now_) {
          plan_.Commit(p, job.request, now_, now_ + d);
          quota_.Take(job, need, verdict == QuotaVerdict::kFromPool);
          out_.starts.push_back(
              {job.id, plan_.ToAllocation(p, job.request), preemptible, verdict == QuotaVerdict::kFromPool});
          continue;
        }
      }
      // Blocked: say why. A borrower ignored the bookings already but the claimed ones: only
      // those may be what stops it.
      if (fifo && blocked_seen) {
        info.reason = WaitReason::kPriority;
      } else if (physically && explain) {
        bool booking = (!borrow || plan_.AnyClaimed()) && !state_.bookings.empty() &&
                       plan_.Earliest(job.request, d, uid, now_, true, Holds::kNone).start == now_;
        info.reason = booking ? WaitReason::kBooking : WaitReason::kPriority;
      } else {
        info.reason = blocked_seen ? WaitReason::kPriority : WaitReason::kResources;
      }
      if (info.reason == WaitReason::kPriority && factors.time_of_day < 1) info.reason = WaitReason::kPeakHours;
      // A job over quota preempts nobody by tier (it runs as explore), but still claims its
      // owner's bookings.
      if (policy_.algorithm == Algorithm::kRota && policy_.preemption && (!as_explore || uid >= 0)) {
        if (Preempt(job, d, uid, /*claims_only=*/as_explore)) {
          info.reason = WaitReason::kResources;
          for (FailedShapes& f : failed_) f.Clear();  // victims leave earlier: what failed may fit now
        }
      }
      if (reserved < depth) {
        Placement p = plan_.Earliest(job.request, d, uid, fifo ? fifo_floor : now_, false);
        if (p.start != kNever) {
          plan_.Commit(p, job.request, p.start, p.start + d);
          info.expected_start = p.start;
          if (foresee_ && !e.guard && Protectable(e)) {
            const Time due = ProtectedFrom(job, policy_);
            if (due > now_ && due != kNever && p.start > due) late_.emplace_back(job.submit_time, job.id);
          }
          last_reserved = std::max(last_reserved, p.start);
          if (fifo) fifo_floor = p.start;
          if (p.start > now_) out_.next_wakeup = std::min(out_.next_wakeup, p.start);
        }
        ++reserved;
      } else if (policy_.algorithm == Algorithm::kBackfill && policy_.estimate_starts &&
                 reserved < policy_.plan_depth) {
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
      report(info);
    }
    // The walk stopped early: what it did not reach is only listed when it can never run.
    if (impossible_left_ > 0) {
      queue.ForRest([this](const Entry& rest) {
        if (!rest.possible) ReportImpossible(rest);
      });
    }
    Wakeups();
  }

 private:
  Queue Order() {
    if (index_ != nullptr) return IndexedOrder();
    const size_t n = state_.pending.size();
    const bool rota = policy_.algorithm == Algorithm::kRota;
    // Baselines order by submit time; their factors are only for display.
    const bool want_factors = rota || policy_.estimate_starts;
    gpus_.assign(n, -1.0);  // computed when first needed (Gpus)
    // Only rota and estimates read factors: the baselines' passes do not write 64 bytes per job.
    factors_.assign(want_factors ? n : 0, PriorityFactors{});
    // The shapes for the early stop, where it may be taken (NothingWaitingFits).
    gather_shapes_ = !policy_.explain && quota_.Unlimited() && !plan_.HasBookings();
    if (!want_factors && InSubmitOrder()) return Queue(state_.pending, plan_);
    std::vector<Entry> order;
    order.reserve(n);  // never grows past n: `old` points into it
    // Candidates for the bound on overtaking (see Protect), gathered in the same walk.
    const bool protecting = Protecting(policy_);
    if (foresee_) candidate_.assign(n, 0);
    bool sorted = true;       // so far: the simulator keeps fifo's and backfill's in submit order
    std::vector<Entry*> old;  // due for protection (ProtectedFrom)
    Time next_old = kNever;   // when the next candidate will be
    for (size_t i = 0; i < n; ++i) {
      const Job& j = state_.pending[i];
      // The whole request against its account's quota as the pass begins: an exhausted job ranks
      // as explore (when the lab allows it) and is never protected.
      const bool exhausted =
          rota && !quota_.Unlimited() &&
          quota_.Check(j, Gpus(i) * static_cast<double>(std::max<Duration>(1, j.time_limit))) ==
              QuotaVerdict::kExhausted;
      if (want_factors) {
        factors_[i] = priority_->PendingFactors(i, Gpus(i), exhausted && policy_.quota.overflow_as_explore);
      }
      const bool possible = plan_.Possible(j.request);
      impossible_left_ += possible ? 0 : 1;
      if (gather_shapes_) shapes_.Add(j.request, j.time_limit);
      order.push_back({rota ? factors_[i].tier : 0.0, rota ? factors_[i].priority : 0.0, j.submit_time, j.id,
                       static_cast<int>(i), false, possible});
      sorted = sorted && (i == 0 || !Before(order[i], order[i - 1]));
      if (protecting && factors_[i].tier > 0 && !exhausted && DependenciesMet(j)) {
        if (foresee_) candidate_[i] = 1;
        const Time due = ProtectedFrom(j, policy_);
        if (now_ >= due || Foreseen(j.id)) {
          old.push_back(&order[i]);
        } else {
          next_old = std::min(next_old, due);
        }
      }
    }
    // Protected jobs move ahead: the order is known no more.
    if (protecting) guarded_ = Protect(old, next_old);
    if (guarded_ > 0) sorted = false;
    return Queue(std::move(order), sorted, /*walk_all=*/policy_.explain);
  }

  // The order off the index (Pass::index_, which serves only unexplained passes with every job
  // possible and no dependencies or quotas): the protected jobs first in their tier, then the
  // index's runs merged, each ranked when its turn comes. Factors are not kept per job: nothing
  // reads them in such a pass (no job is listed).
  Queue IndexedOrder() {
    const bool rota = policy_.algorithm == Algorithm::kRota;
    std::vector<Entry> guards;
    if (rota && Protecting(policy_)) {
      // As Protect: of the jobs due by now, the protect_max that waited longest; with fewer, the
      // pass wakes when the next one will be due.
      for (const auto& [submit, id] : index_->Due()) {
        if (guards.size() >= static_cast<size_t>(policy_.protect_max)) break;
        Entry e = MakeEntry(index_->PositionOf(id));
        e.guard = true;
        guards.push_back(e);
      }
      for (JobId id : foreseen_) {
        Entry e = MakeEntry(index_->PositionOf(id));
        e.guard = true;
        guards.push_back(e);
      }
      guarded_ = guards.size();
      // Room left: the next job due that is not protected already (at most protect_max skipped).
      if (guarded_ < static_cast<size_t>(policy_.protect_max)) {
        for (const auto& [due, submit, id] : index_->NotDueYet()) {
          if (Foreseen(id)) continue;
          out_.next_wakeup = std::min(out_.next_wakeup, due);
          break;
        }
      }
    }
    return Queue(*index_, std::move(guards), [this](const QueueIndex::Item& item) { return MakeEntry(item.pos); });
  }

  // Whether no job still waiting can start now, though something is free (a reservation holds
  // it, or it is too small for what waits). Every shape the queue holds (the index's, or those
  // gathered as the queue was ordered), for the shortest limit among its jobs, does not fit now or
  // failed in this pass already; a job of that shape asks for at least as long, so it would fail
  // without a search (FailedShapes), and past the planning depth that is all the walk would learn
  // of it. Only unexplained passes without bookings or quotas ask, with no preemption left to try
  // (Run's may_stop; the index serves no other), where every job's view is failed_[0]. The
  // shortest limit counts the jobs started in this pass too, and jobs whose dependencies are not
  // met: the check can only be too careful. Asked again only after a start or a new failure.
  bool NothingWaitingFits() {
    if (index_ == nullptr && !(gather_shapes_ && shapes_.complete())) return false;
    const long version = failed_[0].changes() + static_cast<long>(out_.starts.size());
    if (version == nothing_fits_version_) return nothing_fits_;
    nothing_fits_version_ = version;
    nothing_fits_ = true;
    auto check = [this](const Request& r, Duration shortest) {
      if (!nothing_fits_ || !plan_.PhysicallyFitsNow(r)) return;
      nothing_fits_ = failed_[0].Known(r, std::max<Duration>(1, shortest));
    };
    if (index_ != nullptr) {
      index_->ForShapes(check);
    } else {
      shapes_.ForEach(check);
    }
    return nothing_fits_;
  }

  // The entry of pending job `i`, ranked now (rota) or by submit time (the others).
  Entry MakeEntry(size_t i) {
    const Job& j = state_.pending[i];
    double tier = 0;
    double key = 0;
    if (policy_.algorithm == Algorithm::kRota) {
      const PriorityFactors f = priority_->Factors(j, Gpus(i), false);
      tier = f.tier;
      key = f.priority;
    }
    return {tier, key, j.submit_time, j.id, static_cast<int>(i), false, true};
  }

  // Whether the pending jobs are in submit order (then id), counting those that can never run: the
  // order of fifo and backfill, read off the jobs without making entries (Queue).
  bool InSubmitOrder() {
    int impossible = 0;
    const Job* prev = nullptr;
    for (const Job& j : state_.pending) {
      if (prev != nullptr && SubmittedBefore(j.submit_time, j.id, prev->submit_time, prev->id)) return false;
      impossible += plan_.Possible(j.request) ? 0 : 1;
      if (gather_shapes_) shapes_.Add(j.request, j.time_limit);
      prev = &j;
    }
    impossible_left_ = impossible;
    return true;
  }

  // The priority factors of pending job `i`; all zero where no factors are computed (Order).
  const PriorityFactors& FactorsOf(size_t i) const {
    static const PriorityFactors kNone{};
    return factors_.empty() ? kNone : factors_[i];
  }

  // GPU-equivalents pending job `i` asks for (quota and fair share count them).
  double Gpus(size_t i) {
    if (gpus_.empty()) return request_gpus_.Of(state_.pending[i].request);  // ordered off the index
    if (gpus_[i] < 0) gpus_[i] = request_gpus_.Of(state_.pending[i].request);
    return gpus_[i];
  }

  // Lists a job that can never run, after the walk stopped before it (Run); one waiting on
  // another job is not listed (the walk would have given it as waiting on that job, listed only
  // when explained).
  void ReportImpossible(const Entry& e) {
    const Job& job = state_.pending[e.index];
    if (!DependenciesMet(job)) return;
    PendingInfo info;
    info.job = job.id;
    info.factors = FactorsOf(e.index);
    info.reason = WaitReason::kImpossible;
    out_.pending.push_back(info);
  }

  // The bound on overtaking: of the jobs that could start but for capacity (not explore by tier
  // or over quota, dependencies met, within quota) that are due (`old`: waited protect_after, or
  // promise_slack past their promise), the protect_max that waited longest are protected. A job
  // that cannot start anyway would hold the place for nothing. `next_old`: when the next such job
  // will be due.
  // Returns how many it protected.
  size_t Protect(std::vector<Entry*>& old, Time next_old) {
    // Fewer than protect_max protected: the next one old enough will be, and the order changes
    // then, even if nothing else happens.
    if (old.size() < static_cast<size_t>(policy_.protect_max)) {
      out_.next_wakeup = std::min(out_.next_wakeup, next_old);
    }
    const auto longest = [](const Entry* a, const Entry* b) {
      return SubmittedBefore(a->submit, a->id, b->submit, b->id);
    };
    const size_t k = std::min(old.size(), static_cast<size_t>(policy_.protect_max));
    if (k < old.size()) std::nth_element(old.begin(), old.begin() + static_cast<long>(k), old.end(), longest);
    for (size_t i = 0; i < k; ++i) {
      old[i]->guard = true;
      factors_[old[i]->index].is_protected = true;
    }
    return k;
  }

  // Whether the bound on overtaking may protect the job of `e`: one of Protect's candidates (Order),
  // or off the index (which serves no pass with quotas or dependencies) not explore by tier.
  bool Protectable(const Entry& e) const { return candidate_.empty() ? e.tier > 0 : candidate_[e.index] != 0; }

  bool Foreseen(JobId id) const { return std::binary_search(foreseen_.begin(), foreseen_.end(), id); }

  bool DependenciesMet(const Job& job) {
    if (job.after.empty() && job.after_ok.empty()) return true;
    if (!active_built_) {
      // The ids some job waits on that are still pending, held or running; built when the first
      // job with a dependency asks. Only the ids waited on are kept: a long queue's ids would
      // cost a node each.
      std::unordered_set<JobId> waited_on;
      for (const Job& j : state_.pending) {
        waited_on.insert(j.after.begin(), j.after.end());
        waited_on.insert(j.after_ok.begin(), j.after_ok.end());
      }
      auto mark = [&](JobId id) {
        if (waited_on.count(id)) active_.insert(id);
      };
      for (const Job& j : state_.pending) mark(j.id);
      for (const RunningJob& r : state_.running) mark(r.job.id);
      for (JobId id : state_.held) mark(id);
      active_built_ = true;
    }
    for (const std::vector<JobId>* deps : {&job.after, &job.after_ok}) {
      for (JobId dep : *deps) {
        if (dep != job.id && active_.count(dep)) return false;
      }
    }
    return true;
  }

  // Whether running job `ri` holds a unit of a booking of `job`'s owner that overlaps the span
  // [now, now + d) the job asks for: a job the owner may preempt whatever the tiers (a booking
  // claim), since it borrowed the owner's capacity. The owner's own jobs are never claimed.
  bool Claims(const Job& job, Duration d, int ri) const {
    const RunningJob& r = state_.running[ri];
    if (r.job.user == job.user) return false;
    for (const LiveBooking& lb : live_bookings_) {
      const Booking& b = *lb.booking;
      if (b.user != job.user || b.start >= now_ + d) continue;
      bool shared = false;
      plan_.ForAllocation(r.alloc, [&](int ui, MiB, bool) {
        shared = shared || std::find(lb.units.begin(), lb.units.end(), ui) != lb.units.end();
      });
      if (shared) return true;
    }
    return false;
  }

  // Whether the pass's preemption budget is spent: Preempt tries nothing more.
  bool PreemptionSpent() const {
    return failed_preemptions_ >= kMaxFailedPreemptions || preempt_searches_ >= kMaxPreemptionSearches;
  }

  // Preempts lower-tier preemptible jobs, and preemptible jobs of others on the owner's bookings
  // (claims; only those when `claims_only`), so that `job` can start within their grace. Claims
  // are tried first: the owner takes back what was borrowed before anyone else loses work. Then
  // least work lost (fewest GPU-seconds done, youngest first). Returns whether it preempted.
  bool Preempt(const Job& job, Duration d, int uid, bool claims_only) {
    if (PreemptionSpent()) return false;
    struct Candidate {
      int running;
      bool claim;
      double lost;
      Time start;
    };
    std::vector<Candidate> cands;
    for (int ri : preemptible_running_) {
      const RunningJob& r = state_.running[ri];
      if (preempting_[ri] || r.kill_at != kNever) continue;
      Tier tier = r.preemptible ? Tier::kExplore : r.job.tier;
      bool preemptible = r.preemptible || policy_.IsPreemptible(r.job.tier);
      if (!preemptible) continue;
      const bool claim = uid >= 0 && Claims(job, d, ri);
      if (!claim && (claims_only || tier >= job.tier)) continue;
      // Only victims holding the kind of unit the job needs can make room for it.
      bool on_slice = r.alloc.mig >= 0;
      if (on_slice != (job.request.kind == RequestKind::kMig)) continue;
      if (on_slice && !r.alloc.gpus.empty() &&
          state_.gpus[r.alloc.gpus[0]].mig[r.alloc.mig].profile != job.request.mig_profile) {
        continue;
      }
      // A job stopping at its limit anyway (no later than now + grace) is lost already: it costs
      // nothing to count on it, so it is tried first.
      const double done = static_cast<double>(std::max<Time>(0, now_ - r.start_time));
      double lost = limit_stop_[ri] != kNever ? 0.0 : AllocationGpus(state_, r.alloc) * done;
      cands.push_back({ri, claim, lost, r.start_time});
    }
    if (cands.empty()) return false;
    ++preempt_searches_;
    Time current = plan_.Earliest(job.request, d, uid, now_, false).start;
    // Served by stops already under way: wait for them rather than preempt more.
    Time stopping_until = now_ + 1;
    for (const RunningJob& r : state_.running) {
      if (r.preempted && r.kill_at != kNever) stopping_until = std::max(stopping_until, r.kill_at);
    }
    if (current <= stopping_until) return false;
    std::sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) {
      if (a.claim != b.claim) return a.claim;
      return a.lost != b.lost ? a.lost < b.lost : a.start > b.start;
    });
    struct Chosen {
      int running;
      Time old_end;
      Time kill_at;
      bool free;  // already stopping at its time limit: no signal, its planned end unchanged
    };
    std::vector<Chosen> chosen;
    auto deadline = [&chosen, this] {
      Time t = now_;
      for (const Chosen& c : chosen) t = std::max(t, c.kill_at);
      return t;
    };
    // Each search costs a scan of the plan; past the pass's budget a set is taken as not fitting.
    auto fits_by = [&](Time t) {
      if (++preempt_searches_ > kMaxPreemptionSearches) return false;
      return plan_.Earliest(job.request, d, uid, now_, false).start <= t;
    };
    bool found = false;
    for (const Candidate& c : cands) {
      if (limit_stop_[c.running] != kNever) {
        const Time end = ExpectedEnd(state_.running[c.running], policy_, now_);
        chosen.push_back({c.running, end, limit_stop_[c.running], true});
      } else {
        Time kill_at = now_ + std::max<Duration>(0, state_.running[c.running].job.grace);
        const Time old_end = plan_.SetRunningEnd(c.running, std::max(kill_at, now_ + 1));
        chosen.push_back({c.running, old_end, kill_at, false});
      }
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
      if (c.free) continue;  // its time-limit signal stands
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
  const bool foresee_;  // Policy::protect_foreseen applies: late_ is gathered
  // Protected before they are due, sorted; owned: a default argument would not outlive the constructor.
  std::vector<JobId> foreseen_;
  size_t guarded_ = 0;                        // jobs protected in this pass
  std::vector<std::pair<Time, JobId>> late_;  // (submit, id): see ToForesee
  std::vector<char> candidate_;               // per pending job, where Order ranked them: see Protectable
  std::unique_ptr<CapacityPlan> own_plan_;  // built for this pass, unless one is kept
  CapacityPlan& plan_;
  std::optional<PriorityModel> priority_;
  QuotaBook quota_;
  const RequestGpuTable request_gpus_;
  const QueueIndex* index_ = nullptr;  // the order comes from it (IndexedOrder)
  std::unordered_set<JobId> active_;  // see DependenciesMet
  bool active_built_ = false;
  int impossible_left_ = 0;  // entries with !possible the walk has not reached
  std::vector<char> preempting_;
  std::vector<int> preemptible_running_;  // indices into state.running
  std::vector<double> gpus_;                // per pending job: GPU-equivalents requested
  std::vector<PriorityFactors> factors_;    // per pending job
  // Failed shapes per view of the bookings: [0] every booking binds (users without bookings; also
  // borrowers while there are no bookings), [1] none binds (borrowers while there are some). One
  // more list, not one per user: a user with bookings of his own is not cached at all.
  FailedShapes failed_[2];
  struct LiveBooking {
    const Booking* booking;
    std::vector<int> units;  // plan units it holds
  };
  std::vector<LiveBooking> live_bookings_;  // bookings with end > now
  std::vector<Time> limit_stop_;  // per running job: kill time of a time-limit signal sent now
  double usable_gpus_ = 0;
  QueueShapes shapes_;          // of the queue, gathered by Order where gather_shapes_
  bool gather_shapes_ = false;  // (NothingWaitingFits)
  long nothing_fits_version_ = -1;  // NothingWaitingFits, as last asked
  bool nothing_fits_ = false;
  int failed_preemptions_ = 0;
  int preempt_searches_ = 0;
  bool quota_blocked_ = false;
};

}  // namespace

Decisions Schedule(const ClusterState& state, const Policy& policy, Time now) {
  return Schedule(state, policy, now, nullptr);
}

Decisions Schedule(const ClusterState& state, const Policy& policy, Time now, const QueueIndex* index) {
  return Schedule(state, policy, now, index, nullptr);
}

Decisions Schedule(const ClusterState& state, const Policy& policy, Time now, const QueueIndex* index,
                   CapacityPlan* plan) {
  Decisions out;
  HandleRunning(state, policy, now, out);
  // Nothing waits: there is nothing to place, and the plan would be built for nothing.
  if (state.pending.empty()) return out;
  if (plan != nullptr && !plan->Keeps(state, policy)) plan = nullptr;
  if (plan != nullptr) plan->Sync(state, now);
  // Protection foreseen (Policy::protect_foreseen): jobs the plan reserved later than they will be
  // due would be protected before they start; while fewer than protect_max are protected, the
  // longest waiting of them are protected now, in a second pass that plans around them.
  std::vector<JobId> foreseen;
  {
    Pass pass(state, policy, now, out, index, plan);
    pass.Run();
    foreseen = pass.ToForesee();
  }
  if (plan != nullptr) plan->Rollback();  // the running jobs alone again, for the next pass
  if (!foreseen.empty()) {
    out = Decisions{};
    HandleRunning(state, policy, now, out);
    if (plan != nullptr) plan->Sync(state, now);
    Pass(state, policy, now, out, index, plan, std::move(foreseen)).Run();
    if (plan != nullptr) plan->Rollback();
  }
  return out;
}

}  // namespace rota
