// Tested by capacity_test.cc and, against the reference scheduler, by scheduler_random_test.cc.
//
// Costs: Peak() is quadratic in the commitments of one unit, which stay few (running jobs plus a
// handful of reservations). Earliest() for one unit scans the units of the right kind; for
// several whole cards it sweeps the free windows of every card once (O(W log W)). The summary of
// what is free now is refreshed after each start so that PhysicallyFitsNow() is O(1): most of a
// long queue is rejected by it without looking at any unit.
#include "core/capacity.h"

#include <algorithm>
#include <limits>
#include <tuple>

namespace rota {

Time ExpectedEnd(const RunningJob& r, const Policy& policy, Time now) {
  if (r.kill_at != kNever) return std::max(r.kill_at, now + 1);
  Time end = r.start_time + r.job.time_limit;
  if (end > now) return end;
  return now + (policy.enforce_time_limits ? 1 : std::max<Duration>(1, policy.overdue_grace));
}

CapacityPlan::CapacityPlan(const ClusterState& state, const Policy& policy, Time now)
    : state_(state), now_(now) {
  std::vector<int> first_unit(state.gpus.size(), -1);
  std::unordered_map<int, int> node_size;
  for (size_t gi = 0; gi < state.gpus.size(); ++gi) {
    const Gpu& g = state.gpus[gi];
    first_unit[gi] = static_cast<int>(units_.size());
    if (g.mig.empty()) {
      Unit u;
      u.gpu = static_cast<int>(gi);
      u.node = g.node;
      u.capacity = g.memory;
      u.device_free = g.reported_free;
      u.usable = !g.drained;
      whole_units_.push_back(static_cast<int>(units_.size()));
      units_.push_back(std::move(u));
      max_node_size_ = std::max(max_node_size_, ++node_size[g.node]);
    } else {
      for (size_t si = 0; si < g.mig.size(); ++si) {
        Unit u;
        u.gpu = static_cast<int>(gi);
        u.mig = static_cast<int>(si);
        u.node = g.node;
        u.capacity = g.mig[si].memory;
        u.usable = !g.drained;
        mig_units_[g.mig[si].profile].push_back(static_cast<int>(units_.size()));
        units_.push_back(std::move(u));
      }
    }
  }
  // Units an allocation occupies, with the amount on each.
  auto for_alloc = [&](const Allocation& a, auto&& fn) {
    for (int gi : a.gpus) {
      if (gi < 0 || static_cast<size_t>(gi) >= state.gpus.size()) continue;
      const Gpu& g = state.gpus[gi];
      if (a.mig >= 0) {
        if (static_cast<size_t>(a.mig) < g.mig.size()) fn(first_unit[gi] + a.mig, g.mig[a.mig].memory, false);
      } else if (g.mig.empty()) {
        fn(first_unit[gi], a.memory > 0 ? a.memory : g.memory, a.memory > 0);
      }
    }
  };
  for (const Booking& b : state.bookings) {
    if (b.end <= now) continue;
    int uid = booking_users_.try_emplace(b.user, static_cast<int>(booking_users_.size())).first->second;
    for_alloc(b.alloc, [&](int ui, MiB amount, bool) {
      units_[ui].commits.push_back({b.start, b.end, amount, uid, -1});
    });
  }
  for (size_t ri = 0; ri < state.running.size(); ++ri) {
    const RunningJob& r = state.running[ri];
    Time end = ExpectedEnd(r, policy, now);
    for_alloc(r.alloc, [&](int ui, MiB amount, bool share) {
      Unit& u = units_[ui];
      u.commits.push_back({std::min(r.start_time, now), end, amount, -1, static_cast<int>(ri)});
      u.used_now += amount;
      u.shared = u.shared || share;
      running_units_[static_cast<int>(ri)].push_back(ui);
    });
  }
  RefreshNowSummary();
}

int CapacityPlan::UserId(std::string_view user) const {
  auto it = booking_users_.find(user);
  return it == booking_users_.end() ? -1 : it->second;
}

void CapacityPlan::RefreshNowSummary() {
  free_whole_ = 0;
  max_share_free_ = 0;
  free_mig_.clear();
  std::unordered_map<int, int> per_node;
  for (int ui : whole_units_) {
    const Unit& u = units_[ui];
    if (!u.usable) continue;
    if (u.used_now == 0) {
      ++free_whole_;
      ++per_node[u.node];
    }
    MiB free = u.capacity - u.used_now;
    if (u.device_free >= 0) free = std::min(free, u.device_free);
    max_share_free_ = std::max(max_share_free_, free);
  }
  max_node_free_ = 0;
  for (const auto& [node, n] : per_node) max_node_free_ = std::max(max_node_free_, n);
  for (const auto& [profile, list] : mig_units_) {
    int n = 0;
    for (int ui : list) n += units_[ui].usable && units_[ui].used_now == 0;
    free_mig_[profile] = n;
  }
}

bool CapacityPlan::Possible(const Request& req) const {
  switch (req.kind) {
    case RequestKind::kWholeGpus:
      if (req.gpus < 1) return false;
      return req.gpus <= max_node_size_ || static_cast<size_t>(req.gpus) <= whole_units_.size();
    case RequestKind::kMemShare:
      if (req.memory <= 0) return false;
      for (int ui : whole_units_) if (units_[ui].capacity >= req.memory) return true;
      return false;
    case RequestKind::kMig:
      return mig_units_.count(req.mig_profile) > 0;
  }
  return false;
}

bool CapacityPlan::PhysicallyFitsNow(const Request& req) const {
  switch (req.kind) {
    case RequestKind::kWholeGpus:
      return req.gpus <= max_node_size_ ? max_node_free_ >= req.gpus : free_whole_ >= req.gpus;
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

MiB CapacityPlan::Peak(const Unit& u, Time s, Time e, int user, bool ignore_bookings) const {
  auto applies = [&](const Commitment& c) {
    return c.booking_user < 0 || (!ignore_bookings && c.booking_user != user);
  };
  auto at = [&](Time p) {
    MiB sum = 0;
    for (const Commitment& c : u.commits) {
      if (applies(c) && c.start <= p && p < c.end) sum += c.amount;
    }
    return sum;
  };
  MiB best = at(s);
  for (const Commitment& c : u.commits) {
    if (applies(c) && c.start > s && c.start < e) best = std::max(best, at(c.start));
  }
  return best;
}

Time CapacityPlan::EarliestOnUnit(const Unit& u, MiB amount, Duration d, int user, Time t0, bool now_only,
                                  bool ignore_bookings) const {
  if (!u.usable || amount > u.capacity) return kNever;
  auto ok = [&](Time t) {
    if (Peak(u, t, t + d, user, ignore_bookings) + amount > u.capacity) return false;
    // A share must also fit in what the device reports free now (other tenants' real use).
    if (t == now_ && amount < u.capacity && u.device_free >= 0 && u.device_free < amount) return false;
    return true;
  };
  if (ok(t0)) return t0;
  if (now_only) return kNever;
  std::vector<Time> ends;
  for (const Commitment& c : u.commits) {
    if (c.end > t0 && c.end != kNever && (c.booking_user < 0 || (!ignore_bookings && c.booking_user != user))) {
      ends.push_back(c.end);
    }
  }
  std::sort(ends.begin(), ends.end());
  ends.erase(std::unique(ends.begin(), ends.end()), ends.end());
  for (Time t : ends) {
    if (ok(t)) return t;
  }
  return kNever;
}

Placement CapacityPlan::EarliestSingle(const Request& req, Duration d, int user, Time t0, bool now_only,
                                       bool ignore_bookings) const {
  const std::vector<int>* candidates = &whole_units_;
  static const std::vector<int> kNone;
  if (req.kind == RequestKind::kMig) {
    auto it = mig_units_.find(req.mig_profile);
    candidates = it == mig_units_.end() ? &kNone : &it->second;
  }
  // Preference among units with the same start: shares go to cards already shared, best fit;
  // whole cards and slices go where the fewest others are free (pack, keep big holes whole).
  using Key = std::tuple<Time, int, MiB, int>;
  Key best{kNever, 0, 0, 0};
  int best_unit = -1;
  std::unordered_map<int, int> free_on_gpu_node;  // lazily filled: free units per node / card
  auto free_near = [&](const Unit& u) {
    int key = req.kind == RequestKind::kMig ? u.gpu : u.node;
    auto it = free_on_gpu_node.find(key);
    if (it != free_on_gpu_node.end()) return it->second;
    int n = 0;
    for (int ui : *candidates) {
      const Unit& v = units_[ui];
      if ((req.kind == RequestKind::kMig ? v.gpu : v.node) == key && v.usable && v.used_now == 0) ++n;
    }
    free_on_gpu_node[key] = n;
    return n;
  };
  for (int ui : *candidates) {
    const Unit& u = units_[ui];
    MiB amount = Amount(u, req);
    Time t = EarliestOnUnit(u, amount, d, user, t0, now_only, ignore_bookings);
    if (t == kNever || t > std::get<0>(best)) continue;
    Key key;
    if (req.kind == RequestKind::kMemShare) {
      MiB leftover = u.capacity - Peak(u, t, t + d, user, ignore_bookings) - amount;
      key = Key{t, u.shared ? 0 : 1, leftover, u.gpu};
    } else {
      key = Key{t, free_near(u), 0, ui};
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
                                      bool ignore_bookings) const {
  struct Event {
    Time t;
    int delta;
    int unit;
  };
  std::vector<Event> events;
  std::vector<std::pair<Time, Time>> busy;
  for (int ui : whole_units_) {
    const Unit& u = units_[ui];
    if (!u.usable) continue;
    busy.clear();
    for (const Commitment& c : u.commits) {
      if (c.end <= t0) continue;
      if (c.booking_user >= 0 && (ignore_bookings || c.booking_user == user)) continue;
      busy.emplace_back(c.start, c.end);
    }
    std::sort(busy.begin(), busy.end());
    Time cur = t0;
    auto window = [&](Time a, Time b) {  // feasible starts [a, b]
      if (now_only && a > t0) return;
      events.push_back({a, +1, ui});
      if (b != kNever) events.push_back({b + 1, -1, ui});
    };
    bool open = true;
    for (const auto& [bs, be] : busy) {
      if (bs > cur && bs - cur >= d) window(cur, bs - d);
      if (be == kNever) {
        open = false;
        break;
      }
      cur = std::max(cur, be);
    }
    if (open) window(cur, kNever);
  }
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) { return a.t < b.t; });
  std::vector<char> active(units_.size(), 0);
  std::unordered_map<int, int> node_count;
  int total = 0;
  Placement p;
  const int n = req.gpus;
  const bool one_node = n <= max_node_size_;
  for (size_t i = 0; i < events.size();) {
    Time t = events[i].t;
    if (now_only && t > t0) break;
    bool feasible = false;
    for (; i < events.size() && events[i].t == t; ++i) {
      const Event& e = events[i];
      active[e.unit] = e.delta > 0;
      int c = (node_count[units_[e.unit].node] += e.delta);
      total += e.delta;
      if (e.delta > 0 && one_node && c >= n) feasible = true;
    }
    if (!one_node && total >= n) feasible = true;
    if (!feasible) continue;
    p.start = t;
    if (one_node) {
      // Best fit: the feasible node with the fewest usable cards at t.
      int best_node = 0, best_count = std::numeric_limits<int>::max();
      for (const auto& [node, c] : node_count) {
        if (c >= n && (c < best_count || (c == best_count && node < best_node))) {
          best_node = node;
          best_count = c;
        }
      }
      std::vector<int> cands;
      for (int ui : whole_units_) if (active[ui] && units_[ui].node == best_node) cands.push_back(ui);
      p.units = PickWithinNode(std::move(cands), n);
    } else {
      // Spread over whole nodes first: nodes with the most usable cards.
      std::vector<std::pair<int, int>> nodes(node_count.begin(), node_count.end());
      std::sort(nodes.begin(), nodes.end(), [](auto& a, auto& b) {
        return a.second != b.second ? a.second > b.second : a.first < b.first;
      });
      for (const auto& [node, c] : nodes) {
        if (static_cast<int>(p.units.size()) >= n || c <= 0) break;
        std::vector<int> cands;
        for (int ui : whole_units_) if (active[ui] && units_[ui].node == node) cands.push_back(ui);
        int want = std::min<int>(n - static_cast<int>(p.units.size()), static_cast<int>(cands.size()));
        for (int ui : PickWithinNode(std::move(cands), want)) p.units.push_back(ui);
      }
    }
    return p;
  }
  return Placement{};
}

std::vector<int> CapacityPlan::PickWithinNode(std::vector<int> cands, int n) const {
  if (static_cast<int>(cands.size()) <= n) return cands;
  auto linked = [&](int a, int b) {
    const auto& peers = state_.gpus[units_[a].gpu].nvlink;
    return std::find(peers.begin(), peers.end(), units_[b].gpu) != peers.end();
  };
  std::vector<int> chosen;
  std::vector<char> used(cands.size(), 0);
  while (static_cast<int>(chosen.size()) < n) {
    int best = -1, best_links = -1, best_degree = -1;
    for (size_t i = 0; i < cands.size(); ++i) {
      if (used[i]) continue;
      int links = 0, degree = 0;
      for (int c : chosen) links += linked(cands[i], c);
      if (chosen.empty()) {
        for (int o : cands) degree += o != cands[i] && linked(cands[i], o);
      }
      if (links > best_links || (links == best_links && degree > best_degree)) {
        best = static_cast<int>(i);
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

Placement CapacityPlan::Earliest(const Request& req, Duration duration, int user, Time not_before, bool now_only,
                                 bool ignore_bookings) const {
  Time t0 = std::max(not_before, now_);
  Duration d = std::max<Duration>(duration, 1);
  if (req.kind == RequestKind::kWholeGpus && req.gpus > 1) {
    return EarliestMulti(req, d, user, t0, now_only, ignore_bookings);
  }
  if (req.kind == RequestKind::kWholeGpus && req.gpus < 1) return Placement{};
  return EarliestSingle(req, d, user, t0, now_only, ignore_bookings);
}

void CapacityPlan::Commit(const Placement& p, const Request& req, Time start, Time end) {
  for (int ui : p.units) {
    Unit& u = units_[ui];
    MiB amount = Amount(u, req);
    u.commits.push_back({start, end, amount, -1, -1});
    if (req.kind == RequestKind::kMemShare) u.shared = true;
    if (start <= now_) {
      u.used_now += amount;
      if (u.device_free >= 0 && req.kind == RequestKind::kMemShare) u.device_free -= amount;
    }
  }
  if (start <= now_) RefreshNowSummary();
}

Time CapacityPlan::SetRunningEnd(int running, Time end) {
  Time old = kNever;
  auto it = running_units_.find(running);
  if (it == running_units_.end()) return old;
  for (int ui : it->second) {
    for (Commitment& c : units_[ui].commits) {
      if (c.running == running) {
        old = c.end;
        c.end = end;
      }
    }
  }
  return old;
}

Allocation CapacityPlan::ToAllocation(const Placement& p, const Request& req) const {
  Allocation a;
  for (int ui : p.units) a.gpus.push_back(units_[ui].gpu);
  if (req.kind == RequestKind::kMig && !p.units.empty()) a.mig = units_[p.units[0]].mig;
  if (req.kind == RequestKind::kMemShare) a.memory = req.memory;
  return a;
}

}  // namespace rota
