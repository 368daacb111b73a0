// Tested by queue_index_test.cc (passes with and without the index compared on random event
// sequences) and by the simulator's replays (sim/simulator_test.cc).
#include "core/queue_index.h"

#include <algorithm>

#include "core/priority.h"
#include "core/promise.h"

namespace rota {

namespace {

ClusterState CardsOnly(const std::vector<Gpu>& gpus) {
  ClusterState s;
  s.gpus = gpus;
  return s;
}

// What of a card sizes a request (RequestGpuTable) or decides whether it fits at all.
bool SameCards(const std::vector<Gpu>& a, const std::vector<Gpu>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].memory != b[i].memory || a[i].mig.size() != b[i].mig.size()) return false;
    for (size_t k = 0; k < a[i].mig.size(); ++k) {
      if (a[i].mig[k].profile != b[i].mig[k].profile || a[i].mig[k].memory != b[i].mig[k].memory) return false;
    }
  }
  return true;
}

// The settings that rank jobs: an index built for other ones does not serve.
bool SameRanking(const Policy& a, const Policy& b) {
  const Weights& x = a.weights;
  const Weights& y = b.weights;
  return a.algorithm == b.algorithm && a.mode == b.mode && x.tier == y.tier && x.fairshare == y.fairshare &&
         x.age == y.age && x.size == y.size && x.penalty == y.penalty && a.age_max == b.age_max &&
         a.age_cap == b.age_cap && a.size_max_gpu_hours == b.size_max_gpu_hours &&
         a.size_by_prediction == b.size_by_prediction && a.heavy_gpus == b.heavy_gpus &&
         a.protect_after == b.protect_after && a.promise_slack == b.promise_slack &&
         a.heavy_time == b.heavy_time;
}

template <typename Map, typename K>
void CountShape(Map& m, const K& k, int delta) {
  auto it = m.try_emplace(k, 0).first;
  it->second += delta;
  if (it->second <= 0) m.erase(it);
}

}  // namespace

QueueIndex::QueueIndex(const Policy& policy, const std::vector<Gpu>& gpus)
    : policy_(policy), gpus_(gpus), gpu_table_(CardsOnly(gpus)),
      by_rank_(policy.algorithm == Algorithm::kRota), log_size_max_(SizeLogMax(policy)) {}

bool QueueIndex::CappedAt(Time submit, Time now) const {
  // As PriorityModel::Factors computes the age: capped where the clamp takes the cap.
  if (policy_.age_max <= 0) return false;  // no age: one order by size, never capped
  return static_cast<double>(now - submit) / static_cast<double>(policy_.age_max) >= policy_.age_cap;
}

int QueueIndex::GroupOf(const Job& job, bool heavy) {
  auto [it, added] = group_of_.try_emplace({job.tier, heavy, job.user, job.project}, static_cast<int>(groups_.size()));
  if (added) groups_.push_back(Group{job.tier, heavy, job.user, job.project, {}, {}, {}});
  return it->second;
}

void QueueIndex::Count(std::map<std::string, int>& counts, std::vector<std::string_view>& list,
                       const std::string& key, int delta) {
  auto [it, added] = counts.try_emplace(key, 0);
  if (added) list.push_back(it->first);
  it->second += delta;
  if (it->second > 0) return;
  list.erase(std::find(list.begin(), list.end(), std::string_view(it->first)));
  counts.erase(it);
}

void QueueIndex::Add(const Job& job, size_t pos) {
  if (recs_.count(job.id)) Remove(job.id);
  const double gpus = gpu_table_.Of(job.request);
  const double size = policy_.weights.size * SizeFactor(job, gpus, policy_, log_size_max_);
  Rec r;
  r.request = job.request;
  r.limit = job.time_limit;
  r.due = by_rank_ && job.tier != Tier::kExplore && Protecting(policy_) ? ProtectedFrom(job, policy_) : kNever;
  r.has_deps = !job.after.empty() || !job.after_ok.empty();
  r.capped = false;
  r.sized = size;
  // The young key: priority's size and age terms less what every job's age has in common (now).
  const double age = policy_.age_max > 0 ? policy_.weights.age * static_cast<double>(job.submit_time) /
                                               static_cast<double>(policy_.age_max)
                                         : 0.0;
  r.item = Item{size - age, job.submit_time, job.id, pos};
  r.group = -1;
  if (by_rank_) {
    r.group = GroupOf(job, IsHeavy(job, gpus, policy_));
    Group& g = groups_[static_cast<size_t>(r.group)];
    g.young.insert(r.item);
    g.young_by_submit.insert({job.submit_time, job.id});
    if (r.due != kNever) not_due_.insert({r.due, job.submit_time, job.id});
  } else {
    r.item.key = 0;
    all_.insert(r.item);
  }
  by_submit_.insert({job.submit_time, job.id});
  if (by_rank_) {  // only rota ranks by fair share
    Count(users_, users_list_, job.user, +1);
    Count(projects_, projects_list_, job.project, +1);
  }
  with_deps_ += r.has_deps ? 1 : 0;
  switch (job.request.kind) {
    case RequestKind::kWholeGpus: CountShape(whole_, job.request.gpus, +1); break;
    case RequestKind::kMemShare: CountShape(shares_, job.request.memory, +1); break;
    case RequestKind::kMig: CountShape(mig_, job.request.mig_profile, +1); break;
  }
  Shape& shape = shapes_.try_emplace(KeyOf(job.request), Shape{job.request, {}}).first->second;
  shape.limits.insert(job.time_limit);
  recs_.emplace(job.id, std::move(r));
  advanced_to_ = kNever;
}

void QueueIndex::Remove(JobId id) {
  auto it = recs_.find(id);
  if (it == recs_.end()) return;
  const Rec& r = it->second;
  const Time submit = r.item.submit;
  if (r.group >= 0) {
    Group& g = groups_[static_cast<size_t>(r.group)];
    if (r.capped) {
      g.capped.erase(Item{r.sized, submit, id});
    } else {
      g.young.erase(r.item);
      g.young_by_submit.erase({submit, id});
    }
    not_due_.erase({r.due, submit, id});
    due_.erase({submit, id});
    Count(users_, users_list_, g.user, -1);
    Count(projects_, projects_list_, g.project, -1);
  } else {
    all_.erase(r.item);
  }
  by_submit_.erase({submit, id});
  with_deps_ -= r.has_deps ? 1 : 0;
  switch (r.request.kind) {
    case RequestKind::kWholeGpus: CountShape(whole_, r.request.gpus, -1); break;
    case RequestKind::kMemShare: CountShape(shares_, r.request.memory, -1); break;
    case RequestKind::kMig: CountShape(mig_, r.request.mig_profile, -1); break;
  }
  auto shape = shapes_.find(KeyOf(r.request));
  if (shape != shapes_.end()) {
    auto limit = shape->second.limits.find(r.limit);
    if (limit != shape->second.limits.end()) shape->second.limits.erase(limit);
    if (shape->second.limits.empty()) shapes_.erase(shape);
  }
  recs_.erase(it);
}

void QueueIndex::Moved(JobId id, size_t pos) {
  auto it = recs_.find(id);
  if (it == recs_.end()) return;
  Rec& r = it->second;
  r.item.pos = pos;
  // The copy in its run, which the pass reads.
  const Run* run = &all_;
  Item key = r.item;
  if (r.group >= 0) {
    const Group& g = groups_[static_cast<size_t>(r.group)];
    run = r.capped ? &g.capped : &g.young;
    if (r.capped) key.key = r.sized;
  }
  auto in = run->find(key);
  if (in != run->end()) in->pos = pos;
}

void QueueIndex::Advance(Time now) {
  if (by_rank_ && policy_.age_max > 0) {
    for (Group& g : groups_) {
      while (!g.young_by_submit.empty() && CappedAt(g.young_by_submit.begin()->first, now)) {
        const JobId id = g.young_by_submit.begin()->second;
        Rec& r = recs_.at(id);
        g.young.erase(r.item);
        g.young_by_submit.erase(g.young_by_submit.begin());
        g.capped.insert(Item{r.sized, r.item.submit, id, r.item.pos});
        r.capped = true;
      }
    }
  }
  // Jobs become due as time passes (and, should it go back, are not due any more).
  if (due_to_ != kNever && now < due_to_) {
    for (const auto& [submit, id] : due_) not_due_.insert({recs_.at(id).due, submit, id});
    due_.clear();
  }
  while (!not_due_.empty() && std::get<0>(*not_due_.begin()) <= now) {
    const auto [due, submit, id] = *not_due_.begin();
    due_.insert({submit, id});
    not_due_.erase(not_due_.begin());
  }
  due_to_ = now;
  advanced_to_ = now;
}

bool QueueIndex::Serves(const ClusterState& state, const Policy& policy, Time now) const {
  if (policy.explain || policy.estimate_starts || !QuotasUnlimited(policy.quota) || !state.bookings.empty()) {
    return false;
  }
  if (advanced_to_ != now || recs_.size() != state.pending.size() || with_deps_ > 0) return false;
  if (!by_submit_.empty() && by_submit_.rbegin()->first > now) return false;
  if (!SameRanking(policy, policy_) || !SameCards(state.gpus, gpus_)) return false;
  // A factor of 0 would tie every heavy job (then ordered by submit time), a negative one turn
  // their order round: neither is the order of the runs.
  if (by_rank_ && !policy.time_of_day.empty() && TimeOfDayFactor(policy, now) <= 0) return false;
  return true;
}

bool QueueIndex::AllPossible(const CapacityPlan& plan) const {
  // Possible() is monotone in cards and memory: the largest request of each kind decides.
  if (!whole_.empty()) {
    Request r;
    r.kind = RequestKind::kWholeGpus;
    r.gpus = whole_.begin()->first;  // < 1 never fits
    if (!plan.Possible(r)) return false;
    r.gpus = whole_.rbegin()->first;
    if (!plan.Possible(r)) return false;
  }
  if (!shares_.empty()) {
    Request r;
    r.kind = RequestKind::kMemShare;
    r.memory = shares_.begin()->first;  // <= 0 never fits
    if (!plan.Possible(r)) return false;
    r.memory = shares_.rbegin()->first;
    if (!plan.Possible(r)) return false;
  }
  for (const auto& [profile, n] : mig_) {
    Request r;
    r.kind = RequestKind::kMig;
    r.mig_profile = profile;
    if (!plan.Possible(r)) return false;
  }
  return true;
}

}  // namespace rota
