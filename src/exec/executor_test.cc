// Tests of the executor with real jobs under the real rota-shepherd (ROTA_SHEPHERD), once with
// cgroups (when this machine has a writable cgroup v2) and once tracking jobs by process group.
#include "exec/executor.h"

#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <set>

#include <gtest/gtest.h>

#include "exec/cgroup.h"
#include "exec/exec_test_util.h"
#include "exec/files.h"
#include "exec/spec.h"

namespace rota::exec {
namespace executor_test {
namespace {

using testing::FileHasLine;
using testing::JobWroteLine;
using testing::NextJobId;
using testing::ProcessDead;
using testing::ReadText;
using testing::TempDir;
using testing::WaitFor;
using testing::WaitReadable;

// Each test runs with cgroups and by process group, and with shepherds started for each launch
// and handed their job as standbys.
struct Mode {
  bool cgroups;
  bool standby;
};

class ExecutorTest : public ::testing::TestWithParam<Mode> {
 protected:
  void SetUp() override {
    ASSERT_FALSE(tmp_.path().empty());
    StatusOr<std::unique_ptr<Executor>> e = Executor::Create(Options());
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    executor_ = std::move(e).value();
    if (GetParam().cgroups && executor_->cgroup_base().empty()) {
      GTEST_SKIP() << "no writable cgroup v2 here: " << executor_->cgroup_note();
    }
  }

  // A failed test must not leave its job running.
  void TearDown() override {
    for (const auto& [pid, job] : running_) {
      (void)executor_->Signal(pid, SIGKILL);
      (void)executor_->Collect(job, pid);
    }
  }

  StatusOr<Launched> Launch(const LaunchSpec& spec) {
    if (GetParam().standby) {
      EXPECT_TRUE(executor_->PrepareStandbys(1).ok());
      EXPECT_GT(executor_->next_standby(), 0);
    }
    const pid_t standby = executor_->next_standby();
    StatusOr<Launched> launched = executor_->Launch(spec);
    if (launched.ok()) {
      running_[launched->pid] = spec.job_id;
      if (standby > 0) {
        EXPECT_EQ(launched->pid, standby) << "the standby was not used";
      }
      EXPECT_EQ(executor_->standbys(), 0u);
    }
    return launched;
  }

  ExecutorOptions Options() const { return {ROTA_SHEPHERD, tmp_ / "run", GetParam().cgroups, testing::kTestCgroupName}; }
  bool cgroups() const { return !executor_->cgroup_base().empty(); }

  // Waits until the job of `spec` has written a line to tmp_/name (JobWroteLine).
  ::testing::AssertionResult JobWrote(const Launched& launched, const LaunchSpec& spec, const std::string& name) const {
    return JobWroteLine(tmp_ / name, launched, ResultPath(tmp_ / "run", spec.job_id), spec.output);
  }

  LaunchSpec Spec(std::vector<std::string> argv) const {
    LaunchSpec spec;
    spec.job_id = NextJobId();
    spec.uid = geteuid();
    spec.gid = getegid();
    spec.user = "tester";
    spec.argv = std::move(argv);
    spec.cwd = tmp_.path();
    spec.env = {{"PATH", "/usr/bin:/bin"}, {"HOME", tmp_.path()}};
    spec.output = tmp_ / "job.out";
    return spec;
  }
  LaunchSpec Shell(const std::string& script) const { return Spec({"sh", "-c", script}); }

  // Launches `spec` (whose job writes its pid to "pid"), waits for the job, kills its shepherd
  // outright and returns the job's pid; 0 on failure.
  pid_t LaunchThenKillTheShepherd(const LaunchSpec& spec, Launched* launched) {
    StatusOr<Launched> l = Launch(spec);
    EXPECT_TRUE(l.ok()) << l.status().ToString();
    if (!l.ok()) return 0;
    ::testing::AssertionResult wrote = JobWrote(*l, spec, "pid");
    EXPECT_TRUE(wrote);
    if (!wrote) return 0;
    *launched = *l;
    EXPECT_EQ(kill(l->pid, SIGKILL), 0);
    return std::stoi(ReadText(tmp_ / "pid"));
  }

  // Waits for the shepherd to end, then collects.
  ExitInfo Finish(const Launched& launched, JobId job) {
    EXPECT_TRUE(WaitReadable(launched.pidfd)) << "job " << job << " did not end";
    close(launched.pidfd);
    if (launched.note_fd >= 0) close(launched.note_fd);
    running_.erase(launched.pid);
    return executor_->Collect(job, launched.pid);
  }

  ExitInfo Run(const LaunchSpec& spec) {
    StatusOr<Launched> launched = Launch(spec);
    EXPECT_TRUE(launched.ok()) << launched.status().ToString();
    if (!launched.ok()) return {};
    return Finish(*launched, spec.job_id);
  }

  TempDir tmp_;
  std::unique_ptr<Executor> executor_;
  std::map<pid_t, JobId> running_;  // launched, not yet collected
};

TEST_P(ExecutorTest, RecordsExitCodes) {
  ExitInfo ok = Run(Shell("exit 0"));
  EXPECT_EQ(ok.kind, ExitInfo::Kind::kExited) << ok.reason;
  EXPECT_EQ(ok.exit_code, 0);
  EXPECT_GT(ok.end_time, 1'600'000'000);
  ExitInfo three = Run(Shell("exit 3"));
  EXPECT_EQ(three.kind, ExitInfo::Kind::kExited) << three.reason;
  EXPECT_EQ(three.exit_code, 3);
}

// Collect keeps the result until the daemon has recorded the end: a daemon that dies in between
// collects the same end after its restart. Forget removes the files.
TEST_P(ExecutorTest, CollectKeepsTheJobsFilesUntilForget) {
  LaunchSpec spec = Shell("exit 3");
  ExitInfo first = Run(spec);
  EXPECT_EQ(first.exit_code, 3) << first.reason;
  if (cgroups()) {
    // The emptied cgroup waits for RemoveEndedCgroups, out of the next launch's way.
    const std::string cgroup = JobCgroupPath(executor_->cgroup_base(), spec.job_id);
    EXPECT_TRUE(std::filesystem::exists(cgroup));
    EXPECT_EQ(executor_->ended_cgroups(), 1u);
    executor_->RemoveEndedCgroups();
    EXPECT_FALSE(std::filesystem::exists(cgroup));
    EXPECT_EQ(executor_->ended_cgroups(), 0u);
  }
  EXPECT_TRUE(std::filesystem::exists(ResultPath(tmp_ / "run", spec.job_id)));
  StatusOr<std::unique_ptr<Executor>> restarted = Executor::Create(Options());
  ASSERT_TRUE(restarted.ok()) << restarted.status().ToString();
  ExitInfo again = (*restarted)->Collect(spec.job_id, 0);
  EXPECT_EQ(again.kind, ExitInfo::Kind::kExited) << again.reason;
  EXPECT_EQ(again.exit_code, 3);
  EXPECT_EQ(again.end_time, first.end_time);
  executor_->Forget(spec.job_id);
  EXPECT_FALSE(std::filesystem::exists(ResultPath(tmp_ / "run", spec.job_id)));
  EXPECT_FALSE(std::filesystem::exists(SpecPath(tmp_ / "run", spec.job_id)));
  for (const auto& entry : std::filesystem::directory_iterator(tmp_ / "run")) {
    EXPECT_EQ(entry.path().filename().string().rfind(std::to_string(spec.job_id) + ".", 0), std::string::npos)
        << entry.path() << " was left";
  }
}

// A requeued job's new run gets a cgroup of the same name, made anew: nothing attached for the
// last run stays (its device program refused /dev/zero here; the new run is refused nothing),
// a late Reap of the last run's shepherd (the daemon reaps a shepherd that noted its end first
// only once it has exited, maybe after the relaunch) leaves the new run alone, and a
// RemoveEndedCgroups while the new run goes on leaves it and its job alone.
TEST_P(ExecutorTest, ARelaunchGetsAFreshCgroupThatTheLastRunsReapLeavesAlone) {
  if (!cgroups()) GTEST_SKIP() << "only with cgroups";
  LaunchSpec spec = Shell("head -c1 /dev/zero > /dev/null && exit 3; exit 0");
  if (executor_->device_filter()) spec.deny_devices = {{1, 5}};  // /dev/zero
  StatusOr<Launched> first = Launch(spec);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ExitInfo ended = Finish(*first, spec.job_id);
  EXPECT_EQ(ended.kind, ExitInfo::Kind::kExited) << ended.reason;
  if (executor_->device_filter()) {
    EXPECT_EQ(ended.exit_code, 0) << "the last run could read /dev/zero";
  }
  ASSERT_EQ(executor_->ended_cgroups(), 1u);
  executor_->Forget(spec.job_id);
  spec.deny_devices.clear();
  spec.argv = {"sh", "-c", "echo $$ > pid; head -c1 /dev/zero > /dev/null || exit 7; sleep 1; exit 5"};
  StatusOr<Launched> again = Launch(spec);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(executor_->ended_cgroups(), 0u);
  ASSERT_TRUE(JobWrote(*again, spec, "pid"));
  executor_->Reap(spec.job_id, first->pid);
  executor_->RemoveEndedCgroups();
  const std::string cgroup = JobCgroupPath(executor_->cgroup_base(), spec.job_id);
  EXPECT_TRUE(std::filesystem::exists(cgroup));
  ExitInfo second = Finish(*again, spec.job_id);
  EXPECT_EQ(second.kind, ExitInfo::Kind::kExited) << second.reason;
  EXPECT_EQ(second.exit_code, 5) << "the second run was killed (signal) or refused /dev/zero (7)";
  executor_->RemoveEndedCgroups();
  EXPECT_FALSE(std::filesystem::exists(cgroup));
}

// A standby-started shepherd sends kEndedNote once the result is written, before its exit;
// Collect then reads the end, Reap reaps the shepherd, and RemoveEndedCgroups removes the
// cgroup. Its socket is not the job's.
TEST_P(ExecutorTest, AStandbysShepherdNotesTheEndBeforeItExits) {
  if (!GetParam().standby) GTEST_SKIP() << "only standby-started shepherds send the note";
  LaunchSpec spec = Shell("test -e /proc/$$/fd/3 && exit 9; exit 4");
  StatusOr<Launched> launched = Launch(spec);
  ASSERT_TRUE(launched.ok()) << launched.status().ToString();
  ASSERT_GE(launched->note_fd, 0);
  ASSERT_TRUE(WaitReadable(launched->note_fd));
  char buf[16];
  const ssize_t n = recv(launched->note_fd, buf, sizeof buf, 0);
  EXPECT_EQ(std::string(buf, static_cast<std::size_t>(std::max<ssize_t>(n, 0))), kEndedNote);
  ExitInfo info = executor_->Collect(spec.job_id, launched->pid);  // its exit may still be under way
  EXPECT_EQ(info.kind, ExitInfo::Kind::kExited) << info.reason;
  EXPECT_EQ(info.exit_code, 4) << "exit 9: the job inherited the shepherd's socket";
  ASSERT_TRUE(WaitReadable(launched->pidfd));
  close(launched->pidfd);
  running_.erase(launched->pid);
  executor_->Reap(spec.job_id, launched->pid);
  errno = 0;
  EXPECT_EQ(waitpid(launched->pid, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD) << "the shepherd was not reaped";
  if (cgroups()) {
    EXPECT_EQ(executor_->ended_cgroups(), 1u);
    executor_->RemoveEndedCgroups();
    EXPECT_FALSE(std::filesystem::exists(JobCgroupPath(executor_->cgroup_base(), spec.job_id)));
  }
  EXPECT_EQ(recv(launched->note_fd, buf, sizeof buf, 0), 0) << "no end of file after the shepherd's exit";
  close(launched->note_fd);
}

TEST_P(ExecutorTest, AppendsStdoutAndStderrToTheLog) {
  LaunchSpec spec = Shell("echo out; echo err >&2");
  { std::ofstream(spec.output) << "before\n"; }
  ExitInfo info = Run(spec);
  EXPECT_EQ(info.kind, ExitInfo::Kind::kExited) << info.reason;
  EXPECT_EQ(ReadText(spec.output), "before\nout\nerr\n");
}

TEST_P(ExecutorTest, AppliesExactlyTheJobsEnvironmentAndItsPath) {
  std::filesystem::create_directory(tmp_ / "bin");
  std::filesystem::create_symlink("/usr/bin/env", tmp_ / "bin/rota-test-env");
  LaunchSpec spec = Spec({"rota-test-env"});  // found only through the job's PATH
  spec.env = {{"PATH", tmp_ / "bin"}, {"FOO", "bar baz"}, {"EMPTY", ""}};
  ExitInfo info = Run(spec);
  ASSERT_EQ(info.kind, ExitInfo::Kind::kExited) << info.reason;
  std::vector<std::string> lines;
  std::istringstream in(ReadText(spec.output));
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::sort(lines.begin(), lines.end());
  EXPECT_EQ(lines, (std::vector<std::string>{"EMPTY=", "FOO=bar baz", "PATH=" + tmp_ / "bin"}));
}

TEST_P(ExecutorTest, SearchesOnlyTheJobsPath) {
  std::filesystem::create_directory(tmp_ / "empty");
  LaunchSpec spec = Shell("exit 0");
  spec.env["PATH"] = tmp_ / "empty";
  ExitInfo info = Run(spec);
  EXPECT_EQ(info.kind, ExitInfo::Kind::kStartFailed);
  EXPECT_EQ(info.reason, "cannot run 'sh': No such file or directory");
}

TEST_P(ExecutorTest, MissingCommandIsAStartFailure) {
  LaunchSpec spec = Spec({"rota-no-such-command", "x"});
  ExitInfo info = Run(spec);
  EXPECT_EQ(info.kind, ExitInfo::Kind::kStartFailed);
  EXPECT_EQ(info.reason, "cannot run 'rota-no-such-command': No such file or directory");
  EXPECT_GT(info.end_time, 0);
  // The owner finds the reason in the log too.
  EXPECT_NE(ReadText(spec.output).find("cannot run 'rota-no-such-command'"), std::string::npos);
}

TEST_P(ExecutorTest, VanishedWorkingDirectoryIsAStartFailure) {
  LaunchSpec spec = Shell("exit 0");
  spec.cwd = tmp_ / "gone";
  ExitInfo info = Run(spec);
  EXPECT_EQ(info.kind, ExitInfo::Kind::kStartFailed);
  EXPECT_EQ(info.reason, "cannot chdir to " + tmp_ / "gone" + ": No such file or directory");
}

TEST_P(ExecutorTest, UnwritableOutputIsAStartFailure) {
  std::filesystem::create_directory(tmp_ / "ro");
  chmod((tmp_ / "ro").c_str(), 0555);
  LaunchSpec spec = Shell("exit 0");
  spec.output = tmp_ / "ro/rota-5.out";
  if (geteuid() == 0) {  // root writes anywhere: run the job as nobody
    passwd* nobody = getpwnam("nobody");
    if (nobody == nullptr) GTEST_SKIP() << "no user nobody";
    spec.uid = nobody->pw_uid;
    spec.gid = nobody->pw_gid;
    spec.groups = {nobody->pw_gid};
    spec.user = "nobody";
  }
  ExitInfo info = Run(spec);
  EXPECT_EQ(info.kind, ExitInfo::Kind::kStartFailed);
  EXPECT_EQ(info.reason, "cannot open output " + spec.output + ": Permission denied");
}

TEST_P(ExecutorTest, SignalReachesTheJobWhichKeepsRunning) {
  LaunchSpec spec = Shell("trap 'echo got > usr1' USR1; echo ready > ready; while :; do sleep 0.05; done");
  StatusOr<Launched> launched = Launch(spec);
  ASSERT_TRUE(launched.ok()) << launched.status().ToString();
  ASSERT_TRUE(JobWrote(*launched, spec, "ready"));
  ASSERT_TRUE(executor_->Signal(launched->pid, SIGUSR1).ok());
  EXPECT_TRUE(JobWrote(*launched, spec, "usr1"));
  pollfd p{launched->pidfd, POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, 0), 0) << "the job ended on SIGUSR1";
  ASSERT_TRUE(executor_->Signal(launched->pid, SIGKILL).ok());
  ExitInfo info = Finish(*launched, spec.job_id);
  EXPECT_EQ(info.kind, ExitInfo::Kind::kSignalled);
  EXPECT_EQ(info.signal, SIGKILL);
}

TEST_P(ExecutorTest, SignalRightAfterLaunchIsNotLost) {
  LaunchSpec spec = Shell("while :; do sleep 0.05; done");
  StatusOr<Launched> launched = Launch(spec);
  ASSERT_TRUE(launched.ok()) << launched.status().ToString();
  ASSERT_TRUE(executor_->Signal(launched->pid, SIGTERM).ok());
  ExitInfo info = Finish(*launched, spec.job_id);
  EXPECT_EQ(info.kind, ExitInfo::Kind::kSignalled) << info.reason;
  EXPECT_EQ(info.signal, SIGTERM);
}

TEST_P(ExecutorTest, KillEndsTheWholeJob) {
  // One helper stays in the job's process group and ignores TERM; one escapes with setsid.
  LaunchSpec spec = Shell(
      "sh -c 'trap \"\" TERM; echo $$ > grouped; while :; do sleep 1; done' & "
      "setsid sh -c 'trap \"\" TERM; echo $$ > escaped; while :; do sleep 1; done' & "
      "wait");
  StatusOr<Launched> launched = Launch(spec);
  ASSERT_TRUE(launched.ok()) << launched.status().ToString();
  ASSERT_TRUE(JobWrote(*launched, spec, "grouped"));
  ASSERT_TRUE(JobWrote(*launched, spec, "escaped"));
  pid_t grouped = std::stoi(ReadText(tmp_ / "grouped"));
  pid_t escaped = std::stoi(ReadText(tmp_ / "escaped"));
  ASSERT_TRUE(executor_->Signal(launched->pid, SIGKILL).ok());
  ExitInfo info = Finish(*launched, spec.job_id);
  EXPECT_EQ(info.kind, ExitInfo::Kind::kSignalled) << info.reason;
  EXPECT_EQ(info.signal, SIGKILL);
  EXPECT_TRUE(WaitFor([&] { return ProcessDead(grouped); }));
  if (cgroups()) {
    EXPECT_TRUE(WaitFor([&] { return ProcessDead(escaped); })) << "escaped child survived";
  } else {
    kill(escaped, SIGKILL);  // beyond the reach of a process group
  }
}

TEST_P(ExecutorTest, KillsStragglersWhenTheLeaderExits) {
  LaunchSpec spec = Shell("sleep 1000 & echo $! > straggler; exit 0");
  ExitInfo info = Run(spec);
  EXPECT_EQ(info.kind, ExitInfo::Kind::kExited) << info.reason;
  ASSERT_TRUE(FileHasLine(tmp_ / "straggler"));
  pid_t straggler = std::stoi(ReadText(tmp_ / "straggler"));
  EXPECT_TRUE(WaitFor([&] { return ProcessDead(straggler); }));
}

TEST_P(ExecutorTest, SignalToAShepherdThatIsGoneIsOk) {
  LaunchSpec spec = Shell("exit 0");
  StatusOr<Launched> launched = Launch(spec);
  ASSERT_TRUE(launched.ok());
  ASSERT_TRUE(WaitReadable(launched->pidfd));
  EXPECT_TRUE(executor_->Signal(launched->pid, SIGTERM).ok());  // a zombie
  close(launched->pidfd);
  executor_->Collect(spec.job_id, launched->pid);
  running_.erase(launched->pid);
  EXPECT_TRUE(executor_->Signal(launched->pid, SIGTERM).ok());  // reaped
  EXPECT_TRUE(executor_->Signal(getpid(), SIGTERM).ok());       // not a shepherd: untouched
  EXPECT_EQ(executor_->Signal(launched->pid, 0).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(executor_->Signal(launched->pid, 1000).code(), StatusCode::kInvalidArgument);
}

// The "daemon" (a forked child) launches a job and exits; a new executor adopts the shepherd.
TEST_P(ExecutorTest, AdoptsAShepherdAfterTheDaemonExits) {
  LaunchSpec spec = Shell("echo ready > ready; while :; do sleep 0.05; done");
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t daemon = fork();
  ASSERT_GE(daemon, 0);
  if (daemon == 0) {
    close(fds[0]);
    StatusOr<std::unique_ptr<Executor>> e = Executor::Create(Options());
    if (!e.ok()) _exit(1);
    if (GetParam().standby && !(*e)->PrepareStandbys(1).ok()) _exit(4);
    StatusOr<Launched> launched = (*e)->Launch(spec);
    if (!launched.ok()) _exit(2);
    pid_t pid = launched->pid;
    _exit(write(fds[1], &pid, sizeof pid) == sizeof pid ? 0 : 3);
  }
  close(fds[1]);
  pid_t shepherd = 0;
  ASSERT_EQ(read(fds[0], &shepherd, sizeof shepherd), static_cast<ssize_t>(sizeof shepherd));
  close(fds[0]);
  running_[shepherd] = spec.job_id;
  int status = 0;
  ASSERT_EQ(waitpid(daemon, &status, 0), daemon);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  ASSERT_TRUE(WaitFor([&] { return FileHasLine(tmp_ / "ready"); }));

  StatusOr<std::unique_ptr<Executor>> restarted = Executor::Create(Options());
  ASSERT_TRUE(restarted.ok());
  Executor& e = **restarted;
  EXPECT_EQ(e.Adopt(spec.job_id + 1, shepherd).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(e.Adopt(spec.job_id, getpid()).status().code(), StatusCode::kNotFound);
  StatusOr<Launched> adopted = e.Adopt(spec.job_id, shepherd);
  ASSERT_TRUE(adopted.ok()) << adopted.status().ToString();
  EXPECT_EQ(adopted->pid, shepherd);
  if (cgroups()) {
    EXPECT_EQ(adopted->cgroup, e.cgroup_base() + "/job-" + std::to_string(spec.job_id));
  }
  ASSERT_TRUE(e.Signal(shepherd, SIGKILL).ok());
  ASSERT_TRUE(WaitReadable(adopted->pidfd));
  close(adopted->pidfd);
  ExitInfo info = e.Collect(spec.job_id, shepherd);  // not our child: nothing to reap
  running_.erase(shepherd);
  EXPECT_EQ(info.kind, ExitInfo::Kind::kSignalled) << info.reason;
  EXPECT_EQ(info.signal, SIGKILL);
}

TEST_P(ExecutorTest, ShepherdKilledIsVanishedAndItsJobIsCleanedUp) {
  LaunchSpec spec = Shell("echo $$ > pid; while :; do sleep 0.05; done");
  Launched launched;
  const pid_t job = LaunchThenKillTheShepherd(spec, &launched);
  ASSERT_GT(job, 0);
  ExitInfo info = Finish(launched, spec.job_id);
  EXPECT_EQ(info.kind, ExitInfo::Kind::kVanished);
  EXPECT_EQ(info.reason, "rota-shepherd " + std::to_string(launched.pid) +
                             " was killed by signal 9 before recording the job's end");
  if (cgroups()) {
    EXPECT_TRUE(WaitFor([&] { return ProcessDead(job); })) << "Collect left the job running";
  } else {
    kill(-job, SIGKILL);
  }
}

TEST_P(ExecutorTest, CollectWithoutResultIsVanished) {
  JobId job = NextJobId();
  ExitInfo info = executor_->Collect(job, getppid());  // not our child, no result file
  EXPECT_EQ(info.kind, ExitInfo::Kind::kVanished);
  EXPECT_NE(info.reason.find("without recording the job's end"), std::string::npos) << info.reason;
}

// FindLaunch: what a restarted daemon learns of a launch it did not record.
TEST_P(ExecutorTest, FindLaunchWithoutASpecFindsNothing) {
  StatusOr<FoundLaunch> found = executor_->FindLaunch(NextJobId());
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  EXPECT_EQ(found->state, FoundLaunch::State::kNone);
  EXPECT_FALSE(found->withdrawn);
}

TEST_P(ExecutorTest, FindLaunchFindsTheRunningShepherdByItsLock) {
  LaunchSpec spec = Shell("echo ready > ready; while :; do sleep 0.05; done");
  spec.note = R"({"where":"GPU 1"})";
  StatusOr<Launched> launched = Launch(spec);
  ASSERT_TRUE(launched.ok());
  ASSERT_TRUE(JobWrote(*launched, spec, "ready"));
  StatusOr<FoundLaunch> found = executor_->FindLaunch(spec.job_id);
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  EXPECT_EQ(found->state, FoundLaunch::State::kRunning);
  EXPECT_EQ(found->pid, launched->pid);
  EXPECT_EQ(found->note, spec.note);
  // Asking did not disturb it: the spec is still there and the job still runs.
  EXPECT_EQ(access(SpecPath(tmp_ / "run", spec.job_id).c_str(), F_OK), 0);
  pollfd p{launched->pidfd, POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, 0), 0) << "the shepherd ended";
}

TEST_P(ExecutorTest, FindLaunchFindsALaunchThatEnded) {
  LaunchSpec spec = Shell("exit 3");
  spec.note = "n";
  StatusOr<Launched> launched = Launch(spec);
  ASSERT_TRUE(launched.ok());
  ASSERT_TRUE(WaitReadable(launched->pidfd));  // ended, not yet collected
  StatusOr<FoundLaunch> found = executor_->FindLaunch(spec.job_id);
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  EXPECT_EQ(found->state, FoundLaunch::State::kEnded);
  EXPECT_EQ(found->note, "n");
  ExitInfo info = Finish(*launched, spec.job_id);
  EXPECT_EQ(info.kind, ExitInfo::Kind::kExited) << info.reason;
  EXPECT_EQ(info.exit_code, 3);
}

// The daemon died after writing the spec, before (or just after) starting the shepherd.
TEST_P(ExecutorTest, FindLaunchWithdrawsALaunchNoShepherdTookAndALateShepherdObeys) {
  const JobId job = NextJobId();
  JobSpec spec{Shell("echo ran > ran"), "", "token-1"};
  spec.launch.job_id = job;
  const std::string spec_path = SpecPath(tmp_ / "run", job);
  ASSERT_TRUE(WriteFileAtomic(spec_path, SpecToJson(spec), 0600).ok());
  StatusOr<FoundLaunch> found = executor_->FindLaunch(job);
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  EXPECT_EQ(found->state, FoundLaunch::State::kNone);
  EXPECT_TRUE(found->withdrawn);
  EXPECT_NE(access(spec_path.c_str(), F_OK), 0) << "the spec is still there";
  // The shepherd that the dead daemon had started, arriving late, starts nothing.
  std::string command = std::string(ROTA_SHEPHERD) + " --job " + std::to_string(job) + " --spec " + spec_path +
                        " --run-dir " + (tmp_ / "run") + " --token token-1";
  int status = std::system(command.c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 3) << status;
  EXPECT_NE(access(ResultPath(tmp_ / "run", job).c_str(), F_OK), 0) << "it wrote a result";
  EXPECT_NE(access((tmp_ / "ran").c_str(), F_OK), 0) << "it ran the job";
}

// The daemon withdrew a launch (removed its spec) and died before the SIGKILL that goes with it:
// the job runs on, unrecorded, in its cgroup. A restart kills it, so that the job, still pending,
// can be launched again rather than be blocked by its own leftovers.
TEST_P(ExecutorTest, FindLaunchKillsAWithdrawnLaunchWhoseStopNeverCame) {
  if (!cgroups()) GTEST_SKIP() << "without cgroups such a job cannot be seen";
  LaunchSpec spec = Shell("echo $$ > pid; while :; do sleep 0.05; done");
  StatusOr<Launched> launched = Launch(spec);
  ASSERT_TRUE(launched.ok()) << launched.status().ToString();
  ASSERT_TRUE(JobWrote(*launched, spec, "pid"));
  const pid_t job = std::stoi(ReadText(tmp_ / "pid"));
  ASSERT_TRUE(executor_->Withdraw(spec.job_id).ok());  // and no SIGKILL: the daemon died here
  StatusOr<FoundLaunch> found = executor_->FindLaunch(spec.job_id);
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  EXPECT_EQ(found->state, FoundLaunch::State::kNone);
  EXPECT_TRUE(found->withdrawn);
  EXPECT_TRUE(WaitFor([&] { return ProcessDead(job); })) << "the withdrawn launch's job runs on";
  // Its shepherd, finding its spec gone, writes no result; the job can be launched again.
  ASSERT_TRUE(WaitReadable(launched->pidfd));
  EXPECT_NE(access(ResultPath(tmp_ / "run", spec.job_id).c_str(), F_OK), 0) << "it wrote a result";
  close(launched->pidfd);
  if (launched->note_fd >= 0) close(launched->note_fd);
  running_.erase(launched->pid);
  executor_->Reap(spec.job_id, launched->pid);
  spec.argv = {"sh", "-c", "exit 4"};
  StatusOr<Launched> again = Launch(spec);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  ExitInfo info = Finish(*again, spec.job_id);
  EXPECT_EQ(info.exit_code, 4) << info.reason;
}

// Both the daemon and the shepherd died after the job started: its cgroup still holds it.
TEST_P(ExecutorTest, FindLaunchOfADeadShepherdWithALiveJobIsEndedAndCollectKillsTheJob) {
  if (!cgroups()) GTEST_SKIP() << "without cgroups such a job cannot be seen";
  LaunchSpec spec = Shell("echo $$ > pid; while :; do sleep 0.05; done");
  Launched launched;
  const pid_t job = LaunchThenKillTheShepherd(spec, &launched);
  ASSERT_GT(job, 0);
  ASSERT_TRUE(WaitReadable(launched.pidfd));
  StatusOr<FoundLaunch> found = executor_->FindLaunch(spec.job_id);
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  EXPECT_EQ(found->state, FoundLaunch::State::kEnded);
  ExitInfo info = Finish(launched, spec.job_id);
  EXPECT_EQ(info.kind, ExitInfo::Kind::kVanished);
  EXPECT_TRUE(WaitFor([&] { return ProcessDead(job); })) << "Collect left the job running";
}

TEST_P(ExecutorTest, RunsTheJobAsItsUser) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root";
  passwd* pw = getpwnam("nobody");
  if (pw == nullptr) GTEST_SKIP() << "no user nobody";
  uid_t uid = pw->pw_uid;
  gid_t gid = pw->pw_gid;
  std::vector<gid_t> groups(64);
  int n = static_cast<int>(groups.size());
  ASSERT_GE(getgrouplist("nobody", gid, groups.data(), &n), 0);
  groups.resize(static_cast<std::size_t>(n));
  std::filesystem::create_directory(tmp_ / "world");
  chmod((tmp_ / "world").c_str(), 01777);

  LaunchSpec spec = Shell("id -u; id -g; id -G");
  spec.uid = uid;
  spec.gid = gid;
  spec.groups = groups;
  spec.user = "nobody";
  spec.cwd = tmp_ / "world";
  spec.output = tmp_ / "world/job.out";
  ExitInfo info = Run(spec);
  ASSERT_EQ(info.kind, ExitInfo::Kind::kExited) << info.reason;
  std::string expected_groups;
  std::sort(groups.begin(), groups.end());
  for (gid_t g : groups) expected_groups += (expected_groups.empty() ? "" : " ") + std::to_string(g);
  std::istringstream in(ReadText(spec.output));
  std::string line_uid, line_gid, line_groups;
  std::getline(in, line_uid);
  std::getline(in, line_gid);
  std::getline(in, line_groups);
  EXPECT_EQ(line_uid, std::to_string(uid));
  EXPECT_EQ(line_gid, std::to_string(gid));
  std::istringstream gin(line_groups);
  std::vector<gid_t> got;
  for (gid_t g; gin >> g;) got.push_back(g);
  std::sort(got.begin(), got.end());
  std::string got_groups;
  for (gid_t g : got) got_groups += (got_groups.empty() ? "" : " ") + std::to_string(g);
  EXPECT_EQ(got_groups, expected_groups);
  EXPECT_EQ(std::find(got.begin(), got.end(), 0u), got.end());
  EXPECT_NE(line_uid, "0");
  struct stat st;
  ASSERT_EQ(stat(spec.output.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, uid);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
}

TEST_P(ExecutorTest, JobRunsInItsCgroup) {
  if (!cgroups()) GTEST_SKIP() << "jobs are tracked by process group here";
  LaunchSpec spec = Shell("cat /proc/self/cgroup");
  ExitInfo info = Run(spec);
  ASSERT_EQ(info.kind, ExitInfo::Kind::kExited) << info.reason;
  std::string text = ReadText(spec.output);
  EXPECT_NE(text.find("0::/"), std::string::npos) << text;
  EXPECT_NE(text.find("/job-" + std::to_string(spec.job_id) + "\n"), std::string::npos) << text;
}

TEST_P(ExecutorTest, MemoryLimitIsWrittenToTheCgroup) {
  if (!cgroups() || !executor_->memory_limits()) GTEST_SKIP() << executor_->cgroup_note();
  LaunchSpec spec = Shell("");
  spec.argv[2] = "cat " + executor_->cgroup_base() + "/job-" + std::to_string(spec.job_id) + "/memory.max";
  spec.memory_limit_bytes = 256 << 20;
  ExitInfo info = Run(spec);
  ASSERT_EQ(info.kind, ExitInfo::Kind::kExited) << info.reason;
  EXPECT_NE(ReadText(spec.output).find(std::to_string(256 << 20)), std::string::npos);
}

TEST_P(ExecutorTest, RejectsBadSpecs) {
  LaunchSpec spec = Shell("exit 0");
  spec.argv.clear();
  EXPECT_EQ(executor_->Launch(spec).status().code(), StatusCode::kInvalidArgument);
  spec = Shell("exit 0");
  spec.cwd = "relative";
  EXPECT_EQ(executor_->Launch(spec).status().code(), StatusCode::kInvalidArgument);
  spec = Shell("exit 0");
  spec.job_id = 0;
  EXPECT_EQ(executor_->Launch(spec).status().code(), StatusCode::kInvalidArgument);
}

TEST_P(ExecutorTest, NoteSaysHowJobsAreTracked) {
  const std::string& note = executor_->cgroup_note();
  if (cgroups()) {
    EXPECT_EQ(note.rfind("cgroup v2 at " + executor_->cgroup_base() + " (memory limits: ", 0), 0u) << note;
  } else {
    EXPECT_NE(note.find("process group"), std::string::npos) << note;
  }
}

INSTANTIATE_TEST_SUITE_P(Executor, ExecutorTest,
                         ::testing::Values(Mode{true, false}, Mode{false, false}, Mode{true, true}, Mode{false, true}),
                         [](const ::testing::TestParamInfo<Mode>& p) {
                           return std::string(p.param.cgroups ? "Cgroups" : "ProcessGroups") +
                                  (p.param.standby ? "Standby" : "");
                         });

LaunchSpec ExitSpec(const TempDir& tmp, int code) {
  LaunchSpec spec;
  spec.job_id = NextJobId();
  spec.uid = geteuid();
  spec.gid = getegid();
  spec.argv = {"sh", "-c", "exit " + std::to_string(code)};
  spec.cwd = tmp.path();
  spec.env = {{"PATH", "/usr/bin:/bin"}};
  spec.output = tmp / "out";
  return spec;
}

ExitInfo WaitAndCollect(Executor& e, const Launched& launched, JobId job) {
  EXPECT_TRUE(WaitReadable(launched.pidfd));
  close(launched.pidfd);
  if (launched.note_fd >= 0) close(launched.note_fd);
  return e.Collect(job, launched.pid);
}

// Standbys not needed, or whose daemon goes away, start nothing.
TEST(ExecutorStandbyTest, StandbysLeftWaitingEndWithTheirExecutor) {
  TempDir tmp;
  StatusOr<std::unique_ptr<Executor>> e = Executor::Create({ROTA_SHEPHERD, tmp / "run", false});
  ASSERT_TRUE(e.ok());
  ASSERT_TRUE((*e)->PrepareStandbys(2).ok());
  ASSERT_EQ((*e)->standbys(), 2u);
  const pid_t standby = (*e)->next_standby();
  ASSERT_GT(standby, 0);
  ASSERT_TRUE((*e)->PrepareStandbys(2).ok());
  EXPECT_EQ((*e)->standbys(), 2u) << "more standbys were started than asked for";
  EXPECT_EQ((*e)->next_standby(), standby);
  e->reset();  // reaps them
  EXPECT_NE(kill(standby, 0), 0) << "a standby outlived its executor";
}

// A standby that cannot be started is not tried again (the daemon says so once).
TEST(ExecutorStandbyTest, AFailedStartIsNotRetried) {
  TempDir tmp;
  const std::string shepherd = tmp / "rota-shepherd";
  ASSERT_EQ(std::system(("cp " + std::string(ROTA_SHEPHERD) + " '" + shepherd + "'").c_str()), 0);
  StatusOr<std::unique_ptr<Executor>> e = Executor::Create({shepherd, tmp / "run", false});
  ASSERT_TRUE(e.ok());
  ASSERT_EQ(unlink(shepherd.c_str()), 0);
  EXPECT_FALSE((*e)->standbys_failed());
  Status first = (*e)->PrepareStandbys(2);
  EXPECT_FALSE(first.ok());
  EXPECT_NE(first.message().find("No such file or directory"), std::string::npos) << first.ToString();
  EXPECT_TRUE((*e)->standbys_failed());
  EXPECT_EQ((*e)->PrepareStandbys(2).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ((*e)->standbys(), 0u);
}

// Each launch takes its own standby; with none left, a shepherd is started for it.
TEST(ExecutorStandbyTest, LaunchesTakeOneStandbyEachThenStartShepherds) {
  TempDir tmp;
  StatusOr<std::unique_ptr<Executor>> e = Executor::Create({ROTA_SHEPHERD, tmp / "run", false});
  ASSERT_TRUE(e.ok());
  ASSERT_TRUE((*e)->PrepareStandbys(2).ok());
  std::vector<std::pair<Launched, JobId>> launches;
  for (int code : {3, 4, 5}) {
    const pid_t next = (*e)->next_standby();
    LaunchSpec spec = ExitSpec(tmp, code);
    StatusOr<Launched> launched = (*e)->Launch(spec);
    ASSERT_TRUE(launched.ok()) << launched.status().ToString();
    if (next > 0) {
      EXPECT_EQ(launched->pid, next);
    }
    launches.emplace_back(*launched, spec.job_id);
  }
  EXPECT_EQ((*e)->standbys(), 0u);
  std::set<pid_t> pids;
  int code = 3;
  for (auto& [launched, job] : launches) {
    pids.insert(launched.pid);
    ExitInfo info = WaitAndCollect(**e, launched, job);
    EXPECT_EQ(info.kind, ExitInfo::Kind::kExited) << info.reason;
    EXPECT_EQ(info.exit_code, code++) << "job " << job << " ran another job's command";
  }
  EXPECT_EQ(pids.size(), 3u);
}

// A standby that died before its job came is passed over.
TEST(ExecutorStandbyTest, ADeadStandbyIsPassedOver) {
  TempDir tmp;
  StatusOr<std::unique_ptr<Executor>> e = Executor::Create({ROTA_SHEPHERD, tmp / "run", false});
  ASSERT_TRUE(e.ok());
  ASSERT_TRUE((*e)->PrepareStandbys(1).ok());
  const pid_t dead = (*e)->next_standby();
  ASSERT_EQ(kill(dead, SIGKILL), 0);
  siginfo_t info{};
  ASSERT_EQ(waitid(P_PID, static_cast<id_t>(dead), &info, WEXITED | WNOWAIT), 0);  // dead, not reaped
  LaunchSpec spec = ExitSpec(tmp, 7);
  StatusOr<Launched> launched = (*e)->Launch(spec);
  ASSERT_TRUE(launched.ok()) << launched.status().ToString();
  EXPECT_NE(launched->pid, dead);
  EXPECT_EQ((*e)->standbys(), 0u);
  ExitInfo result = WaitAndCollect(**e, *launched, spec.job_id);
  EXPECT_EQ(result.kind, ExitInfo::Kind::kExited) << result.reason;
  EXPECT_EQ(result.exit_code, 7);
}

TEST(ExecutorCreateTest, MakesAPrivateRunDir) {
  TempDir tmp;
  StatusOr<std::unique_ptr<Executor>> e = Executor::Create({ROTA_SHEPHERD, tmp / "run", false});
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  struct stat st;
  ASSERT_EQ(stat((tmp / "run").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
}

TEST(ExecutorCreateTest, RejectsAMissingShepherd) {
  TempDir tmp;
  EXPECT_EQ(Executor::Create({tmp / "nope", tmp / "run", false}).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace executor_test
}  // namespace rota::exec
