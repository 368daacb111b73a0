// Hand-computed replays of tiny traces through Simulate(), and conservation checks on the bundled
// Philly slice. Every expected value below is worked out in the comment next to it.
//
// Conventions: trace times are relative, so the simulator places them at SimConfig::epoch
// (kEpoch below); job ids are 1-based positions in the (submit-sorted) trace. Tests set
// policy.time_of_day = {} so that no heavy job is re-weighted and no time-of-day wake-up occurs.
#include "sim/simulator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/bookings.h"
#include "sim/trace.h"

namespace rota::sim {
namespace simulator_test {
namespace {

constexpr Time kEpoch = 1767571200;  // SimConfig's default epoch: Monday 2026-01-05 00:00 UTC

TraceJob Whole(Time submit, Duration duration, int gpus, std::string user = "u", std::string tier = "") {
  TraceJob j;
  j.submit = submit;
  j.duration = duration;
  j.gpus = gpus;
  j.user = std::move(user);
  j.tier = std::move(tier);
  return j;
}

TraceJob Share(Time submit, Duration duration, double fraction, std::string user = "u") {
  TraceJob j;
  j.submit = submit;
  j.duration = duration;
  j.gpus = 0;
  j.gpu_fraction = fraction;
  j.user = std::move(user);
  return j;
}

Trace MakeTrace(std::vector<TraceJob> jobs) {
  Trace t;
  for (size_t i = 0; i < jobs.size(); ++i) jobs[i].line = static_cast<std::int64_t>(i) + 2;
  t.jobs = std::move(jobs);
  return t;
}

SimConfig Config(Algorithm algorithm, int gpus) {
  SimConfig c;
  c.gpus = gpus;
  c.gpus_per_node = gpus;
  c.policy.algorithm = algorithm;
  c.policy.time_of_day = {};
  c.keep_outcomes = true;
  return c;
}

SimResult Replay(const Trace& trace, const SimConfig& config) {
  StatusOr<SimResult> r = Simulate(trace, config);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(*r) : SimResult{};
}

// Outcomes by job id; fails the test on a duplicate id.
std::map<std::int64_t, JobOutcome> ById(const SimResult& r) {
  std::map<std::int64_t, JobOutcome> m;
  for (const JobOutcome& o : r.outcomes) {
    EXPECT_TRUE(m.emplace(o.id, o).second) << "job " << o.id << " finished twice";
  }
  return m;
}

// Waits (start - submit) by job id.
std::map<std::int64_t, Time> Waits(const SimResult& r) {
  std::map<std::int64_t, Time> m;
  for (const auto& [id, o] : ById(r)) m[id] = o.start - o.submit;
  return m;
}

using WaitMap = std::map<std::int64_t, Time>;

bool SameOutcomes(const SimResult& a, const SimResult& b) {
  if (a.outcomes.size() != b.outcomes.size()) return false;
  for (size_t i = 0; i < a.outcomes.size(); ++i) {
    const JobOutcome& x = a.outcomes[i];
    const JobOutcome& y = b.outcomes[i];
    if (x.id != y.id || x.user != y.user || x.submit != y.submit || x.start != y.start || x.end != y.end ||
        x.gpus != y.gpus) {
      return false;
    }
  }
  return true;
}

// The trace of the fifo test, as CSV text with relative seconds.
constexpr std::string_view kHeadOfLineCsv =
    "submit,duration,gpus,user\n"
    "0,100,2,alice\n"
    "10,50,1,bob\n"
    "20,10,1,carol\n";

Trace HeadOfLineTrace() {
  auto options = ParseColumnsFlag("submit=submit,duration=duration,gpus=gpus,user=user", TraceOptions{});
  EXPECT_TRUE(options.ok()) << options.status().ToString();
  auto t = ParseTrace(kHeadOfLineCsv, options.ok() ? *options : TraceOptions{});
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? *t : Trace{};
}

// ---- Policies on hand-made traces ----

TEST(SimulatorTest, FifoHeadOfLineBlocking) {
  // 2 GPUs. A (2 GPUs, 100 s) at 0, B (1 GPU, 50 s) at 10, C (1 GPU, 10 s) at 20.
  // A runs [0,100). B waits for a card; C waits behind B. At 100 both start: B [100,150),
  // C [100,110). Waits: A 0, B 90, C 80.
  Trace t = HeadOfLineTrace();
  ASSERT_EQ(t.jobs.size(), 3u);
  ASSERT_FALSE(t.absolute_times);
  SimResult r = Replay(t, Config(Algorithm::kFifo, 2));
  EXPECT_EQ(r.policy, "fifo");
  EXPECT_EQ(r.rejected, 0);
  EXPECT_EQ(r.unfinished, 0);
  EXPECT_EQ(r.preemptions, 0);
  EXPECT_EQ(Waits(r), (WaitMap{{1, 0}, {2, 90}, {3, 80}}));
  auto o = ById(r);
  EXPECT_EQ(o[1].submit, kEpoch);  // relative times start at the epoch
  EXPECT_EQ(o[1].start, kEpoch);
  EXPECT_EQ(o[1].end, kEpoch + 100);
  EXPECT_EQ(o[1].gpus, 2);
  EXPECT_EQ(o[1].user, "alice");
  EXPECT_EQ(o[2].start, kEpoch + 100);
  EXPECT_EQ(o[2].end, kEpoch + 150);
  EXPECT_EQ(o[3].start, kEpoch + 100);
  EXPECT_EQ(o[3].end, kEpoch + 110);
}

TEST(SimulatorTest, FifoMetricsEqualHandValues) {
  // Same replay as above: waits {0, 80, 90}; JCTs A 100, B 150-10 = 140, C 110-20 = 90.
  SimResult r = Replay(HeadOfLineTrace(), Config(Algorithm::kFifo, 2));
  const Metrics& m = r.metrics;
  EXPECT_EQ(m.jobs, 3);
  EXPECT_DOUBLE_EQ(m.avg_wait, 170.0 / 3);  // (0 + 90 + 80) / 3
  EXPECT_EQ(m.p50_wait, 80);                // rank ceil(1.5) = 2 of {0, 80, 90}
  EXPECT_EQ(m.p99_wait, 90);                // rank ceil(2.97) = 3
  EXPECT_EQ(m.max_wait, 90);
  EXPECT_DOUBLE_EQ(m.avg_jct, 110.0);       // (100 + 140 + 90) / 3
  EXPECT_EQ(m.p99_jct, 140);
  EXPECT_EQ(m.makespan, 150);               // last end 150 - first submit 0
  // Busy GPU-seconds: 2*100 + 50 + 10 = 260 over 2 GPUs * 150 s = 300.
  EXPECT_DOUBLE_EQ(m.utilisation, 260.0 / 300.0);
  EXPECT_EQ(m.users, 3);
}

// 3 GPUs. A (2 GPUs, 100 s) at 0; B (3 GPUs, 50 s) at 10; C (1 GPU, 200 s) at 20;
// D (1 GPU, 60 s) at 30.
Trace BackfillTrace() {
  return MakeTrace({Whole(0, 100, 2), Whole(10, 50, 3), Whole(20, 200, 1), Whole(30, 60, 1)});
}

TEST(SimulatorTest, BackfillShortJobBackfillsLongDoesNot) {
  // EASY: A runs [0,100). B is the first blocked job: reservation [100,150) on all three cards.
  // C (200 s) could start on the free card at 20 but would run to 220, into B's reservation: it
  // waits. D (60 s) fits the hole [30,90) before 100: it backfills, wait 0.
  // At 100 A ends and B starts, [100,150); C starts at 150, [150,350).
  // Waits: A 0, B 90, C 130, D 0.
  SimResult r = Replay(BackfillTrace(), Config(Algorithm::kBackfill, 3));
  EXPECT_EQ(r.policy, "backfill");
  EXPECT_EQ(Waits(r), (WaitMap{{1, 0}, {2, 90}, {3, 130}, {4, 0}}));
  auto o = ById(r);
  EXPECT_EQ(o[4].end, kEpoch + 90);
  EXPECT_EQ(o[2].start, kEpoch + 100);  // the reservation held: D did not delay B
  EXPECT_EQ(o[3].end, kEpoch + 350);
  // avg wait (0 + 90 + 130 + 0) / 4 = 55.
  EXPECT_DOUBLE_EQ(r.metrics.avg_wait, 55.0);
}

TEST(SimulatorTest, IdleCapacityIsPutDownToItsCause) {
  // The EASY replay above, card by card: [0,10) one card idle, nothing waits (no work); [10,20)
  // B waits for all three (draining); [20,30) and [90,100) C fits the idle card but is held for
  // B's reservation (held); [30,90) D uses it; [150,350) two cards idle after C (no work).
  SimResult r = Replay(BackfillTrace(), Config(Algorithm::kBackfill, 3));
  const IdleGpuSeconds& idle = r.idle;
  EXPECT_DOUBLE_EQ(idle.no_work, 10 + 2 * 200);
  EXPECT_DOUBLE_EQ(idle.draining, 10);
  EXPECT_DOUBLE_EQ(idle.held, 20);
  EXPECT_DOUBLE_EQ(idle.fragmented + idle.booking + idle.quota, 0);
  // Every idle GPU-second is accounted for: capacity x makespan - busy.
  EXPECT_DOUBLE_EQ(idle.Total(), 3.0 * 350 * (1 - r.metrics.utilisation));
}

TEST(SimulatorTest, FifoDoesNotBackfill) {
  // Same trace under fifo: nothing starts behind B. A [0,100), B [100,150), then C and D both
  // start at 150. Waits: A 0, B 90, C 130, D 120.
  SimResult r = Replay(BackfillTrace(), Config(Algorithm::kFifo, 3));
  EXPECT_EQ(Waits(r), (WaitMap{{1, 0}, {2, 90}, {3, 130}, {4, 120}}));
  EXPECT_DOUBLE_EQ(r.metrics.avg_wait, 85.0);  // 340 / 4
}

TEST(SimulatorTest, RotaRunsShortJobAheadOfLongOne) {
  // 1 GPU, one user. A (100 s) at 0 runs [0,100). B (1000 s) at 10 and C (10 s) at 20 both wait.
  // Same tier and fair share; the size factor 1 - log1p(gpu-hours)/log1p(256) is 0.956 for B
  // (0.278 GPU-h) and 0.9995 for C, worth about 44 priority points (weight 1000), far more than
  // B's 10 s of age (500 * 10 / 14 days = 0.004). So C goes first: C [100,110), B [110,1110).
  // Waits: A 0, B 100, C 80.
  Trace t = MakeTrace({Whole(0, 100, 1), Whole(10, 1000, 1), Whole(20, 10, 1)});
  SimResult rota = Replay(t, Config(Algorithm::kRota, 1));
  EXPECT_EQ(rota.policy, "rota");
  EXPECT_EQ(Waits(rota), (WaitMap{{1, 0}, {2, 100}, {3, 80}}));
  // Fifo keeps submit order: B [100,1100), C [1100,1110). Waits: A 0, B 90, C 1080.
  SimResult fifo = Replay(t, Config(Algorithm::kFifo, 1));
  EXPECT_EQ(Waits(fifo), (WaitMap{{1, 0}, {2, 90}, {3, 1080}}));
}

TEST(SimulatorTest, PromisesKeepALongJobFromBeingOvertakenPastWhatFifoGaveIt) {
  // The trace above with promises kept (Policy::promise_slack): B is promised 100 (behind A),
  // C 1100 (behind B). At 100 B is past its promise and protected: fifo's order, waits B 90,
  // C 1080. With 50 s of slack, C may go first: B starts at 110, within 100 + 50.
  Trace t = MakeTrace({Whole(0, 100, 1), Whole(10, 1000, 1), Whole(20, 10, 1)});
  SimConfig c = Config(Algorithm::kRota, 1);
  c.policy.promise_slack = 0;
  EXPECT_EQ(Waits(Replay(t, c)), (WaitMap{{1, 0}, {2, 90}, {3, 1080}}));
  c.policy.promise_slack = 50;
  EXPECT_EQ(Waits(Replay(t, c)), (WaitMap{{1, 0}, {2, 100}, {3, 80}}));
  // With 5 s, B is due at 105. When C comes (20) the plan starts B at 110, past its due time, so
  // B is protected then (Policy::protect_foreseen): fifo's order again.
  c.policy.promise_slack = 5;
  EXPECT_EQ(Waits(Replay(t, c)), (WaitMap{{1, 0}, {2, 90}, {3, 1080}}));
  // Not foreseen, B is due after C started at 100: protection stops no job that runs.
  c.policy.protect_foreseen = false;
  EXPECT_EQ(Waits(Replay(t, c)), (WaitMap{{1, 0}, {2, 100}, {3, 80}}));
}

// ---- Rejections and shares ----

TEST(SimulatorTest, JobLargerThanClusterIsRejected) {
  // 2 GPUs on one node. X asks for 4: no node or cluster could ever hold it, so it is rejected.
  // A (1 GPU, 10 s) at 0 and B (1 GPU, 20 s) at 5 run at once on the two cards: waits 0 and 0.
  Trace t = MakeTrace({Whole(0, 10, 1), Whole(0, 100, 4), Whole(5, 20, 1)});
  for (Algorithm a : {Algorithm::kFifo, Algorithm::kBackfill, Algorithm::kRota}) {
    SimResult r = Replay(t, Config(a, 2));
    EXPECT_EQ(r.rejected, 1) << AlgorithmName(a);
    EXPECT_EQ(r.unfinished, 0) << AlgorithmName(a);
    EXPECT_EQ(r.metrics.jobs, 2) << AlgorithmName(a);
    EXPECT_EQ(Waits(r), (WaitMap{{1, 0}, {3, 0}})) << AlgorithmName(a);
  }
}

TEST(SimulatorTest, QuotaWaitsForNextWeekAndStopsWhenHopeless) {
  // Backfill, 1 GPU, every user 0.01 GPU-h = 36 GPU-s a week; the epoch is a Monday 00:00 UTC,
  // where quota weeks start. A (u, 30 s) at 0 runs [0,30). B (u, 30 s) at 0: 30 of u's 36 s are
  // promised to A, 6 < 30 left, so B waits for the next week and starts at 1 week: wait 604800.
  // C (w, 100 s) at 0 needs more than a whole week's quota: it can never start. The replay must
  // still end (nothing runs, nothing arrives) and count C as unfinished.
  Trace t = MakeTrace({Whole(0, 30, 1, "u"), Whole(0, 30, 1, "u"), Whole(0, 100, 1, "w")});
  SimConfig c = Config(Algorithm::kBackfill, 1);
  c.policy.quota.default_hours = 0.01;
  SimResult r = Replay(t, c);
  EXPECT_EQ(r.rejected, 0);
  EXPECT_EQ(r.unfinished, 1);
  EXPECT_EQ(r.metrics.jobs, 2);
  EXPECT_EQ(Waits(r), (WaitMap{{1, 0}, {2, kWeek}}));
  EXPECT_LT(r.schedule_calls, 100);
}

TEST(SimulatorTest, MemorySharesAreCoLocated) {
  // 1 GPU of 80 GiB. S1 and S2 (half a card each, 100 s) at 0 share it: both [0,100). S3 (half,
  // 50 s) at 10 finds the card full and waits until 100: [100,150). Waits 0, 0, 90.
  Trace t = MakeTrace({Share(0, 100, 0.5), Share(0, 100, 0.5), Share(10, 50, 0.5)});
  SimResult r = Replay(t, Config(Algorithm::kRota, 1));
  EXPECT_EQ(r.rejected, 0);
  EXPECT_EQ(Waits(r), (WaitMap{{1, 0}, {2, 0}, {3, 90}}));
  auto o = ById(r);
  EXPECT_EQ(o[1].end, kEpoch + 100);
  EXPECT_EQ(o[2].end, kEpoch + 100);
  EXPECT_EQ(o[3].start, kEpoch + 100);
  EXPECT_EQ(o[3].end, kEpoch + 150);
  EXPECT_DOUBLE_EQ(o[1].gpus, 0.5);  // 40 GiB of an 80 GiB card
  // Busy: 0.5*100 + 0.5*100 + 0.5*50 = 125 GPU-s over 1 GPU * 150 s.
  EXPECT_DOUBLE_EQ(r.metrics.utilisation, 125.0 / 150.0);
}

TEST(SimulatorTest, SharesFromCsvFractions) {
  // The same as above from CSV text: "0.5" GPUs is a half-card share.
  auto options = ParseColumnsFlag("submit=t,duration=d,gpus=g", TraceOptions{});
  ASSERT_TRUE(options.ok());
  auto t = ParseTrace("t,d,g\n0,100,0.5\n0,100,0.5\n10,50,0.5\n", *options);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  SimResult r = Replay(*t, Config(Algorithm::kFifo, 1));
  EXPECT_EQ(Waits(r), (WaitMap{{1, 0}, {2, 0}, {3, 90}}));
}

// ---- Estimates ----

// 2 GPUs. A (1 GPU, 100 s) at 0; B (2 GPUs, 10 s) at 1; C (1 GPU, 300 s) at 2.
// B is blocked and reserved at A's estimated end E_A >= 100. C could backfill on the free card
// only if 2 + L_C <= E_A, where E_A <= 300 when A's limit is at most 3x its duration.
Trace NoisyProbeTrace() {
  return MakeTrace({Whole(0, 100, 1), Whole(1, 10, 2), Whole(2, 300, 1)});
}

TEST(SimulatorEstimatesTest, ExactEstimates) {
  // Exact: E_A = 100, L_C = 300: C cannot backfill. At 100 A ends, B runs [100,110), C [110,410).
  // Waits: A 0, B 99, C 108.
  SimConfig c = Config(Algorithm::kBackfill, 2);
  c.estimates = Estimates::kExact;
  SimResult r = Replay(NoisyProbeTrace(), c);
  EXPECT_EQ(Waits(r), (WaitMap{{1, 0}, {2, 99}, {3, 108}}));
  EXPECT_STREQ(EstimatesName(Estimates::kExact), "exact");
  EXPECT_STREQ(EstimatesName(Estimates::kNoisy), "noisy");
  EXPECT_STREQ(EstimatesName(Estimates::kHistory), "history");
}

TEST(SimulatorEstimatesTest, NoisyLimitsNeverBelowDurations) {
  // Noisy limits are duration x U[1,3], so L_C >= 300 > 298 >= E_A - 2 whatever the draw: C never
  // backfills and every seed gives the exact replay's waits (0, 99, 108). Limits are not
  // enforced: every job runs exactly its duration.
  for (std::uint64_t seed = 1; seed <= 30; ++seed) {
    SimConfig c = Config(Algorithm::kBackfill, 2);
    c.estimates = Estimates::kNoisy;
    c.seed = seed;
    SimResult r = Replay(NoisyProbeTrace(), c);
    EXPECT_EQ(Waits(r), (WaitMap{{1, 0}, {2, 99}, {3, 108}})) << "seed " << seed;
    auto o = ById(r);
    EXPECT_EQ(o[1].end - o[1].start, 100) << "seed " << seed;
    EXPECT_EQ(o[2].end - o[2].start, 10) << "seed " << seed;
    EXPECT_EQ(o[3].end - o[3].start, 300) << "seed " << seed;
  }
}

TEST(SimulatorEstimatesTest, ModalLimitsAreRoundValuesAndHabits) {
  // Limits as people write them: a round value that covers the run, half the time the user's
  // habit (4 h, 1 d or 3 d) when that is longer.
  std::vector<TraceJob> jobs;
  for (int i = 0; i < 400; ++i) jobs.push_back(Whole(i * 10000, 60 + (i * 7919) % 3000, 1, "u" + std::to_string(i % 8)));
  SimConfig c = Config(Algorithm::kBackfill, 1);
  c.estimates = Estimates::kModal;
  const SimResult r = Replay(MakeTrace(jobs), c);
  ASSERT_EQ(r.outcomes.size(), jobs.size());
  const std::set<Duration> round = {5 * kMinute, 10 * kMinute, 15 * kMinute, 30 * kMinute, kHour, 2 * kHour,
                                    4 * kHour,   8 * kHour,    12 * kHour,   kDay,          2 * kDay, 3 * kDay};
  std::map<std::string, std::map<Duration, int>> by_user;
  for (const JobOutcome& o : r.outcomes) {
    EXPECT_TRUE(round.count(o.limit)) << o.limit;
    EXPECT_GE(o.limit, o.end - o.start);
    ++by_user[o.user][o.limit];
  }
  // Runs are under 51 minutes, so at most twice that is under 2 h: a limit of 4 h or more is a
  // habit; each user has exactly one, on about half of their 50 jobs.
  for (const auto& [user, limits] : by_user) {
    int habit = 0, kinds = 0;
    for (const auto& [limit, n] : limits) {
      if (limit < 4 * kHour) continue;
      ++kinds;
      habit += n;
    }
    EXPECT_EQ(kinds, 1) << user;
    EXPECT_GT(habit, 15) << user;
    EXPECT_LT(habit, 35) << user;
  }
  EXPECT_STREQ(EstimatesName(Estimates::kModal), "modal");
}

// One card. Careless asks 10 h and runs 10 minutes; careful asks the hour it runs. Three jobs each
// teach the history, then a burst of five each: on limits the careful hours go first and the short
// runs wait behind them; sized by the predicted run the short runs go first, and nothing is planned
// on a prediction (the limits are the ones recorded).
TEST(SimulatorTest, SizeByPredictionPutsTheCarelessShortRunsFirst) {
  std::vector<TraceJob> jobs;
  auto add = [&jobs](Time at, const std::string& user) {
    TraceJob j = Whole(at, user == "careless" ? 10 * kMinute : kHour, 1, user);
    j.limit = user == "careless" ? 10 * kHour : kHour;
    jobs.push_back(j);
  };
  for (int i = 0; i < 3; ++i) {
    add(i * 4 * kHour, "careless");
    add(i * 4 * kHour + 2 * kHour, "careful");
  }
  for (int i = 0; i < 5; ++i) add(20 * kHour, "careful");
  for (int i = 0; i < 5; ++i) add(20 * kHour, "careless");
  SimConfig c = Config(Algorithm::kRota, 1);
  c.estimates = Estimates::kRecorded;
  c.policy.weights.fairshare = 0;  // size alone orders the burst
  c.policy.weights.age = 0;
  const SimResult on_limits = Replay(MakeTrace(jobs), c);
  c.policy.size_by_prediction = true;
  const SimResult on_predictions = Replay(MakeTrace(jobs), c);
  auto careless_wait = [](const SimResult& r) {
    Duration w = 0;
    for (const JobOutcome& o : r.outcomes) {
      if (o.user == "careless" && o.submit == kEpoch + 20 * kHour) w += o.start - o.submit;
    }
    return w;
  };
  // On limits the careless jobs wait for five careful hours first; on predictions not at all
  // behind them (0 + 10 + 20 + 30 + 40 minutes).
  EXPECT_GE(careless_wait(on_limits), 5 * 5 * kHour);
  EXPECT_EQ(careless_wait(on_predictions), 100 * kMinute);
  EXPECT_LT(on_predictions.metrics.avg_wait, on_limits.metrics.avg_wait);
  for (const JobOutcome& o : on_predictions.outcomes) EXPECT_EQ(o.limit, o.user == "careless" ? 10 * kHour : kHour);
}

// A store replay keeps the lab's dependencies: on two free cards, the job recorded as --after
// another starts when that one ends, not at once; one on a job outside the replay is met.
TEST(SimulatorTest, RecordedDependenciesAreReplayed) {
  TraceJob a = Whole(0, 100, 1);
  a.id = 40;
  TraceJob b = Whole(0, 10, 1);
  b.id = 41;
  b.after = {40};
  TraceJob c = Whole(0, 10, 1);
  c.id = 42;
  c.after = {7};  // ended before the replayed days
  const Trace t = MakeTrace({a, b, c});
  for (Algorithm alg : kAlgorithms) {
    const SimResult r = Replay(t, Config(alg, 2));
    EXPECT_EQ(Waits(r), (WaitMap{{1, 0}, {2, 100}, {3, 0}})) << AlgorithmName(alg);
  }
}

TEST(SimulatorEstimatesTest, NoisyWithNoNoiseIsExact) {
  // noise_max = 1: the factor is exactly 1, so noisy limits equal the durations.
  Trace t = MakeTrace({Whole(0, 100, 1), Whole(1, 10, 2), Whole(2, 50, 1), Whole(3, 97, 1)});
  SimConfig exact = Config(Algorithm::kBackfill, 2);
  SimConfig noisy = exact;
  noisy.estimates = Estimates::kNoisy;
  noisy.noise_max = 1.0;
  noisy.seed = 12345;
  EXPECT_TRUE(SameOutcomes(Replay(t, exact), Replay(t, noisy)));
}

TEST(SimulatorEstimatesTest, NoisyIsDeterministicPerSeed) {
  // 2 GPUs. A (1 GPU, 100 s) at 0; B (2 GPUs, 10 s) at 1; C (1 GPU, 90 s) at 2.
  // C backfills iff 2 + ceil(90 f_C) <= ceil(100 f_A), f uniform in [1,3]: true for roughly half
  // the draws. Backfilled: C [2,92), B [100,110): waits 0, 99, 0. Not: B [100,110),
  // C [110,200): waits 0, 99, 108. Exact estimates backfill (92 <= 100).
  Trace t = MakeTrace({Whole(0, 100, 1), Whole(1, 10, 2), Whole(2, 90, 1)});
  SimResult exact = Replay(t, Config(Algorithm::kBackfill, 2));
  EXPECT_EQ(Waits(exact), (WaitMap{{1, 0}, {2, 99}, {3, 0}}));
  SimConfig c = Config(Algorithm::kBackfill, 2);
  c.estimates = Estimates::kNoisy;
  c.seed = 1;
  SimResult first = Replay(t, c);
  SimResult again = Replay(t, c);
  EXPECT_TRUE(SameOutcomes(first, again)) << "same seed, different replay";
  std::set<Time> c_waits;
  bool some_seed_differs = false;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    c.seed = seed;
    SimResult r = Replay(t, c);
    WaitMap w = Waits(r);
    EXPECT_EQ(w[1], 0);
    EXPECT_EQ(w[2], 99);
    EXPECT_TRUE(w[3] == 0 || w[3] == 108) << "seed " << seed << ": C waited " << w[3];
    c_waits.insert(w[3]);
    if (!SameOutcomes(r, first)) some_seed_differs = true;
    EXPECT_TRUE(SameOutcomes(r, Replay(t, c))) << "seed " << seed;
  }
  EXPECT_TRUE(some_seed_differs);
  EXPECT_EQ(c_waits, (std::set<Time>{0, 108}));  // both outcomes occur over 20 seeds
}

// History: H1 (user a, 1 GPU, 100 s) and H2 (user h, 1 GPU, 10 s) at 0 build the history
// a = [100], h = [10]. Then at 200 A (a, 1 GPU, 100 s), at 201 B (b, 2 GPUs, 10 s), at 202
// C (h, 1 GPU, 500 s) on 2 GPUs under EASY backfill.
Trace HistoryTrace() {
  return MakeTrace({Whole(0, 100, 1, "a"), Whole(0, 10, 1, "h"), Whole(200, 100, 1, "a"),
                    Whole(201, 10, 2, "b"), Whole(202, 500, 1, "h")});
}

TEST(SimulatorEstimatesTest, HistoryEstimateChangesBackfill) {
  // History: H1 and H2 start at 0 (estimates: the 1 h default). A's estimate is a's mean, 100:
  // A runs [200,300), expected to end at 300. B (b has no history: 3600 s) is blocked and
  // reserved at 300. C's estimate is h's mean, 10 s: [202,212) fits before 300, so C backfills
  // at 202 -- but really runs 500 s, to 702. At 300 A ends; C is past its estimate, so the core
  // expects it to end overdue_grace (300 s) from each pass: B is reserved at 600, then at 900;
  // C ends at 702 and B starts then, [702,712).
  // Waits: H1 0, H2 0, A 0, B 501, C 0.
  SimConfig c = Config(Algorithm::kBackfill, 2);
  c.estimates = Estimates::kHistory;
  SimResult r = Replay(HistoryTrace(), c);
  EXPECT_EQ(Waits(r), (WaitMap{{1, 0}, {2, 0}, {3, 0}, {4, 501}, {5, 0}}));
  auto o = ById(r);
  EXPECT_EQ(o[5].end, kEpoch + 702);  // limits are not enforced: C runs its full 500 s
  EXPECT_EQ(o[4].end, kEpoch + 712);
}

TEST(SimulatorEstimatesTest, ExactEstimateKeepsTheReservation) {
  // The same trace with exact estimates: C's 500 s limit would run past B's reservation at 300,
  // so C waits. At 300 A ends: B [300,310), then C [310,810).
  // Waits: H1 0, H2 0, A 0, B 99, C 108.
  SimResult r = Replay(HistoryTrace(), Config(Algorithm::kBackfill, 2));
  EXPECT_EQ(Waits(r), (WaitMap{{1, 0}, {2, 0}, {3, 0}, {4, 99}, {5, 108}}));
}

// History window: user h finishes H1 (10 s) at 10, H2 (20 s) at 20 and H3 (90 s, started at 30)
// at 120, so h's history is [10, 20, 90]. With history_default = 100: L (user l, 1 GPU, 1000 s)
// starts at 200 expecting to end at 300; B (user b, 2 GPUs, 10 s) at 201 is reserved at 300;
// P (user h, 1 GPU, 40 s) at 260 backfills at once iff its estimate is <= 300 - 260 = 40.
Trace WindowTrace() {
  return MakeTrace({Whole(0, 10, 1, "h"), Whole(0, 20, 1, "h"), Whole(30, 90, 1, "h"),
                    Whole(200, 1000, 1, "l"), Whole(201, 10, 2, "b"), Whole(260, 40, 1, "h")});
}

TEST(SimulatorEstimatesTest, HistoryIsMeanOfLastWindow) {
  // Window 3 (and the default 5): P's estimate is (10 + 20 + 90) / 3 = 40, which just fits:
  // P runs [260,300). L outlives its estimate: from 300 on the core expects it overdue_grace
  // (300 s) later at every pass, so B is reserved at 600, 900, ... and starts when L really
  // ends, at 1200. Waits: 0, 0, 0, L 0, B 999, P 0.
  for (int window : {3, 5}) {
    SimConfig c = Config(Algorithm::kBackfill, 2);
    c.estimates = Estimates::kHistory;
    c.history_default = 100;
    c.history_window = window;
    SimResult r = Replay(WindowTrace(), c);
    EXPECT_EQ(Waits(r), (WaitMap{{1, 0}, {2, 0}, {3, 0}, {4, 0}, {5, 999}, {6, 0}})) << "window " << window;
  }
  // Window 2: only H2 and H3 count, (20 + 90) / 2 = 55 > 40: P waits. At 300 L is overdue and
  // expected at 600, B is reserved at [600,700), and P's [300,355) fits before it: P backfills at
  // 300 (wait 40). B still starts at 1200.
  SimConfig c = Config(Algorithm::kBackfill, 2);
  c.estimates = Estimates::kHistory;
  c.history_default = 100;
  c.history_window = 2;
  SimResult r = Replay(WindowTrace(), c);
  EXPECT_EQ(Waits(r), (WaitMap{{1, 0}, {2, 0}, {3, 0}, {4, 0}, {5, 999}, {6, 40}}));
}

// ---- Preemption ----

TEST(SimulatorTest, ThesisJobPreemptsExploreJob) {
  // Rota, 2 GPUs. E1 (explore, 1 GPU, 1000 s) at 0 and E2 (explore, 1 GPU, 1000 s) at 10 hold
  // both cards. T (thesis, 1 GPU, 100 s) arrives at 100 and preempts the victim with the least
  // work lost: E2 (90 GPU-s done, against E1's 100). E2 is signalled at 100 and killed at
  // 100 + 120 s grace = 220; it keeps the work done until the signal, 100 - 10 = 90 s, so 910 s
  // remain. T starts at 220: [220,320). E2 is requeued with its submit time 10 and restarts when
  // T's card frees at 320: ends 320 + 910 = 1230. E1 runs undisturbed [0,1000).
  Trace t = MakeTrace({Whole(0, 1000, 1, "e1", "explore"), Whole(10, 1000, 1, "e2", "explore"),
                       Whole(100, 100, 1, "t", "thesis")});
  SimResult r = Replay(t, Config(Algorithm::kRota, 2));
  EXPECT_EQ(r.preemptions, 1);
  EXPECT_EQ(r.rejected, 0);
  EXPECT_EQ(r.unfinished, 0);
  ASSERT_EQ(r.outcomes.size(), 3u);  // every job finishes exactly once
  auto o = ById(r);
  ASSERT_EQ(o.size(), 3u);
  EXPECT_EQ(o[1].start, kEpoch);
  EXPECT_EQ(o[1].end, kEpoch + 1000);
  EXPECT_EQ(o[2].submit, kEpoch + 10);  // original submit time kept on requeue
  EXPECT_EQ(o[2].start, kEpoch + 10);   // its first start
  EXPECT_EQ(o[2].end, kEpoch + 1230);
  EXPECT_EQ(o[3].start, kEpoch + 220);
  EXPECT_EQ(o[3].end, kEpoch + 320);
  // Waits 0, 0, 120; makespan 1230. Busy GPU-seconds: E1 1000, E2 [10,220) + [320,1230) =
  // 210 + 910 = 1120 (the 120 s of grace are lost work, but the card was busy), T 100: 2220 over
  // 2 GPUs * 1230 s. E2's idle time in the queue [220,320) is not busy time.
  EXPECT_DOUBLE_EQ(r.metrics.avg_wait, 40.0);
  EXPECT_EQ(r.metrics.makespan, 1230);
  EXPECT_DOUBLE_EQ(r.metrics.utilisation, 2220.0 / 2460.0);
}

TEST(SimulatorTest, RequeuedJobKeepsItsPlaceInLine) {
  // As above, plus E3 (explore, user x like E1 and E2, 1 GPU, 1000 s) at 150. E3 cannot preempt
  // (same tier) and waits; T does not preempt again (E2's stop, due at 220, already serves it).
  // At 220 E2 is requeued with its submit time 10 and T starts [220,320). E2 and E3 now differ
  // only in age (same tier, user, size): E2, submitted at 10, is older than E3 and is reserved
  // first, on T's card at 320; E3 gets E1's card at 1000.
  // E2 [10,220) + [320,1230); E3 [1000,2000). Waits: E1 0, E2 0, T 120, E3 850.
  Trace t = MakeTrace({Whole(0, 1000, 1, "x", "explore"), Whole(10, 1000, 1, "x", "explore"),
                       Whole(100, 100, 1, "t", "thesis"), Whole(150, 1000, 1, "x", "explore")});
  SimResult r = Replay(t, Config(Algorithm::kRota, 2));
  EXPECT_EQ(r.preemptions, 1);
  EXPECT_EQ(Waits(r), (WaitMap{{1, 0}, {2, 0}, {3, 120}, {4, 850}}));
  auto o = ById(r);
  EXPECT_EQ(o[2].end, kEpoch + 1230);
  EXPECT_EQ(o[4].start, kEpoch + 1000);
  EXPECT_EQ(o[4].end, kEpoch + 2000);
}

TEST(SimulatorTest, FifoNeverPreempts) {
  // The same trace under fifo: T waits for E1 to end at 1000. E2 ends at 1010. Waits 0, 0, 900.
  Trace t = MakeTrace({Whole(0, 1000, 1, "e1", "explore"), Whole(10, 1000, 1, "e2", "explore"),
                       Whole(100, 100, 1, "t", "thesis")});
  SimResult r = Replay(t, Config(Algorithm::kFifo, 2));
  EXPECT_EQ(r.preemptions, 0);
  EXPECT_EQ(Waits(r), (WaitMap{{1, 0}, {2, 0}, {3, 900}}));
}

TEST(SimulatorTest, ManyPreemptionsEveryJobFinishesOnce) {
  // 4 GPUs filled with explore work, then a stream of thesis and regular jobs: every job ends
  // exactly once, count == trace size - rejected, and nothing waits forever.
  std::vector<TraceJob> jobs;
  for (int i = 0; i < 8; ++i) jobs.push_back(Whole(i, 2000 + 100 * i, 1, "e" + std::to_string(i), "explore"));
  for (int i = 0; i < 6; ++i) jobs.push_back(Whole(100 + 50 * i, 300, 1 + i % 2, "t", "thesis"));
  jobs.push_back(Whole(400, 50, 8, "big"));  // larger than the cluster: rejected
  for (int i = 0; i < 5; ++i) jobs.push_back(Whole(500 + 10 * i, 200, 1, "r"));
  Trace t = MakeTrace(jobs);
  SimResult r = Replay(t, Config(Algorithm::kRota, 4));
  EXPECT_GT(r.preemptions, 0);
  EXPECT_EQ(r.rejected, 1);
  EXPECT_EQ(r.unfinished, 0);
  EXPECT_EQ(static_cast<std::int64_t>(r.outcomes.size()),
            static_cast<std::int64_t>(t.jobs.size()) - r.rejected);
  auto o = ById(r);
  EXPECT_EQ(o.size(), r.outcomes.size());
  for (const auto& [id, x] : o) {
    EXPECT_GE(x.start, x.submit) << id;
    EXPECT_GE(x.end - x.start, t.jobs[id - 1].duration) << id;  // preempted jobs end later
  }
}

// ---- Determinism ----

TEST(SimulatorTest, DeterministicReplay) {
  std::vector<TraceJob> jobs;
  const char* tiers[] = {"", "explore", "thesis", "regular"};
  for (int i = 0; i < 60; ++i) {
    const Time submit = 37 * i;
    const Duration d = 50 + (i * 7919) % 900;
    if (i % 5 == 4) {
      jobs.push_back(Share(submit, d, 0.25 + 0.25 * (i % 3)));
    } else {
      jobs.push_back(Whole(submit, d, 1 + (i * 13) % 4, "user" + std::to_string(i % 4), tiers[i % 4]));
    }
  }
  Trace t = MakeTrace(jobs);
  for (Algorithm a : {Algorithm::kFifo, Algorithm::kBackfill, Algorithm::kRota}) {
    for (Estimates e : {Estimates::kExact, Estimates::kNoisy, Estimates::kHistory}) {
      SimConfig c = Config(a, 4);
      c.gpus_per_node = 2;
      c.estimates = e;
      c.seed = 7;
      SimResult first = Replay(t, c);
      SimResult second = Replay(t, c);
      EXPECT_TRUE(SameOutcomes(first, second)) << AlgorithmName(a) << " " << EstimatesName(e);
      EXPECT_EQ(first.preemptions, second.preemptions);
      EXPECT_EQ(first.schedule_calls, second.schedule_calls);
      EXPECT_EQ(first.metrics.avg_wait, second.metrics.avg_wait);
      EXPECT_EQ(first.metrics.jobs + first.rejected + first.unfinished, 60);
    }
  }
}

TEST(SimulatorTest, AStoppedReplaySaysSoInsteadOfFigures) {
  const Trace t = MakeTrace({Whole(0, 100, 1), Whole(1, 10, 2)});
  std::atomic<bool> stop{false};
  SimConfig c = Config(Algorithm::kRota, 2);
  c.stop = &stop;
  EXPECT_TRUE(Simulate(t, c).ok());  // not set: a replay like any other
  stop = true;
  StatusOr<SimResult> r = Simulate(t, c);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  c.bookings = {SimBooking{"ana", 1, kEpoch, kEpoch + kHour, kEpoch + 2 * kHour, true, 0, 0, ""}};
  EXPECT_EQ(Simulate(t, c).status().code(), StatusCode::kUnavailable);
}

// A card in MIG mode with two 3g.40gb slices of `slice` MiB each, and a 24 GB card for shares.
std::pair<Gpu, Gpu> MigAndSmallCards(MiB slice) {
  Gpu mig;
  mig.uuid = "GPU-m";
  mig.memory = 81920;
  mig.mig = {{"MIG-0", "3g.40gb", slice}, {"MIG-1", "3g.40gb", slice}};
  Gpu small;
  small.uuid = "GPU-s";
  small.index = 1;
  small.memory = 24576;
  return {mig, small};
}

// A store replay's cluster: the cards as they are. Two 3g.40gb slices of card 0 run two MIG jobs
// side by side while card 1 (24 GB) runs a 20 GB share; a third MIG job waits for a slice, a
// whole-card job can only have card 1 (under fifo it waits behind the third), and a profile no
// card offers is rejected.
TEST(SimulatorTest, TheCardsAsTheyAreRunSlicesAndShares) {
  const auto [mig, small] = MigAndSmallCards(40192);
  auto slice = [](Time submit, Duration duration, const char* profile) {
    TraceJob j = Whole(submit, duration, 0);
    j.mig_profile = profile;
    return j;
  };
  TraceJob share = Whole(0, 50, 0);
  share.memory = 20480;
  const Trace t = MakeTrace({slice(0, 100, "3g.40gb"), slice(0, 100, "3g.40gb"), share,
                             slice(10, 10, "3g.40gb"), Whole(20, 10, 1), slice(30, 10, "7g.80gb")});
  for (Algorithm alg : kAlgorithms) {
    SimConfig c = Config(alg, 2);
    c.cards = {mig, small};
    const SimResult r = Replay(t, c);
    const Time whole = alg == Algorithm::kFifo ? 80 : 30;
    EXPECT_EQ(Waits(r), (WaitMap{{1, 0}, {2, 0}, {3, 0}, {4, 90}, {5, whole}})) << AlgorithmName(alg);
    EXPECT_EQ(r.rejected, 1) << AlgorithmName(alg);
    // Each slice is a bit under half the card: the busy GPU-seconds count what the slices held.
    EXPECT_GT(r.metrics.utilisation, 0) << AlgorithmName(alg);
  }
  // The cards must be as many as the GPUs said.
  SimConfig bad = Config(Algorithm::kRota, 3);
  bad.cards = {mig, small};
  EXPECT_FALSE(Simulate(t, bad).ok());
}

TEST(SimulatorTest, EmptyTraceAndBadConfig) {
  SimResult r = Replay(Trace{}, Config(Algorithm::kRota, 2));
  EXPECT_EQ(r.metrics.jobs, 0);
  EXPECT_EQ(r.unfinished, 0);
  EXPECT_TRUE(r.outcomes.empty());
  SimConfig bad = Config(Algorithm::kRota, 0);
  EXPECT_FALSE(Simulate(Trace{}, bad).ok());
}

// ---- Start forecasts ----

// Fifo with exact estimates: no later job can delay an earlier one, and every job runs what its
// limit says, so the scheduler played forward on predicted run times (the limits' history says
// they are exact) foresees every sampled start to the second; the plan on limits does too.
// Decisions are the same with and without the forecasts.
TEST(SimulatorTest, ForecastsOfFifoOnExactEstimatesAreExact) {
  std::vector<TraceJob> jobs;
  for (int i = 0; i < 40; ++i) {
    jobs.push_back(Whole(i * 300, 1000 + (i * 7919) % 5000, 1 + i % 3, "u" + std::to_string(i % 4)));
  }
  const Trace t = MakeTrace(jobs);
  SimConfig c = Config(Algorithm::kFifo, 4);
  const SimResult plain = Replay(t, c);
  c.predict_every = 2;
  const SimResult r = Replay(t, c);
  EXPECT_FALSE(plain.has_prediction);
  ASSERT_TRUE(r.has_prediction);
  EXPECT_EQ(r.prediction.samples, 20);
  EXPECT_GT(r.prediction.waited, 10);  // a queue builds: there are waits to foresee
  EXPECT_EQ(r.prediction.unknown_forecast, 0);
  EXPECT_EQ(r.prediction.error_forecast, 0);
  EXPECT_EQ(r.prediction.error_limit, 0);
  EXPECT_DOUBLE_EQ(r.prediction.p90_coverage, 1.0);
  ASSERT_EQ(r.outcomes.size(), plain.outcomes.size());
  for (size_t i = 0; i < r.outcomes.size(); ++i) EXPECT_EQ(r.outcomes[i].start, plain.outcomes[i].start) << i;
}

// Noisy estimates (limits up to three times the run time): the plan on limits starts the queue
// late; the forecast on run times learnt from the jobs that ended is closer.
TEST(SimulatorTest, ForecastsOnNoisyEstimatesBeatThePlanOnLimits) {
  std::vector<TraceJob> jobs;
  for (int i = 0; i < 200; ++i) {
    jobs.push_back(Whole(i * 200, 1000 + (i * 7919) % 5000, 1 + i % 2, "u" + std::to_string(i % 3)));
  }
  SimConfig c = Config(Algorithm::kFifo, 4);
  c.estimates = Estimates::kNoisy;
  c.predict_every = 1;
  const SimResult r = Replay(MakeTrace(jobs), c);
  ASSERT_TRUE(r.has_prediction);
  EXPECT_EQ(r.prediction.samples, 200);
  EXPECT_GT(r.prediction.waited, 150);
  EXPECT_LT(r.prediction.waited_error_forecast * 2, r.prediction.waited_error_limit);
}

// A lab whose weeks repeat (here a period of 5,000 s): on one card, a thesis job B runs 300 s;
// L1 and L2 (regular, 1,000 s each) come in behind it; S (thesis, 500 s) comes a little later and
// goes first under the rota policy. Knowing only the queue, the forecasts of L1 and L2 are 500 s
// early every period; foreseeing the last period's jobs again, they are exact from the second
// period on (exact estimates: the run times are known). Decisions are the same either way; fifo
// foresees no arrivals (nothing later goes first).
TEST(SimulatorTest, ForecastsForeseeTheLastPeriodsArrivalsUnderRota) {
  constexpr Duration kPeriod = 5000;
  std::vector<TraceJob> jobs;
  for (int p = 0; p < 10; ++p) {
    const Time base = p * kPeriod;
    jobs.push_back(Whole(base, 300, 1, "c", "thesis"));
    jobs.push_back(Whole(base + 1, 1000, 1, "a"));
    jobs.push_back(Whole(base + 2, 1000, 1, "a"));
    jobs.push_back(Whole(base + 100, 500, 1, "b", "thesis"));
  }
  const Trace t = MakeTrace(jobs);
  SimConfig c = Config(Algorithm::kRota, 1);
  c.predict_every = 1;
  c.arrivals.period = kPeriod;
  c.arrivals.horizon = kPeriod;
  const SimResult with = Replay(t, c);
  SimConfig without_config = c;
  without_config.arrivals.horizon = 0;
  const SimResult without = Replay(t, without_config);
  ASSERT_TRUE(with.has_prediction);
  EXPECT_TRUE(with.foresaw_arrivals);
  EXPECT_FALSE(without.foresaw_arrivals);
  std::map<std::int64_t, Time> waits;
  for (const JobOutcome& o : with.outcomes) waits[o.id] = o.start - o.submit;
  ASSERT_EQ(waits.size(), 40u);
  ASSERT_EQ(without.outcomes.size(), 40u);
  for (const JobOutcome& o : without.outcomes) EXPECT_EQ(o.start - o.submit, waits[o.id]) << o.id;
  // S goes first: L1 (the second job of each period) starts 800 s into it, L2 1,800 s.
  EXPECT_EQ(waits[6], 799);
  EXPECT_EQ(waits[7], 1798);
  EXPECT_EQ(with.prediction.waited, 30);  // L1, L2 and S of every period
  EXPECT_EQ(without.prediction.waited_error_forecast, 500);
  EXPECT_EQ(with.prediction.waited_error_forecast, 0);

  c.policy.algorithm = Algorithm::kFifo;
  EXPECT_FALSE(Replay(t, c).foresaw_arrivals);
}

// ---- The bundled Philly slice ----

TEST(SimulatorPhillyTest, ConservationOnPhillySlice) {
  TraceOptions options;
  options.format = "philly";
  auto loaded = LoadTrace(ROTA_SOURCE_DIR "/data/traces/philly-ed69ec.csv", options);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const Trace& t = *loaded;
  ASSERT_EQ(t.jobs.size(), 1137u);
  ASSERT_TRUE(t.absolute_times);
  double trace_gpu_seconds = 0;
  for (const TraceJob& j : t.jobs) {
    trace_gpu_seconds += static_cast<double>(j.gpus) * static_cast<double>(j.duration);
  }

  std::map<Algorithm, double> avg_wait;
  for (Algorithm a : {Algorithm::kFifo, Algorithm::kBackfill, Algorithm::kRota}) {
    SimConfig c;
    c.gpus = 8;
    c.gpus_per_node = 8;
    c.policy.algorithm = a;
    c.keep_outcomes = true;
    SimResult r = Replay(t, c);
    const char* name = AlgorithmName(a);
    EXPECT_EQ(r.metrics.jobs + r.rejected + r.unfinished, 1137) << name;
    EXPECT_EQ(r.rejected, 0) << name;
    EXPECT_EQ(r.unfinished, 0) << name;
    EXPECT_EQ(r.preemptions, 0) << name;  // no tiers in the trace: nothing is preemptible
    ASSERT_EQ(r.outcomes.size(), 1137u) << name;
    // Sweep: +gpus at start, -gpus at end (ends before starts at the same instant).
    std::vector<std::pair<Time, double>> events;
    double busy = 0;
    std::set<std::int64_t> ids;
    for (const JobOutcome& o : r.outcomes) {
      EXPECT_TRUE(ids.insert(o.id).second) << name << ": job " << o.id << " twice";
      EXPECT_GE(o.start, o.submit) << name << ": job " << o.id;
      EXPECT_GE(o.end, o.start) << name << ": job " << o.id;
      EXPECT_EQ(o.end - o.start, t.jobs[o.id - 1].duration) << name << ": job " << o.id;
      events.emplace_back(o.start, o.gpus);
      events.emplace_back(o.end, -o.gpus);
      busy += o.gpus * static_cast<double>(o.end - o.start);
    }
    std::sort(events.begin(), events.end());
    double in_use = 0;
    double peak = 0;
    for (const auto& [when, delta] : events) {
      in_use += delta;
      peak = std::max(peak, in_use);
    }
    EXPECT_LE(peak, 8.0) << name;
    EXPECT_EQ(in_use, 0.0) << name;
    EXPECT_DOUBLE_EQ(busy, trace_gpu_seconds) << name;
    EXPECT_LE(r.metrics.utilisation, 1.0) << name;
    avg_wait[a] = r.metrics.avg_wait;
  }
  EXPECT_LE(avg_wait[Algorithm::kBackfill], avg_wait[Algorithm::kFifo]);
}

// ---- Bookings ----
//
// Booking times are absolute (the simulator's time); the traces are relative, so trace time t is
// kEpoch + t. Bookings go through the default rules: a 30 m slot grid, made the day before (a
// same-day booking needs an admin), a 15 m no-show grace. The owner's job ends 5 m before the
// booking's end (SimConfig::booking_margin).

constexpr Time kDayOne = kEpoch + kDay;  // Tuesday 2026-01-06 00:00 UTC

SimBooking Book(std::string user, int gpus, Time start, Time end, bool show, Time made = kEpoch) {
  SimBooking b;
  b.user = std::move(user);
  b.gpus = gpus;
  b.start = start;
  b.end = end;
  b.show = show;
  b.made = made;
  return b;
}

const BookingOutcome& OutcomeOf(const SimResult& r, std::int64_t id) {
  static const BookingOutcome kNone;
  for (const BookingOutcome& o : r.booking_outcomes) {
    if (o.id == id) return o;
  }
  ADD_FAILURE() << "no booking " << id;
  return kNone;
}

TEST(SimBookingTest, HandComputedUsedNoShowAndRefused) {
  // 2 GPUs, one trace job of zed at 0 (100 s). Bookings, all made at the epoch unless noted:
  //  1 alice 1 GPU [D+10h, D+12h) comes     -> confirmed, card a
  //  2 bob   1 GPU [D+10h, D+12h) no-show   -> confirmed, the other card
  //  3 carol 1 GPU [D+11h, D+13h) comes     -> no room: both cards are booked over [11h, 12h)
  //  4 dave  1 GPU [D+10h15m, D+11h)        -> refused: 10:15 is not on the 30 m grid
  //  5 erin  1 GPU [D+14h, D+15h) made D+1h -> same day: needs an admin, lapses at its start
  // At D+10h alice's job starts on her card (bob's holds the other) and runs to D+12h-5m:
  // used 1 x (2h - 5m) = 1.9167 GPU-h, idle 5 m. Bob's booking is released at D+10h15m (grace):
  // released 1 x 1h45m = 1.75 GPU-h, idle 15 m. Booked 2 x 2 h = 4 GPU-h; nothing lent.
  Trace t = MakeTrace({Whole(0, 100, 1, "zed")});
  SimConfig c = Config(Algorithm::kRota, 2);
  const Time h = kHour;
  c.bookings = {Book("alice", 1, kDayOne + 10 * h, kDayOne + 12 * h, true),
                Book("bob", 1, kDayOne + 10 * h, kDayOne + 12 * h, false),
                Book("carol", 1, kDayOne + 11 * h, kDayOne + 13 * h, true),
                Book("dave", 1, kDayOne + 10 * h + 15 * kMinute, kDayOne + 11 * h, true),
                Book("erin", 1, kDayOne + 14 * h, kDayOne + 15 * h, true, kDayOne + 1 * h)};
  SimResult r = Replay(t, c);
  ASSERT_TRUE(r.has_bookings);
  const BookingMetrics& m = r.bookings;
  EXPECT_EQ(m.requested, 5);
  EXPECT_EQ(m.confirmed, 2);
  EXPECT_EQ(m.refused, 3);
  EXPECT_EQ(m.refused_no_room, 1);
  EXPECT_EQ(m.refused_rules, 1);
  EXPECT_EQ(m.needs_admin, 1);
  EXPECT_EQ(m.shows, 1);
  EXPECT_EQ(m.used, 1);
  EXPECT_EQ(m.no_shows, 1);
  EXPECT_EQ(m.no_show_owner_blocked, 0);
  EXPECT_EQ(m.owner_elsewhere, 0);
  EXPECT_EQ(m.elsewhere_gpu_hours, 0);
  EXPECT_DOUBLE_EQ(m.booked_gpu_hours, 4.0);
  EXPECT_NEAR(m.used_gpu_hours, 2.0 - 5.0 / 60, 1e-9);
  EXPECT_NEAR(m.released_gpu_hours, 1.75, 1e-9);
  EXPECT_NEAR(m.idle_gpu_hours, (5.0 + 15.0) / 60, 1e-9);
  EXPECT_EQ(m.lent_gpu_hours, 0);
  EXPECT_EQ(m.in_way_gpu_hours, 0);
  EXPECT_EQ(OutcomeOf(r, 1).state, BookingState::kEnded);
  EXPECT_EQ(OutcomeOf(r, 1).closed, kDayOne + 12 * h);
  EXPECT_EQ(OutcomeOf(r, 2).state, BookingState::kNoShow);
  EXPECT_EQ(OutcomeOf(r, 2).closed, kDayOne + 10 * h + 15 * kMinute);
  EXPECT_EQ(OutcomeOf(r, 3).verdict, BookingVerdict::kNoRoom);
  EXPECT_EQ(OutcomeOf(r, 4).verdict, BookingVerdict::kRefused);
  EXPECT_EQ(OutcomeOf(r, 5).verdict, BookingVerdict::kNeedsAdmin);
  EXPECT_EQ(OutcomeOf(r, 5).state, BookingState::kRejected);  // not approved before its start
  EXPECT_EQ(OutcomeOf(r, 1).cards.size(), 1u);
  EXPECT_NE(OutcomeOf(r, 1).cards, OutcomeOf(r, 2).cards);
  // The trace's metrics hold the trace's job only; the owner's job is not a trace job.
  ASSERT_EQ(r.outcomes.size(), 1u);
  EXPECT_EQ(r.outcomes[0].user, "zed");
  EXPECT_EQ(r.metrics.jobs, 1);
  EXPECT_EQ(r.unfinished, 0);
}

// Bookings of slices and shares on the cards as they are (a store replay's). Card 0 has two
// 3g.40gb slices, card 1 (24 GB) takes shares. Ana and cy book a slice each, bo half of card 1,
// all [D+10h, D+12h); dee's third slice finds no room. Each owner's work runs on what was booked
// until five minutes before the end: used is each one's part of the card over 1h55m. Zed's slice
// job, submitted at D+9h for 2 h, would run into the bookings: it waits for them (both slices are
// booked), and starts when they end.
TEST(SimBookingTest, SlicesAndSharesAreBookedAndUsedAsTheirPartOfTheCard) {
  const auto [mig, small] = MigAndSmallCards(40960);
  const Time h = kHour;
  TraceJob zed = Whole(kDay + 9 * h, 2 * h, 0, "zed");
  zed.mig_profile = "3g.40gb";
  SimConfig c = Config(Algorithm::kRota, 2);
  c.cards = {mig, small};
  auto slice = [&](const char* user) {
    SimBooking b = Book(user, 1, kDayOne + 10 * h, kDayOne + 12 * h, true);
    b.mig_profile = "3g.40gb";
    return b;
  };
  SimBooking share = Book("bo", 1, kDayOne + 10 * h, kDayOne + 12 * h, true);
  share.memory = 12288;
  c.bookings = {slice("ana"), share, slice("cy"), slice("dee")};
  const SimResult r = Replay(MakeTrace({zed}), c);
  ASSERT_TRUE(r.has_bookings);
  const BookingMetrics& m = r.bookings;
  EXPECT_EQ(m.confirmed, 3);
  EXPECT_EQ(m.refused_no_room, 1);
  EXPECT_EQ(m.used, 3);
  EXPECT_EQ(m.owner_elsewhere, 0);
  EXPECT_EQ(OutcomeOf(r, 1).cards, std::vector<int>{0});
  EXPECT_EQ(OutcomeOf(r, 3).cards, std::vector<int>{0});
  EXPECT_NE(OutcomeOf(r, 1).mig, OutcomeOf(r, 3).mig);
  EXPECT_GE(OutcomeOf(r, 1).mig, 0);
  EXPECT_EQ(OutcomeOf(r, 2).cards, std::vector<int>{1});
  EXPECT_EQ(OutcomeOf(r, 2).mig, -1);
  EXPECT_DOUBLE_EQ(OutcomeOf(r, 2).per_card, 0.5);
  EXPECT_DOUBLE_EQ(m.booked_gpu_hours, 2 * 0.5 * 2 + 0.5 * 2);
  EXPECT_NEAR(m.used_gpu_hours, 3 * 0.5 * (2.0 - 5.0 / 60), 1e-9);
  EXPECT_NEAR(m.idle_gpu_hours, 3 * 0.5 * 5.0 / 60, 1e-9);
  EXPECT_EQ(m.lent_gpu_hours, 0);
  EXPECT_EQ(m.in_way_gpu_hours, 0);
  ASSERT_EQ(r.outcomes.size(), 1u);
  EXPECT_EQ(r.outcomes[0].start, kDayOne + 12 * h);
}

TEST(SimBookingTest, NoShowIsReleasedAfterTheGraceToAWaitingJob) {
  // 1 GPU. Bob books it [D+10h, D+12h) and does not come. Carol submits at D+9h a 3 h job: it
  // would still run at 10h, so it waits for the booking. At D+10h15m (the 15 m grace) the rules
  // release the booking as a no-show, and carol starts then: wait 1h15m. Released 1h45m.
  const Time h = kHour;
  Trace t = MakeTrace({Whole(kDay + 9 * h, 3 * h, 1, "carol")});
  SimConfig c = Config(Algorithm::kRota, 1);
  c.bookings = {Book("bob", 1, kDayOne + 10 * h, kDayOne + 12 * h, false)};
  SimResult r = Replay(t, c);
  ASSERT_EQ(r.outcomes.size(), 1u);
  EXPECT_EQ(r.outcomes[0].start, kDayOne + 10 * h + 15 * kMinute);
  EXPECT_EQ(r.outcomes[0].start - r.outcomes[0].submit, h + 15 * kMinute);
  const BookingMetrics& m = r.bookings;
  EXPECT_EQ(m.no_shows, 1);
  EXPECT_NEAR(m.released_gpu_hours, 1.75, 1e-9);
  EXPECT_NEAR(m.idle_gpu_hours, 0.25, 1e-9);
  EXPECT_EQ(m.used_gpu_hours, 0);
  EXPECT_EQ(m.lent_gpu_hours, 0);
  // Without the booking carol starts at once.
  EXPECT_EQ(m.avg_wait_without, 0);
  EXPECT_EQ(m.avg_wait_with, static_cast<double>(h + 15 * kMinute));
  EXPECT_EQ(m.others_avg_wait_with, m.avg_wait_with);  // carol made no booking
  EXPECT_EQ(m.others_jobs, 1);
}

TEST(SimBookingTest, HoldMakesAnotherUsersJobWaitUntilTheBookingEnds) {
  // 1 GPU. Bob books it [D+10h, D+12h) and comes: his job runs [10h, 12h - 5m). Carol submits at
  // D+9h a 3 h job, which would collide with the booking: it starts at the booking's end, D+12h
  // (the hold lasts to the end even though bob's work ended 5 m before). Dan's 30 m job at D+9h
  // fits before the booking and runs at once.
  const Time h = kHour;
  Trace t =
      MakeTrace({Whole(kDay + 9 * h, 3 * h, 1, "carol"), Whole(kDay + 9 * h + 60, 30 * kMinute, 1, "dan")});
  SimConfig c = Config(Algorithm::kRota, 1);
  c.bookings = {Book("bob", 1, kDayOne + 10 * h, kDayOne + 12 * h, true)};
  SimResult r = Replay(t, c);
  std::map<std::int64_t, JobOutcome> by_id = ById(r);
  ASSERT_EQ(by_id.size(), 2u);
  EXPECT_EQ(by_id[1].start, kDayOne + 12 * h);  // carol: after the booking, not into it
  EXPECT_GE(by_id[1].start, kDayOne + 12 * h);
  EXPECT_EQ(by_id[2].start, kDayOne + 9 * h + 60);  // dan: before it
  const BookingMetrics& m = r.bookings;
  EXPECT_EQ(m.confirmed, 1);
  EXPECT_EQ(m.used, 1);
  EXPECT_EQ(m.no_shows, 0);
  EXPECT_NEAR(m.used_gpu_hours, 2.0 - 5.0 / 60, 1e-9);
  EXPECT_EQ(m.lent_gpu_hours, 0);
  EXPECT_EQ(m.in_way_gpu_hours, 0);
  EXPECT_EQ(OutcomeOf(r, 1).state, BookingState::kEnded);
}

TEST(SimBookingTest, OwnerBlockedByAJobStartedBeforeTheBookingWasMade) {
  // 1 GPU. Carol's job runs [0, 2D+9h). At D+9h bob books the card for [2D+8h, 2D+10h): the
  // rules place bookings against other bookings only, so it is confirmed although carol's job,
  // started before the booking was made, will still hold the card then. At 2D+8h bob's job
  // cannot start; at 2D+8h15m the rules release the booking as a no-show (the owner was
  // waiting) and his job goes home with it. Carol's run over the hold [2D+8h, 2D+8h15m) is in
  // the way: 0.25 GPU-h; released 1.75; nothing idle.
  const Time h = kHour;
  Trace t = MakeTrace({Whole(0, 2 * kDay + 9 * h, 1, "carol")});
  SimConfig c = Config(Algorithm::kRota, 1);
  c.bookings = {Book("bob", 1, kEpoch + 2 * kDay + 8 * h, kEpoch + 2 * kDay + 10 * h, true, kDayOne + 9 * h)};
  SimResult r = Replay(t, c);
  const BookingMetrics& m = r.bookings;
  EXPECT_EQ(m.confirmed, 1);
  EXPECT_EQ(m.no_shows, 1);
  EXPECT_EQ(m.no_show_owner_blocked, 1);
  EXPECT_NEAR(m.in_way_gpu_hours, 0.25, 1e-9);
  EXPECT_NEAR(m.released_gpu_hours, 1.75, 1e-9);
  EXPECT_EQ(m.used_gpu_hours, 0);
  EXPECT_EQ(m.idle_gpu_hours, 0);
  ASSERT_EQ(r.outcomes.size(), 1u);  // bob's job went home with the booking
  EXPECT_EQ(r.unfinished, 0);
}

TEST(SimBookingTest, OwnersTraceJobOnTheBookedCardCountsAsUse) {
  // 1 GPU. Alice books [D+10h, D+12h) with show = 0 (no booking job), but her own trace job of
  // 1 h arrives at D+10h and runs on the card: as in the daemon, any job of the owner on the
  // booked capacity is the booking used. Ended at 12h; used 1 GPU-h, idle 1; no no-show.
  const Time h = kHour;
  Trace t = MakeTrace({Whole(kDay + 10 * h, h, 1, "alice")});
  SimConfig c = Config(Algorithm::kRota, 1);
  c.bookings = {Book("alice", 1, kDayOne + 10 * h, kDayOne + 12 * h, false)};
  SimResult r = Replay(t, c);
  const BookingMetrics& m = r.bookings;
  EXPECT_EQ(m.used, 1);
  EXPECT_EQ(m.no_shows, 0);
  EXPECT_NEAR(m.used_gpu_hours, 1.0, 1e-9);
  EXPECT_NEAR(m.idle_gpu_hours, 1.0, 1e-9);
  EXPECT_EQ(OutcomeOf(r, 1).state, BookingState::kEnded);
  // Alice is a booker: no "others" in this trace.
  EXPECT_EQ(m.others_jobs, 0);
}

TEST(SimBookingTest, LentIsMeasuredWhenAPreemptibleJobBorrowsTheBooking) {
  // 1 GPU. Bob books [D+10h, D+12h) and comes; carol's explore job (3 h) arrives at D+9h. Where
  // the core lets preemptible jobs borrow booked capacity, carol starts at once on the booked
  // card, is preempted when bob's job needs it and may come back after bob's work ends: her time
  // on the card during the hold is "lent". Where it does not, she waits until the booking ends
  // and nothing is lent. Either way the booked hours add up.
  const Time h = kHour;
  Trace t = MakeTrace({Whole(kDay + 9 * h, 3 * h, 1, "carol", "explore")});
  SimConfig c = Config(Algorithm::kRota, 1);
  c.bookings = {Book("bob", 1, kDayOne + 10 * h, kDayOne + 12 * h, true)};
  SimResult r = Replay(t, c);
  ASSERT_EQ(r.outcomes.size(), 1u);
  const BookingMetrics& m = r.bookings;
  const bool borrowed = r.outcomes[0].start < kDayOne + 10 * h;
  if (borrowed) {
    EXPECT_GT(m.lent_gpu_hours, 0);
    EXPECT_GE(r.preemptions, 1);
  } else {
    EXPECT_EQ(m.lent_gpu_hours, 0);
  }
  EXPECT_EQ(m.used, 1);
  EXPECT_NEAR(
      m.used_gpu_hours + m.lent_gpu_hours + m.in_way_gpu_hours + m.released_gpu_hours + m.idle_gpu_hours,
      m.booked_gpu_hours, 1e-9);
}

TEST(SimBookingTest, NoBookingsChangesNothing) {
  Trace t = HeadOfLineTrace();
  SimConfig c = Config(Algorithm::kRota, 2);
  SimResult a = Replay(t, c);
  EXPECT_FALSE(a.has_bookings);
  // A booking far after the trace, on a cluster where it binds nobody in the trace: the trace's
  // outcomes are the same, and the replay without bookings inside Simulate gives the same waits.
  c.bookings = {Book("zoe", 1, kDayOne + 10 * kHour, kDayOne + 11 * kHour, true)};
  SimResult b = Replay(t, c);
  EXPECT_TRUE(b.has_bookings);
  EXPECT_TRUE(SameOutcomes(a, b));
  EXPECT_EQ(b.bookings.avg_wait_with, b.bookings.avg_wait_without);
  EXPECT_EQ(b.bookings.used, 1);
}

TEST(SimBookingTest, BookingsFromCsv) {
  // Relative trace times: numbers are seconds from the epoch; dates are UTC.
  const std::string csv =
      "user,gpus,start,end,show,made\n"
      "alice,2,122400,129600,1,\n"
      "bob,1,2026-01-06 10:00,2026-01-06 12:00,0,3600\n";
  auto b = ParseBookings(csv, "b.csv", false, kEpoch, kDay);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  ASSERT_EQ(b->size(), 2u);
  // Sorted by made: bob's (epoch + 1 h) before alice's (start - 1 day = epoch + 10 h).
  EXPECT_EQ((*b)[0].user, "bob");
  EXPECT_EQ((*b)[0].made, kEpoch + 3600);
  EXPECT_EQ((*b)[0].start, kDayOne + 10 * kHour);
  EXPECT_FALSE((*b)[0].show);
  EXPECT_EQ((*b)[1].user, "alice");
  EXPECT_EQ((*b)[1].gpus, 2);
  EXPECT_EQ((*b)[1].start, kEpoch + 122400);
  EXPECT_EQ((*b)[1].made, kEpoch + 122400 - kDay);
  EXPECT_TRUE((*b)[1].show);
  // Absolute traces: numbers are Unix seconds.
  auto abs = ParseBookings("user,gpus,start,end,show\nu,1,100,200,1\n", "a.csv", true, kEpoch, kDay);
  ASSERT_TRUE(abs.ok());
  EXPECT_EQ((*abs)[0].start, 100);
  // Errors name the file and line.
  auto bad = ParseBookings("user,gpus,start,end,show\nu,0,1,2,1\n", "x.csv", false, kEpoch, kDay);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("x.csv:2:"), std::string::npos) << bad.status().message();
  EXPECT_FALSE(ParseBookings("user,gpus,start,end\n", "x.csv", false, kEpoch, kDay).ok());
  EXPECT_FALSE(ParseBookings("user,gpus,start,end,show\nu,1,5,2,1\n", "x.csv", false, kEpoch, kDay).ok());
  EXPECT_FALSE(ParseBookings("user,gpus,start,end,show\nu,1,1,2,yes\n", "x.csv", false, kEpoch, kDay).ok());
}

TEST(SimBookingTest, GeneratorIsDeterministicAndWithinItsRanges) {
  std::vector<TraceJob> jobs;
  for (int i = 0; i < 50; ++i) jobs.push_back(Whole(i * 3600 * 4, 600, 1, i % 2 ? "ann" : "ben"));
  Trace t = MakeTrace(jobs);  // 49 x 4 h = 8.17 days
  BookingGenOptions o;
  o.per_day = 2;
  o.no_show = 0.25;
  o.seed = 9;
  std::vector<SimBooking> a = GenerateBookings(t, o, kEpoch);
  std::vector<SimBooking> b = GenerateBookings(t, o, kEpoch);
  ASSERT_EQ(a.size(), 16u);  // round(2 x 8.1667)
  int no_shows = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].user, b[i].user);
    EXPECT_EQ(a[i].start, b[i].start);
    EXPECT_EQ(a[i].end, b[i].end);
    EXPECT_EQ(a[i].show, b[i].show);
    EXPECT_TRUE(a[i].user == "ann" || a[i].user == "ben") << a[i].user;
    EXPECT_GE(a[i].gpus, 1);
    EXPECT_LE(a[i].gpus, 2);
    EXPECT_GE(a[i].end - a[i].start, 2 * kHour);
    EXPECT_LE(a[i].end - a[i].start, 8 * kHour);
    EXPECT_EQ((a[i].end - a[i].start) % (30 * kMinute), 0);
    EXPECT_EQ(a[i].start % (30 * kMinute), 0);
    EXPECT_GE(a[i].start - a[i].made, kDay);
    EXPECT_LT(a[i].start - a[i].made, kDay + 30 * kMinute);
    EXPECT_GE(a[i].made, kEpoch);
    if (i > 0) {
      EXPECT_GE(a[i].made, a[i - 1].made);
    }
    no_shows += !a[i].show;
  }
  EXPECT_GT(no_shows, 0);
  EXPECT_LT(no_shows, 16);
  o.seed = 10;
  std::vector<SimBooking> other = GenerateBookings(t, o, kEpoch);
  bool differs = false;
  for (size_t i = 0; i < other.size() && i < a.size(); ++i) differs = differs || other[i].start != a[i].start;
  EXPECT_TRUE(differs);
  // One user (or none): the bookers are lab members of their own.
  Trace single = MakeTrace({Whole(0, 60, 1, ""), Whole(2 * kDay, 60, 1, "")});
  EXPECT_EQ(BookingUsers(single), (std::vector<std::string>{"booker-1", "booker-2", "booker-3", "booker-4"}));
}

TEST(SimBookingTest, PhillySliceAccountsForEveryBookedHour) {
  TraceOptions options;
  options.format = "philly";
  auto loaded = LoadTrace(ROTA_SOURCE_DIR "/data/traces/philly-ed69ec.csv", options);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  BookingGenOptions gen;
  gen.per_day = 4;
  gen.no_show = 0.2;
  gen.seed = 1;
  SimConfig c;
  c.gpus = 8;
  c.gpus_per_node = 8;
  c.keep_outcomes = true;
  c.bookings = GenerateBookings(*loaded, gen, c.epoch);
  ASSERT_GT(c.bookings.size(), 200u);
  SimConfig plain = c;
  plain.bookings.clear();
  SimResult base = Replay(*loaded, plain);
  SimResult r = Replay(*loaded, c);
  const BookingMetrics& m = r.bookings;
  EXPECT_EQ(r.metrics.jobs + r.rejected + r.unfinished, 1137);
  EXPECT_EQ(m.requested, static_cast<std::int64_t>(c.bookings.size()));
  EXPECT_EQ(m.confirmed + m.refused, m.requested);
  EXPECT_GT(m.confirmed, 0);
  EXPECT_NEAR(
      m.used_gpu_hours + m.released_gpu_hours + m.lent_gpu_hours + m.in_way_gpu_hours + m.idle_gpu_hours,
      m.booked_gpu_hours, 1e-6);
  EXPECT_GT(m.used_gpu_hours, 0);
  EXPECT_EQ(m.avg_wait_without, base.metrics.avg_wait);  // the second replay is the plain one
  EXPECT_EQ(m.avg_wait_with, r.metrics.avg_wait);
  // Trace jobs still run exactly their durations; booking jobs are not among them.
  for (const JobOutcome& o : r.outcomes) {
    ASSERT_LE(o.id, 1137);
    EXPECT_EQ(o.end - o.start, loaded->jobs[o.id - 1].duration);
  }
}

}  // namespace
}  // namespace simulator_test
}  // namespace rota::sim
