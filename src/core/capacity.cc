// Tested by capacity_test.cc and, against the reference scheduler, by scheduler_random_test.cc.
//
// Costs: Peak() is quadratic in the commitments of one unit, which stay few (running jobs plus a
// handful of reservations). Earliest() for one unit scans the units of the right kind; for
// several whole cards it sweeps the free windows of the cards in time order until enough are
// free together (O(W log W) in the windows read; without bookings, only cards with a hole as
// long as the span are read so, the others come in order off the tails index). The summary of
// what is free now is refreshed after each start so that PhysicallyFitsNow() is O(1): most of a
// long queue is rejected by it without looking at any unit.
//
// Borrowing (Holds::kBorrow) adds no state: holds already live apart from the profile and are
// added only for the requests they bind (for a borrower, the claimed ones), so a request that no
// hold binds reads the profile itself. The fast paths stay exact for it: card tails and holes
// are computed from the profile alone (and neither EarliestWholeByTails nor EarliestMulti reads
// them while bookings exist), and the scheduler keeps its "failed shapes" per view (scheduler.cc).
// Preferences (BookingRank) only order units that are free at the same time, so they never
// change when a request fits, only where.
#include "core/capacity.h"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <string>
#include <tuple>

namespace rota {

Time ExpectedEnd(const RunningJob& r, const Policy& policy, Time now) {
  if (r.kill_at != kNever) return std::max(r.kill_at, now + 1);
  Time end = r.start_time + r.job.time_limit;
  if (end > now) return end;
  return now + (policy.enforce_time_limits ? 1 : std::max<Duration>(1, policy.overdue_grace));
}

namespace {

constexpr Time kMinusInfinity = std::numeric_limits<Time>::min();

// Index of the breakpoint at time t, inserting one (with the value in force there) if needed.
size_t Split(Profile& p, Time t) {
  auto it = std::lower_bound(p.begin(), p.end(), t, [](const auto& bp, Time x) { return bp.first < x; });
  if (it != p.end() && it->first == t) return static_cast<size_t>(it - p.begin());
  MiB value = std::prev(it)->second;  // p starts at -infinity, so there is a previous breakpoint
  size_t index = static_cast<size_t>(it - p.begin());
  p.insert(it, {t, value});
  return index;
}

// Adds `delta` over [s, e).
void AddInterval(Profile& p, Time s, Time e, MiB delta) {
  if (s >= e || delta == 0) return;
  if (p.empty()) {
    p.reserve(8);  // a running job and a reservation or two: one allocation per unit
    p.push_back({kMinusInfinity, 0});
    if (s > kMinusInfinity) {
      // The first interval of a unit (most of a plan's, one per running job): written, not searched.
      p.push_back({s, delta});
      if (e != kNever) p.push_back({e, 0});
      return;
    }
  }
  size_t i = Split(p, s);
  size_t j = e == kNever ? p.size() : Split(p, e);
  for (size_t k = i; k < j; ++k) p[k].second += delta;
}

// Moves the end of `amount` committed until `from` to `to`: released over [to, from) when earlier,
// added over [from, to) when later.
void MoveEnd(Profile& p, Time from, Time to, MiB amount) {
  if (to < from) {
    AddInterval(p, to, from, -amount);
  } else {
    AddInterval(p, from, to, amount);
  }
}

// Drops the breakpoint at t where it no longer changes the value (a kept plan's runs come and go),
// and a profile left with nothing committed, so that it is what a plan built anew holds.
void Tidy(Profile& p, Time t) {
  auto it = std::lower_bound(p.begin(), p.end(), t, [](const auto& bp, Time x) { return bp.first < x; });
  if (it != p.end() && it != p.begin() && it->first == t && std::prev(it)->second == it->second) p.erase(it);
  if (p.size() == 1 && p.front().second == 0) p.clear();
}

// Index of the segment containing t.
size_t SegmentAt(const Profile& p, Time t) {
  auto it = std::upper_bound(p.begin(), p.end(), t, [](Time x, const auto& bp) { return x < bp.first; });
  return static_cast<size_t>(it - p.begin()) - 1;
}

Time SegmentEnd(const Profile& p, size_t k) { return k + 1 < p.size() ? p[k + 1].first : kNever; }

MiB ProfilePeak(const Profile& p, Time s, Time e) {
  if (p.empty()) return 0;
  MiB best = 0;
  for (size_t k = SegmentAt(p, s); k < p.size() && p[k].first < e; ++k) best = std::max(best, p[k].second);
  return best;
}

// Earliest t >= t0 with the profile <= limit over [t, t + d), or kNever.
Time ProfileEarliest(const Profile& p, MiB limit, Duration d, Time t0) {
  if (limit < 0) return kNever;
  if (p.empty()) return t0;
  Time cand = t0;
  for (size_t k = SegmentAt(p, t0); k < p.size(); ++k) {
    Time end = SegmentEnd(p, k);
    if (p[k].second > limit) {
      cand = end;
      if (cand == kNever) return kNever;
      continue;
    }
    if (end == kNever || end - cand >= d) return cand;
  }
  return cand;
}


// A sorted vector's insert and erase of one element (the plan's tails and holes indexes).
void InsertSorted(std::vector<std::pair<Time, int>>& v, std::pair<Time, int> x) {
  v.insert(std::lower_bound(v.begin(), v.end(), x), x);
}
void EraseSorted(std::vector<std::pair<Time, int>>& v, std::pair<Time, int> x) {
  auto it = std::lower_bound(v.begin(), v.end(), x);
  if (it != v.end() && *it == x) v.erase(it);
}

// Replaces `from` (in the sorted vector `v`) by `to`, moving only the elements between the two.
void MoveSorted(std::vector<std::pair<Time, int>>& v, std::pair<Time, int> from, std::pair<Time, int> to) {
  if (from == to) return;
  auto at = std::lower_bound(v.begin(), v.end(), from);
  if (at == v.end() || *at != from) {
    InsertSorted(v, to);
    return;
  }
  if (from < to) {
    auto dest = std::lower_bound(at + 1, v.end(), to);  // the first element after `to`'s place
    std::rotate(at, at + 1, dest);
    *(dest - 1) = to;
  } else {
    auto dest = std::lower_bound(v.begin(), at, to);
    std::rotate(dest, at, at + 1);
    *dest = to;
  }
}

// Erases `del` from the sorted vector `v` (each is there) and inserts `add`. Only the stretch of v
// between the least and the greatest of them changes: it is merged once into `scratch` (kept by
// the caller, so that its memory is reused) and copied back in its place.
void Replace(std::vector<std::pair<Time, int>>& v, std::vector<std::pair<Time, int>>& del,
             std::vector<std::pair<Time, int>>& add, std::vector<std::pair<Time, int>>& scratch) {
  if (del.empty() && add.empty()) return;
  std::sort(del.begin(), del.end());
  std::sort(add.begin(), add.end());
  const auto first = del.empty() ? add.front() : add.empty() ? del.front() : std::min(del.front(), add.front());
  const auto last = del.empty() ? add.back() : add.empty() ? del.back() : std::max(del.back(), add.back());
  const auto lo = std::lower_bound(v.begin(), v.end(), first);
  const auto hi = std::upper_bound(lo, v.end(), last);
  scratch.clear();
  auto d = del.begin();
  auto a = add.begin();
  for (auto it = lo; it != hi; ++it) {
    if (d != del.end() && *it == *d) {
      ++d;
      continue;
    }
    while (a != add.end() && *a < *it) scratch.push_back(*a++);
    scratch.push_back(*it);
  }
  scratch.insert(scratch.end(), a, add.end());
  const auto at = lo - v.begin();
  if (scratch.size() == static_cast<size_t>(hi - lo)) {
    std::copy(scratch.begin(), scratch.end(), lo);  // as many out as in: a card's tail moved
  } else {
    v.erase(lo, hi);
    v.insert(v.begin() + at, scratch.begin(), scratch.end());
  }
}

// A change in how many cards can hold a multi-card request from an instant on (EarliestMulti).
struct WindowEvent {
  Time t;
  int delta;  // +1 where a window opens, -1 one second after it closes
  int unit;
};

// One card's windows of feasible starts for a span of d (stretches with nothing committed, at
// least d long), read off its profile one at a time in time order (EarliestMulti).
struct CardWindows {
  const Profile* prof;
  size_t k;        // next segment to read
  Time free_from;  // start of the free stretch being read, or kNever
  Time close;      // the -1 of the window just opened, or kNever
  int unit;
  // The card's next event; false when there is none.
  bool Next(Time t0, Duration d, WindowEvent& e) {
    if (close != kNever) {
      e = {close, -1, unit};
      close = kNever;
      return true;
    }
    while (k < prof->size()) {
      const Time seg_start = std::max((*prof)[k].first, t0);
      const bool empty = (*prof)[k].second == 0;
      ++k;
      if (empty) {
        if (free_from == kNever) free_from = seg_start;
      } else if (free_from != kNever) {
        const Time a = free_from;
        free_from = kNever;
        if (seg_start - a >= d) {
          close = seg_start - d + 1;
          e = {a, +1, unit};
          return true;
        }
      }
    }
    if (free_from == kNever) return false;
    e = {free_from, +1, unit};  // open-ended
    free_from = kNever;
    return true;
  }
};
}  // namespace

CapacityPlan::CapacityPlan(const ClusterState& state, const Policy& policy, Time now)
    : state_(&state), now_(now), span_nodes_(policy.span_nodes) {
  Layout(state);
  AddBookings(state);
  running_end_.resize(state.running.size());
  for (size_t ri = 0; ri < state.running.size(); ++ri) {
    const RunningJob& r = state.running[ri];
    running_end_[ri] = ExpectedEnd(r, policy, now);
    AddRunning(r, now, running_end_[ri]);
  }
  for (size_t ui = 0; ui < units_.size(); ++ui) Reindex(static_cast<int>(ui));
  RefreshNowSummary();
}

CapacityPlan::CapacityPlan(Kept, const ClusterState& state, const Policy& policy)
    : state_(&state), now_(0), span_nodes_(policy.span_nodes), kept_(true), ends_(policy) {
  Layout(state);
  touched_.assign(units_.size(), 0);
}

void CapacityPlan::Layout(const ClusterState& state) {
  // A plan for one pass takes its profiles from the arena; a kept one from the heap, which takes
  // back what it frees.
  std::pmr::memory_resource* memory = kept_ ? std::pmr::new_delete_resource() : &arena_;
  first_unit_.assign(state.gpus.size(), -1);
  size_t n_units = 0;
  int max_node = -1;
  bool small_nodes = true;  // node numbers 0..4 x cards: numbered through a table, not a map
  for (const Gpu& g : state.gpus) {
    n_units += g.mig.empty() ? 1 : g.mig.size();
    max_node = std::max(max_node, g.node);
    small_nodes = small_nodes && g.node >= 0;
  }
  small_nodes = small_nodes && static_cast<size_t>(max_node) < 4 * state.gpus.size() + 16;
  units_.reserve(n_units);
  dense_node_.reserve(n_units);
  whole_units_.reserve(n_units);
  std::vector<int> node_table(small_nodes ? static_cast<size_t>(max_node + 1) : 0, -1);
  std::unordered_map<int, int> node_index;
  std::vector<int> node_size;
  auto dense_of = [&](int node) {
    if (small_nodes) {
      int& d = node_table[static_cast<size_t>(node)];
      if (d < 0) d = static_cast<int>(node_size.size());
      return d;
    }
    return node_index.try_emplace(node, static_cast<int>(node_index.size())).first->second;
  };
  for (size_t gi = 0; gi < state.gpus.size(); ++gi) {
    const Gpu& g = state.gpus[gi];
    first_unit_[gi] = static_cast<int>(units_.size());
    int dense = dense_of(g.node);
    if (static_cast<size_t>(dense) >= node_size.size()) node_size.resize(dense + 1, 0);
    if (g.mig.empty()) {
      Unit u(memory);
      u.gpu = static_cast<int>(gi);
      u.node = g.node;
      u.capacity = g.memory;
      max_card_memory_ = std::max(max_card_memory_, g.memory);
      u.device_free = g.reported_free;
      u.usable = !g.drained;
      whole_units_.push_back(static_cast<int>(units_.size()));
      units_.push_back(std::move(u));
      dense_node_.push_back(dense);
      max_node_size_ = std::max(max_node_size_, ++node_size[dense]);
    } else {
      for (size_t si = 0; si < g.mig.size(); ++si) {
        Unit u(memory);
        u.gpu = static_cast<int>(gi);
        u.mig = static_cast<int>(si);
        u.node = g.node;
        u.capacity = g.mig[si].memory;
        u.usable = !g.drained && !g.mig[si].drained;
        mig_units_[g.mig[si].profile].push_back(static_cast<int>(units_.size()));
        units_.push_back(std::move(u));
        dense_node_.push_back(dense);
      }
    }
  }
  node_free_.assign(node_size.size(), 0);
}

void CapacityPlan::AddBookings(const ClusterState& state) {
  for (const Booking& b : state.bookings) {
    if (b.end <= now_) continue;
    int uid = booking_users_.try_emplace(b.user, static_cast<int>(booking_users_.size())).first->second;
    ForAllocation(b.alloc, [&](int ui, MiB amount, bool) {
      units_[ui].bookings.push_back({b.start, b.end, amount, uid});
    });
  }
  claimed_.assign(booking_users_.size(), 0);
}

void CapacityPlan::AddRunning(const RunningJob& r, Time from, Time end) {
  ForAllocation(r.alloc, [&](int ui, MiB amount, bool share) {
    Unit& u = units_[ui];
    AddInterval(u.profile, from, end, amount);
    u.used_now += amount;
    u.shared = u.shared || share;
    u.running_shares += share ? 1 : 0;
  });
}

int CapacityPlan::UserId(std::string_view user) const {
  if (booking_users_.empty()) return -1;
  auto it = booking_users_.find(user);
  return it == booking_users_.end() ? -1 : it->second;
}

void CapacityPlan::Reindex(int ui) {
  Unit& u = units_[ui];
  // Whole usable cards are in the tails index: it is brought up to date when next read (SyncIndexes).
  if (tails_built_ && u.mig < 0 && u.usable && !stale_flag_[ui]) {
    stale_flag_[ui] = 1;
    stale_.push_back(ui);
  }
  // Runs of segments with nothing committed, seen from now on; the open-ended last run is the tail.
  u.max_hole = 0;
  Time run = kNever;  // start of the current free run, or kNever inside a committed stretch
  for (const auto& [t, value] : u.profile) {
    Time at = std::max(t, now_);
    if (value == 0) {
      if (run == kNever) run = at;
    } else if (run != kNever) {
      u.max_hole = std::max<Duration>(u.max_hole, at - run);
      run = kNever;
    }
  }
  if (u.profile.empty() || run == now_) {
    u.tail = kFreeNow;
  } else {
    u.tail = run;  // kNever when committed for ever
  }
}

void CapacityPlan::SyncIndexes() const {
  if (stale_.empty()) return;
  // Only the cards whose entries changed (a kept plan's rolled-back cards are mostly as indexed).
  // A few are moved one by one; a multi-card commit's in one pass over the index.
  Index& del_tails = sync_[0];
  Index& add_tails = sync_[1];
  Index& del_holes = sync_[2];
  Index& add_holes = sync_[3];
  for (Index& list : sync_) list.clear();
  for (int ui : stale_) {
    const Unit& u = units_[ui];
    auto& [tail, hole] = indexed_as_[ui];
    if (tail != u.tail) {
      del_tails.emplace_back(tail, ui);
      add_tails.emplace_back(u.tail, ui);
    }
    if (hole != u.max_hole) {
      if (hole > 0) del_holes.emplace_back(hole, ui);
      if (u.max_hole > 0) add_holes.emplace_back(u.max_hole, ui);
    }
    tail = u.tail;
    hole = u.max_hole;
    stale_flag_[ui] = 0;
  }
  stale_.clear();
  auto apply = [this](Index& index, Index& del, Index& add) {
    if (del.size() + add.size() > 4) {
      Replace(index, del, add, sync_[4]);
      return;
    }
    // Pairs of one card (its old and new entry) are moved; the rest erased or inserted.
    size_t a = 0;
    for (const auto& d : del) {
      if (a < add.size() && add[a].second == d.second) {
        MoveSorted(index, d, add[a++]);
      } else {
        EraseSorted(index, d);
      }
    }
    for (; a < add.size(); ++a) InsertSorted(index, add[a]);
  };
  apply(tails_, del_tails, add_tails);
  apply(holes_, del_holes, add_holes);
}

void CapacityPlan::BuildTails() const {
  std::vector<std::pair<Time, int>> all;
  all.reserve(whole_units_.size());
  for (int ui : whole_units_) {
    const Unit& u = units_[ui];
    if (!u.usable) continue;
    all.emplace_back(u.tail, ui);
    if (u.max_hole > 0) holes_.emplace_back(u.max_hole, ui);
  }
  std::sort(all.begin(), all.end());
  std::sort(holes_.begin(), holes_.end());
  tails_ = std::move(all);
  indexed_as_.resize(units_.size());
  for (size_t ui = 0; ui < units_.size(); ++ui) indexed_as_[ui] = {units_[ui].tail, units_[ui].max_hole};
  stale_flag_.assign(units_.size(), 0);
  tails_built_ = true;
}

std::optional<Placement> CapacityPlan::EarliestWholeByTails(int n, Duration d, Time t0) const {
  if (!booking_users_.empty()) return std::nullopt;
  if (!tails_built_) BuildTails();  // most passes never plan a whole-card reservation
  SyncIndexes();
  if (n == 1) {
    // The card that frees for good first, unless a hole elsewhere fits earlier.
    Placement p;
    if (tails_.empty()) return p;
    auto [tail, ui] = *tails_.begin();
    Time best = std::max(t0, tail);
    int best_unit = ui;
    for (auto it = LongHoles(d); it != holes_.end(); ++it) {
      const int hu = it->second;
      const Unit& u = units_[hu];
      Time t = EarliestOnUnit(u, u.capacity, false, d, -1, t0, false, Holds::kOthers);
      if (t < best || (t == best && hu < best_unit)) {
        best = t;
        best_unit = hu;
      }
    }
    if (best == kNever) return p;
    p.start = best;
    p.units.push_back(best_unit);
    return p;
  }
  if (LongHoles(d) != holes_.end()) return std::nullopt;  // a hole may fit: sweep the windows
  // Every card is usable from max(t0, tail) on for good: walk the tails in order until a node
  // (or, for jobs larger than a node, the cluster) has n of them.
  std::vector<int> per_node(node_free_.size(), 0);
  int total = 0;
  Time t = kNever;
  for (const auto& [tail, ui] : tails_) {
    if (tail == kNever) break;
    int c = ++per_node[dense_node_[ui]];
    ++total;
    if (OneNode(n) ? c >= n : total >= n) {
      t = std::max(t0, tail);
      break;
    }
  }
  if (t == kNever) return Placement{};
  // All cards free from t on (ties at t included), then the usual choice among them.
  std::vector<int> usable;
  usable.reserve(static_cast<size_t>(total));
  std::fill(per_node.begin(), per_node.end(), 0);
  for (const auto& [tail, ui] : tails_) {
    if (std::max(t0, tail) > t) break;
    usable.push_back(ui);
    ++per_node[dense_node_[ui]];
  }
  return PickAt(t, d, -1, Holds::kOthers, usable, per_node, n);  // no bookings: no preference
}

void CapacityPlan::RefreshNowSummary() {
  free_whole_ = 0;
  max_share_free_ = 0;
  free_whole_now_.clear();
  std::fill(node_free_.begin(), node_free_.end(), 0);
  for (int ui : whole_units_) {
    const Unit& u = units_[ui];
    if (!u.usable) continue;
    if (u.used_now == 0) {
      ++free_whole_;
      ++node_free_[dense_node_[ui]];
      free_whole_now_.push_back(ui);
    }
    MiB free = u.capacity - u.used_now;
    if (u.device_free >= 0) free = std::min(free, u.device_free);
    max_share_free_ = std::max(max_share_free_, free);
  }
  max_node_free_ = node_free_.empty() ? 0 : *std::max_element(node_free_.begin(), node_free_.end());
  if (mig_units_.empty()) return;
  free_mig_.clear();
  free_slices_ = 0;
  gpu_free_slices_.assign(state_->gpus.size(), 0);
  for (const auto& [profile, list] : mig_units_) {
    int n = 0;
    for (int ui : list) {
      if (units_[ui].usable && units_[ui].used_now == 0) {
        ++n;
        ++gpu_free_slices_[units_[ui].gpu];
      }
    }
    free_mig_[profile] = n;
    free_slices_ += n;
  }
}

bool CapacityPlan::Possible(const Request& req) const {
  switch (req.kind) {
    case RequestKind::kWholeGpus:
      if (req.gpus < 1) return false;
      return req.gpus <= max_node_size_ ||
             (span_nodes_ && static_cast<size_t>(req.gpus) <= whole_units_.size());
    case RequestKind::kMemShare:
      return req.memory > 0 && req.memory <= max_card_memory_;
    case RequestKind::kMig:
      return mig_units_.count(req.mig_profile) > 0;
  }
  return false;
}

bool CapacityPlan::PhysicallyFitsNow(const Request& req) const {
  switch (req.kind) {
    case RequestKind::kWholeGpus:
      return OneNode(req.gpus) ? max_node_free_ >= req.gpus : free_whole_ >= req.gpus;
    case RequestKind::kMemShare:
      return max_share_free_ >= req.memory;
    case RequestKind::kMig: {
      auto it = free_mig_.find(req.mig_profile);
      return it != free_mig_.end() && it->second > 0;
    }
  }
  return false;
}

MiB CapacityPlan::Amount(const Unit& u, const Request& req) const {
  return req.kind == RequestKind::kMemShare ? req.memory : u.capacity;
}

void CapacityPlan::ClaimBookingsOf(int user) {
  if (user < 0) return;
  claimed_[user] = 1;
  any_claimed_ = true;
}

const Profile& CapacityPlan::WithHolds(const Unit& u, int user, Holds holds, Profile& scratch) const {
  bool any = false;
  for (const BookingHold& b : u.bookings) {
    if (b.user == user || (holds == Holds::kBorrow && !claimed_[b.user])) continue;
    if (!any) scratch = u.profile;
    any = true;
    AddInterval(scratch, b.start, b.end, b.amount);
  }
  return any ? scratch : u.profile;
}

MiB CapacityPlan::Peak(const Unit& u, Time s, Time e, int user, Holds holds) const {
  Profile scratch;
  return ProfilePeak(Effective(u, user, holds, scratch), s, e);
}

int CapacityPlan::BookingRank(const Unit& u, int user, Holds holds, Time s, Time e) const {
  if (u.bookings.empty() || holds == Holds::kNone) return 1;
  bool others = false;
  for (const BookingHold& b : u.bookings) {
    if (b.start >= e || b.end <= s) continue;
    if (user >= 0 && b.user == user) return 0;
    others = others || !claimed_[b.user];  // a claimed booking binds: nothing is borrowed there
  }
  return others && holds == Holds::kBorrow ? 2 : 1;
}

Time CapacityPlan::EarliestOnUnit(const Unit& u, MiB amount, bool share, Duration d, int user, Time t0,
                                  bool now_only, Holds holds) const {
  if (!u.usable || amount > u.capacity) return kNever;
  // A share must also fit in what the device reports free now (other tenants' real use).
  bool device_blocks_now = share && u.device_free >= 0 && u.device_free < amount;
  if (!now_only && amount == u.capacity && u.bookings.empty() && !device_blocks_now && u.max_hole < d) {
    return std::max(t0, u.tail);  // no hole fits: the first start is where the unit frees for good
  }
  Profile scratch;
  const Profile& p = Effective(u, user, holds, scratch);
  const MiB limit = u.capacity - amount;
  if (now_only) {
    if (t0 == now_ && device_blocks_now) return kNever;
    return ProfilePeak(p, t0, t0 + d) <= limit ? t0 : kNever;
  }
  Time t = ProfileEarliest(p, limit, d, t0);
  if (t == now_ && device_blocks_now) {
    // Not now: from the next change of the profile on.
    Time next = p.empty() ? kNever : SegmentEnd(p, SegmentAt(p, now_));
    t = next == kNever ? kNever : ProfileEarliest(p, limit, d, next);
  }
  return t;
}

Placement CapacityPlan::EarliestSingle(const Request& req, Duration d, int user, Time t0, bool now_only,
                                       Holds holds) const {
  static const std::vector<int> kNone;
  const std::vector<int>* candidates = &whole_units_;
  if (req.kind == RequestKind::kMig) {
    auto it = mig_units_.find(req.mig_profile);
    candidates = it == mig_units_.end() ? &kNone : &it->second;
  } else if (req.kind == RequestKind::kWholeGpus && now_only && t0 == now_) {
    candidates = &free_whole_now_;  // a whole card that is held now cannot start a job now
  }
  // Preference among units with the same start: first by booking (BookingRank: the owner's own
  // booked units, then unbooked ones, then, for a borrowing job, those others booked); then shares
  // go to cards already shared, best fit; whole cards and slices go where the fewest others are
  // free (pack, keep big holes whole).
  using Key = std::tuple<Time, int, int, MiB, int>;
  Key best{kNever, 0, 0, 0, 0};
  int best_unit = -1;
  for (int ui : *candidates) {
    const Unit& u = units_[ui];
    MiB amount = Amount(u, req);
    if (t0 == now_ && now_only && u.used_now + amount > u.capacity) continue;
    const bool share = req.kind == RequestKind::kMemShare;
    Time t = EarliestOnUnit(u, amount, share, d, user, t0, now_only, holds);
    if (t == kNever || t > std::get<0>(best)) continue;
    const int rank = u.bookings.empty() ? 1 : BookingRank(u, user, holds, t, t + d);
    Key key;
    if (req.kind == RequestKind::kMemShare) {
      MiB leftover = u.capacity - Peak(u, t, t + d, user, holds) - amount;
      key = Key{t, rank, u.shared ? 0 : 1, leftover, u.gpu};
    } else if (req.kind == RequestKind::kMig) {
      key = Key{t, rank, gpu_free_slices_[u.gpu], 0, ui};
    } else {
      key = Key{t, rank, node_free_[dense_node_[ui]], 0, ui};
    }
    if (best_unit < 0 || key < best) {
      best = key;
      best_unit = ui;
    }
  }
  Placement p;
  if (best_unit >= 0) {
    p.start = std::get<0>(best);
    p.units.push_back(best_unit);
  }
  return p;
}

Placement CapacityPlan::EarliestMulti(const Request& req, Duration d, int user, Time t0, bool now_only,
                                      Holds holds) const {
  Profile scratch;
  if (now_only) {
    // Only t0 matters: count, per node, the cards with nothing committed over [t0, t0 + d).
    std::vector<int> free_at_t0;
    std::vector<int> per_node(node_free_.size(), 0);
    for (int ui : whole_units_) {
      const Unit& u = units_[ui];
      if (!u.usable) continue;
      if (ProfilePeak(Effective(u, user, holds, scratch), t0, t0 + d) != 0) continue;
      free_at_t0.push_back(ui);
      ++per_node[dense_node_[ui]];
    }
    return PickAt(t0, d, user, holds, free_at_t0, per_node, req.gpus);
  }
  // Each usable card's windows of feasible starts (stretches with nothing committed, at least d
  // long), read from its profile one at a time as events in time order, are merged through a heap,
  // and the sweep stops at the first instant enough cards are free together: what lies later is
  // never read. Without bookings, only the cards with a hole of d or longer are read so: every
  // other card has one window, open-ended from its tail, and those come in order off the tails
  // index (a congested cluster's cards are mostly committed up to their tail).
  const bool by_tails = !HasBookings();
  if (by_tails && !tails_built_) BuildTails();
  if (by_tails) SyncIndexes();
  std::vector<CardWindows> cards;
  cards.reserve(by_tails ? holes_.size() : whole_units_.size());
  // Profiles with the bookings that bind added (Effective); reserved, so that the cards can point
  // at them as they are added.
  std::vector<Profile> combined;
  if (HasBookings()) combined.reserve(whole_units_.size());
  auto add_card = [&](int ui) {
    const Unit& u = units_[ui];
    const Profile* prof = &Effective(u, user, holds, scratch);
    if (prof == &scratch) {
      combined.push_back(std::move(scratch));
      scratch = Profile{};
      prof = &combined.back();
    }
    CardWindows w{prof, 0, kNever, kNever, ui};
    if (prof->empty()) {
      w.free_from = t0;
    } else {
      w.k = SegmentAt(*prof, t0);
    }
    cards.push_back(w);
  };
  if (by_tails) {
    for (auto it = LongHoles(d); it != holes_.end(); ++it) add_card(it->second);
  } else {
    for (int ui : whole_units_) {
      if (units_[ui].usable) add_card(ui);
    }
  }
  struct Next {
    WindowEvent e;
    int card;
  };
  auto later = [](const Next& a, const Next& b) { return a.e.t > b.e.t; };
  std::vector<Next> heap;
  heap.reserve(cards.size());
  for (size_t c = 0; c < cards.size(); ++c) {
    WindowEvent e;
    if (cards[c].Next(t0, d, e)) heap.push_back({e, static_cast<int>(c)});
  }
  std::make_heap(heap.begin(), heap.end(), later);
  // The cards read off the tails index: those not read above, up to the first committed for ever.
  auto tail = tails_.begin();
  const auto tails_end = tails_.end();
  auto skip_read = [&] {
    while (tail != tails_end && tail->first != kNever && units_[tail->second].max_hole >= d) ++tail;
  };
  if (by_tails) skip_read();
  auto tail_left = [&] { return by_tails && tail != tails_end && tail->first != kNever; };
  std::vector<char> active(units_.size(), 0);
  std::vector<int> node_count(node_free_.size(), 0);
  int total = 0;
  const int n = req.gpus;
  const bool one_node = OneNode(n);
  std::vector<int> grown;  // nodes that gained a card at the current time
  while (true) {
    Time t = heap.empty() ? kNever : heap.front().e.t;
    if (tail_left()) t = std::min(t, std::max(t0, tail->first));
    if (t == kNever) break;
    bool feasible = false;
    grown.clear();
    while (!heap.empty() && heap.front().e.t == t) {
      std::pop_heap(heap.begin(), heap.end(), later);
      Next& next = heap.back();
      const WindowEvent e = next.e;
      active[e.unit] = e.delta > 0;
      node_count[dense_node_[e.unit]] += e.delta;
      total += e.delta;
      if (e.delta > 0) grown.push_back(dense_node_[e.unit]);
      if (cards[next.card].Next(t0, d, next.e)) {
        std::push_heap(heap.begin(), heap.end(), later);
      } else {
        heap.pop_back();
      }
    }
    while (tail_left() && std::max(t0, tail->first) == t) {
      const int ui = tail->second;
      active[ui] = 1;
      ++node_count[dense_node_[ui]];
      ++total;
      grown.push_back(dense_node_[ui]);
      ++tail;
      skip_read();
    }
    // Judged only once every event at t is applied: the events of one instant come in any order,
    // and a window that closes at t must not count together with one that opens at t.
    if (one_node) {
      for (int node : grown) feasible = feasible || node_count[node] >= n;
    } else {
      feasible = total >= n;
    }
    if (!feasible) continue;
    std::vector<int> usable_at_t;
    usable_at_t.reserve(static_cast<size_t>(total));
    for (int ui : whole_units_) {
      if (active[ui]) usable_at_t.push_back(ui);
    }
    return PickAt(t, d, user, holds, usable_at_t, node_count, n);
  }
  return Placement{};
}

Placement CapacityPlan::PickAt(Time t, Duration d, int user, Holds holds, const std::vector<int>& usable,
                               const std::vector<int>& per_node, int n) const {
  Placement p;
  // Booking ranks of the usable cards (same order), and per node how many of each rank; only
  // when some card is ranked other than 1, so that without bookings nothing changes.
  std::vector<int> rank;
  std::vector<std::array<int, 3>> ranks_of_node;
  if (HasBookings()) {
    rank.reserve(usable.size());
    bool ranked = false;
    for (int ui : usable) {
      rank.push_back(BookingRank(units_[ui], user, holds, t, t + d));
      ranked = ranked || rank.back() != 1;
    }
    if (ranked) {
      ranks_of_node.assign(per_node.size(), {0, 0, 0});
      for (size_t i = 0; i < usable.size(); ++i) ++ranks_of_node[dense_node_[usable[i]]][rank[i]];
    } else {
      rank.clear();
    }
  }
  // Cards of `node` among the usable ones, with their ranks.
  auto on_node = [&](size_t node, std::vector<int>& cands, std::vector<int>& cand_rank) {
    for (size_t i = 0; i < usable.size(); ++i) {
      if (dense_node_[usable[i]] != static_cast<int>(node)) continue;
      cands.push_back(usable[i]);
      if (!rank.empty()) cand_rank.push_back(rank[i]);
    }
  };
  if (OneNode(n)) {
    // Best fit: the feasible node where the job's cards rank best (the owner's booked ones, or
    // for a borrowing job the fewest booked by others), then with the fewest usable cards at t.
    auto cost = [&](size_t node) {
      if (ranks_of_node.empty()) return 0;
      int left = n, c = 0;
      for (int r = 0; r < 3 && left > 0; ++r) {
        int take = std::min(left, ranks_of_node[node][r]);
        c += take * r;
        left -= take;
      }
      return c;
    };
    int best_node = -1, best_count = std::numeric_limits<int>::max(), best_cost = 0;
    for (size_t node = 0; node < per_node.size(); ++node) {
      int c = per_node[node];
      if (c < n) continue;
      int k = cost(node);
      if (best_node < 0 || k < best_cost || (k == best_cost && c < best_count)) {
        best_node = static_cast<int>(node);
        best_count = c;
        best_cost = k;
      }
    }
    if (best_node < 0) return p;
    std::vector<int> cands, cand_rank;
    on_node(static_cast<size_t>(best_node), cands, cand_rank);
    p.units = PickWithinNode(std::move(cands), std::move(cand_rank), n);
  } else {
    if (static_cast<int>(usable.size()) < n) return p;
    // Spread over whole nodes first: nodes with the most usable cards (with bookings: first those
    // with the most of the owner's booked cards, then with the fewest booked by others).
    std::vector<std::tuple<int, int, int, int>> nodes;  // (-own, others', -count, node)
    for (size_t node = 0; node < per_node.size(); ++node) {
      int own = ranks_of_node.empty() ? 0 : ranks_of_node[node][0];
      int others = ranks_of_node.empty() ? 0 : ranks_of_node[node][2];
      nodes.emplace_back(-own, others, -per_node[node], static_cast<int>(node));
    }
    std::sort(nodes.begin(), nodes.end());
    for (const auto& [own, others, count, node] : nodes) {
      if (static_cast<int>(p.units.size()) >= n || count >= 0) continue;
      std::vector<int> cands, cand_rank;
      on_node(static_cast<size_t>(node), cands, cand_rank);
      int want = std::min<int>(n - static_cast<int>(p.units.size()), static_cast<int>(cands.size()));
      for (int ui : PickWithinNode(std::move(cands), std::move(cand_rank), want)) p.units.push_back(ui);
    }
  }
  p.start = t;
  return p;
}

std::vector<int> CapacityPlan::PickWithinNode(std::vector<int> cands, std::vector<int> rank, int n) const {
  if (static_cast<int>(cands.size()) <= n) return cands;
  auto linked = [&](int a, int b) {
    const auto& peers = state_->gpus[units_[a].gpu].nvlink;
    return std::find(peers.begin(), peers.end(), units_[b].gpu) != peers.end();
  };
  std::vector<int> chosen;
  std::vector<char> used(cands.size(), 0);
  while (static_cast<int>(chosen.size()) < n) {
    int best = -1, best_rank = 0, best_links = -1, best_degree = -1;
    for (size_t i = 0; i < cands.size(); ++i) {
      if (used[i]) continue;
      // Booking rank first (empty: all equal); then links into the chosen set; then links to
      // other cards still free, so that an orphan card (its partner taken) is not picked while
      // whole pairs remain.
      int r = rank.empty() ? 1 : rank[i];
      if (best >= 0 && r > best_rank) continue;
      int links = 0, degree = 0;
      for (int c : chosen) links += linked(cands[i], c);
      for (size_t o = 0; o < cands.size(); ++o) degree += !used[o] && o != i && linked(cands[i], cands[o]);
      if (best < 0 || r < best_rank || links > best_links || (links == best_links && degree > best_degree)) {
        best = static_cast<int>(i);
        best_rank = r;
        best_links = links;
        best_degree = degree;
      }
    }
    used[best] = 1;
    chosen.push_back(cands[best]);
  }
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

Placement CapacityPlan::Earliest(const Request& req, Duration duration, int user, Time not_before,
                                 bool now_only, Holds holds) const {
  Time t0 = std::max(not_before, now_);
  Duration d = std::max<Duration>(duration, 1);
  if (req.kind == RequestKind::kWholeGpus && req.gpus >= 1 && !now_only) {
    if (auto p = EarliestWholeByTails(req.gpus, d, t0)) return *p;
  }
  if (req.kind == RequestKind::kWholeGpus && req.gpus > 1) {
    return EarliestMulti(req, d, user, t0, now_only, holds);
  }
  if (req.kind == RequestKind::kWholeGpus && req.gpus < 1) return Placement{};
  return EarliestSingle(req, d, user, t0, now_only, holds);
}

void CapacityPlan::Commit(const Placement& p, const Request& req, Time start, Time end) {
  for (int ui : p.units) {
    Touch(ui);
    Unit& u = units_[ui];
    MiB amount = Amount(u, req);
    AddInterval(u.profile, std::max(start, now_), end, amount);
    Reindex(ui);
    if (req.kind == RequestKind::kMemShare) u.shared = true;
    if (start <= now_) {
      u.used_now += amount;
      if (u.device_free >= 0 && req.kind == RequestKind::kMemShare) u.device_free -= amount;
    }
  }
  if (start <= now_) RefreshNowSummary();
}

Time CapacityPlan::SetRunningEnd(int running, Time end) {
  if (running < 0 || static_cast<size_t>(running) >= running_end_.size()) return kNever;
  Time old = running_end_[running];
  if (old == end) return old;
  ForAllocation(state_->running[running].alloc, [&](int ui, MiB amount, bool) {
    Touch(ui);
    // Only from now on: what lies before is never read.
    MoveEnd(units_[ui].profile, std::max(old, now_), std::max(end, now_), amount);
    Reindex(ui);
  });
  running_end_[running] = end;
  return old;
}

bool CapacityPlan::Keeps(const ClusterState& state, const Policy& policy) const {
  return kept_ && state.bookings.empty() && state.gpus.size() == first_unit_.size() &&
         policy.enforce_time_limits == ends_.enforce_time_limits && policy.overdue_grace == ends_.overdue_grace;
}

void CapacityPlan::Rebuild(const ClusterState& state) {
  ++rebuilds_;
  for (Unit& u : units_) {
    u.profile.clear();
    u.used_now = 0;
    u.shared = false;
    u.running_shares = 0;
    u.device_free = u.mig < 0 ? state.gpus[u.gpu].reported_free : -1;
  }
  runs_.clear();
  for (const RunningJob& r : state.running) {
    const Time end = ExpectedEnd(r, ends_, now_);
    AddRunning(r, kMinusInfinity, end);
    runs_.push_back({r.job.id, r.start_time, end, r.alloc});
  }
  for (size_t ui = 0; ui < units_.size(); ++ui) Reindex(static_cast<int>(ui));
  // Sorted again when first read.
  tails_built_ = false;
  tails_.clear();
  holes_.clear();
  stale_.clear();
  broken_ = false;
}

void CapacityPlan::Sync(const ClusterState& state, Time now) {
  Rollback();  // a pass that did not roll back (it cannot, but the plan stays right)
  state_ = &state;
  now_ = now;
  in_pass_ = true;
  bool lined_up = !broken_ && runs_.size() <= state.running.size();
  for (size_t ri = 0; lined_up && ri < runs_.size(); ++ri) {
    const KeptRun& k = runs_[ri];
    lined_up = k.job == 0 || (k.job == state.running[ri].job.id && k.start == state.running[ri].start_time);
  }
  if (!lined_up) {
    Rebuild(state);
  } else {
    for (size_t ri = 0; ri < state.running.size(); ++ri) {
      const RunningJob& r = state.running[ri];
      const Time end = ExpectedEnd(r, ends_, now);
      if (ri >= runs_.size() || runs_[ri].job == 0) {
        // A run started since: committed from the start of time, taken out the same way.
        AddRunning(r, kMinusInfinity, end);
        ForAllocation(r.alloc, [&](int ui, MiB, bool) { Reindex(ui); });
        KeptRun k{r.job.id, r.start_time, end, r.alloc};
        if (ri >= runs_.size()) {
          runs_.push_back(std::move(k));
        } else {
          runs_[ri] = std::move(k);
        }
        continue;
      }
      KeptRun& k = runs_[ri];
      if (k.end == end) continue;
      // A stop was signalled, or the run is overdue and expected a little later again.
      ForAllocation(k.alloc, [&](int ui, MiB amount, bool) {
        // The whole interval, unclipped: the run is taken out later from the start of time.
        Profile& prof = units_[ui].profile;
        MoveEnd(prof, k.end, end, amount);
        Tidy(prof, k.end);
        Reindex(ui);
      });
      k.end = end;
    }
  }
  running_end_.resize(runs_.size());
  for (size_t ri = 0; ri < runs_.size(); ++ri) running_end_[ri] = runs_[ri].end;
  RefreshNowSummary();
}

void CapacityPlan::RunningTaken(const ClusterState& state, size_t i) {
  if (!kept_ || broken_ || in_pass_) {
    broken_ = true;
    return;
  }
  if (i >= runs_.size()) return;  // one the plan has not seen yet; the last moves within those
  KeptRun& k = runs_[i];
  if (k.job != 0) {
    const Time end = k.end;
    ForAllocation(k.alloc, [&](int ui, MiB amount, bool share) {
      Unit& u = units_[ui];
      AddInterval(u.profile, kMinusInfinity, end, -amount);
      Tidy(u.profile, end);
      u.used_now -= amount;
      u.running_shares -= share ? 1 : 0;
      u.shared = u.running_shares > 0;
      Reindex(ui);
    });
  }
  // The caller's last run moves into slot i: one the plan holds (the last of its own), or one it
  // has not seen yet, to be added by the next Sync().
  if (runs_.size() == state.running.size() + 1) {
    if (i + 1 != runs_.size()) runs_[i] = std::move(runs_.back());
    runs_.pop_back();
  } else {
    runs_[i] = KeptRun{};
  }
}

void CapacityPlan::Touch(int ui) {
  if (!in_pass_ || touched_[ui]) return;
  touched_[ui] = 1;
  if (n_saved_ == saved_.size()) saved_.emplace_back();
  Saved& s = saved_[n_saved_++];
  const Unit& u = units_[ui];
  s.unit = ui;
  s.profile.assign(u.profile.begin(), u.profile.end());
  s.used_now = u.used_now;
  s.device_free = u.device_free;
  s.shared = u.shared;
}

void CapacityPlan::Rollback() {
  if (!in_pass_) return;
  for (size_t i = 0; i < n_saved_; ++i) {
    Saved& s = saved_[i];
    Unit& u = units_[s.unit];
    u.profile.swap(s.profile);
    u.used_now = s.used_now;
    u.device_free = s.device_free;
    u.shared = s.shared;
    touched_[s.unit] = 0;
    Reindex(s.unit);
  }
  n_saved_ = 0;
  in_pass_ = false;
}

Allocation CapacityPlan::ToAllocation(const Placement& p, const Request& req) const {
  Allocation a;
  for (int ui : p.units) a.gpus.push_back(units_[ui].gpu);
  if (req.kind == RequestKind::kMig && !p.units.empty()) a.mig = units_[p.units[0]].mig;
  if (req.kind == RequestKind::kMemShare) a.memory = req.memory;
  return a;
}

// Design: CapacityPlan::Possible decides; this only explains, from the same cards (whole cards
// for whole GPUs and shares, slices for MIG profiles), so the two cannot disagree on which kind
// of card a request needs.
std::string WhyNeverFits(const std::vector<Gpu>& gpus, const Request& r) {
  int whole = 0;
  MiB largest = 0;
  std::map<int, int> whole_on;  // per node
  for (const Gpu& g : gpus) {
    if (!g.mig.empty()) continue;
    ++whole;
    ++whole_on[g.node];
    largest = std::max(largest, g.memory);
  }
  const std::vector<std::string> profiles = MigProfiles(gpus, /*in_service_only=*/false);
  const std::string offered = Join(profiles, ", ");
  const std::string mig_only = profiles.empty() ? std::string("this server has no GPUs")
                                                : "every card here is in MIG mode: ask for a slice with --mig (" + offered + ")";
  switch (r.kind) {
    case RequestKind::kWholeGpus: {
      std::string what = CountOf(r.gpus, "GPU", "GPUs") + ", but ";
      if (whole == 0) return what + mig_only;
      if (whole_on.size() > 1 && r.gpus <= whole) {  // larger than any node (Policy::span_nodes off)
        int most = 0;
        for (const auto& [node, n] : whole_on) most = std::max(most, n);
        return what + "a job runs on one node, and the largest here has " +
               CountOf(most, "whole GPU", "whole GPUs") + " (" + CountOf(whole, "GPU", "GPUs") + " on " +
               std::to_string(whole_on.size()) + " nodes)";
      }
      return what + "this server has " + CountOf(whole, "whole GPU", "whole GPUs") +
             (profiles.empty() ? "" : " (cards in MIG mode are used by slice)");
    }
    case RequestKind::kMemShare:
      if (whole == 0) return "a memory share of " + FormatMemory(r.memory) + ", but " + mig_only;
      return "a memory share of " + FormatMemory(r.memory) + ", larger than any card (the largest has " +
             FormatMemory(largest) + ")";
    case RequestKind::kMig:
      return "MIG profile " + r.mig_profile + ", which no card here offers" +
             (profiles.empty() ? " (no card is in MIG mode)" : " (offered: " + offered + ")");
  }
  return "an unknown kind of request";
}

}  // namespace rota
