#include "exec/procfs.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace rota::exec {
namespace procfs_test {
namespace {

TEST(Procfs, ReadsItselfAndItsParent) {
  StatusOr<ProcessIdentity> me = ReadProcess(::getpid());
  ASSERT_TRUE(me.ok()) << me.status().message();
  EXPECT_EQ(me->pid, ::getpid());
  EXPECT_EQ(me->ppid, ::getppid());
  EXPECT_EQ(me->uid, ::getuid());
  EXPECT_EQ(me->euid, ::geteuid());
  // Whatever cgroup we run in, /proc/self/cgroup's unified line names the same one.
  std::ifstream in("/proc/self/cgroup");
  std::string line, unified;
  while (std::getline(in, line)) {
    if (line.rfind("0::", 0) == 0) unified = line.substr(3);
  }
  EXPECT_EQ(me->cgroup, unified);
}

TEST(Procfs, RealAndEffectiveUidsAreReadApart) {
  // A set-user-ID program's process: real uid 1000, effective 0 (a fake /proc).
  char dir[] = "/tmp/rota-procfs-XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  const std::string proc = dir;
  ASSERT_EQ(::mkdir((proc + "/42").c_str(), 0755), 0);
  std::ofstream(proc + "/42/status") << "Name:\tsu\nPPid:\t7\nUid:\t1000\t0\t0\t0\nGid:\t1000\t1000\t1000\t1000\n";
  std::ofstream(proc + "/42/cgroup") << "0::/user.slice\n";
  StatusOr<ProcessIdentity> id = ReadProcess(42, proc);
  ASSERT_TRUE(id.ok()) << id.status().message();
  EXPECT_EQ(id->ppid, 7);
  EXPECT_EQ(id->uid, 1000u);
  EXPECT_EQ(id->euid, 0u);
  EXPECT_EQ(id->cgroup, "/user.slice");
  std::filesystem::remove_all(proc);
}

TEST(Procfs, AChildNamesItsParent) {
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  StatusOr<ProcessIdentity> id = ReadProcess(child);
  ASSERT_TRUE(id.ok()) << id.status().message();
  EXPECT_EQ(id->ppid, ::getpid());
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  StatusOr<ProcessIdentity> gone = ReadProcess(child);
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.status().code(), StatusCode::kNotFound);
}

TEST(Procfs, StartTimeNamesOneProcess) {
  StatusOr<unsigned long long> mine = ProcessStartTime(::getpid());
  ASSERT_TRUE(mine.ok()) << mine.status().message();
  StatusOr<unsigned long long> again = ProcessStartTime(::getpid());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*mine, *again);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  StatusOr<unsigned long long> theirs = ProcessStartTime(child);
  ASSERT_TRUE(theirs.ok());
  EXPECT_GE(*theirs, *mine);  // started later (or within the same tick)
  // Our own start is not 0 unless we started at boot: the field was read, not defaulted.
  StatusOr<unsigned long long> init = ProcessStartTime(1);
  ASSERT_TRUE(init.ok());
  EXPECT_LT(*init, *theirs);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  EXPECT_EQ(ProcessStartTime(child).status().code(), StatusCode::kNotFound);
}

TEST(Procfs, CgroupMatchingAgainstTheExecutorsPaths) {
  EXPECT_TRUE(InCgroup("/rota/job-17", "/sys/fs/cgroup/rota/job-17"));
  EXPECT_TRUE(InCgroup("/rota/job-17/inner", "/sys/fs/cgroup/rota/job-17"));
  EXPECT_TRUE(InCgroup("/system.slice/rota.service/job-3", "/sys/fs/cgroup/system.slice/rota.service/job-3"));
  EXPECT_FALSE(InCgroup("/rota/job-1", "/sys/fs/cgroup/rota/job-17"));
  EXPECT_FALSE(InCgroup("/rota/job-171", "/sys/fs/cgroup/rota/job-17"));
  EXPECT_FALSE(InCgroup("/rota", "/sys/fs/cgroup/rota/job-17"));  // the base is not the job
  EXPECT_FALSE(InCgroup("/", "/sys/fs/cgroup/rota/job-17"));
  EXPECT_FALSE(InCgroup("", "/sys/fs/cgroup/rota/job-17"));
  EXPECT_FALSE(InCgroup("/rota/job-17", ""));
}

}  // namespace
}  // namespace procfs_test
}  // namespace rota::exec
