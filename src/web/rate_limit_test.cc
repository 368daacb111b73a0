#include "web/rate_limit.h"

#include <gtest/gtest.h>

namespace rota::web {
namespace rate_limit_test {
namespace {

TEST(RateLimiter, BurstThenRate) {
  RateLimiter r(/*rate=*/2, /*burst=*/3);
  EXPECT_TRUE(r.Allow("a", 0));
  EXPECT_TRUE(r.Allow("a", 0));
  EXPECT_TRUE(r.Allow("a", 0));
  EXPECT_FALSE(r.Allow("a", 0));
  EXPECT_TRUE(r.Allow("b", 0));  // per address
  EXPECT_TRUE(r.Allow("a", 0.5));  // one token back after 1/rate
  EXPECT_FALSE(r.Allow("a", 0.5));
}

TEST(RateLimiter, ARefundGivesBackWhatWasTaken) {
  RateLimiter r(1.0 / 60, 2);  // two failures, then one a minute
  EXPECT_TRUE(r.Allow("a", 0));
  r.Refund("a");  // that attempt succeeded
  EXPECT_TRUE(r.Allow("a", 1));
  EXPECT_TRUE(r.Allow("a", 1));
  EXPECT_FALSE(r.Allow("a", 2));
  r.Refund("a");
  r.Refund("a");
  r.Refund("a");  // never above the burst
  EXPECT_TRUE(r.Allow("a", 2));
  EXPECT_TRUE(r.Allow("a", 2));
  EXPECT_FALSE(r.Allow("a", 2));
  r.Refund("unknown");  // nothing to give back to
  EXPECT_TRUE(r.Allow("unknown", 2));
}

TEST(RateLimiter, ZeroRateIsUnlimited) {
  RateLimiter r(0, 1);
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(r.Allow("a", 0));
}

}  // namespace
}  // namespace rate_limit_test
}  // namespace rota::web
