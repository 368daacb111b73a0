// QueueIndex: the pending jobs of a ClusterState kept in the orders a scheduling pass walks them,
// by a caller that schedules the same queue again and again between small changes (the
// simulator). With it, a pass that stops early (scheduler.cc, Pass::Run) costs what it walks,
// not the whole queue: it neither ranks nor visits the jobs it does not reach.
//
//   QueueIndex index(policy, state.gpus);
//   index.Add(job, position);          // for every job put in state.pending
//   index.Remove(id); index.Moved(id, position);
//   index.Advance(now);                // before each pass
//   Decisions d = Schedule(state, policy, now, &index);
//
// How the order is kept: fifo's and backfill's is submit time, one ordered set. Rota's priority
// moves with time, but only through terms that move a whole group of jobs alike: fair share and
// penalty per account, the time-of-day factor for heavy jobs, age (the same slope for every job
// until it reaches age_cap). Jobs of one tier, heaviness, user and project therefore keep their
// order: by the static part of their priority (size, and submit time through age) while their age
// grows, by size once it is capped. A pass ranks only the head of each such run, merges the runs
// through a heap, and the jobs protected by the bound on overtaking (the oldest ones) come off an
// ordered set of their own. The ranking of the heads is Factors() itself, so the merged order is
// the order of Schedule() without an index (docs/design.md, "How a decision is made").
//
// Schedule() uses the index only where that holds and the pass can do without the rest of the
// queue: unexplained, no start estimates, no quotas, no bookings, no dependencies, every job
// possible on the cards, nothing submitted after `now`, a positive time-of-day factor, Advance()
// called for this `now` after the last Add, and the index built for these cards and the same
// ranking settings (Serves). Otherwise the pass orders the queue itself; decisions are the same.
//
// Not thread-safe; holds copies of what it needs, no pointers into the state.
#pragma once

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/cluster.h"
#include "core/capacity.h"
#include "core/policy.h"
#include "core/quota.h"

namespace rota {

class QueueIndex {
 public:
  // One job in a run: `key` is the static part of its rank (higher first), then submit time, id.
  struct Item {
    double key;
    Time submit;
    JobId id;
    mutable size_t pos = 0;  // in state.pending: not part of the order (Moved keeps it)
  };
  struct ItemOrder {
    bool operator()(const Item& a, const Item& b) const {
      if (a.key != b.key) return a.key > b.key;
      if (a.submit != b.submit) return a.submit < b.submit;
      return a.id < b.id;
    }
  };
  using Run = std::set<Item, ItemOrder>;

  QueueIndex(const Policy& policy, const std::vector<Gpu>& gpus);

  // `job` is now pending at state.pending[pos]. Adding an id twice replaces the first.
  void Add(const Job& job, size_t pos);
  void Remove(JobId id);
  // The job moved to state.pending[pos].
  void Moved(JobId id, size_t pos);
  // Brings the runs to `now`: jobs whose age reached its cap change runs. Call before each pass.
  void Advance(Time now);

  size_t size() const { return recs_.size(); }
  // Whether a pass of `policy` on `state` at `now` may take its order from the index (see above);
  // the cards' possibility is checked by AllPossible with the pass's plan.
  bool Serves(const ClusterState& state, const Policy& policy, Time now) const;
  // Whether every pending job could run on some card of `plan` (CapacityPlan::Possible).
  bool AllPossible(const CapacityPlan& plan) const;

  // ---- For the pass (scheduler.cc) ----
  // Position in state.pending of a job the index holds.
  size_t PositionOf(JobId id) const { return recs_.at(id).item.pos; }
  // The runs in no particular order; each is in the pass's order within itself (for fifo and
  // backfill, one run by submit time).
  template <typename Fn>
  void ForRuns(Fn&& fn) const {
    if (!by_rank_) {
      fn(all_);
      return;
    }
    for (const Group& g : groups_) {
      if (!g.young.empty()) fn(g.young);
      if (!g.capped.empty()) fn(g.capped);
    }
  }
  // The jobs that the bound on overtaking may protect (every tier but explore) and are due by the
  // time Advance() was given (core/promise.h, ProtectedFrom), as (submit, id): longest waiting
  // first. The others by when they will be due, as (due, submit, id).
  const std::set<std::pair<Time, JobId>>& Due() const { return due_; }
  const std::set<std::tuple<Time, Time, JobId>>& NotDueYet() const { return not_due_; }
  // The pending jobs counted by what they ask for: whole cards, memory share, MIG profile.
  const std::map<int, int>& WholeRequests() const { return whole_; }
  const std::map<MiB, int>& ShareRequests() const { return shares_; }
  const std::map<std::string, int>& MigRequests() const { return mig_; }
  // Each request shape of the pending jobs, with the shortest time limit among its jobs: what
  // does not start now for that limit starts for none of them (the pass's early stop,
  // scheduler.cc). fn(const Request&, Duration shortest).
  template <typename Fn>
  void ForShapes(Fn&& fn) const {
    for (const auto& [key, shape] : shapes_) fn(shape.request, *shape.limits.begin());
  }
  // The accounts of the pending jobs, each once (PriorityModel).
  const std::vector<std::string_view>& Users() const { return users_list_; }
  const std::vector<std::string_view>& Projects() const { return projects_list_; }

 private:
  struct Group {
    Tier tier;
    bool heavy;
    std::string user;
    std::string project;
    Run young;                                  // age below its cap: by size and submit time
    Run capped;                                 // age at its cap: by size alone
    std::set<std::pair<Time, JobId>> young_by_submit;  // the order in which they reach the cap
  };
  struct Rec {
    int group;
    Item item;     // in its group's young run (key by size and age) ...
    double sized;  // ... or the capped one (key by size alone)
    bool capped;
    Request request;
    Duration limit;
    Time due;  // ProtectedFrom; kNever where it is not protectable
    bool has_deps;
  };
  struct Shape {
    Request request;
    std::multiset<Duration> limits;  // of its pending jobs
  };
  using ShapeKey = std::tuple<RequestKind, int, MiB, std::string>;
  static ShapeKey KeyOf(const Request& r) { return {r.kind, r.gpus, r.memory, r.mig_profile}; }
  int GroupOf(const Job& job, bool heavy);
  bool CappedAt(Time submit, Time now) const;
  void Count(std::map<std::string, int>& counts, std::vector<std::string_view>& list, const std::string& key,
             int delta);

  Policy policy_;
  std::vector<Gpu> gpus_;  // the cards it was built for (only what sizes a request matters)
  RequestGpuTable gpu_table_;
  bool by_rank_;           // rota: runs by group; fifo and backfill: one run by submit time
  double log_size_max_;
  std::unordered_map<JobId, Rec> recs_;
  std::vector<Group> groups_;
  std::map<std::tuple<Tier, bool, std::string, std::string>, int> group_of_;
  Run all_;  // fifo, backfill
  std::set<std::pair<Time, JobId>> due_;
  std::set<std::tuple<Time, Time, JobId>> not_due_;
  Time due_to_ = kNever;  // the time due_ was brought to (Advance)
  std::set<std::pair<Time, JobId>> by_submit_;  // every job: the latest submit time
  std::map<std::string, int> users_, projects_;
  std::vector<std::string_view> users_list_, projects_list_;  // keys of users_, projects_
  int with_deps_ = 0;
  std::map<int, int> whole_;             // jobs by cards asked for
  std::map<MiB, int> shares_;            // ... by memory share asked for
  std::map<std::string, int> mig_;       // ... by MIG profile
  std::map<ShapeKey, Shape> shapes_;     // ... by the whole request, with their limits
  Time advanced_to_ = kNever;            // the last Advance(); kNever after an Add since
};

}  // namespace rota
