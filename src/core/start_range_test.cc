// Tests of start ranges: the fallback to the plan on time limits, and the calibration on past
// forecasts (quantiles, the slack, the two buckets).
#include "core/start_range.h"

#include <gtest/gtest.h>

namespace rota {
namespace start_range_test {
namespace {

constexpr Time kNow = 1'800'000'000;

TEST(StartRange, WithoutEnoughSamplesTheRangeEndsAtThePlanOnLimits) {
  WaitCalibration c(100, 5);
  for (int i = 0; i < 4; ++i) c.Add(kHour, 2 * kHour);
  StartRange r = c.Range(kNow, kNow + kHour, kNow + 3 * kHour);
  EXPECT_EQ(r.p50, kNow + kHour);
  EXPECT_EQ(r.p90, kNow + 3 * kHour);
  EXPECT_EQ(r.samples, 0);
  // A plan on limits earlier than the forecast (it cannot be, but): never a p90 before the p50.
  EXPECT_EQ(c.Range(kNow, kNow + kHour, kNow).p90, kNow + kHour);
  // Nothing foreseen on limits: no p90; nothing forecast: nothing at all.
  EXPECT_EQ(c.Range(kNow, kNow + kHour, kNever).p90, kNever);
  EXPECT_EQ(c.Range(kNow, kNever, kNow).p50, kNever);
  // A forecast in the past is now.
  EXPECT_EQ(c.Range(kNow, kNow - 5, kNow + kHour).p50, kNow);
}

TEST(StartRange, CalibratedP90sScaleTheForecastByPastRatios) {
  WaitCalibration c(100, 10);
  // Later forecasts of 50 min: half were right, 40% were off by 2x (wait + slack), one in ten 5x.
  const Duration f = 50 * kMinute;
  for (int i = 0; i < 5; ++i) c.Add(f, f);
  for (int i = 0; i < 4; ++i) c.Add(f, 2 * (f + 10 * kMinute) - 10 * kMinute);
  c.Add(f, 5 * (f + 10 * kMinute) - 10 * kMinute);
  EXPECT_EQ(c.samples(), 10);
  StartRange r = c.Range(kNow, kNow + f, kNever);
  EXPECT_EQ(r.samples, 10);
  EXPECT_EQ(r.p50, kNow + f);                                      // the forecast itself
  EXPECT_EQ(r.p90, kNow + 2 * (f + 10 * kMinute) - 10 * kMinute);  // the 9th: 2
  // A forecast twice as far (110 min + slack = 2 x 60 min): twice the range.
  r = c.Range(kNow, kNow + 110 * kMinute, kNever);
  EXPECT_EQ(r.p90, kNow + 2 * 120 * kMinute - 10 * kMinute);
}

TEST(StartRange, StartsAtOnceAndLaterOnesAreCalibratedApart) {
  WaitCalibration c(100, 5);
  // Forecast "at once", started at once; forecast in an hour, started in three (plus slack).
  for (int i = 0; i < 5; ++i) c.Add(0, 0);
  for (int i = 0; i < 5; ++i) c.Add(kHour, 3 * (kHour + 10 * kMinute) - 10 * kMinute);
  StartRange at_once = c.Range(kNow, kNow, kNow + kHour);
  EXPECT_EQ(at_once.p50, kNow);
  EXPECT_EQ(at_once.p90, kNow);
  StartRange later = c.Range(kNow, kNow + kHour, kNow + kHour);
  EXPECT_EQ(later.p50, kNow + kHour);
  EXPECT_EQ(later.p90, kNow + 3 * (kHour + 10 * kMinute) - 10 * kMinute);
  // Too few at once: a start at once borrows every sample.
  WaitCalibration few(100, 5);
  for (int i = 0; i < 4; ++i) few.Add(0, 0);
  for (int i = 0; i < 1; ++i) few.Add(kHour, 3 * (kHour + 10 * kMinute) - 10 * kMinute);
  EXPECT_EQ(few.Range(kNow, kNow, kNever).samples, 5);
  EXPECT_EQ(few.Range(kNow, kNow, kNever).p90, kNow + 3 * 10 * kMinute - 10 * kMinute);
}

TEST(StartRange, ALaterStartIsNotCalibratedOnStartsAtOnce) {
  // A queue's first jobs started at once as foreseen; then nothing started for weeks. The starts
  // at once say nothing of how late a later forecast runs: its range ends at the plan on limits.
  WaitCalibration c(100, 5);
  for (int i = 0; i < 20; ++i) c.Add(0, 0);
  for (int i = 0; i < 4; ++i) c.Add(kHour, 3 * kHour);
  StartRange later = c.Range(kNow, kNow + kHour, kNow + 4 * kHour);
  EXPECT_EQ(later.samples, 0);
  EXPECT_EQ(later.p90, kNow + 4 * kHour);
  EXPECT_EQ(c.Range(kNow, kNow + kHour, kNever).p90, kNever);
  // The fifth later sample calibrates it on its own kind.
  c.Add(kHour, 3 * (kHour + 10 * kMinute) - 10 * kMinute);
  later = c.Range(kNow, kNow + kHour, kNow + 4 * kHour);
  EXPECT_EQ(later.samples, 5);
  EXPECT_EQ(later.p90, kNow + 3 * (kHour + 10 * kMinute) - 10 * kMinute);
}

TEST(StartRange, OnlyTheRecentWindowCounts) {
  WaitCalibration c(5, 5);
  for (int i = 0; i < 20; ++i) c.Add(kHour, 10 * kHour);
  for (int i = 0; i < 5; ++i) c.Add(kHour, kHour);
  EXPECT_EQ(c.samples(), 5);
  EXPECT_EQ(c.Range(kNow, kNow + kHour, kNever).p90, kNow + kHour);
}

}  // namespace
}  // namespace start_range_test
}  // namespace rota
