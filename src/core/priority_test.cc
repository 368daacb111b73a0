#include "core/priority.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "core/scheduler.h"
#include "testing/builders.h"
#include "testing/zones.h"

namespace rota {
namespace priority_test {
namespace {

// 2024-01-01 00:00 UTC, a Monday (19723 days after the Thursday 1970-01-01).
constexpr Time kMon = 1704067200;
constexpr Time At(int day, int hour, int minute = 0) {  // day 0 = Monday of that week, UTC
  return kMon + day * kDay + hour * kHour + minute * kMinute;
}

// Fixed round numbers for the age factor, so the hand-computed values below do not move with the
// tuned defaults: age reaches 1 after a day, weight 1000.
Policy WithRoundAge(Policy p) {
  p.age_max = kDay;
  p.weights.age = 1000;
  return p;
}

Policy QuietPolicy() {
  Policy p = WithRoundAge(Policy{});
  p.time_of_day = {};  // no time-of-day multiplier unless a test sets one
  return p;
}

using testing::MakeJob;

ClusterState Cards(int n) {
  ClusterState s;
  s.gpus = testing::Cards(n);
  return s;
}

// ---- Time of day -------------------------------------------------------------------------

TEST(TimeOfDayTest, DefaultTable) {
  Policy p;  // weekdays 14:00-18:00 x0.5; every night 22:00-08:00 x1.5
  EXPECT_DOUBLE_EQ(TimeOfDayFactor(p, At(0, 12)), 1.0);      // Monday noon
  EXPECT_DOUBLE_EQ(TimeOfDayFactor(p, At(0, 14)), 0.5);      // start is inclusive
  EXPECT_DOUBLE_EQ(TimeOfDayFactor(p, At(0, 15)), 0.5);
  EXPECT_DOUBLE_EQ(TimeOfDayFactor(p, At(0, 17, 59)), 0.5);
  EXPECT_DOUBLE_EQ(TimeOfDayFactor(p, At(0, 18)), 1.0);      // end is exclusive
  EXPECT_DOUBLE_EQ(TimeOfDayFactor(p, At(4, 15)), 0.5);      // Friday
  EXPECT_DOUBLE_EQ(TimeOfDayFactor(p, At(5, 15)), 1.0);      // Saturday: not a weekday
  EXPECT_DOUBLE_EQ(TimeOfDayFactor(p, At(6, 15)), 1.0);      // Sunday
  EXPECT_DOUBLE_EQ(TimeOfDayFactor(p, At(0, 22)), 1.5);      // night starts
  EXPECT_DOUBLE_EQ(TimeOfDayFactor(p, At(0, 23)), 1.5);
  EXPECT_DOUBLE_EQ(TimeOfDayFactor(p, At(1, 3)), 1.5);       // after midnight
  EXPECT_DOUBLE_EQ(TimeOfDayFactor(p, At(1, 7, 59)), 1.5);
  EXPECT_DOUBLE_EQ(TimeOfDayFactor(p, At(1, 8)), 1.0);
  EXPECT_DOUBLE_EQ(TimeOfDayFactor(p, At(5, 23)), 1.5);      // nights include weekends
  EXPECT_DOUBLE_EQ(TimeOfDayFactor(p, At(0, 3)), 1.5);       // Monday 03:00: Sunday's night
}

TEST(TimeOfDayTest, EmptyTableIsAlwaysOne) {
  Policy p = QuietPolicy();
  for (int h = 0; h < 24; ++h) EXPECT_DOUBLE_EQ(TimeOfDayFactor(p, At(0, h)), 1.0);
}

TEST(TimeOfDayTest, WrapPastMidnightBelongsToTheStartDay) {
  Policy p;
  p.time_of_day = {{1u << 4, 22 * 60, 6 * 60, 2.0}};  // Friday 22:00 to Saturday 06:00
  EXPECT_DOUBLE_EQ(TimeOfDayFactor(p, At(4, 23)), 2.0);  // Friday 23:00
  EXPECT_DOUBLE_EQ(TimeOfDayFactor(p, At(5, 3)), 2.0);   // Saturday 03:00: Friday's window
  EXPECT_DOUBLE_EQ(TimeOfDayFactor(p, At(5, 6)), 1.0);   // Saturday 06:00: over
  EXPECT_DOUBLE_EQ(TimeOfDayFactor(p, At(5, 23)), 1.0);  // Saturday night: not set
  EXPECT_DOUBLE_EQ(TimeOfDayFactor(p, At(4, 3)), 1.0);   // Friday 03:00 belongs to Thursday
  EXPECT_DOUBLE_EQ(TimeOfDayFactor(p, At(4, 12)), 1.0);  // between the parts

  p.time_of_day = {{1u << 6, 22 * 60, 6 * 60, 2.0}};  // Sunday night into Monday
  EXPECT_DOUBLE_EQ(TimeOfDayFactor(p, At(7, 2)), 2.0);   // Monday 02:00 (next week)
  EXPECT_DOUBLE_EQ(TimeOfDayFactor(p, At(0, 2)), 2.0);   // this week's Monday 02:00 too
  EXPECT_DOUBLE_EQ(TimeOfDayFactor(p, At(6, 2)), 1.0);   // Sunday 02:00 is Saturday's
}

TEST(TimeOfDayTest, WeekdayMask) {
  Policy p;
  p.time_of_day = {{(1u << 1) | (1u << 3), 9 * 60, 10 * 60, 3.0}};  // Tuesday and Thursday 9-10
  EXPECT_DOUBLE_EQ(TimeOfDayFactor(p, At(0, 9, 30)), 1.0);
  EXPECT_DOUBLE_EQ(TimeOfDayFactor(p, At(1, 9, 30)), 3.0);
  EXPECT_DOUBLE_EQ(TimeOfDayFactor(p, At(2, 9, 30)), 1.0);
  EXPECT_DOUBLE_EQ(TimeOfDayFactor(p, At(3, 9, 30)), 3.0);
  EXPECT_DOUBLE_EQ(TimeOfDayFactor(p, At(4, 9, 30)), 1.0);
}

TEST(TimeOfDayTest, FirstMatchingRuleWins) {
  Policy p;
  p.time_of_day = {{0x7f, 10 * 60, 12 * 60, 0.25}, {0x7f, 9 * 60, 17 * 60, 0.75}};
  EXPECT_DOUBLE_EQ(TimeOfDayFactor(p, At(2, 11)), 0.25);
  EXPECT_DOUBLE_EQ(TimeOfDayFactor(p, At(2, 9, 30)), 0.75);
  EXPECT_DOUBLE_EQ(TimeOfDayFactor(p, At(2, 16)), 0.75);
}

TEST(TimeOfDayTest, UtcOffset) {
  Policy p;
  p.zone = 3600;  // UTC+1: 13:00 UTC is 14:00 local
  EXPECT_DOUBLE_EQ(TimeOfDayFactor(p, At(0, 13)), 0.5);
  EXPECT_DOUBLE_EQ(TimeOfDayFactor(p, At(0, 17)), 1.0);  // 18:00 local
  p.zone = -5 * 3600;  // UTC-5
  EXPECT_DOUBLE_EQ(TimeOfDayFactor(p, At(0, 19)), 0.5);  // 14:00 local Monday
  EXPECT_DOUBLE_EQ(TimeOfDayFactor(p, At(1, 1)), 1.0);   // Monday 20:00 local
  p.zone = -10 * 3600;
  // Saturday 00:30 UTC is Friday 14:30 local: the weekday is the local one.
  EXPECT_DOUBLE_EQ(TimeOfDayFactor(p, At(5, 0, 30)), 0.5);
  // Monday 15:00 UTC is Monday 05:00 local: night.
  EXPECT_DOUBLE_EQ(TimeOfDayFactor(p, At(0, 15)), 1.5);
}

TEST(NextTimeOfDayChangeTest, DefaultTable) {
  Policy p;
  EXPECT_EQ(NextTimeOfDayChange(p, At(0, 12)), At(0, 14));
  EXPECT_EQ(NextTimeOfDayChange(p, At(0, 13, 59) + 30), At(0, 14));  // mid-minute
  EXPECT_EQ(NextTimeOfDayChange(p, At(0, 14)), At(0, 18));           // exactly at a boundary
  EXPECT_EQ(NextTimeOfDayChange(p, At(0, 19)), At(0, 22));
  EXPECT_EQ(NextTimeOfDayChange(p, At(0, 23)), At(1, 0));  // midnight: the weekday changes
  EXPECT_EQ(NextTimeOfDayChange(p, At(1, 0)), At(1, 8));
  EXPECT_EQ(NextTimeOfDayChange(p, At(1, 9)), At(1, 14));
}

TEST(NextTimeOfDayChangeTest, EmptyTableNever) {
  EXPECT_EQ(NextTimeOfDayChange(QuietPolicy(), At(0, 12)), kNever);
}

TEST(NextTimeOfDayChangeTest, UtcOffset) {
  Policy p;
  p.zone = 3600;
  EXPECT_EQ(NextTimeOfDayChange(p, At(0, 12)), At(0, 13));  // 14:00 local
  p.zone = 19800;  // UTC+5:30: 14:00 local is 08:30 UTC
  EXPECT_EQ(NextTimeOfDayChange(p, At(0, 7)), At(0, 8, 30));
}

// The factor is constant from any instant until the next change NextTimeOfDayChange reports.
TEST(NextTimeOfDayChangeTest, FactorConstantUntilTheReportedChange) {
  for (int offset : {0, 3600, -5 * 3600, 19800}) {
    Policy p;
    p.zone = offset;
    p.time_of_day.push_back({1u << 4, 23 * 60, 1 * 60, 2.0});  // Friday 23:00 - Saturday 01:00
    for (Time t = At(0, 0); t < At(7, 0); t += 37 * kMinute) {
      Time next = NextTimeOfDayChange(p, t);
      ASSERT_GT(next, t);
      ASSERT_LE(next, t + kDay);
      double f = TimeOfDayFactor(p, t);
      for (Time x = t; x < next; x += kMinute) {
        ASSERT_DOUBLE_EQ(TimeOfDayFactor(p, x), f) << "offset " << offset << " t " << t << " x " << x;
      }
    }
  }
}

// Peak hours are wall-clock hours: Monday to Friday 14:00-18:00 local, in Berlin 12:00-16:00 UTC
// in summer and 13:00-17:00 in winter, in New York 18:00-22:00 UTC in summer and 19:00-23:00 in
// winter; the weeks around each change in 2026 keep them.
TEST(TimeOfDayTest, PeakHoursFollowDaylightSaving) {
  using testing::Utc;
  Policy berlin;
  berlin.zone = testing::Berlin();
  EXPECT_DOUBLE_EQ(TimeOfDayFactor(berlin, Utc(2026, 3, 27, 13, 30)), 0.5);  // Friday, CET: 14:30
  EXPECT_DOUBLE_EQ(TimeOfDayFactor(berlin, Utc(2026, 3, 27, 12, 30)), 1.0);  // 13:30
  EXPECT_DOUBLE_EQ(TimeOfDayFactor(berlin, Utc(2026, 3, 30, 12, 30)), 0.5);  // Monday, CEST: 14:30
  EXPECT_DOUBLE_EQ(TimeOfDayFactor(berlin, Utc(2026, 3, 30, 16, 30)), 1.0);  // 18:30
  EXPECT_EQ(NextTimeOfDayChange(berlin, Utc(2026, 3, 30, 11)), Utc(2026, 3, 30, 12));
  EXPECT_EQ(NextTimeOfDayChange(berlin, Utc(2026, 10, 26, 11)), Utc(2026, 10, 26, 13));
  Policy ny;
  ny.zone = testing::NewYork();
  EXPECT_DOUBLE_EQ(TimeOfDayFactor(ny, Utc(2026, 3, 6, 18, 30)), 1.0);  // Friday, EST: 13:30
  EXPECT_DOUBLE_EQ(TimeOfDayFactor(ny, Utc(2026, 3, 9, 18, 30)), 0.5);  // Monday, EDT: 14:30
  EXPECT_DOUBLE_EQ(TimeOfDayFactor(ny, Utc(2026, 11, 2, 18, 30)), 1.0);  // Monday, EST: 13:30
  EXPECT_EQ(NextTimeOfDayChange(ny, Utc(2026, 11, 2, 15)), Utc(2026, 11, 2, 19));
  // Nights (22:00-08:00, every day) across the spring change: the night of 28-29 March is an
  // hour shorter, and ends at 08:00 CEST.
  EXPECT_EQ(NextTimeOfDayChange(berlin, Utc(2026, 3, 28, 22)), Utc(2026, 3, 28, 23));  // midnight
  EXPECT_EQ(NextTimeOfDayChange(berlin, Utc(2026, 3, 29, 2)), Utc(2026, 3, 29, 6));    // 08:00 CEST
}

// The factor is constant from any instant until the next change NextTimeOfDayChange reports, in
// zones with daylight saving too, with a rule whose ends fall in the skipped and the repeated
// hour (02:30), over the weeks around each change.
TEST(NextTimeOfDayChangeTest, FactorConstantUntilTheReportedChangeAcrossDaylightSaving) {
  using testing::Utc;
  for (const Zone& zone : {testing::Berlin(), testing::NewYork()}) {
    Policy p;
    p.zone = zone;
    // Before the default nights (22:00-08:00), which would otherwise cover it.
    p.time_of_day.insert(p.time_of_day.begin(), {0x7f, 2 * 60 + 30, 5 * 60, 3.0});  // every day 02:30 - 05:00
    for (Time from : {Utc(2026, 3, 4, 0), Utc(2026, 3, 25, 0), Utc(2026, 10, 21, 0), Utc(2026, 10, 28, 0)}) {
      for (Time t = from; t < from + kWeek; t += 37 * kMinute) {
        const Time next = NextTimeOfDayChange(p, t);
        ASSERT_GT(next, t);
        ASSERT_LE(next, t + 25 * kHour);
        const double f = TimeOfDayFactor(p, t);
        for (Time x = t; x < next; x += kMinute) {
          ASSERT_DOUBLE_EQ(TimeOfDayFactor(p, x), f) << zone.name() << " t " << t << " x " << x;
        }
      }
    }
  }
}

TEST(IsHeavyTest, GpusOrTime) {
  Policy p;  // heavy: >= 2 GPUs or a limit >= 4 h
  Job j = MakeJob(1, "u", 1, kHour, 0);
  EXPECT_FALSE(IsHeavy(j, 1, p));
  EXPECT_TRUE(IsHeavy(j, 2, p));
  EXPECT_FALSE(IsHeavy(j, 1.5, p));
  j.time_limit = 4 * kHour;
  EXPECT_TRUE(IsHeavy(j, 1, p));
  EXPECT_TRUE(IsHeavy(j, 0.25, p));  // a long share
  j.time_limit = 4 * kHour - 1;
  EXPECT_FALSE(IsHeavy(j, 1, p));
}

// ---- Factors, one at a time ----------------------------------------------------------------

// A state with one pending job of `user`, no usage: fair share 1.
struct One {
  ClusterState state = Cards(4);
  Policy policy = QuietPolicy();
  Time now = At(2, 11);  // Wednesday 11:00
};

TEST(FactorsTest, Tier) {
  One o;
  o.state.pending.push_back(MakeJob(1, "u", 1, kHour, o.now));
  PriorityModel m(o.state, o.policy, o.now);
  Job j = o.state.pending[0];
  j.tier = Tier::kExplore;
  EXPECT_DOUBLE_EQ(m.Factors(j, 1, false).tier, 0.0);
  j.tier = Tier::kRegular;
  EXPECT_DOUBLE_EQ(m.Factors(j, 1, false).tier, 0.5);
  j.tier = Tier::kThesis;
  EXPECT_DOUBLE_EQ(m.Factors(j, 1, false).tier, 1.0);
  EXPECT_DOUBLE_EQ(m.Factors(j, 1, /*as_explore=*/true).tier, 0.0);  // over quota: explore
}

TEST(FactorsTest, PriorityIsTheWeightedSum) {
  One o;
  o.policy.size_max_gpu_hours = 3;  // 1 GPU-h: size = 1 - log 2 / log 4 = 0.5
  o.state.penalty["u"] = 0.25;
  // Submitted 12 h ago: age 0.5 of the 1-day cap.
  o.state.pending.push_back(MakeJob(1, "u", 1, kHour, o.now - 12 * kHour));
  PriorityModel m(o.state, o.policy, o.now);
  PriorityFactors f = m.Factors(o.state.pending[0], 1, false);
  EXPECT_DOUBLE_EQ(f.tier, 0.5);
  EXPECT_DOUBLE_EQ(f.fairshare, 1.0);  // no usage anywhere
  EXPECT_DOUBLE_EQ(f.age, 0.5);
  EXPECT_NEAR(f.size, 0.5, 1e-12);
  EXPECT_DOUBLE_EQ(f.penalty, 0.25);
  EXPECT_DOUBLE_EQ(f.time_of_day, 1.0);
  // 10000*0.5 + 1*(1000*1 + 1000*0.5 + 1000*0.5) - 1000*0.25 = 5000 + 2000 - 250 = 6750.
  EXPECT_NEAR(f.priority, 6750, 1e-6);
}

TEST(FactorsTest, FairShareKnownNumbers) {
  One o;
  Usage a, b;
  a.decayed_gpu_seconds = 3000;
  a.as_of = o.now;
  b.decayed_gpu_seconds = 1000;
  b.as_of = o.now;
  o.state.user_usage = {{"alice", a}, {"bob", b}};
  o.state.pending.push_back(MakeJob(1, "alice", 1, kHour, o.now));
  {
    PriorityModel m(o.state, o.policy, o.now);
    // Two accounts, S = 1/2 each. alice U = 3/4: 2^-(0.75/0.5) = 2^-1.5 = 0.3535533906;
    // bob U = 1/4: 2^-0.5 = 0.7071067812.
    EXPECT_NEAR(m.UserFairShare("alice"), 0.35355339059327373, 1e-12);
    EXPECT_NEAR(m.UserFairShare("bob"), 0.7071067811865476, 1e-12);
    EXPECT_DOUBLE_EQ(m.UserFairShare("nobody"), 1.0);  // unknown accounts rank as unused
    EXPECT_NEAR(m.Factors(o.state.pending[0], 1, false).fairshare, 0.35355339059327373, 1e-12);
  }
  // carol's pending job makes her a third account with no usage: S = 1/3.
  // alice 2^-(0.75*3) = 2^-2.25 = 0.2102241038; bob 2^-(0.25*3) = 2^-0.75 = 0.5946035575; carol 1.
  o.state.pending.push_back(MakeJob(2, "carol", 1, kHour, o.now));
  PriorityModel m(o.state, o.policy, o.now);
  EXPECT_NEAR(m.UserFairShare("alice"), 0.21022410381342863, 1e-12);
  EXPECT_NEAR(m.UserFairShare("bob"), 0.5946035575013605, 1e-12);
  EXPECT_DOUBLE_EQ(m.UserFairShare("carol"), 1.0);
}

TEST(FactorsTest, FairShareUsesDecayedUsageAndRunningJobs) {
  One o;
  Usage a, b;
  a.decayed_gpu_seconds = 6000;  // one half-life ago: worth 3000 now
  a.as_of = o.now - o.policy.fairshare_half_life;
  b.decayed_gpu_seconds = 1000;
  b.as_of = o.now;
  o.state.user_usage = {{"alice", a}, {"bob", b}};
  // bob runs 1 GPU since 2000 s ago: 1000 + 2000 = 3000, same as alice: both 2^-1 = 0.5.
  RunningJob r;
  r.job = MakeJob(9, "bob", 1, kHour, o.now - 3000);
  r.alloc.gpus = {0};
  r.start_time = o.now - 2000;
  o.state.running.push_back(r);
  PriorityModel m(o.state, o.policy, o.now);
  EXPECT_NEAR(m.UserFairShare("alice"), 0.5, 1e-12);
  EXPECT_NEAR(m.UserFairShare("bob"), 0.5, 1e-12);
}

TEST(FactorsTest, FairShareProjectAndHybridModes) {
  One o;
  Usage heavy;
  heavy.decayed_gpu_seconds = 1000;
  heavy.as_of = o.now;
  Usage none;
  o.state.user_usage = {{"alice", heavy}, {"bob", none}};      // users: alice 2^-2 = 0.25, bob 1
  o.state.project_usage = {{"nlp", none}, {"vision", heavy}};  // projects: nlp 1, vision 0.25
  Job j = MakeJob(1, "alice", 1, kHour, o.now);
  j.project = "nlp";
  o.state.pending.push_back(j);

  o.policy.mode = AccountMode::kUser;
  EXPECT_NEAR(PriorityModel(o.state, o.policy, o.now).Factors(j, 1, false).fairshare, 0.25, 1e-12);
  o.policy.mode = AccountMode::kProject;
  EXPECT_NEAR(PriorityModel(o.state, o.policy, o.now).Factors(j, 1, false).fairshare, 1.0, 1e-12);
  o.policy.mode = AccountMode::kHybrid;  // the mean: (0.25 + 1) / 2
  EXPECT_NEAR(PriorityModel(o.state, o.policy, o.now).Factors(j, 1, false).fairshare, 0.625, 1e-12);
}

TEST(FactorsTest, AgeCap) {
  One o;
  o.state.pending.push_back(MakeJob(1, "u", 1, kHour, 0));
  PriorityModel m(o.state, o.policy, o.now);
  Job j = o.state.pending[0];
  j.submit_time = o.now;
  EXPECT_DOUBLE_EQ(m.Factors(j, 1, false).age, 0.0);
  j.submit_time = o.now - 6 * kHour;
  EXPECT_DOUBLE_EQ(m.Factors(j, 1, false).age, 0.25);
  j.submit_time = o.now - kDay;
  EXPECT_DOUBLE_EQ(m.Factors(j, 1, false).age, 1.0);
  j.submit_time = o.now - 5 * kDay;
  EXPECT_DOUBLE_EQ(m.Factors(j, 1, false).age, 1.0);  // capped
  j.submit_time = o.now + kHour;
  EXPECT_DOUBLE_EQ(m.Factors(j, 1, false).age, 0.0);  // never negative

  o.policy.age_max = 0;  // age disabled
  PriorityModel m0(o.state, o.policy, o.now);
  j.submit_time = o.now - kDay;
  EXPECT_DOUBLE_EQ(m0.Factors(j, 1, false).age, 0.0);
}

TEST(FactorsTest, SizeSmallFirst) {
  One o;
  o.state.pending.push_back(MakeJob(1, "u", 1, kHour, o.now));
  PriorityModel m(o.state, o.policy, o.now);
  Job j = o.state.pending[0];
  // 1 GPU-h with the 256 GPU-h default: 1 - ln 2 / ln 257 = 1 - 0.693147/5.549076 = 0.875088.
  EXPECT_NEAR(m.Factors(j, 1, false).size, 0.8750879, 1e-6);
  j.time_limit = 64 * kHour;  // 4 GPUs x 64 h = 256 GPU-h: 0
  EXPECT_NEAR(m.Factors(j, 4, false).size, 0.0, 1e-12);
  j.time_limit = 1000 * kHour;  // larger: clamped at 0
  EXPECT_DOUBLE_EQ(m.Factors(j, 8, false).size, 0.0);
  j.time_limit = 0;
  EXPECT_DOUBLE_EQ(m.Factors(j, 1, false).size, 1.0);
  // Fractions count: a quarter card for 1 h = 0.25 GPU-h ranks above a whole card.
  j.time_limit = kHour;
  EXPECT_GT(m.Factors(j, 0.25, false).size, m.Factors(j, 1, false).size);
}

TEST(FactorsTest, Penalty) {
  One o;
  o.state.pending.push_back(MakeJob(1, "u", 1, kHour, o.now));
  o.state.penalty = {{"u", 0.4}, {"big", 3.0}, {"neg", -1.0}};
  PriorityModel m(o.state, o.policy, o.now);
  Job j = o.state.pending[0];
  PriorityFactors base = m.Factors(MakeJob(2, "clean", 1, kHour, o.now), 1, false);
  PriorityFactors pen = m.Factors(j, 1, false);
  EXPECT_DOUBLE_EQ(pen.penalty, 0.4);
  EXPECT_NEAR(base.priority - pen.priority, 400, 1e-9);  // w_penalty 1000 * 0.4
  j.user = "big";
  EXPECT_DOUBLE_EQ(m.Factors(j, 1, false).penalty, 1.0);  // clamped
  j.user = "neg";
  EXPECT_DOUBLE_EQ(m.Factors(j, 1, false).penalty, 0.0);
}

TEST(FactorsTest, TimeOfDayMultipliesTheNonTierPartOfHeavyJobsOnly) {
  One o;
  o.policy = WithRoundAge(Policy{});  // the default table
  o.policy.weights.size = 0;
  o.now = At(0, 15);  // Monday 15:00: x0.5
  Job heavy = MakeJob(1, "u", 2, kHour, o.now - 12 * kHour);
  Job light = MakeJob(2, "u", 1, kHour, o.now - 12 * kHour);
  o.state.pending = {heavy, light};
  PriorityModel m(o.state, o.policy, o.now);
  PriorityFactors h = m.Factors(heavy, 2, false);
  PriorityFactors l = m.Factors(light, 1, false);
  EXPECT_DOUBLE_EQ(h.time_of_day, 0.5);
  EXPECT_DOUBLE_EQ(l.time_of_day, 1.0);
  // heavy: 5000 + 0.5 * (1000 * 1 + 1000 * 0.5) = 5750; light: 5000 + 1500 = 6500.
  EXPECT_NEAR(h.priority, 5750, 1e-6);
  EXPECT_NEAR(l.priority, 6500, 1e-6);
  // The tier term is outside the multiplier: a heavy thesis job still outranks a light regular one.
  heavy.tier = Tier::kThesis;
  EXPECT_NEAR(m.Factors(heavy, 2, false).priority, 10000 + 750, 1e-6);

  PriorityModel night(o.state, o.policy, At(0, 23));  // x1.5
  PriorityFactors hn = night.Factors(MakeJob(1, "u", 2, kHour, At(0, 23) - 12 * kHour), 2, false);
  EXPECT_DOUBLE_EQ(hn.time_of_day, 1.5);
  EXPECT_NEAR(hn.priority, 5000 + 1.5 * 1500, 1e-6);
}

// ---- Ordering consequences, through Schedule() --------------------------------------------

std::vector<JobId> PendingOrder(const Decisions& d) {
  std::vector<JobId> ids;
  for (const PendingInfo& p : d.pending) ids.push_back(p.job);
  return ids;
}

// Both cards busy with non-preemptible jobs, so every pending job waits and is listed in order.
ClusterState BusyTwoCards(Time now) {
  ClusterState s = Cards(2);
  for (int i = 0; i < 2; ++i) {
    RunningJob r;
    r.job = MakeJob(100 + i, "other", 1, 10 * kHour, now - kHour);
    r.alloc.gpus = {i};
    r.start_time = now - kHour;
    s.running.push_back(r);
  }
  return s;
}

TEST(OrderingTest, TierBeatsEverythingElse) {
  Time now = At(2, 11);
  ClusterState s = BusyTwoCards(now);
  Policy p = QuietPolicy();
  s.pending.push_back(MakeJob(1, "u", 1, kHour, now - 5 * kDay, Tier::kRegular));  // old
  s.pending.push_back(MakeJob(2, "v", 1, kHour, now, Tier::kThesis));               // new
  s.pending.push_back(MakeJob(3, "w", 1, kHour, now - 5 * kDay, Tier::kExplore));
  Decisions d = Schedule(s, p, now);
  EXPECT_EQ(PendingOrder(d), (std::vector<JobId>{2, 1, 3}));
}

TEST(OrderingTest, FairShareRanksTheLighterUserFirst) {
  Time now = At(2, 11);
  ClusterState s = BusyTwoCards(now);
  Policy p = QuietPolicy();
  Usage used;
  used.decayed_gpu_seconds = 36000;
  used.as_of = now;
  s.user_usage["heavy"] = used;
  s.pending.push_back(MakeJob(1, "heavy", 1, kHour, now - kHour));
  s.pending.push_back(MakeJob(2, "light", 1, kHour, now));  // younger, but has used nothing
  Decisions d = Schedule(s, p, now);
  EXPECT_EQ(PendingOrder(d), (std::vector<JobId>{2, 1}));
}

TEST(OrderingTest, HeavyJobsYieldInTheAfternoonAndGainAtNight) {
  Policy p;  // default time-of-day table
  p.weights.size = 0;  // only the time of day separates the two jobs
  for (auto [now, first] : {std::pair<Time, JobId>{At(0, 15), 2},    // peak: the light job first
                            std::pair<Time, JobId>{At(0, 23), 1},    // night: the heavy job first
                            std::pair<Time, JobId>{At(0, 11), 1}}) {  // neutral: tie, lower id
    ClusterState s = BusyTwoCards(now);
    s.pending.push_back(MakeJob(1, "u", 1, 5 * kHour, now - kHour));  // heavy by its limit
    s.pending.push_back(MakeJob(2, "u", 1, kHour, now - kHour));      // light
    Decisions d = Schedule(s, p, now);
    ASSERT_EQ(d.pending.size(), 2u);
    EXPECT_EQ(d.pending[0].job, first) << "now " << now;
  }
}

}  // namespace
}  // namespace priority_test
}  // namespace rota
