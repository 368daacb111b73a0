#include "core/health.h"

#include <gtest/gtest.h>

namespace rota {
namespace health_test {
namespace {

TEST(Health, OneErrorIsSuspectAndAGoodSampleClearsIt) {
  GpuHealth h;
  HealthRules r;
  HealthChange c = ObserveHealth(h, "nvmlDeviceGetMemoryInfo: GPU_IS_LOST", false, r);
  EXPECT_EQ(c.from, HealthState::kHealthy);
  EXPECT_EQ(c.to, HealthState::kSuspect);
  EXPECT_TRUE(c.changed());
  EXPECT_EQ(h.error, "nvmlDeviceGetMemoryInfo: GPU_IS_LOST");
  c = ObserveHealth(h, "", true, r);
  EXPECT_EQ(c.to, HealthState::kHealthy);
  EXPECT_EQ(h.failures, 0);
  EXPECT_TRUE(h.error.empty());
}

TEST(Health, DrainedAfterTheConfiguredErrorsInARow) {
  GpuHealth h;
  HealthRules r{3, 2};
  EXPECT_EQ(ObserveHealth(h, "e1", false, r).to, HealthState::kSuspect);
  HealthChange c = ObserveHealth(h, "e2", false, r);
  EXPECT_FALSE(c.changed());
  c = ObserveHealth(h, "e3", false, r);
  EXPECT_EQ(c.from, HealthState::kSuspect);
  EXPECT_EQ(c.to, HealthState::kDrained);
  EXPECT_EQ(h.error, "e3");
  // Further errors do not "change" it again (the daemon acts once).
  EXPECT_FALSE(ObserveHealth(h, "e4", false, r).changed());
}

TEST(Health, AnInterruptedRunOfErrorsStartsOver) {
  GpuHealth h;
  HealthRules r{2, 1};
  ObserveHealth(h, "e", false, r);
  ObserveHealth(h, "", false, r);
  EXPECT_EQ(ObserveHealth(h, "e", false, r).to, HealthState::kSuspect);
  EXPECT_EQ(ObserveHealth(h, "e", false, r).to, HealthState::kDrained);
}

TEST(Health, DrainAfterOneDrainsAtTheFirstError) {
  GpuHealth h;
  EXPECT_EQ(ObserveHealth(h, "lost", false, HealthRules{1, 1}).to, HealthState::kDrained);
}

TEST(Health, DrainedComesBackOnlyHealthyAndEmpty) {
  GpuHealth h;
  HealthRules r{1, 2};
  ObserveHealth(h, "lost", false, r);
  ASSERT_EQ(h.state, HealthState::kDrained);
  EXPECT_FALSE(ObserveHealth(h, "", false, r).changed());  // 1 of 2 good samples
  EXPECT_FALSE(ObserveHealth(h, "", true, r).changed());   // a leftover process: the count restarts
  EXPECT_FALSE(ObserveHealth(h, "", false, r).changed());
  EXPECT_FALSE(ObserveHealth(h, "again", false, r).changed());  // an error restarts it too
  EXPECT_FALSE(ObserveHealth(h, "", false, r).changed());
  HealthChange c = ObserveHealth(h, "", false, r);
  EXPECT_EQ(c.from, HealthState::kDrained);
  EXPECT_EQ(c.to, HealthState::kHealthy);
  EXPECT_TRUE(h.error.empty());
}

TEST(Health, StateNames) {
  EXPECT_STREQ(HealthStateName(HealthState::kHealthy), "healthy");
  EXPECT_STREQ(HealthStateName(HealthState::kSuspect), "suspect");
  EXPECT_STREQ(HealthStateName(HealthState::kDrained), "drained");
}

}  // namespace
}  // namespace health_test
}  // namespace rota
