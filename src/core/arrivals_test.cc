// Tests of the arrivals foreseen for start forecasts: the last period's jobs again, shifted by whole
// periods up to the horizon, in submit order, with fresh ids and no dependencies.
#include "core/arrivals.h"

#include <gtest/gtest.h>

#include "testing/builders.h"

namespace rota {
namespace arrivals_test {
namespace {

constexpr Time kNow = 1704067200 + 2 * kDay + 11 * kHour;

TEST(Arrivals, TheLastPeriodComesAgainUpToTheHorizon) {
  std::vector<Job> recent = {
      testing::MakeJob(1, "old", 1, kHour, kNow - kDay),                      // a period ago: not again now
      testing::MakeJob(2, "ann", 2, 3 * kHour, kNow - 20 * kHour),            // again at now + 4 h, + 28 h
      testing::MakeJob(3, "bob", 1, kHour, kNow - 2 * kHour, Tier::kThesis),  // at + 22 h, + 46 h
      testing::MakeJob(4, "now", 1, kHour, kNow),                             // at + 24 h, + 48 h
      testing::MakeJob(5, "next", 1, kHour, kNow + 1),                        // not yet come: not in it
  };
  recent[1].after = {1};
  recent[1].after_ok = {1};
  recent[1].project = "vision";
  ArrivalOptions o;
  o.period = kDay;
  o.horizon = 2 * kDay;
  const std::vector<Job> a = RepeatArrivals(recent, kNow, 100, o);
  ASSERT_EQ(a.size(), 6u);
  EXPECT_EQ(a[0].submit_time, kNow + 4 * kHour);
  EXPECT_EQ(a[1].submit_time, kNow + 22 * kHour);
  EXPECT_EQ(a[2].submit_time, kNow + 24 * kHour);
  EXPECT_EQ(a[3].submit_time, kNow + 28 * kHour);
  EXPECT_EQ(a[4].submit_time, kNow + 46 * kHour);
  EXPECT_EQ(a[5].submit_time, kNow + 48 * kHour);
  EXPECT_EQ(a[2].user, "now");
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].id, static_cast<JobId>(100 + i));
  EXPECT_EQ(a[0].user, "ann");
  EXPECT_EQ(a[0].project, "vision");
  EXPECT_EQ(a[0].request.gpus, 2);
  EXPECT_EQ(a[0].time_limit, 3 * kHour);
  EXPECT_TRUE(a[0].after.empty());
  EXPECT_TRUE(a[0].after_ok.empty());
  EXPECT_EQ(a[1].user, "bob");
  EXPECT_EQ(a[1].tier, Tier::kThesis);
}

TEST(Arrivals, NoHorizonNoArrivals) {
  const std::vector<Job> recent = {testing::MakeJob(1, "ann", 1, kHour, kNow - kHour)};
  ArrivalOptions o;
  o.horizon = 0;
  EXPECT_TRUE(RepeatArrivals(recent, kNow, 100, o).empty());
  // A horizon shorter than the shift: the job would come back after it.
  o.period = kDay;
  o.horizon = 22 * kHour;
  EXPECT_TRUE(RepeatArrivals(recent, kNow, 100, o).empty());
  o.horizon = 23 * kHour;
  EXPECT_EQ(RepeatArrivals(recent, kNow, 100, o).size(), 1u);
}

TEST(Arrivals, OnlyWhereLaterJobsMayGoFirst) {
  Policy p;
  p.algorithm = Algorithm::kRota;
  EXPECT_TRUE(ArrivalsOvertake(p));
  p.algorithm = Algorithm::kFifo;
  EXPECT_FALSE(ArrivalsOvertake(p));
  p.algorithm = Algorithm::kBackfill;
  EXPECT_FALSE(ArrivalsOvertake(p));
}

}  // namespace
}  // namespace arrivals_test
}  // namespace rota
