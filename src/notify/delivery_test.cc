// Tests of the outbox's decisions in virtual time: backoff, giving up, rate limits, fail-once.
#include "notify/delivery.h"

#include <gtest/gtest.h>

namespace rota::notify {
namespace delivery_test {
namespace {

constexpr Time kT0 = 1'764'576'000;

TEST(Backoff, DoublesUpToTheCapWithJitter) {
  RetryRules r;
  r.first_backoff = 30;
  r.max_backoff = 600;
  EXPECT_EQ(Backoff(r, 1, 0.5, false), 30);
  EXPECT_EQ(Backoff(r, 2, 0.5, false), 60);
  EXPECT_EQ(Backoff(r, 3, 0.5, false), 120);
  EXPECT_EQ(Backoff(r, 10, 0.5, false), 600);
  EXPECT_EQ(Backoff(r, 50, 0.5, false), 600);  // no overflow
  EXPECT_EQ(Backoff(r, 1, 0.0, false), 23);    // 30 * 0.75, rounded
  EXPECT_EQ(Backoff(r, 1, 0.999, false), 37);  // 30 * 1.2495
  EXPECT_EQ(Backoff(r, 1, 0.5, true), 60);     // a platform's rate limit waits a minute
}

TEST(Decide, SentRetryGiveUpDrop) {
  RetryRules r;
  r.first_backoff = 10;
  r.max_attempts = 3;
  r.max_age = 3600;
  EXPECT_EQ(Decide(r, Status(), 1, kT0, kT0, 0.5).verdict, Verdict::kSent);
  Decision d = Decide(r, Unavailable("HTTP 500"), 1, kT0, kT0, 0.5);
  EXPECT_EQ(d.verdict, Verdict::kRetry);
  EXPECT_EQ(d.next_attempt, kT0 + 10);
  d = Decide(r, Unavailable("HTTP 500"), 2, kT0, kT0 + 10, 0.5);
  EXPECT_EQ(d.next_attempt, kT0 + 30);
  d = Decide(r, Unavailable("HTTP 500"), 3, kT0, kT0 + 30, 0.5);
  EXPECT_EQ(d.verdict, Verdict::kGiveUp);
  EXPECT_EQ(d.reason, "gave up after 3 attempts: HTTP 500");
  // Too old: the next attempt would fall after max_age.
  d = Decide(r, Unavailable("timeout"), 1, kT0, kT0 + 3595, 0.5);
  EXPECT_EQ(d.verdict, Verdict::kGiveUp);
  d = Decide(r, FailedPrecondition("feishu: code 19024 keyword not found"), 1, kT0, kT0, 0.5);
  EXPECT_EQ(d.verdict, Verdict::kDrop);
  EXPECT_EQ(d.reason, "feishu: code 19024 keyword not found");
}

TEST(TokenBucket, NoSixtySecondWindowExceedsTheLimit) {
  TokenBucket b(20);
  std::int64_t t = 0;
  int sent_first_minute = 0;
  for (; t < 60'000; t += 100) sent_first_minute += b.TryTake(t) ? 1 : 0;
  EXPECT_LE(sent_first_minute, 20);
  EXPECT_GE(sent_first_minute, 19);
  // After a burst, the next token comes in 60 s / 10 = 6 s.
  TokenBucket c(20);
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(c.TryTake(0));
  EXPECT_FALSE(c.TryTake(0));
  EXPECT_EQ(c.ReadyAt(0), 6'000);
  EXPECT_FALSE(c.TryTake(5'999));
  EXPECT_TRUE(c.TryTake(6'000));
  TokenBucket unlimited(0);
  for (int i = 0; i < 1000; ++i) EXPECT_TRUE(unlimited.TryTake(0));
}

TEST(ChannelHealth, ReportsOnceAndRecovers) {
  ChannelHealth h(3);
  using C = ChannelHealth::Change;
  EXPECT_EQ(h.Observe(Unavailable("HTTP 500")), C::kNone);
  EXPECT_EQ(h.Observe(Unavailable("HTTP 500")), C::kNone);
  EXPECT_EQ(h.Observe(Unavailable("HTTP 500")), C::kNowFailing);
  EXPECT_TRUE(h.failing());
  for (int i = 0; i < 10; ++i) EXPECT_EQ(h.Observe(Unavailable("HTTP 500")), C::kNone);  // not in a loop
  EXPECT_EQ(h.Observe(Status()), C::kRecovered);
  EXPECT_EQ(h.Observe(Status()), C::kNone);
  // A refusal no retry fixes reports at once; nobody at a terminal is not a failure.
  EXPECT_EQ(h.Observe(NotFound("no terminal")), C::kNone);
  EXPECT_EQ(h.Observe(PermissionDenied("sign match fail")), C::kNowFailing);
  EXPECT_EQ(h.last_error(), "sign match fail");
}

}  // namespace
}  // namespace delivery_test
}  // namespace rota::notify
