// Tests of the outside-process decisions: new once per process (a reused pid is a new process),
// cards held while one is on them, the policy stop (SIGTERM after the grace, SIGKILL a kill wait
// later, once each, never root's), forgetting what left.
#include "daemon/outside_watch.h"

#include <signal.h>

#include <gtest/gtest.h>

namespace rota::daemon {
namespace outside_watch_test {
namespace {

constexpr Time kT = 1796115600;

OutsideWatch::Process Proc(int pid, std::int64_t uid = 1001, unsigned long long start = 555, const char* uuid = "GPU-0") {
  OutsideWatch::Process p;
  p.pid = pid;
  p.start_time = start;
  p.uid = uid;
  p.user = uid == 0 ? "root" : "bob";
  p.uuid = uuid;
  p.gpu_index = 0;
  p.used_memory = 2048;
  return p;
}

const OutsideWatch::Rules kTell{false, 0, 10};
const OutsideWatch::Rules kStop{true, 300, 10};

TEST(OutsideWatchTest, EachProcessIsNewOnceAndHoldsItsCardWhileThere) {
  OutsideWatch w;
  OutsideWatch::Step s = w.Observe({Proc(42)}, kTell, kT);
  ASSERT_EQ(s.new_processes.size(), 1u);
  EXPECT_EQ(s.new_processes[0].first_seen, kT);
  EXPECT_TRUE(s.held_changed);
  EXPECT_TRUE(w.Holds("GPU-0"));
  EXPECT_FALSE(w.Holds("GPU-1"));
  s = w.Observe({Proc(42)}, kTell, kT + 1);
  EXPECT_TRUE(s.new_processes.empty());
  EXPECT_FALSE(s.held_changed);
  EXPECT_EQ(w.seen().begin()->second.first_seen, kT);
  // The same pid with another start time is another process (the pid was reused).
  s = w.Observe({Proc(42, 1001, 777)}, kTell, kT + 2);
  EXPECT_EQ(s.new_processes.size(), 1u);
  // Gone: forgotten, and the card free again.
  s = w.Observe({}, kTell, kT + 3);
  EXPECT_TRUE(s.held_changed);
  EXPECT_FALSE(w.Holds("GPU-0"));
  EXPECT_TRUE(w.seen().empty());
  EXPECT_TRUE(s.signals.empty());  // telling only: nothing is stopped
}

// A cluster node's process: its pid is the node's. The same pid and start time on this machine,
// or on another node, is another process; one that is not stoppable (it names a Slurm job) is
// never stopped.
TEST(OutsideWatchTest, ANodesProcessIsItsNodesOwn) {
  OutsideWatch w;
  OutsideWatch::Process remote = Proc(42, 1001, 555, "SLURM-n2-0");
  remote.node = "n2";
  OutsideWatch::Process slurms = remote;
  slurms.node = "n3";
  slurms.stoppable = false;
  OutsideWatch::Step s = w.Observe({Proc(42), remote, slurms}, kStop, kT);
  EXPECT_EQ(s.new_processes.size(), 3u);
  EXPECT_TRUE(w.Holds("SLURM-n2-0"));
  s = w.Observe({Proc(42), remote, slurms}, kStop, kT + 400);
  ASSERT_EQ(s.signals.size(), 2u);
  EXPECT_EQ(s.signals[0].first.node, "");
  EXPECT_EQ(s.signals[1].first.node, "n2");
  w.Sent(s.signals[1].first, SIGTERM, kT + 400);
  s = w.Observe({remote, slurms}, kStop, kT + 405);
  EXPECT_TRUE(s.signals.empty());  // n2's: SIGTERM given, SIGKILL after the kill wait
  s = w.Observe({remote, slurms}, kStop, kT + 410);
  ASSERT_EQ(s.signals.size(), 1u);
  EXPECT_EQ(s.signals[0].first.node, "n2");
  EXPECT_EQ(s.signals[0].second, SIGKILL);
}

TEST(OutsideWatchTest, TheStopComesAfterTheGraceThenTheKillAfterTheWait) {
  OutsideWatch w;
  EXPECT_TRUE(w.Observe({Proc(42)}, kStop, kT).signals.empty());
  EXPECT_TRUE(w.Observe({Proc(42)}, kStop, kT + 299).signals.empty());
  OutsideWatch::Step s = w.Observe({Proc(42)}, kStop, kT + 300);
  ASSERT_EQ(s.signals.size(), 1u);
  EXPECT_EQ(s.signals[0].second, SIGTERM);
  w.Sent(s.signals[0].first, SIGTERM, kT + 300);
  EXPECT_TRUE(w.Observe({Proc(42)}, kStop, kT + 309).signals.empty());  // once, and the wait
  s = w.Observe({Proc(42)}, kStop, kT + 310);
  ASSERT_EQ(s.signals.size(), 1u);
  EXPECT_EQ(s.signals[0].second, SIGKILL);
  w.Sent(s.signals[0].first, SIGKILL, kT + 310);
  EXPECT_TRUE(w.Observe({Proc(42)}, kStop, kT + 400).signals.empty());  // killed once
}

TEST(OutsideWatchTest, RootsProcessesAreNeverStopped) {
  OutsideWatch w;
  OutsideWatch::Step s = w.Observe({Proc(1, 0)}, kStop, kT);
  EXPECT_EQ(s.new_processes.size(), 1u);
  EXPECT_TRUE(w.Observe({Proc(1, 0)}, kStop, kT + 3600).signals.empty());
  EXPECT_TRUE(w.Holds("GPU-0"));  // its card still takes no new work
}

}  // namespace
}  // namespace outside_watch_test
}  // namespace rota::daemon
