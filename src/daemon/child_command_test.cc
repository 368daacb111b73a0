// Real processes: the shell, sleep, id and env of this machine.
#include "daemon/child_command.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <optional>

#include "exec/files.h"
#include "testing/daemon/parts.h"
#include "testing/temp_dir.h"

namespace rota::daemon {
namespace {

class ChildCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    loop_ = testing::NewLoop();
    StatusOr<std::unique_ptr<ChildCommands>> made = ChildCommands::Create(*loop_);
    ASSERT_TRUE(made.ok()) << made.status().message();
    commands_ = std::move(*made);
  }

  static ChildCommand Sh(const std::string& script) {
    ChildCommand c;
    c.argv = {"/bin/sh", "-c", script};
    c.env = {"PATH=/usr/bin:/bin"};
    return c;
  }

  // Starts `cmd` and runs the loop until it is done.
  ChildResult Run(const ChildCommand& cmd) {
    std::optional<ChildResult> got;
    commands_->Start(cmd, [&](ChildResult r) { got = std::move(r); });
    EXPECT_FALSE(got.has_value()) << "called from inside Start";
    // Up to 20 s of the loop; what it did is said if the command's end never came.
    int turns = 0, events = 0, failures = 0;
    std::string why;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!got && std::chrono::steady_clock::now() < until) {
      const int n = loop_->RunOnce(100);
      ++turns;
      if (n < 0) {
        ++failures;
        why = std::strerror(errno);
      } else {
        events += n;
      }
    }
    EXPECT_TRUE(got.has_value()) << turns << " turns of the loop, " << events << " events, " << failures
                                 << " failed waits (" << why << "), " << commands_->running() << " running";
    return got.value_or(ChildResult{});
  }

  std::unique_ptr<EventLoop> loop_;
  std::unique_ptr<ChildCommands> commands_;
};

TEST_F(ChildCommandTest, CollectsOutputAndExitStatus) {
  ChildResult r = Run(Sh("echo out; echo first >&2; echo 'sbatch: error: Invalid partition' >&2; exit 3"));
  EXPECT_EQ(r.how, ChildResult::How::kExited);
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.Describe(), "sbatch: error: Invalid partition");  // its own words, the last line
  EXPECT_EQ(commands_->running(), 0u);

  ChildResult fine = Run(Sh("echo 17"));
  EXPECT_TRUE(fine.ok());
  EXPECT_EQ(fine.out, "17\n");
  EXPECT_EQ(Run(Sh("exit 2")).Describe(), "exited with 2");
  EXPECT_EQ(Run(Sh("kill -9 $$")).Describe(), "killed by signal 9");
}

TEST_F(ChildCommandTest, OutputLargerThanAPipeIsReadWhileItRuns) {
  ChildResult r = Run(Sh("head -c 1000000 /dev/zero; head -c 300000 /dev/zero >&2"));
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.out.size(), 1000000u);
  EXPECT_EQ(r.err.size(), 300000u);
}

TEST_F(ChildCommandTest, KilledAtItsDeadline) {
  ChildCommand c = Sh("echo waiting >&2; exec sleep 30");
  c.deadline = std::chrono::milliseconds(200);
  ChildResult r = Run(c);
  EXPECT_EQ(r.how, ChildResult::How::kTimedOut);
  EXPECT_EQ(r.Describe(), "did not answer within its deadline (waiting)");
  ChildResult now = ChildCommands::RunNow(c);
  EXPECT_EQ(now.how, ChildResult::How::kTimedOut);
}

TEST_F(ChildCommandTest, WhatCannotStartIsToldAtTheNextTurn) {
  ChildCommand relative = Sh("true");
  relative.argv[0] = "sh";
  ChildResult r = Run(relative);
  EXPECT_EQ(r.how, ChildResult::How::kNotStarted);
  EXPECT_NE(r.Describe().find("absolute path"), std::string::npos);

  ChildCommand missing = Sh("true");
  missing.argv[0] = "/nonexistent/sbatch";
  ChildResult m = Run(missing);
  EXPECT_EQ(m.how, ChildResult::How::kExited);
  EXPECT_EQ(m.code, 127);
  EXPECT_EQ(m.Describe(), "/nonexistent/sbatch: No such file or directory");
}

TEST_F(ChildCommandTest, OnlyTheGivenEnvironmentAndNoBlockedSignals) {
  // rotad blocks the signals of its signalfd; its commands must not inherit that mask.
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGTERM);
  sigaddset(&block, SIGUSR1);
  ASSERT_EQ(pthread_sigmask(SIG_BLOCK, &block, &old), 0);
  ChildCommand c = Sh("grep SigBlk /proc/self/status; env");
  c.env = {"PATH=/usr/bin:/bin", "ROTA_X=1"};
  ChildResult r = Run(c);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  EXPECT_NE(r.out.find("SigBlk:\t0000000000000000\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ROTA_X=1\n"), std::string::npos);
  EXPECT_EQ(r.out.find("HOME="), std::string::npos);
  ChildResult now = ChildCommands::RunNow(c);
  EXPECT_TRUE(now.ok());
  EXPECT_NE(now.out.find("ROTA_X=1\n"), std::string::npos);
}

TEST_F(ChildCommandTest, RunsAsTheUserNeverAsRoot) {
  ChildCommand c = Sh("id -u; id -g; id -G; pwd");
  c.as_user = true;
  c.uid = 65534;
  c.gid = 65534;
  c.groups = {65534};
  c.cwd = "/tmp";
  if (::geteuid() != 0) {
    EXPECT_EQ(Run(c).how, ChildResult::How::kNotStarted);  // a user-mode rotad runs no one else's
    GTEST_SKIP() << "running as another user needs root";
  }
  ChildResult r = Run(c);
  EXPECT_EQ(r.out, "65534\n65534\n65534\n/tmp\n");
  c.uid = 0;
  ChildResult root = Run(c);
  EXPECT_EQ(root.how, ChildResult::How::kNotStarted);
  EXPECT_NE(root.why.find("as root"), std::string::npos);
}

TEST_F(ChildCommandTest, AJobsOutputThatIsNoFileOfTheUsersIsRefusedBeforeItRuns) {
  testing::TempDir dir{"rota-child-output"};
  ASSERT_TRUE(dir.ok());
  ChildCommand c = Sh("echo ran");
  auto outcome = [&](const std::string& path) {
    c.refuse_output = path;
    return Run(c);
  };
  // Not there yet, a file of one's own, a device: the command runs.
  EXPECT_EQ(outcome(dir.File("new.out")).out, "ran\n");
  ASSERT_TRUE(exec::WriteFileAtomic(dir.File("own.out"), "", 0644).ok());
  EXPECT_EQ(outcome(dir.File("own.out")).out, "ran\n");
  EXPECT_EQ(outcome("/dev/null").out, "ran\n");
  // A pipe, a link, a file everyone may write, another user's: refused, and said why.
  ASSERT_EQ(::mkfifo(dir.File("pipe").c_str(), 0666), 0);
  ASSERT_EQ(::symlink("own.out", dir.File("link").c_str()), 0);
  ASSERT_TRUE(exec::WriteFileAtomic(dir.File("open.out"), "", 0644).ok());
  ASSERT_EQ(::chmod(dir.File("open.out").c_str(), 0666), 0);
  for (const auto& [name, why] :
       {std::pair{"pipe", "is a named pipe"}, std::pair{"link", "is a symbolic link"},
        std::pair{"open.out", "is writable by everyone"}}) {
    ChildResult r = outcome(dir.File(name));
    EXPECT_EQ(r.how, ChildResult::How::kExited) << name;
    EXPECT_EQ(r.code, ChildCommand::kOutputRefused) << name;
    EXPECT_EQ(r.out, "") << name;
    EXPECT_EQ(r.err, "the output " + dir.File(name) + " " + why +
                         "; a job's output is a file of its owner's, or a device such as /dev/null\n");
  }
  if (::geteuid() == 0) {
    ASSERT_EQ(::chown(dir.File("own.out").c_str(), 65534, 65534), 0);
    ChildResult theirs = outcome(dir.File("own.out"));
    EXPECT_EQ(theirs.code, ChildCommand::kOutputRefused);
    EXPECT_NE(theirs.err.find("belongs to another user"), std::string::npos) << theirs.err;
  }
}

TEST_F(ChildCommandTest, StoppingKillsWhatRuns) {
  ChildCommand c = Sh("exec sleep 30");
  bool called = false;
  commands_->Start(c, [&](ChildResult) { called = true; });
  EXPECT_EQ(commands_->running(), 1u);
  commands_.reset();  // must not hang for 30 s nor call back
  EXPECT_FALSE(called);
}

}  // namespace
}  // namespace rota::daemon
