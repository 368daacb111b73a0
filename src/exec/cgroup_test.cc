// Tests of the cgroup v2 helpers: the parsers always, the operations where this machine has a
// writable cgroup v2 (skipped otherwise).
#include "exec/cgroup.h"

#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "exec/exec_test_util.h"
#include "exec/executor.h"
#include "exec/files.h"

namespace rota::exec {
namespace cgroup_test {
namespace {

using testing::NextJobId;
using testing::ReadText;
using testing::TempDir;

TEST(CgroupParseTest, FindsTheCgroup2MountInAHybridSetup) {
  std::string mountinfo =
      "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
      "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime shared:9 - cgroup cgroup rw,memory\n"
      "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime shared:5 - cgroup2 cgroup2 rw\n";
  std::optional<Cgroup2Mount> m = FindCgroup2Mount(mountinfo);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->mount_point, "/sys/fs/cgroup/unified");
  EXPECT_EQ(m->root, "/");
}

TEST(CgroupParseTest, AJobCgroupsNameGivesBackItsJob) {
  EXPECT_EQ(JobCgroupPath("/sys/fs/cgroup/rota", 17), "/sys/fs/cgroup/rota/job-17");
  EXPECT_EQ(JobOfCgroupName("job-17"), 17);
  for (const char* other : {"job-", "job-0", "job--3", "job-+3", "job- 3", "job-03", "job-17x", "job-x", "daemon", "jobs-17", ""}) {
    EXPECT_EQ(JobOfCgroupName(other), 0) << other;
  }
}

TEST(CgroupParseTest, UnescapesAndKeepsTheRoot) {
  std::optional<Cgroup2Mount> m =
      FindCgroup2Mount("29 1 0:26 /lxc/c1 /mnt/my\\040cgroups rw - cgroup2 none rw,nsdelegate\n");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->mount_point, "/mnt/my cgroups");
  EXPECT_EQ(m->root, "/lxc/c1");
  EXPECT_FALSE(FindCgroup2Mount("31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n").has_value());
  EXPECT_FALSE(FindCgroup2Mount("").has_value());
}

TEST(CgroupParseTest, OwnCgroupIsTheV2Line) {
  EXPECT_EQ(ParseOwnCgroup("4:memory:/x\n0::/\n"), "/");
  EXPECT_EQ(ParseOwnCgroup("0::/system.slice/rotad.service\n"), "/system.slice/rotad.service");
  EXPECT_FALSE(ParseOwnCgroup("4:memory:/x\n").has_value());
  EXPECT_FALSE(ParseOwnCgroup("0::/gone (deleted)\n").has_value());
}

class CgroupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StatusOr<std::unique_ptr<Executor>> e = Executor::Create({ROTA_SHEPHERD, tmp_ / "run", true, testing::kTestCgroupName});
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    executor_ = std::move(e).value();
    if (executor_->cgroup_base().empty()) GTEST_SKIP() << executor_->cgroup_note();
  }
  // A `sleep 1000` child of this process, moved into `cgroup`; -1 when either failed.
  pid_t SleeperIn(const std::string& cgroup) {
    pid_t child = fork();
    if (child == 0) {
      execl("/bin/sleep", "sleep", "1000", static_cast<char*>(nullptr));
      _exit(127);
    }
    if (child < 0) return -1;
    Status moved = executor_->MoveToCgroup(cgroup, child);
    EXPECT_TRUE(moved.ok()) << moved.ToString();
    if (moved.ok()) return child;
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
    return -1;
  }
  TempDir tmp_;
  std::unique_ptr<Executor> executor_;
};

TEST_F(CgroupTest, CreateMoveKillRemove) {
  JobId job = NextJobId();
  StatusOr<std::string> cgroup = executor_->CreateCgroup(job, 0);
  ASSERT_TRUE(cgroup.ok()) << cgroup.status().ToString();
  EXPECT_EQ(*cgroup, executor_->cgroup_base() + "/job-" + std::to_string(job));
  pid_t child = SleeperIn(*cgroup);
  ASSERT_GT(child, 0);
  EXPECT_EQ(ReadText(*cgroup + "/cgroup.procs"), std::to_string(child) + "\n");
  EXPECT_EQ(executor_->RemoveCgroup(*cgroup).code(), StatusCode::kFailedPrecondition);
  // An existing cgroup that holds processes is not reused.
  EXPECT_EQ(executor_->CreateCgroup(job, 0).status().code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(executor_->KillCgroup(*cgroup).ok());
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  EXPECT_TRUE(WaitCgroupEmpty(*cgroup, testing::kTimeoutMs));
  EXPECT_TRUE(executor_->RemoveCgroup(*cgroup).ok());
  EXPECT_FALSE(std::filesystem::exists(*cgroup));
  EXPECT_TRUE(executor_->RemoveCgroup(*cgroup).ok());  // already gone
  EXPECT_TRUE(executor_->KillCgroup(*cgroup).ok());
}

// What rotad's end watch relies on (daemon/end_watch.cc): a descriptor of cgroup.events
// reports POLLPRI once "populated" changed since it was last read, and not before.
TEST_F(CgroupTest, EventsDescriptorReportsTheLastProcessLeaving) {
  JobId job = NextJobId();
  StatusOr<std::string> cgroup = executor_->CreateCgroup(job, 0);
  ASSERT_TRUE(cgroup.ok()) << cgroup.status().ToString();
  EXPECT_EQ(OpenCgroupEvents(*cgroup + "/nonesuch").status().code(), StatusCode::kNotFound);
  pid_t child = SleeperIn(*cgroup);
  ASSERT_GT(child, 0);
  StatusOr<int> fd = OpenCgroupEvents(*cgroup);
  ASSERT_TRUE(fd.ok()) << fd.status().ToString();
  StatusOr<bool> populated = PopulatedAt(*fd, *cgroup);
  ASSERT_TRUE(populated.ok()) << populated.status().ToString();
  EXPECT_TRUE(*populated);
  pollfd p{*fd, POLLPRI, 0};
  EXPECT_EQ(poll(&p, 1, 50), 0) << "no change yet, no notice";
  ASSERT_TRUE(executor_->KillCgroup(*cgroup).ok());
  ASSERT_EQ(poll(&p, 1, testing::kTimeoutMs), 1);
  EXPECT_TRUE(p.revents & POLLPRI);
  populated = PopulatedAt(*fd, *cgroup);  // read again from the start, which acknowledges it
  ASSERT_TRUE(populated.ok()) << populated.status().ToString();
  EXPECT_FALSE(*populated);
  EXPECT_EQ(poll(&p, 1, 0), 0);
  close(*fd);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(executor_->RemoveCgroup(*cgroup).ok());
}

// A daemon started in a non-root cgroup (a delegated systemd service) moves itself into a
// "daemon" leaf and puts jobs beside it. Run in a forked child placed in a scratch cgroup.
TEST_F(CgroupTest, DelegatedServiceMovesItselfIntoALeaf) {
  std::optional<Cgroup2Mount> mount = FindCgroup2Mount(ReadText("/proc/self/mountinfo"));
  ASSERT_TRUE(mount.has_value());
  std::string top = mount->mount_point + "/rota-test-" + std::to_string(getpid());
  std::string service = top + "/svc";
  ASSERT_EQ(mkdir(top.c_str(), 0755), 0);
  ASSERT_EQ(mkdir(service.c_str(), 0755), 0);
  JobId job = NextJobId();
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (!MoveToCgroup(service, getpid()).ok()) _exit(10);
    StatusOr<std::unique_ptr<Executor>> e = Executor::Create({ROTA_SHEPHERD, tmp_ / "run2", true});
    if (!e.ok()) _exit(11);
    const std::string base = service + "/rota";  // jobs in a base of its own name, beside its leaf
    if ((*e)->cgroup_base() != base) _exit(12);
    std::string own = ReadText("/proc/self/cgroup");
    if (own.find("/svc/daemon\n") == std::string::npos) _exit(13);
    StatusOr<std::string> cgroup = (*e)->CreateCgroup(job, 0);
    if (!cgroup.ok() || *cgroup != base + "/job-" + std::to_string(job)) _exit(14);
    if (!(*e)->RemoveCgroup(*cgroup).ok()) _exit(15);
    // A second start (the daemon restarted within its leaf) keeps the same base.
    StatusOr<std::unique_ptr<Executor>> again = Executor::Create({ROTA_SHEPHERD, tmp_ / "run2", true});
    if (!again.ok() || (*again)->cgroup_base() != base) _exit(16);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0) << "see the _exit codes in the test";
  EXPECT_EQ(rmdir((service + "/daemon").c_str()), 0);
  EXPECT_EQ(rmdir((service + "/rota").c_str()), 0);
  EXPECT_EQ(rmdir(service.c_str()), 0);
  EXPECT_EQ(rmdir(top.c_str()), 0);
}

}  // namespace
}  // namespace cgroup_test
}  // namespace rota::exec
