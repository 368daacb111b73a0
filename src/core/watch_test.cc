#include "core/watch.h"

#include <gtest/gtest.h>

namespace rota {
namespace watch_test {
namespace {

constexpr Time kStart = 1'764'576'000;  // a multiple of 60

// Feeds one sample a minute from `from` (exclusive) to `to` (inclusive); returns the alerts.
std::vector<WatchAlert> Feed(IdleWatch& w, Time from, Time to, int util, double memory, const WatchRules& r) {
  std::vector<WatchAlert> out;
  for (Time t = from + 60; t <= to; t += 60) {
    WatchAlert a = w.Observe(t, util, memory, r);
    if (a != WatchAlert::kNone) out.push_back(a);
  }
  return out;
}

TEST(Watch, IdleJobIsWarnedAtFifteenMinutesAndActedOnAtThirty) {
  WatchRules r;
  IdleWatch w(kStart);
  EXPECT_TRUE(Feed(w, kStart, kStart + 14 * kMinute, 0, 0.1, r).empty());  // the window is not covered yet
  EXPECT_EQ(w.Observe(kStart + 15 * kMinute, 0, 0.1, r), WatchAlert::kIdleWarning);
  EXPECT_EQ(w.stage(), WatchStage::kWarned);
  EXPECT_TRUE(Feed(w, kStart + 15 * kMinute, kStart + 29 * kMinute, 0, 0.1, r).empty());
  EXPECT_EQ(w.Observe(kStart + 30 * kMinute, 0, 0.1, r), WatchAlert::kAction);
  EXPECT_EQ(w.stage(), WatchStage::kActed);
  EXPECT_EQ(w.idle_for(kStart + 30 * kMinute), 30 * kMinute);
  EXPECT_TRUE(Feed(w, kStart + 30 * kMinute, kStart + 60 * kMinute, 0, 0.1, r).empty());  // acts once
}

TEST(Watch, ABusyJobIsNeverTouched) {
  WatchRules r;
  IdleWatch w(kStart);
  EXPECT_TRUE(Feed(w, kStart, kStart + 3 * kHour, 80, 0.5, r).empty());
  EXPECT_EQ(w.stage(), WatchStage::kOk);
  EXPECT_NEAR(w.mean_util(), 80, 1e-9);
}

TEST(Watch, BusyThenIdleIsCaughtBySlidingWindow) {
  WatchRules r;
  IdleWatch w(kStart);
  EXPECT_TRUE(Feed(w, kStart, kStart + 2 * kHour, 90, 0.5, r).empty());
  const Time idle_from = kStart + 2 * kHour;
  std::vector<WatchAlert> alerts = Feed(w, idle_from, idle_from + 15 * kMinute, 1, 0.5, r);
  ASSERT_EQ(alerts.size(), 1u);
  EXPECT_EQ(alerts[0], WatchAlert::kIdleWarning);
}

TEST(Watch, ABriefSpikeDoesNotResetTheClock) {
  WatchRules r;
  IdleWatch w(kStart);
  Feed(w, kStart, kStart + 10 * kMinute, 0, 0.1, r);
  // One busy minute (60%) in fifteen idle ones: the window's mean stays under 5%.
  EXPECT_EQ(w.Observe(kStart + 11 * kMinute, 60, 0.1, r), WatchAlert::kNone);
  std::vector<WatchAlert> alerts = Feed(w, kStart + 11 * kMinute, kStart + 15 * kMinute, 0, 0.1, r);
  EXPECT_EQ(alerts, std::vector<WatchAlert>{WatchAlert::kIdleWarning});
}

TEST(Watch, WorkingAgainWithdrawsTheWarning) {
  WatchRules r;
  IdleWatch w(kStart);
  Feed(w, kStart, kStart + 15 * kMinute, 0, 0.1, r);
  ASSERT_EQ(w.stage(), WatchStage::kWarned);
  std::vector<WatchAlert> alerts = Feed(w, kStart + 15 * kMinute, kStart + 20 * kMinute, 90, 0.1, r);
  EXPECT_EQ(alerts, std::vector<WatchAlert>{WatchAlert::kBusyAgain});
  EXPECT_EQ(w.stage(), WatchStage::kOk);
}

TEST(Watch, IdleWithFullMemoryIsStuck) {
  WatchRules r;
  IdleWatch w(kStart);
  std::vector<WatchAlert> alerts = Feed(w, kStart, kStart + 15 * kMinute, 0, 0.97, r);
  EXPECT_EQ(alerts, std::vector<WatchAlert>{WatchAlert::kStuckWarning});
}

TEST(Watch, KeepRestartsTheWindowAndIsLimitedPerDay) {
  WatchRules r;
  r.keeps_per_day = 2;
  IdleWatch w(kStart);
  Feed(w, kStart, kStart + 15 * kMinute, 0, 0.1, r);
  ASSERT_EQ(w.stage(), WatchStage::kWarned);
  Time t = kStart + 16 * kMinute;
  ASSERT_TRUE(w.Keep(t, r, 0).ok());
  EXPECT_EQ(w.stage(), WatchStage::kOk);
  // Another full window of idleness before the next warning; the action never comes first.
  std::vector<WatchAlert> alerts = Feed(w, t, t + 15 * kMinute, 0, 0.1, r);
  EXPECT_EQ(alerts, std::vector<WatchAlert>{WatchAlert::kIdleWarning});
  EXPECT_EQ(w.keeps_left(t + 15 * kMinute, r, 0), 1);
  ASSERT_TRUE(w.Keep(t + 16 * kMinute, r, 0).ok());
  Status third = w.Keep(t + 17 * kMinute, r, 0);
  EXPECT_EQ(third.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(third.message().find("no keep left today"), std::string::npos);
  // The next local day: keeps again.
  EXPECT_TRUE(w.Keep(t + kDay, r, 0).ok());
}

TEST(Watch, UnknownUtilisationIsIgnoredAndDisabledRulesNeverAlert) {
  WatchRules r;
  IdleWatch w(kStart);
  EXPECT_TRUE(Feed(w, kStart, kStart + kHour, -1, -1, r).empty());  // nothing known: never "idle"
  EXPECT_EQ(w.mean_util(), -1);
  WatchRules off;
  off.enabled = false;
  IdleWatch quiet(kStart);
  EXPECT_TRUE(Feed(quiet, kStart, kStart + kHour, 0, 0.1, off).empty());
}

TEST(Watch, AlertNames) {
  EXPECT_STREQ(WatchAlertName(WatchAlert::kIdleWarning), "idle_warning");
  EXPECT_STREQ(WatchAlertName(WatchAlert::kAction), "action");
}

}  // namespace
}  // namespace watch_test
}  // namespace rota
