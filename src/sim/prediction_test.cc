// Tests of the forecast figures: medians over the known estimates, the p90's coverage, the
// samples that waited.
#include "sim/prediction.h"

#include <gtest/gtest.h>

namespace rota::sim {
namespace prediction_test {
namespace {

PredictionRecord Rec(Time at, Time limit_plan, Time forecast, Time p90, Time actual) {
  PredictionRecord r;
  r.at = at;
  r.limit_plan = limit_plan;
  r.forecast = forecast;
  r.p90 = p90;
  r.actual = actual;
  return r;
}

TEST(PredictionMetrics, MediansCoverageAndWaits) {
  std::vector<PredictionRecord> rs = {
      Rec(0, 1000, 100, 200, 100),         // waited 100: on limits off by 900, forecast exact, covered
      Rec(0, 3000, 500, 400, 700),         // off by 2300 and 200; the p90 missed
      Rec(10, 10, 10, 10, 10),             // started at once: every estimate right
      Rec(0, 4000, 3000, 3000, 3000),      // waited 3000: off by 1000 on limits, forecast exact
      Rec(0, kNever, kNever, kNever, 50),  // nothing foreseen: an unknown, and a miss
      Rec(0, 100, 100, 100, kNever),       // never started: not counted
  };
  const PredictionMetrics m = ComputePredictionMetrics(rs);
  EXPECT_EQ(m.samples, 5);
  EXPECT_EQ(m.unknown_limit, 1);
  EXPECT_EQ(m.unknown_forecast, 1);
  EXPECT_EQ(m.error_limit, 900);   // of 0, 900, 1000, 2300
  EXPECT_EQ(m.error_forecast, 0);  // of 0, 0, 0, 200
  EXPECT_DOUBLE_EQ(m.p90_coverage, 3.0 / 5);
  EXPECT_EQ(m.p90_ahead, 200);    // of 0, 200, 400, 3000 (nearest rank: the lower of the middle two)
  EXPECT_EQ(m.actual_wait, 100);  // of 0, 50, 100, 700, 3000
  EXPECT_EQ(m.waited, 4);
  EXPECT_EQ(m.waited_error_limit, 1000);  // of 900, 1000, 2300
  EXPECT_EQ(m.waited_error_forecast, 0);       // of 0, 0, 200
  EXPECT_DOUBLE_EQ(m.waited_p90_coverage, 2.0 / 4);
}

TEST(PredictionMetrics, NoSamplesNoFigures) {
  const PredictionMetrics m = ComputePredictionMetrics({});
  EXPECT_EQ(m.samples, 0);
  EXPECT_EQ(m.p90_coverage, 0);
  EXPECT_EQ(m.error_limit, 0);
}

}  // namespace
}  // namespace prediction_test
}  // namespace rota::sim
