// Tests of rota-shepherd run directly (arguments, bad specs, signals sent to it) and of its
// signal forwarding through the executor.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "exec/exec_test_util.h"
#include "exec/executor.h"
#include "exec/files.h"
#include "exec/spec.h"

namespace rota::exec {
namespace {

using testing::FileHasLine;
using testing::NextJobId;
using testing::ReadText;
using testing::TempDir;
using testing::WaitFor;
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
  EXPECT_EQ(RunShepherd({"--job", "x", "--spec", "/s", "--run-dir", "/r"}), 2);
  EXPECT_EQ(RunShepherd({"--job", "1", "--spec", "/s", "--bogus", "/r"}), 2);
}

TEST(ShepherdTest, UnreadableSpecIsRecordedAsAStartFailure) {
  TempDir tmp;
  ASSERT_EQ(RunShepherd({"--job", "7", "--spec", tmp / "7.spec", "--run-dir", tmp.path()}), 0);
  StatusOr<ExitInfo> info = ResultFromJson(ReadText(tmp / "7.result"));
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->kind, ExitInfo::Kind::kStartFailed);
  EXPECT_EQ(info->reason, "shepherd: cannot open " + tmp / "7.spec" + ": No such file or directory");
}

TEST(ShepherdTest, SpecOfAnotherJobIsRefused) {
  TempDir tmp;
  JobSpec spec;
  spec.launch.job_id = 8;
  spec.launch.argv = {"true"};
  ASSERT_TRUE(WriteFileAtomic(tmp / "7.spec", SpecToJson(spec), 0600).ok());
  ASSERT_EQ(RunShepherd({"--job", "7", "--spec", tmp / "7.spec", "--run-dir", tmp.path()}), 0);
  StatusOr<ExitInfo> info = ResultFromJson(ReadText(tmp / "7.result"));
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->kind, ExitInfo::Kind::kStartFailed);
  EXPECT_EQ(info->reason, "shepherd: spec " + tmp / "7.spec" + " is for job 8");
}

// SIGTERM sent to the shepherd itself (not through Executor::Signal) reaches the job.
TEST(ShepherdTest, ForwardsTermSentToItselfAndSurvives) {
  TempDir tmp;
  StatusOr<std::unique_ptr<Executor>> e = Executor::Create({ROTA_SHEPHERD, tmp / "run", false});
  ASSERT_TRUE(e.ok());
  LaunchSpec spec;
  spec.job_id = NextJobId();
  spec.uid = geteuid();
  spec.gid = getegid();
  spec.argv = {"sh", "-c", "trap 'echo term > term' TERM; echo ready > ready; while :; do sleep 0.05; done"};
  spec.cwd = tmp.path();
  spec.env = {{"PATH", "/usr/bin:/bin"}};
  spec.output = tmp / "out";
  StatusOr<Launched> launched = (*e)->Launch(spec);
  ASSERT_TRUE(launched.ok());
  ASSERT_TRUE(WaitFor([&] { return FileHasLine(tmp / "ready"); }));
  ASSERT_EQ(kill(launched->pid, SIGTERM), 0);
  ASSERT_TRUE(WaitFor([&] { return FileHasLine(tmp / "term"); }));
  pollfd p{launched->pidfd, POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, 0), 0) << "the shepherd ended on SIGTERM";
  ASSERT_EQ(kill(launched->pid, SIGHUP), 0);  // not trapped: ends the job
  EXPECT_TRUE(WaitReadable(launched->pidfd));
  close(launched->pidfd);
  ExitInfo info = (*e)->Collect(spec.job_id, launched->pid);
  EXPECT_EQ(info.kind, ExitInfo::Kind::kSignalled) << info.reason;
  EXPECT_EQ(info.signal, SIGHUP);  // the shepherd survived TERM and HUP and recorded the end
}

}  // namespace
}  // namespace rota::exec
