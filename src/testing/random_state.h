// Seeded generators of cluster states for property tests and benchmarks.
//
// Everything here is a pure function of its seed: the generator is a small explicit PRNG
// (xoshiro256**, seeded through splitmix64), never std::random_device or a clock, so a failing
// seed printed by a test reproduces the same state on every machine and in every build.
//
//   RandomCase c = RandomCaseFromSeed(42);            // small state + policy + now, for tests
//   Decisions d = Schedule(c.state, c.policy, c.now);
//
//   ClusterState big = LargeState(1024, 8, 100000, 90, /*seed=*/1);   // for bench/
//   Decisions d = Schedule(big, Policy{}, kLargeStateNow);
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "core/cluster.h"
#include "core/policy.h"
#include "core/types.h"

namespace rota::testing {

// xoshiro256** (Blackman and Vigna), its state filled by splitmix64 from a 64-bit seed.
// Not for cryptography; identical output on every platform.
class Rng {
 public:
  explicit Rng(std::uint64_t seed);

  std::uint64_t Next();
  // Uniform in [0, n). REQUIRES: n > 0.
  std::uint64_t Below(std::uint64_t n);
  // Uniform in [lo, hi]. REQUIRES: lo <= hi.
  std::int64_t Range(std::int64_t lo, std::int64_t hi);
  // Uniform in [0, 1).
  double Unit();
  // True with probability p.
  bool Chance(double p);

  // A uniformly chosen element. REQUIRES: non-empty.
  template <typename T>
  const T& Pick(const std::vector<T>& v) {
    return v[Below(v.size())];
  }
  template <typename T>
  T Pick(std::initializer_list<T> v) {
    return *(v.begin() + Below(v.size()));
  }

 private:
  std::uint64_t s_[4];
};

// Knobs of the small random states. The defaults keep states small enough for the reference
// checker's brute force: 1-8 GPUs on 1-2 nodes, up to a dozen pending jobs.
struct RandomOptions {
  int max_gpus = 8;
  int max_nodes = 2;
  int max_running = 8;
  int max_pending = 12;
  int max_bookings = 2;
};

// One generated test case: a state, a policy and the time of the decision.
struct RandomCase {
  std::uint64_t seed = 0;
  ClusterState state;
  Policy policy;
  Time now = 0;
};

// The case for `seed`: the same seed always gives the same case.
RandomCase RandomCaseFromSeed(std::uint64_t seed, const RandomOptions& options = {});

// A random small cluster at `now`: GPUs (some in MIG mode with valid slice layouts, some
// drained, some with a reported free memory), running jobs with valid non-overlapping
// allocations (whole cards, shares that fit, MIG slices; some signalled or being stopped, some
// past their limit), pending jobs of all three request kinds (including a few impossible ones),
// tiers, users, projects, dependencies and time limits; usage, penalties and bookings.
// Job ids are unique and start at `*next_id`, which is advanced past the ids used.
ClusterState RandomClusterState(Rng& rng, Time now, const RandomOptions& options, JobId* next_id);

// A random pending job for `state` (used to add arrivals in multi-step tests): the request
// kinds, tiers, users and limits are drawn as in RandomClusterState; `after` may name ids of
// jobs in the state.
Job RandomPendingJob(Rng& rng, const ClusterState& state, JobId id, Time now);

// A random policy: algorithm, account mode, preemption on or off and which tiers, quotas small
// enough to bind now and then (with or without overflow as explore), planning depth (mostly
// large, sometimes 0-3), estimate_starts, time-limit enforcement, time zone and time-of-day table.
Policy RandomPolicy(Rng& rng);

// The `now` of every LargeState: Tuesday 2023-11-14 22:13:20 UTC.
inline constexpr Time kLargeStateNow = 1'700'000'000;

// A large realistic state for benchmarks, at kLargeStateNow: `gpus` A100-80GB cards,
// `gpus_per_node` to a node (NVLink within groups of up to 8), about `running_fraction_pct`
// percent of the cards held by running jobs (a few co-located memory shares among them), and
// `pending` waiting jobs: ~80% one GPU, ~10% memory shares, the rest 2, 4 or 8 GPUs; time
// limits from 10 minutes to 3 days; 20 users in 5 projects with usage; three tiers; a few
// dependencies. Deterministic in `seed`.
ClusterState LargeState(int gpus, int gpus_per_node, int pending, int running_fraction_pct,
                        std::uint64_t seed);

}  // namespace rota::testing
