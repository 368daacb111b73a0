// Tests of the end-of-job ladder: what a run's end is recorded as, for each reason rotad had to
// stop it and each way its processes ended, and which reason wins when several hold.
#include "core/job_end.h"

#include <gtest/gtest.h>

#include <csignal>

namespace rota {
namespace job_end_test {
namespace {

JobExit Exited(int code) {
  JobExit e;
  e.kind = JobExit::Kind::kExited;
  e.exit_code = code;
  return e;
}

JobExit Signalled(int signal) {
  JobExit e;
  e.kind = JobExit::Kind::kSignalled;
  e.signal = signal;
  return e;
}

JobExit StartFailed(std::string why, bool machine) {
  JobExit e;
  e.kind = JobExit::Kind::kStartFailed;
  e.reason = std::move(why);
  e.machine_fault = machine;
  return e;
}

JobExit Vanished(std::string why) {
  JobExit e;
  e.kind = JobExit::Kind::kVanished;
  e.reason = std::move(why);
  return e;
}

// Signalled with its warning and due to be killed at its time limit.
StopContext Warned(int signal) {
  StopContext s;
  s.stopping = true;
  s.warning_signal = signal;
  return s;
}

TEST(JobEndTest, EndedOnItsOwn) {
  JobEnd ok = DecideJobEnd({}, Exited(0));
  EXPECT_EQ(ok.state, JobState::kCompleted);
  EXPECT_EQ(ok.reason, "Completed");
  EXPECT_EQ(ok.actor, "rotad");
  EXPECT_EQ(ok.code, 0);
  EXPECT_FALSE(ok.requeue);

  JobEnd failed = DecideJobEnd({}, Exited(3));
  EXPECT_EQ(failed.state, JobState::kFailed);
  EXPECT_EQ(failed.reason, "Failed(exit 3)");
  EXPECT_EQ(failed.code, 3);

  JobEnd killed = DecideJobEnd({}, Signalled(SIGSEGV));
  EXPECT_EQ(killed.state, JobState::kFailed);
  EXPECT_EQ(killed.reason, "Failed(signal 11)");
  EXPECT_FALSE(killed.code.has_value());

  // What the engine knows of why is kept: the cgroup's OOM kill, Slurm's OUT_OF_MEMORY.
  JobExit oom = Signalled(SIGKILL);
  oom.reason = "out of memory (memory.max reached)";
  EXPECT_EQ(DecideJobEnd({}, oom).reason, "Failed(signal 9: out of memory (memory.max reached))");
}

TEST(JobEndTest, StartFailuresOfTheJobAndOfTheMachine) {
  JobEnd job = DecideJobEnd({}, StartFailed("cannot run 'nosuchcmd': No such file or directory", false));
  EXPECT_EQ(job.state, JobState::kFailed);
  EXPECT_EQ(job.reason, "Failed: cannot run 'nosuchcmd': No such file or directory");
  EXPECT_FALSE(job.requeue);

  // The machine could not make its process: it never ran, so it waits again without --requeue.
  JobEnd machine = DecideJobEnd({}, StartFailed("fork: Resource temporarily unavailable", true));
  EXPECT_EQ(machine.state, JobState::kNodeFail);
  EXPECT_TRUE(machine.requeue);
  EXPECT_TRUE(machine.launch_failed);
  EXPECT_EQ(machine.reason, "NodeFail: fork: Resource temporarily unavailable (requeued)");

  // A session's client is there to see the failure: not requeued.
  StopContext session;
  session.interactive = true;
  JobEnd s = DecideJobEnd(session, StartFailed("fork: Resource temporarily unavailable", true));
  EXPECT_EQ(s.state, JobState::kFailed);
  EXPECT_FALSE(s.requeue);
}

TEST(JobEndTest, VanishedIsANodeFailRequeuedOnlyWhenAsked) {
  JobEnd plain = DecideJobEnd({}, Vanished("rota-shepherd 9 was killed by signal 9"));
  EXPECT_EQ(plain.state, JobState::kNodeFail);
  EXPECT_EQ(plain.reason, "NodeFail: rota-shepherd 9 was killed by signal 9");
  EXPECT_FALSE(plain.requeue);
  StopContext asked;
  asked.requeue = true;
  JobEnd requeued = DecideJobEnd(asked, Vanished("gone"));
  EXPECT_TRUE(requeued.requeue);
  EXPECT_FALSE(requeued.launch_failed);
  EXPECT_EQ(requeued.reason, "NodeFail: gone (requeued)");
}

TEST(JobEndTest, CancelWinsOverEverythingElse) {
  StopContext s = Warned(SIGUSR1);
  s.term_sent = true;
  s.node_fail = "GPU 0 fell off the bus";
  s.cancelled_by = "alice";
  JobEnd e = DecideJobEnd(s, Exited(0));
  EXPECT_EQ(e.state, JobState::kCancelled);
  EXPECT_EQ(e.reason, "Cancelled by alice");
  EXPECT_EQ(e.actor, "alice");
  EXPECT_EQ(e.code, 0);  // the code is kept even when the reason is not the exit
}

TEST(JobEndTest, AFailedCardWinsOverTheExitStatus) {
  StopContext s;
  s.node_fail = "GPU 1 has an uncorrectable ECC error";
  s.requeue = true;
  JobEnd e = DecideJobEnd(s, Exited(0));
  EXPECT_EQ(e.state, JobState::kNodeFail);
  EXPECT_EQ(e.reason, "NodeFail: GPU 1 has an uncorrectable ECC error (requeued)");
  EXPECT_TRUE(e.requeue);
  s.interactive = true;  // sessions are never requeued
  EXPECT_FALSE(DecideJobEnd(s, Exited(0)).requeue);
}

TEST(JobEndTest, PreemptionWhetherKilledOrCheckpointed) {
  StopContext s;
  s.stopping = true;
  s.preempted = true;
  s.preempted_by = 42;
  // Ended on its own after the warning (saved a checkpoint): still preempted, not completed.
  JobEnd own = DecideJobEnd(s, Exited(0));
  EXPECT_EQ(own.state, JobState::kPreempted);
  EXPECT_EQ(own.reason, "Preempted by job 42");
  s.term_sent = true;
  s.requeue = true;
  JobEnd killed = DecideJobEnd(s, Signalled(SIGKILL));
  EXPECT_EQ(killed.state, JobState::kPreempted);
  EXPECT_EQ(killed.reason, "Preempted by job 42 (requeued)");
  EXPECT_TRUE(killed.requeue);

  s.preempted_by = 0;
  EXPECT_EQ(DecideJobEnd(s, Signalled(SIGTERM)).reason, "Preempted (requeued)");
  s.stop_reason = "Reclaimed: idle for 30 min while others waited";
  s.requeue = false;
  EXPECT_EQ(DecideJobEnd(s, Signalled(SIGTERM)).reason, "Reclaimed: idle for 30 min while others waited");
}

TEST(JobEndTest, TimeLimit) {
  StopContext s = Warned(0);
  s.term_sent = true;
  JobEnd e = DecideJobEnd(s, Signalled(SIGTERM));
  EXPECT_EQ(e.state, JobState::kTimeout);
  EXPECT_EQ(e.reason, "TimeLimit");
  EXPECT_FALSE(e.requeue);  // --requeue is for preemption and failed cards, not the time limit
}

TEST(JobEndTest, EndedByItsOwnWarningSignalIsItsTimeLimit) {
  // `rota submit --signal USR1 --time 1m -- sleep 120`: sleep does not catch USR1 and dies of it.
  JobEnd e = DecideJobEnd(Warned(SIGUSR1), Signalled(SIGUSR1));
  EXPECT_EQ(e.state, JobState::kTimeout);
  EXPECT_EQ(e.reason, "TimeLimit (ended by its warning signal SIGUSR1)");
  // Another signal while warned is a failure of its own; so is the same signal unasked for.
  EXPECT_EQ(DecideJobEnd(Warned(SIGUSR1), Signalled(SIGSEGV)).state, JobState::kFailed);
  EXPECT_EQ(DecideJobEnd({}, Signalled(SIGUSR1)).reason, "Failed(signal 10)");
  // Warned and exiting by itself (it caught the signal and saved its work) is its own exit.
  EXPECT_EQ(DecideJobEnd(Warned(SIGUSR1), Exited(0)).state, JobState::kCompleted);
  EXPECT_EQ(DecideJobEnd(Warned(SIGUSR1), Exited(2)).reason, "Failed(exit 2)");
}

}  // namespace
}  // namespace job_end_test
}  // namespace rota
