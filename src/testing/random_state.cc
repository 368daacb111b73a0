// Tested by scheduler_random_test.cc (every generated state is checked with CheckState before
// it is scheduled) and used by bench/.
//
// Design: the small generator favours coverage over realism. It draws each feature with a
// probability high enough that a few thousand seeds exercise every branch of Schedule(): MIG
// slices, drained cards, reported free memory, shares up to a whole card, jobs past their limit,
// stops under way, unknown MIG profiles and impossible requests, dependencies on pending,
// running, ended and the job's own id, bookings active now or later, quotas that bind. Allocations
// of running jobs are drawn from what is still free, so the states are always consistent.
// LargeState favours realism and speed (100k jobs in well under a second).
#include "testing/random_state.h"

#include <algorithm>
#include <string>
#include <utility>

namespace rota::testing {

namespace {

std::uint64_t SplitMix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::uint64_t Rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

constexpr Time kBaseTime = 1'700'000'000;  // Tuesday 2023-11-14 22:13:20 UTC

struct Model {
  const char* name;
  MiB memory;
  bool mig_capable;
};
constexpr Model kModels[] = {
    {"NVIDIA A100-SXM4-80GB", 81920, true},
    {"NVIDIA A100-PCIE-40GB", 40960, true},
    {"NVIDIA GeForce RTX 3090", 24576, false},
    {"Tesla V100-SXM2-32GB", 32768, false},
};

struct Profile {
  std::string name;
  MiB memory;
};

// Valid MIG layouts of an A100 (7 compute slices): 3+2+1+1, 1x7, 3+3, 7, 2+2+2+1.
std::vector<std::vector<Profile>> Layouts(MiB card) {
  const bool big = card >= 81920;
  Profile p1{big ? "1g.10gb" : "1g.5gb", big ? 10240 : 5120};
  Profile p2{big ? "2g.20gb" : "2g.10gb", big ? 20480 : 10240};
  Profile p3{big ? "3g.40gb" : "3g.20gb", big ? 40960 : 20480};
  Profile p7{big ? "7g.80gb" : "7g.40gb", card};
  return {
      {p3, p2, p1, p1}, {p1, p1, p1, p1, p1, p1, p1}, {p3, p3}, {p7}, {p2, p2, p2, p1},
  };
}

const std::vector<std::string>& Users() {
  static const std::vector<std::string> kUsers = {"alice", "bob", "carol", "dave", "erin"};
  return kUsers;
}
const std::vector<std::string>& Projects() {
  static const std::vector<std::string> kProjects = {"vision", "nlp", "robotics"};
  return kProjects;
}

Duration RandomLimit(Rng& rng) {
  if (rng.Chance(0.03)) return 0;  // a job without a real limit still occupies one second
  return rng.Pick<Duration>(
      {60, 10 * kMinute, 30 * kMinute, kHour, 2 * kHour, 4 * kHour, 8 * kHour, kDay, 3 * kDay});
}

Tier RandomTier(Rng& rng) { return static_cast<Tier>(rng.Below(kTierCount)); }

// Local midnight of the quota week's first day, for usage records (Monday, UTC).
Time SomeWeekStart(Time now) {
  const Time days = now / kDay;
  const Time weekday = (days + 3) % 7;  // 0 = Monday
  return (days - weekday) * kDay;
}

// What the running jobs of a state under construction hold, to draw only free capacity.
struct Holdings {
  explicit Holdings(const ClusterState& s) : whole(s.gpus.size(), false), shares(s.gpus.size(), 0) {
    for (const Gpu& g : s.gpus) slices.emplace_back(g.mig.size(), false);
  }
  std::vector<bool> whole;
  std::vector<MiB> shares;
  std::vector<std::vector<bool>> slices;
};

// Draws an allocation for a running job from what is free; false if none of the drawn kind.
bool DrawAllocation(Rng& rng, const ClusterState& s, Holdings& h, Allocation* alloc, Request* req) {
  const int kind = static_cast<int>(rng.Below(10));
  std::vector<int> order(s.gpus.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.Below(i)]);
  if (kind < 5) {  // whole cards, on one node
    int want = static_cast<int>(rng.Pick<int>({1, 1, 1, 2, 2, 4}));
    for (int first : order) {
      const Gpu& g0 = s.gpus[first];
      std::vector<int> free;
      for (int gi : order) {
        const Gpu& g = s.gpus[gi];
        if (g.node == g0.node && g.mig.empty() && !h.whole[gi] && h.shares[gi] == 0) free.push_back(gi);
      }
      if (static_cast<int>(free.size()) < want) continue;
      free.resize(want);
      std::sort(free.begin(), free.end());
      for (int gi : free) h.whole[gi] = true;
      alloc->gpus = free;
      req->kind = RequestKind::kWholeGpus;
      req->gpus = want;
      return true;
    }
    return false;
  }
  if (kind < 8) {  // a share
    for (int gi : order) {
      const Gpu& g = s.gpus[gi];
      if (!g.mig.empty() || h.whole[gi]) continue;
      MiB room = g.memory - h.shares[gi];
      if (room < 1024) continue;
      MiB mem = rng.Chance(0.5) ? rng.Range(1, room / 1024) * 1024 : rng.Range(512, room);
      h.shares[gi] += mem;
      alloc->gpus = {gi};
      alloc->memory = mem;
      req->kind = RequestKind::kMemShare;
      req->memory = mem;
      return true;
    }
    return false;
  }
  for (int gi : order) {  // a MIG slice
    const Gpu& g = s.gpus[gi];
    for (size_t si = 0; si < g.mig.size(); ++si) {
      if (h.slices[gi][si]) continue;
      h.slices[gi][si] = true;
      alloc->gpus = {gi};
      alloc->mig = static_cast<int>(si);
      req->kind = RequestKind::kMig;
      req->mig_profile = g.mig[si].profile;
      return true;
    }
  }
  return false;
}

Request RandomRequest(Rng& rng, const ClusterState& s) {
  Request r;
  const int kind = static_cast<int>(rng.Below(20));
  if (kind < 11) {
    r.kind = RequestKind::kWholeGpus;
    r.gpus = rng.Pick<int>({1, 1, 1, 1, 1, 2, 2, 3, 4, 4, 8});
    if (rng.Chance(0.02)) r.gpus = 0;  // malformed: impossible
    return r;
  }
  if (kind < 16) {
    r.kind = RequestKind::kMemShare;
    r.memory = rng.Pick<MiB>({2048, 4096, 8192, 10240, 16384, 20480, 30000, 40960});
    if (rng.Chance(0.1)) {
      // Exactly a card's memory: a share that takes a whole card.
      std::vector<MiB> sizes;
      for (const Gpu& g : s.gpus)
        if (g.mig.empty()) sizes.push_back(g.memory);
      if (!sizes.empty()) r.memory = rng.Pick(sizes);
    }
    if (rng.Chance(0.03)) r.memory = 200 * 1024;  // larger than any card: impossible
    return r;
  }
  r.kind = RequestKind::kMig;
  std::vector<std::string> profiles;
  for (const Gpu& g : s.gpus)
    for (const MigSlice& m : g.mig) profiles.push_back(m.profile);
  if (profiles.empty() || rng.Chance(0.1)) {
    r.mig_profile = rng.Pick<const char*>({"1g.10gb", "3g.40gb", "1g.5gb", "4g.40gb"});
  } else {
    r.mig_profile = rng.Pick(profiles);
  }
  return r;
}

void FillJobBasics(Rng& rng, Job& j, Time now) {
  j.user = rng.Pick(Users());
  j.project = rng.Pick(Projects());
  j.name = "job" + std::to_string(j.id);
  j.tier = RandomTier(rng);
  j.time_limit = RandomLimit(rng);
  j.submit_time = now - rng.Range(0, 2 * kDay);
  j.grace = rng.Pick<Duration>({0, 30, 120, 120, 600});
  j.signal = rng.Chance(0.8) ? 10 : 15;
  j.requeue = rng.Chance(0.5);
  // From the id, not the generator, so that the seeded states stay what they were: none for a
  // quarter, the rest a sixth to all of the limit.
  if (j.id % 4 != 0) j.predicted_run = std::max<Duration>(60, j.time_limit * static_cast<Duration>(j.id % 6 + 1) / 6);
  // Promises (Policy::promise_slack), also from the id: none for a third, the rest from the
  // submission to a day after it, some past and some to come.
  if (j.id % 3 != 0) j.promise = j.submit_time + (j.id % 7) * 4 * kHour;
}

Usage RandomUsage(Rng& rng, Time now) {
  Usage u;
  u.decayed_gpu_seconds = static_cast<double>(rng.Range(0, 100)) * kHour;
  u.as_of = now - rng.Range(0, 3 * kDay);
  // Week counters from this week (they count) or from the previous one (they do not). The
  // generator does not know the policy's week start day or time zone: the quota reference
  // recomputes the week, so either way is consistent.
  u.week_start = rng.Chance(0.8) ? SomeWeekStart(now) - rng.Range(0, 6) * kDay : SomeWeekStart(now) - kWeek;
  u.week_gpu_seconds = static_cast<double>(rng.Range(0, 30)) * kHour;
  u.pool_gpu_seconds = u.week_gpu_seconds * static_cast<double>(rng.Range(0, 100)) / 100.0;
  return u;
}

}  // namespace

Rng::Rng(std::uint64_t seed) {
  std::uint64_t x = seed;
  for (std::uint64_t& s : s_) s = SplitMix64(x);
}

std::uint64_t Rng::Next() {
  const std::uint64_t result = Rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = Rotl(s_[3], 45);
  return result;
}

std::uint64_t Rng::Below(std::uint64_t n) { return Next() % n; }

std::int64_t Rng::Range(std::int64_t lo, std::int64_t hi) {
  return lo + static_cast<std::int64_t>(Below(static_cast<std::uint64_t>(hi - lo) + 1));
}

double Rng::Unit() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

bool Rng::Chance(double p) { return Unit() < p; }

ClusterState RandomClusterState(Rng& rng, Time now, const RandomOptions& options, JobId* next_id) {
  ClusterState s;
  // GPUs: 1..max_gpus over 1..max_nodes nodes, one model per node.
  const int gpus = static_cast<int>(rng.Range(1, std::max(1, options.max_gpus)));
  const int nodes = std::min<int>(gpus, static_cast<int>(rng.Range(1, std::max(1, options.max_nodes))));
  std::vector<int> node_of(gpus);
  for (int i = 0; i < gpus; ++i) node_of[i] = nodes == 1 ? 0 : static_cast<int>(rng.Below(nodes));
  std::sort(node_of.begin(), node_of.end());
  std::vector<int> model_of_node(nodes);
  for (int& m : model_of_node) m = static_cast<int>(rng.Below(std::size(kModels)));
  std::vector<int> index_in_node(nodes, 0);
  for (int i = 0; i < gpus; ++i) {
    const Model& m = kModels[model_of_node[node_of[i]]];
    Gpu g;
    g.node = node_of[i] * 3 + 1;  // node ids need not be dense or start at 0
    g.index = index_in_node[node_of[i]]++;
    g.uuid = "GPU-" + std::to_string(g.node) + "-" + std::to_string(g.index);
    g.model = m.name;
    g.memory = m.memory;
    if (m.mig_capable && rng.Chance(0.3)) {
      auto layouts = Layouts(m.memory);
      const auto& layout = rng.Pick(layouts);
      for (size_t k = 0; k < layout.size(); ++k) {
        g.mig.push_back({g.uuid + "/" + std::to_string(k), layout[k].name, layout[k].memory});
      }
    }
    g.drained = rng.Chance(0.1);
    s.gpus.push_back(std::move(g));
  }
  for (int a = 0; a < gpus; ++a) {
    for (int b = a + 1; b < gpus; ++b) {
      if (s.gpus[a].node == s.gpus[b].node && rng.Chance(0.5)) {
        s.gpus[a].nvlink.push_back(b);
        s.gpus[b].nvlink.push_back(a);
      }
    }
  }

  // Ids: a few "ended" ids below the first one used (dependencies on finished jobs).
  const JobId ended_lo = *next_id;
  *next_id += 3;

  // Running jobs on free capacity.
  Holdings h(s);
  const int running = static_cast<int>(rng.Range(0, std::max(0, options.max_running)));
  for (int k = 0; k < running; ++k) {
    RunningJob r;
    if (!DrawAllocation(rng, s, h, &r.alloc, &r.job.request)) continue;
    r.job.id = (*next_id)++;
    FillJobBasics(rng, r.job, now);
    if (r.job.time_limit == 0) r.job.time_limit = kHour;
    // Mostly within the limit, some past it (the daemon was down, or limits are not enforced).
    r.start_time = now - rng.Range(0, r.job.time_limit + (rng.Chance(0.15) ? 2 * kHour : 0));
    const int edge = static_cast<int>(rng.Below(20));  // boundaries, where off-by-ones live
    if (edge == 0) r.start_time = now - std::max<Duration>(0, r.job.time_limit - r.job.grace);  // warn now
    if (edge == 1) r.start_time = now - r.job.time_limit;                                       // ends now
    if (edge == 2) r.start_time = now - std::max<Duration>(0, r.job.time_limit - r.job.grace) + 1;
    r.job.submit_time = std::min(r.job.submit_time, r.start_time);
    r.preemptible = r.job.tier == Tier::kExplore ? rng.Chance(0.8) : rng.Chance(0.1);
    r.from_pool = rng.Chance(0.1);
    const int stop = static_cast<int>(rng.Below(20));
    if (stop < 3) {
      r.signalled = true;
      r.kill_at = rng.Chance(0.3) ? now + rng.Range(-1, 1) : now + rng.Range(-300, 600);
      r.preempted = rng.Chance(0.5);
    } else if (stop == 3) {
      r.signalled = true;  // warned, no stop under way
    }
    s.running.push_back(std::move(r));
  }

  // Reported free memory of some whole cards: what running shares leave, less other tenants'.
  for (size_t gi = 0; gi < s.gpus.size(); ++gi) {
    Gpu& g = s.gpus[gi];
    if (!g.mig.empty() || !rng.Chance(0.35)) continue;
    MiB used = h.whole[gi] ? g.memory : h.shares[gi];
    g.reported_free = std::max<MiB>(0, g.memory - used - rng.Range(0, rng.Chance(0.3) ? 30000 : 1024));
  }

  // Pending jobs; their ids are drawn first so that dependencies may point forwards.
  const int pending = static_cast<int>(rng.Range(0, std::max(0, options.max_pending)));
  const JobId first_pending = *next_id;
  *next_id += pending;
  for (int k = 0; k < pending; ++k) {
    Job j;
    j.id = first_pending + k;
    FillJobBasics(rng, j, now);
    j.request = RandomRequest(rng, s);
    if (rng.Chance(0.2)) {
      const int deps = static_cast<int>(rng.Range(1, 2));
      for (int d = 0; d < deps; ++d) {
        std::vector<JobId>& list = d == 0 ? j.after : j.after_ok;  // a second one: --after-ok
        const int which = static_cast<int>(rng.Below(10));
        if (which < 5 && pending > 1) {
          list.push_back(first_pending + static_cast<JobId>(rng.Below(pending)));
        } else if (which < 8 && !s.running.empty()) {
          list.push_back(rng.Pick(s.running).job.id);
        } else if (which < 9) {
          list.push_back(ended_lo + static_cast<JobId>(rng.Below(3)));  // ended long ago
        } else {
          list.push_back(j.id);  // itself: ignored by the scheduler
        }
      }
    }
    s.pending.push_back(std::move(j));
  }
  // One of the ids that "ended long ago" is instead held now (a start retried later, a requeue
  // on its way): the jobs after it must wait.
  if (rng.Chance(0.3)) s.held.push_back(ended_lo + 1);
  // Any order: the scheduler must not depend on it.
  for (size_t i = s.pending.size(); i > 1; --i) std::swap(s.pending[i - 1], s.pending[rng.Below(i)]);

  // Usage, penalties.
  for (const std::string& u : Users()) {
    if (rng.Chance(0.5)) s.user_usage[u] = RandomUsage(rng, now);
    if (rng.Chance(0.2)) s.penalty[u] = static_cast<double>(rng.Range(0, 12)) / 10.0;
  }
  for (const std::string& p : Projects()) {
    if (rng.Chance(0.5)) s.project_usage[p] = RandomUsage(rng, now);
  }

  // Bookings: a whole card, a share or a slice, active now, later or already over.
  const int bookings = static_cast<int>(rng.Range(0, std::max(0, options.max_bookings)));
  for (int k = 0; k < bookings; ++k) {
    if (!rng.Chance(0.5)) continue;
    Booking b;
    b.id = k + 1;
    b.user = rng.Pick(Users());
    const int gi = static_cast<int>(rng.Below(s.gpus.size()));
    const Gpu& g = s.gpus[gi];
    b.alloc.gpus = {gi};
    if (!g.mig.empty()) {
      b.alloc.mig = static_cast<int>(rng.Below(g.mig.size()));
    } else if (rng.Chance(0.4)) {
      b.alloc.memory = rng.Range(4, std::max<MiB>(4, g.memory / 1024)) * 1024;
      b.alloc.memory = std::min(b.alloc.memory, g.memory);
    }
    b.start = now + rng.Range(-2 * kHour, 6 * kHour);
    b.end = b.start + rng.Range(30 * kMinute, 8 * kHour);
    s.bookings.push_back(std::move(b));
  }
  // Borrowed bookings (drawn after the rest of the state, which is thus as before): a unit
  // held by a preemptible job is booked by another user, who has work waiting that fits it
  // (a booking claim); or a free unit is booked while explore jobs of others wait (borrowing).
  if (options.max_bookings > 0 && rng.Chance(0.4)) {
    std::vector<const RunningJob*> borrowers;
    for (const RunningJob& r : s.running)
      if (r.preemptible || r.job.tier == Tier::kExplore) borrowers.push_back(&r);
    const bool claim = !borrowers.empty() && rng.Chance(0.6);
    Booking b;
    b.id = static_cast<std::int64_t>(s.bookings.size()) + 10;
    std::string avoid;
    if (claim) {
      const RunningJob& r = *rng.Pick(borrowers);
      avoid = r.job.user;
      b.alloc.gpus = {r.alloc.gpus[0]};
      b.alloc.mig = r.alloc.mig;
      b.alloc.memory = r.alloc.memory;
    } else {
      const int gi = static_cast<int>(rng.Below(s.gpus.size()));
      b.alloc.gpus = {gi};
      if (!s.gpus[gi].mig.empty()) b.alloc.mig = static_cast<int>(rng.Below(s.gpus[gi].mig.size()));
    }
    // Borrowing needs an owner with nothing waiting: one such, where there is one.
    std::vector<std::string> idle;
    for (const std::string& u : Users()) {
      auto theirs = [&u](const Job& j) { return j.user == u; };
      if (std::none_of(s.pending.begin(), s.pending.end(), theirs)) idle.push_back(u);
    }
    do {
      b.user = !claim && !idle.empty() ? rng.Pick(idle) : rng.Pick(Users());
    } while (b.user == avoid);
    b.start = now + rng.Range(-2 * kHour, 2 * kHour);
    b.end = std::max(b.start, now) + rng.Range(30 * kMinute, 6 * kHour);
    const Gpu& g = s.gpus[b.alloc.gpus[0]];
    const int jobs = static_cast<int>(rng.Range(claim ? 1 : 0, 2));
    for (int k = 0; k < jobs; ++k) {
      Job j;
      j.id = (*next_id)++;
      FillJobBasics(rng, j, now);
      // A claim: the owner's job first; then anyone's explore jobs (borrowers while the owner has
      // nothing waiting: a waiting owner claims the booking, which borrowers may not then take).
      const bool owners = claim && k == 0;
      j.user = owners ? b.user : rng.Pick(Users());
      if (!owners) j.tier = Tier::kExplore;
      if (j.time_limit == 0) j.time_limit = kHour;
      if (b.alloc.mig >= 0) {
        j.request.kind = RequestKind::kMig;
        j.request.mig_profile = g.mig[b.alloc.mig].profile;
      } else if (b.alloc.memory > 0) {
        j.request.kind = RequestKind::kMemShare;
        j.request.memory = b.alloc.memory;
      } else {
        j.request.gpus = 1;
      }
      s.pending.push_back(std::move(j));
    }
    s.bookings.push_back(std::move(b));
  }
  return s;
}

Job RandomPendingJob(Rng& rng, const ClusterState& state, JobId id, Time now) {
  Job j;
  j.id = id;
  FillJobBasics(rng, j, now);
  j.submit_time = now;
  j.request = RandomRequest(rng, state);
  if (rng.Chance(0.15)) {
    std::vector<JobId> ids;
    for (const Job& p : state.pending) ids.push_back(p.id);
    for (const RunningJob& r : state.running) ids.push_back(r.job.id);
    if (!ids.empty()) j.after.push_back(rng.Pick(ids));
  }
  return j;
}

Policy RandomPolicy(Rng& rng) {
  Policy p;
  p.algorithm = static_cast<Algorithm>(rng.Below(3));
  const int mode = static_cast<int>(rng.Below(10));
  p.mode = mode < 6 ? AccountMode::kUser : mode < 8 ? AccountMode::kProject : AccountMode::kHybrid;
  p.preemption = rng.Chance(0.7);
  if (rng.Chance(0.2)) {
    p.preemptible_tiers = (1u << static_cast<int>(Tier::kExplore)) | (1u << static_cast<int>(Tier::kRegular));
  }
  // Quotas half of the time; always in hybrid mode, where the project pools matter.
  if (p.mode == AccountMode::kHybrid || rng.Chance(0.5)) {
    QuotaPolicy& q = p.quota;
    q.default_hours = rng.Pick<double>({1, 4, 10, 40, -1});
    q.role_hours["student"] = rng.Pick<double>({2, 8, 20});
    q.role_hours["staff"] = -1;
    for (const std::string& u : Users()) {
      const int c = static_cast<int>(rng.Below(6));
      if (c == 0) q.user_role[u] = "student";
      if (c == 1) q.user_role[u] = "staff";
      if (c == 2) q.user_hours[u] = rng.Pick<double>({0, 3, 12, 100});
    }
    for (const std::string& pr : Projects()) {
      if (rng.Chance(p.mode == AccountMode::kHybrid ? 0.8 : 0.5))
        q.project_hours[pr] = rng.Pick<double>({0, 2, 20, 60});
    }
    q.week_start_day = static_cast<int>(rng.Below(7));
    q.overflow_as_explore = rng.Chance(0.5);
  }
  p.plan_depth = rng.Chance(0.75) ? 1000 : static_cast<int>(rng.Range(0, 3));
  p.estimate_starts = rng.Chance(0.8);
  p.enforce_time_limits = rng.Chance(0.85);
  p.overdue_grace = rng.Pick<Duration>({0, 60, 5 * kMinute});
  p.zone = rng.Pick<int>({0, 3600, -5 * 3600, 19800});  // fixed offsets: the reference's arithmetic
  const int tod = static_cast<int>(rng.Below(10));
  if (tod < 2) p.time_of_day.clear();
  if (tod == 2) p.time_of_day = {{0x7f, 0, 24 * 60, 0.25}};  // always peak: PeakHours everywhere
  if (rng.Chance(0.1)) p.age_max = 0;
  // Submit times reach two days back: bounds from none to most jobs protected.
  p.protect_after = rng.Pick<Duration>({-1, 0, kHour, kDay, 7 * kDay});
  p.protect_max = rng.Pick<int>({0, 1, 1, 3, 100});
  p.size_by_prediction = rng.Chance(0.5);  // last: the draws above stay what they were
  p.promise_slack = rng.Pick<Duration>({-1, -1, 0, kHour});
  p.protect_foreseen = rng.Chance(0.5);
  return p;
}

RandomCase RandomCaseFromSeed(std::uint64_t seed, const RandomOptions& options) {
  Rng rng(seed);
  RandomCase c;
  c.seed = seed;
  c.now = kBaseTime + rng.Range(0, 2 * kWeek);
  JobId next_id = 1;
  c.state = RandomClusterState(rng, c.now, options, &next_id);
  c.policy = RandomPolicy(rng);
  return c;
}

ClusterState LargeState(int gpus, int gpus_per_node, int pending, int running_fraction_pct,
                        std::uint64_t seed) {
  Rng rng(seed);
  const Time now = kLargeStateNow;
  gpus = std::max(1, gpus);
  gpus_per_node = std::clamp(gpus_per_node, 1, gpus);
  ClusterState s;
  s.gpus.reserve(gpus);
  for (int i = 0; i < gpus; ++i) {
    Gpu g;
    g.node = i / gpus_per_node;
    g.index = i % gpus_per_node;
    g.uuid = "GPU-" + std::to_string(g.node) + "-" + std::to_string(g.index);
    g.model = kModels[0].name;
    g.memory = kModels[0].memory;
    s.gpus.push_back(std::move(g));
  }
  for (int i = 0; i < gpus; ++i) {  // NVLink among groups of up to 8 cards of a node
    const int group = (i % gpus_per_node) / 8;
    for (int j = i - i % gpus_per_node; j < std::min(gpus, i - i % gpus_per_node + gpus_per_node); ++j) {
      if (j != i && (j % gpus_per_node) / 8 == group) s.gpus[i].nvlink.push_back(j);
    }
  }
  std::vector<std::string> users, projects;
  for (int u = 0; u < 20; ++u) users.push_back("user" + std::to_string(u));
  for (int p = 0; p < 5; ++p) projects.push_back("project" + std::to_string(p));
  auto limit = [&rng] {
    return rng.Pick<Duration>({10 * kMinute, 30 * kMinute, kHour, kHour, 2 * kHour, 4 * kHour, 8 * kHour,
                               12 * kHour, kDay, kDay, 2 * kDay, 3 * kDay});
  };
  auto tier = [&rng] {
    const int t = static_cast<int>(rng.Below(20));
    return t < 2 ? Tier::kThesis : t < 14 ? Tier::kRegular : Tier::kExplore;
  };
  JobId next_id = 1;
  auto basics = [&](Job& j) {
    j.id = next_id++;
    const int u = static_cast<int>(rng.Below(users.size()));
    j.user = users[u];
    j.project = projects[u % projects.size()];
    j.tier = tier();
    j.time_limit = limit();
    j.submit_time = now - rng.Range(0, 2 * kDay);
  };

  // Running jobs fill the cards node by node up to the target, in runs of 1/2/4/8 cards; some
  // cards hold two or three shares instead.
  const int target =
      static_cast<int>(static_cast<long long>(gpus) * std::clamp(running_fraction_pct, 0, 100) / 100);
  int filled = 0;
  int card = 0;
  while (filled < target && card < gpus) {
    const int node_end = std::min(gpus, (card / gpus_per_node + 1) * gpus_per_node);
    const int room = node_end - card;
    const int roll = static_cast<int>(rng.Below(100));
    if (roll < 8) {  // shares on one card
      const int n = static_cast<int>(rng.Range(2, 3));
      for (int k = 0; k < n; ++k) {
        RunningJob r;
        basics(r.job);
        r.job.request.kind = RequestKind::kMemShare;
        r.job.request.memory = 20480;
        r.alloc.gpus = {card};
        r.alloc.memory = 20480;
        r.start_time = now - rng.Range(0, r.job.time_limit - 1);
        r.job.submit_time = std::min(r.job.submit_time, r.start_time);
        r.preemptible = r.job.tier == Tier::kExplore;
        s.running.push_back(std::move(r));
      }
      ++card;
      ++filled;
      continue;
    }
    int want = roll < 80 ? 1 : roll < 90 ? 2 : roll < 97 ? 4 : 8;
    want = std::min({want, room, target - filled});
    RunningJob r;
    basics(r.job);
    r.job.request.gpus = want;
    for (int k = 0; k < want; ++k) r.alloc.gpus.push_back(card + k);
    r.start_time = now - rng.Range(0, r.job.time_limit - 1);
    r.job.submit_time = std::min(r.job.submit_time, r.start_time);
    r.preemptible = r.job.tier == Tier::kExplore;
    s.running.push_back(std::move(r));
    card += want;
    filled += want;
  }

  s.pending.reserve(pending);
  for (int k = 0; k < pending; ++k) {
    Job j;
    basics(j);
    const int roll = static_cast<int>(rng.Below(100));
    if (roll < 80) {
      j.request.gpus = 1;
    } else if (roll < 90) {
      j.request.kind = RequestKind::kMemShare;
      j.request.memory = rng.Pick<MiB>({8192, 10240, 16384, 20480, 40960});
    } else {
      j.request.gpus = std::min(gpus_per_node, roll < 95 ? 2 : roll < 98 ? 4 : 8);
    }
    if (k > 0 && rng.Chance(0.01))
      j.after.push_back(j.id - 1 - static_cast<JobId>(rng.Below(std::min(k, 50))));
    s.pending.push_back(std::move(j));
  }
  for (const std::string& u : users) {
    Usage usage;
    usage.decayed_gpu_seconds = static_cast<double>(rng.Range(0, 500)) * kHour;
    usage.as_of = now - rng.Range(0, kDay);
    s.user_usage[u] = usage;
  }
  for (const std::string& p : projects) {
    Usage usage;
    usage.decayed_gpu_seconds = static_cast<double>(rng.Range(0, 2000)) * kHour;
    usage.as_of = now - rng.Range(0, kDay);
    s.project_usage[p] = usage;
  }
  return s;
}

}  // namespace rota::testing
