// Tests of the daemon's clocks: the real one's deadline wakes its descriptor, and the fake one's
// does the same on virtual time, which is what lets a test drive a daemon's passes.
#include "daemon/clock.h"

#include <gtest/gtest.h>

#include "testing/fake_clock.h"
#include "testing/readable.h"

namespace rota::daemon {
namespace clock_test {
namespace {

using testing::Readable;

TEST(ClockTest, RealDeadlineInThePastWakesAtOnceAndWokenClearsIt) {
  RealClock clock;
  ASSERT_GE(clock.WakeFd(), 0);
  EXPECT_FALSE(Readable(clock.WakeFd(), 0));
  clock.WakeAt(clock.Now() - 10);
  EXPECT_TRUE(Readable(clock.WakeFd(), 1000));
  clock.Woken();
  EXPECT_FALSE(Readable(clock.WakeFd(), 0));
  clock.WakeAt(clock.Now() + 3600);
  EXPECT_FALSE(Readable(clock.WakeFd(), 20));
  clock.WakeAt(kNever);  // disarmed
  EXPECT_FALSE(Readable(clock.WakeFd(), 20));
}

TEST(ClockTest, FakeDeadlineWakesWhenVirtualTimeReachesIt) {
  testing::FakeClock clock(1000);
  EXPECT_EQ(clock.Now(), 1000);
  clock.WakeAt(1060);
  EXPECT_FALSE(Readable(clock.WakeFd(), 0));
  clock.Advance(59);
  EXPECT_FALSE(Readable(clock.WakeFd(), 0));
  clock.Advance(1);
  EXPECT_TRUE(Readable(clock.WakeFd(), 0));
  EXPECT_EQ(clock.wake(), kNever);
  clock.Woken();
  EXPECT_FALSE(Readable(clock.WakeFd(), 0));
  clock.WakeAt(500);  // already past
  EXPECT_TRUE(Readable(clock.WakeFd(), 0));
  clock.Woken();
  clock.WakeAt(2000);
  clock.WakeAt(kNever);
  clock.Set(5000);
  EXPECT_FALSE(Readable(clock.WakeFd(), 0));
}

}  // namespace
}  // namespace clock_test
}  // namespace rota::daemon
