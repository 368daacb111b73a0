// Tests of reading a warning signal as people write it, and of naming signals.
#include "core/signal_spec.h"

#include <gtest/gtest.h>

#include <csignal>

namespace rota {
namespace signal_spec_test {
namespace {

TEST(SignalSpecTest, FormsAndTheirGrace) {
  EXPECT_EQ(ParseSignalSpec("USR1")->grace, 120);
  EXPECT_EQ(ParseSignalSpec("sigusr2@90")->signal, SIGUSR2);
  EXPECT_EQ(ParseSignalSpec("B:10@2m")->grace, 120);
  EXPECT_EQ(ParseSignalSpec("64@0")->signal, 64);
  StatusOr<SignalSpec> bad = ParseSignalSpec("USR1@2d");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "\"USR1@2d\": at most one day (86400 s) before the kill");
  EXPECT_EQ(ParseSignalSpec("KIL").status().message(),
            "\"KIL\": expected SIGNAL[@SECONDS] such as USR1@120, SIGUSR2@60, 10@30 or TERM");
}

TEST(SignalSpecTest, Names) {
  EXPECT_EQ(SignalName(SIGUSR1), "SIGUSR1");
  EXPECT_EQ(SignalName(SIGTERM), "SIGTERM");
  EXPECT_EQ(SignalName(42), "signal 42");
}

}  // namespace
}  // namespace signal_spec_test
}  // namespace rota
