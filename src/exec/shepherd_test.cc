// Tests of rota-shepherd run directly (arguments, bad specs, signals sent to it) and of its
// signal forwarding through the executor.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>

#include "exec/exec_test_util.h"
#include "exec/executor.h"
#include "exec/files.h"
#include "exec/spec.h"
#include "exec/spec_lock.h"

namespace rota::exec {
namespace shepherd_test {
namespace {

using testing::JobWroteLine;
using testing::NextJobId;
using testing::ReadText;
using testing::TempDir;
using testing::WaitReadable;

int RunShepherd(const std::vector<std::string>& args) {
  std::string command = ROTA_SHEPHERD;
  for (const std::string& a : args) command += " '" + a + "'";
  command += " >/dev/null 2>&1";
  int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(ShepherdTest, BadArgumentsExit2) {
  EXPECT_EQ(RunShepherd({}), 2);
  EXPECT_EQ(RunShepherd({"--job", "x", "--spec", "/s", "--run-dir", "/r", "--token", "t"}), 2);
  EXPECT_EQ(RunShepherd({"--job", "1", "--spec", "/s", "--bogus", "/r", "--token", "t"}), 2);
  EXPECT_EQ(RunShepherd({"--job", "1", "--spec", "/s", "--run-dir", "/r"}), 2);  // no token
}

// What a launch's shepherd does with its spec (spec.h): starts the job only when the launch is its.
class ShepherdSpecTest : public ::testing::Test {
 protected:
  void Write(JobId job_in_spec, const std::string& token) {
    JobSpec spec;
    spec.launch.job_id = job_in_spec;
    spec.launch.uid = geteuid();
    spec.launch.gid = getegid();
    spec.launch.argv = {"sh", "-c", "echo ran > " + (tmp_ / "ran")};
    spec.launch.cwd = tmp_.path();
    spec.launch.env = {{"PATH", "/usr/bin:/bin"}};
    spec.launch.output = tmp_ / "out";
    spec.token = token;
    ASSERT_TRUE(WriteFileAtomic(spec_path_, SpecToJson(spec), 0600).ok());
  }
  int Run(const std::string& token) {
    return RunShepherd({"--job", "7", "--spec", spec_path_, "--run-dir", tmp_.path(), "--token", token});
  }
  // A standby shepherd that reads `line` on descriptor 3.
  int RunStandby(const std::string& line) {
    std::ofstream(tmp_ / "line") << line;
    std::string command = std::string(ROTA_SHEPHERD) + " --standby --run-dir '" + tmp_.path() + "' 3< '" +
                          (tmp_ / "line") + "' >/dev/null 2>&1";
    int status = std::system(command.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  bool Ran() const { return access((tmp_ / "ran").c_str(), F_OK) == 0; }
  bool HasResult() const { return access((tmp_ / "7.result").c_str(), F_OK) == 0; }
  ExitInfo Result() const {
    StatusOr<ExitInfo> info = ResultFromJson(ReadText(tmp_ / "7.result"));
    EXPECT_TRUE(info.ok()) << info.status().ToString();
    return info.ok() ? *info : ExitInfo{};
  }

  TempDir tmp_;
  std::string spec_path_ = tmp_ / "7.spec";
};

TEST_F(ShepherdSpecTest, RunsTheJobOfItsOwnLaunch) {
  Write(7, "t1");
  ASSERT_EQ(Run("t1"), 0);
  EXPECT_TRUE(Ran());
  EXPECT_EQ(Result().kind, ExitInfo::Kind::kExited);
}

TEST_F(ShepherdSpecTest, AStandbyRunsTheJobItIsHanded) {
  Write(7, "t1");
  ASSERT_EQ(RunStandby("7 t1\n"), 0);
  EXPECT_TRUE(Ran());
  EXPECT_EQ(Result().kind, ExitInfo::Kind::kExited);
}

TEST_F(ShepherdSpecTest, AStandbyWithoutAJobOrWithAWrongOneStartsNothing) {
  Write(7, "t1");
  EXPECT_EQ(RunStandby(""), 0);          // its daemon went away
  EXPECT_EQ(RunStandby("7 t1"), 0);      // no end of line: cut short
  EXPECT_EQ(RunStandby("x t1\n"), 0);    // not a job id
  EXPECT_EQ(RunStandby("7 t2\n"), 3);    // a launch that is not this spec's
  EXPECT_FALSE(Ran());
  EXPECT_FALSE(HasResult());
}

TEST_F(ShepherdSpecTest, MissingSpecIsALaunchWithdrawnAndStartsNothing) {
  ASSERT_EQ(Run("t1"), 3);
  EXPECT_FALSE(HasResult());
}

TEST_F(ShepherdSpecTest, SpecOfALaterLaunchIsNotItsToRun) {
  Write(7, "t2");
  ASSERT_EQ(Run("t1"), 3);
  EXPECT_FALSE(Ran());
  EXPECT_FALSE(HasResult());
}

TEST_F(ShepherdSpecTest, SpecLockedByAnotherProcessIsNotItsToRun) {
  Write(7, "t1");
  UniqueFd fd(open(spec_path_.c_str(), O_RDWR | O_CLOEXEC));
  ASSERT_GE(fd.get(), 0);
  StatusOr<bool> locked = TryLockSpec(fd.get(), spec_path_);
  ASSERT_TRUE(locked.ok() && *locked);
  ASSERT_EQ(Run("t1"), 3);
  EXPECT_FALSE(Ran());
  EXPECT_FALSE(HasResult());
  // The lock is ours: no other process was seen holding it.
  EXPECT_EQ(SpecLockHolder(fd.get(), spec_path_).value(), 0);
}

TEST_F(ShepherdSpecTest, UnreadableSpecIsRecordedAsAStartFailure) {
  ASSERT_TRUE(WriteFileAtomic(spec_path_, "{not json", 0600).ok());
  ASSERT_EQ(Run("t1"), 0);
  ExitInfo info = Result();
  EXPECT_EQ(info.kind, ExitInfo::Kind::kStartFailed);
  EXPECT_NE(info.reason.find("shepherd: bad job spec"), std::string::npos) << info.reason;
}

TEST_F(ShepherdSpecTest, SpecOfAnotherJobIsRefused) {
  Write(8, "t1");
  ASSERT_EQ(Run("t1"), 0);
  ExitInfo info = Result();
  EXPECT_EQ(info.kind, ExitInfo::Kind::kStartFailed);
  EXPECT_EQ(info.reason, "shepherd: spec " + spec_path_ + " is for job 8");
  EXPECT_FALSE(Ran());
}

// A job of ours running `script` with sh in `tmp`, its output in tmp/out.
LaunchSpec ShellJobIn(const TempDir& tmp, const std::string& script) {
  LaunchSpec spec;
  spec.job_id = NextJobId();
  spec.uid = geteuid();
  spec.gid = getegid();
  spec.argv = {"sh", "-c", script};
  spec.cwd = tmp.path();
  spec.env = {{"PATH", "/usr/bin:/bin"}};
  spec.output = tmp / "out";
  return spec;
}

// SIGTERM sent to the shepherd itself (not through Executor::Signal) reaches the job.
TEST(ShepherdTest, ForwardsTermSentToItselfAndSurvives) {
  TempDir tmp;
  StatusOr<std::unique_ptr<Executor>> e = Executor::Create({ROTA_SHEPHERD, tmp / "run", false});
  ASSERT_TRUE(e.ok());
  LaunchSpec spec = ShellJobIn(tmp, "trap 'echo term > term' TERM; echo ready > ready; while :; do sleep 0.05; done");
  StatusOr<Launched> launched = (*e)->Launch(spec);
  ASSERT_TRUE(launched.ok());
  const std::string result = ResultPath(tmp / "run", spec.job_id);
  ASSERT_TRUE(JobWroteLine(tmp / "ready", *launched, result, spec.output));
  ASSERT_EQ(kill(launched->pid, SIGTERM), 0);
  ASSERT_TRUE(JobWroteLine(tmp / "term", *launched, result, spec.output));
  pollfd p{launched->pidfd, POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, 0), 0) << "the shepherd ended on SIGTERM";
  ASSERT_EQ(kill(launched->pid, SIGHUP), 0);  // not trapped: ends the job
  EXPECT_TRUE(WaitReadable(launched->pidfd));
  close(launched->pidfd);
  ExitInfo info = (*e)->Collect(spec.job_id, launched->pid);
  EXPECT_EQ(info.kind, ExitInfo::Kind::kSignalled) << info.reason;
  EXPECT_EQ(info.signal, SIGHUP);  // the shepherd survived TERM and HUP and recorded the end
}

// A launch withdrawn while its job runs (Executor::Withdraw, then SIGKILL): the shepherd kills
// the job and exits 3 without a result, whether it was started for the job or as a standby.
TEST(ShepherdTest, AJobWithdrawnWhileItRunsLeavesNoResult) {
  for (bool standby : {false, true}) {
    SCOPED_TRACE(standby ? "standby" : "started for the job");
    TempDir tmp;
    StatusOr<std::unique_ptr<Executor>> e = Executor::Create({ROTA_SHEPHERD, tmp / "run", false});
    ASSERT_TRUE(e.ok());
    if (standby) {
      ASSERT_TRUE((*e)->PrepareStandbys(1).ok());
    }
    LaunchSpec spec = ShellJobIn(tmp, "echo ready > ready; while :; do sleep 0.05; done");
    StatusOr<Launched> launched = (*e)->Launch(spec);
    ASSERT_TRUE(launched.ok());
    EXPECT_EQ(launched->note_fd >= 0, standby);
    ASSERT_TRUE(JobWroteLine(tmp / "ready", *launched, ResultPath(tmp / "run", spec.job_id), spec.output));
    ASSERT_TRUE((*e)->Withdraw(spec.job_id).ok());
    ASSERT_TRUE((*e)->Signal(launched->pid, SIGKILL).ok());
    ASSERT_TRUE(WaitReadable(launched->pidfd));
    siginfo_t si{};
    ASSERT_EQ(waitid(P_PID, static_cast<id_t>(launched->pid), &si, WEXITED), 0);
    EXPECT_EQ(si.si_code, CLD_EXITED);
    EXPECT_EQ(si.si_status, 3);
    EXPECT_NE(access(ResultPath(tmp / "run", spec.job_id).c_str(), F_OK), 0) << "a withdrawn launch wrote a result";
    EXPECT_NE(access(SpecPath(tmp / "run", spec.job_id).c_str(), F_OK), 0);
    close(launched->pidfd);
    if (launched->note_fd >= 0) close(launched->note_fd);
    ASSERT_TRUE((*e)->Withdraw(spec.job_id).ok()) << "a spec already gone is OK";
  }
}

}  // namespace
}  // namespace shepherd_test
}  // namespace rota::exec
