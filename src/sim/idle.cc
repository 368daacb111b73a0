// Tested by idle_test.cc and, through replays, simulator_test.cc.
#include "sim/idle.h"

#include <algorithm>
#include <map>
#include <string>

namespace rota::sim {

namespace {

// What is idle after a pass, as the causes are judged.
struct IdleCapacity {
  double idle = 0;  // GPU-equivalents nobody holds
  int max_node = 0;
  int max_node_free = 0;
  int free_whole = 0;
  MiB max_share_free = 0;
  std::vector<const std::string*> free_profiles;  // of the free MIG slices
};

IdleCapacity Measure(const ClusterState& state) {
  IdleCapacity c;
  const size_t n = state.gpus.size();
  std::vector<MiB> used(n, 0);
  std::vector<std::pair<int, int>> slices_held;  // (card, slice) of the MIG slices in use
  for (const RunningJob& r : state.running) {
    for (int g : r.alloc.gpus) {
      if (g < 0 || static_cast<size_t>(g) >= n) continue;
      const Gpu& gpu = state.gpus[g];
      if (r.alloc.mig >= 0 && static_cast<size_t>(r.alloc.mig) < gpu.mig.size()) {
        used[g] += gpu.mig[static_cast<size_t>(r.alloc.mig)].memory;
        slices_held.emplace_back(g, r.alloc.mig);
      } else {
        used[g] += r.alloc.memory > 0 ? r.alloc.memory : gpu.memory;
      }
    }
  }
  // A card in MIG mode is idle by its free slices' memory and serves only slices: the profiles free.
  // Nodes are small integers (the simulator numbers them from 0); per-node counts in vectors.
  int nodes = 0;
  for (const Gpu& gpu : state.gpus) nodes = std::max(nodes, gpu.node + 1);
  std::vector<int> node_size(static_cast<size_t>(nodes), 0), node_free(static_cast<size_t>(nodes), 0);
  for (size_t g = 0; g < n; ++g) {
    const Gpu& gpu = state.gpus[g];
    const size_t node = static_cast<size_t>(std::max(0, gpu.node));
    ++node_size[node];
    if (gpu.drained || gpu.memory <= 0) continue;
    if (!gpu.mig.empty()) {
      MiB free = 0;
      for (size_t k = 0; k < gpu.mig.size(); ++k) {
        const std::pair<int, int> slice{static_cast<int>(g), static_cast<int>(k)};
        if (std::find(slices_held.begin(), slices_held.end(), slice) != slices_held.end()) continue;
        free += gpu.mig[k].memory;
        c.free_profiles.push_back(&gpu.mig[k].profile);
      }
      c.idle += static_cast<double>(std::min(free, gpu.memory)) / static_cast<double>(gpu.memory);
      continue;
    }
    const MiB left = std::max<MiB>(0, gpu.memory - used[g]);
    c.idle += static_cast<double>(left) / static_cast<double>(gpu.memory);
    c.max_share_free = std::max(c.max_share_free, left);
    if (used[g] == 0) {
      ++c.free_whole;
      ++node_free[node];
    }
  }
  c.max_node = node_size.empty() ? 0 : *std::max_element(node_size.begin(), node_size.end());
  c.max_node_free = node_free.empty() ? 0 : *std::max_element(node_free.begin(), node_free.end());
  return c;
}

bool HasProfile(const IdleCapacity& c, const std::string& profile) {
  return std::any_of(c.free_profiles.begin(), c.free_profiles.end(),
                     [&profile](const std::string* p) { return *p == profile; });
}

}  // namespace

std::pair<IdleCause, double> ClassifyIdle(const ClusterState& state,
                                          const std::vector<std::pair<const Job*, WaitReason>>& waiting) {
  const IdleCapacity c = Measure(state);
  if (c.idle <= 0) return {IdleCause::kNoWork, 0.0};  // nothing idle: no cause to find
  const int max_node = c.max_node;
  const int max_node_free = c.max_node_free;
  const int free_whole = c.free_whole;
  const MiB max_share_free = c.max_share_free;
  const double idle = c.idle;

  bool any = false, fits_held = false, fits_booking = false, fits_quota = false, by_count = false;
  for (const auto& [job, reason] : waiting) {
    if (reason == WaitReason::kDependency || reason == WaitReason::kImpossible) continue;
    any = true;
    const Request& r = job->request;
    bool fits = false;
    if (r.kind == RequestKind::kWholeGpus) {
      fits = r.gpus <= max_node ? r.gpus <= max_node_free : r.gpus <= free_whole;
      by_count = by_count || r.gpus <= free_whole;
    } else if (r.kind == RequestKind::kMemShare) {
      fits = r.memory <= max_share_free;
    } else {
      fits = HasProfile(c, r.mig_profile);
    }
    if (!fits) continue;
    if (reason == WaitReason::kBooking)
      fits_booking = true;
    else if (reason == WaitReason::kQuotaExhausted)
      fits_quota = true;
    else {
      fits_held = true;
      break;  // the first cause in order: nothing more to learn
    }
  }
  IdleCause cause = !any           ? IdleCause::kNoWork
                    : fits_held    ? IdleCause::kHeld
                    : fits_booking ? IdleCause::kBooking
                    : fits_quota   ? IdleCause::kQuota
                    : by_count     ? IdleCause::kFragmented
                                   : IdleCause::kDraining;
  return {cause, idle};
}

std::pair<IdleCause, double> ClassifyIdle(const ClusterState& state, const std::map<int, int>& whole,
                                          const std::map<MiB, int>& shares,
                                          const std::map<std::string, int>& mig) {
  const IdleCapacity c = Measure(state);
  if (c.idle <= 0) return {IdleCause::kNoWork, 0.0};
  if (whole.empty() && shares.empty() && mig.empty()) return {IdleCause::kNoWork, c.idle};
  // As the loop above, with every job waiting for capacity: a whole-card request fits on one node
  // when it fits in one (the smallest such decides), else by the count of free cards (the smallest
  // larger than a node decides); a share by the largest free memory; a slice by a free profile.
  bool fits = false;
  auto small = whole.begin();  // smallest request overall
  if (small != whole.end() && small->first <= c.max_node) fits = small->first <= c.max_node_free;
  auto large = whole.upper_bound(c.max_node);  // smallest request larger than a node
  if (large != whole.end()) fits = fits || large->first <= c.free_whole;
  if (!shares.empty()) fits = fits || shares.begin()->first <= c.max_share_free;
  for (const auto& [profile, n] : mig) fits = fits || HasProfile(c, profile);
  const bool by_count = small != whole.end() && small->first <= c.free_whole;
  const IdleCause cause = fits ? IdleCause::kHeld : by_count ? IdleCause::kFragmented : IdleCause::kDraining;
  return {cause, c.idle};
}

void AddIdle(IdleGpuSeconds& into, IdleCause cause, double gpu_seconds) {
  switch (cause) {
    case IdleCause::kHeld:
      into.held += gpu_seconds;
      break;
    case IdleCause::kBooking:
      into.booking += gpu_seconds;
      break;
    case IdleCause::kQuota:
      into.quota += gpu_seconds;
      break;
    case IdleCause::kFragmented:
      into.fragmented += gpu_seconds;
      break;
    case IdleCause::kDraining:
      into.draining += gpu_seconds;
      break;
    case IdleCause::kNoWork:
      into.no_work += gpu_seconds;
      break;
  }
}

}  // namespace rota::sim
