// Tests of runtime prediction: which history a prediction comes from, the median ratio to the
// limit, the bounds, and the window.
#include "core/runtime_model.h"

#include <gtest/gtest.h>

namespace rota {
namespace runtime_model_test {
namespace {

TEST(RuntimeModel, WithoutHistoryTheLimitIsThePrediction) {
  RuntimeModel m;
  RuntimePrediction p = m.Predict("ana", "train", 4 * kHour);
  EXPECT_EQ(p.runtime, 4 * kHour);
  EXPECT_EQ(p.basis, RuntimeBasis::kLimit);
  EXPECT_EQ(p.samples, 0);
  EXPECT_STREQ(RuntimeBasisName(p.basis), "time limit");
}

TEST(RuntimeModel, TheMedianRatioScalesTheNewLimit) {
  RuntimeModel m(10, 3);
  // Ana's jobs run a quarter, a half and a tenth of their limits: the median ratio is a quarter.
  m.Add({"ana", "", 4 * kHour, kHour});
  m.Add({"ana", "", 2 * kHour, kHour});
  m.Add({"ana", "", 10 * kHour, kHour});
  RuntimePrediction p = m.Predict("ana", "", 8 * kHour);
  EXPECT_EQ(p.basis, RuntimeBasis::kUser);
  EXPECT_EQ(p.samples, 3);
  EXPECT_EQ(p.runtime, 2 * kHour);
  // An even count: the mean of the middle two ratios (0.25 and 0.5).
  m.Add({"ana", "", kHour, kHour});
  EXPECT_EQ(m.Predict("ana", "", 8 * kHour).runtime, 3 * kHour);
}

TEST(RuntimeModel, TheMostSpecificHistoryWithEnoughSamplesIsUsed) {
  RuntimeModel m(10, 2);
  m.Add({"ana", "eval", 10 * kHour, kHour});
  m.Add({"ana", "eval", 10 * kHour, kHour});
  m.Add({"ana", "train", 10 * kHour, 9 * kHour});
  // The name has two samples: its own ratio (0.1).
  RuntimePrediction p = m.Predict("ana", "eval", 10 * kHour);
  EXPECT_EQ(p.basis, RuntimeBasis::kUserKey);
  EXPECT_EQ(p.runtime, kHour);
  // One sample of "train" is not enough: the user's three (median 0.1).
  p = m.Predict("ana", "train", 10 * kHour);
  EXPECT_EQ(p.basis, RuntimeBasis::kUser);
  EXPECT_EQ(p.samples, 3);
  EXPECT_EQ(p.runtime, kHour);
  // Someone new: the lab's.
  p = m.Predict("bo", "", 10 * kHour);
  EXPECT_EQ(p.basis, RuntimeBasis::kLab);
  EXPECT_EQ(p.runtime, kHour);
  EXPECT_EQ(m.size(), 3);
}

TEST(RuntimeModel, JobsOfNoUserTeachTheLabOnly) {
  RuntimeModel m(10, 2);
  // A trace that names nobody: these are not one user's history, and nothing tells them apart.
  m.Add({"", "", 10 * kHour, kHour});
  m.Add({"", "", 10 * kHour, kHour});
  RuntimePrediction p = m.Predict("", "", 10 * kHour);
  EXPECT_EQ(p.basis, RuntimeBasis::kLab);
  EXPECT_EQ(p.runtime, kHour);
  EXPECT_FALSE(TellsTheJobApart(p.basis));
  EXPECT_EQ(m.size(), 2);
  m.Add({"ana", "x", 10 * kHour, 5 * kHour});
  m.Add({"ana", "x", 10 * kHour, 5 * kHour});
  EXPECT_EQ(m.Predict("ana", "x", 10 * kHour).basis, RuntimeBasis::kUserKey);
  EXPECT_TRUE(TellsTheJobApart(RuntimeBasis::kUserKey));
  EXPECT_TRUE(TellsTheJobApart(RuntimeBasis::kUser));
  EXPECT_FALSE(TellsTheJobApart(RuntimeBasis::kLimit));
}

TEST(RuntimeModel, PredictionsStayBetweenAMinuteAndTheLimit) {
  RuntimeModel m(10, 1);
  // Ran past its limit (not enforced): the prediction is still the limit.
  m.Add({"ana", "", kHour, 3 * kHour});
  EXPECT_EQ(m.Predict("ana", "", 2 * kHour).runtime, 2 * kHour);
  // Crashed at once: not below a minute, unless the limit is shorter.
  m.Add({"bo", "", 10 * kHour, 1});
  EXPECT_EQ(m.Predict("bo", "", 10 * kHour).runtime, kMinute);
  EXPECT_EQ(m.Predict("bo", "", 30).runtime, 30);
  // A zero limit reads as one second.
  EXPECT_EQ(m.Predict("bo", "", 0).runtime, 1);
}

TEST(RuntimeModel, OnlyTheRecentWindowCounts) {
  RuntimeModel m(3, 1);
  for (int i = 0; i < 5; ++i) m.Add({"ana", "", 10 * kHour, 10 * kHour});  // ran to the limit, long ago
  for (int i = 0; i < 3; ++i) m.Add({"ana", "", 10 * kHour, kHour});       // a tenth, lately
  EXPECT_EQ(m.Predict("ana", "", 10 * kHour).runtime, kHour);
}

}  // namespace
}  // namespace runtime_model_test
}  // namespace rota
