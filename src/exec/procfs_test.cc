#include "exec/procfs.h"

#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include <gtest/gtest.h>

namespace rota::exec {
namespace {

TEST(Procfs, ReadsItselfAndItsParent) {
  StatusOr<ProcessIdentity> me = ReadProcess(::getpid());
  ASSERT_TRUE(me.ok()) << me.status().message();
  EXPECT_EQ(me->pid, ::getpid());
  EXPECT_EQ(me->ppid, ::getppid());
  EXPECT_EQ(me->uid, ::getuid());
  // Whatever cgroup we run in, /proc/self/cgroup's unified line names the same one.
  std::ifstream in("/proc/self/cgroup");
  std::string line, unified;
  while (std::getline(in, line)) {
    if (line.rfind("0::", 0) == 0) unified = line.substr(3);
  }
  EXPECT_EQ(me->cgroup, unified);
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
}  // namespace rota::exec
