// Tests of naming a process by pidfd (PidfdProcessOf): the caller's own process, another uid's,
// a descriptor that is not a pidfd, and a process that has exited.
#include "exec/process.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

namespace rota::exec {
namespace process_test {
namespace {

TEST(PidfdProcessTest, OwnProcessIsNamedByItsPid) {
  StatusOr<int> fd = OpenPidfd(::getpid());
  ASSERT_TRUE(fd.ok()) << fd.status().ToString();
  StatusOr<pid_t> pid = PidfdProcessOf(*fd, ::getuid());
  ASSERT_TRUE(pid.ok()) << pid.status().ToString();
  EXPECT_EQ(*pid, ::getpid());
  // The same process is not another uid's.
  StatusOr<pid_t> other = PidfdProcessOf(*fd, ::getuid() + 1);
  EXPECT_EQ(other.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(other.status().message().find("not as the caller"), std::string::npos);
  ::close(*fd);
}

TEST(PidfdProcessTest, ADescriptorThatIsNotAPidfd) {
  int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(PidfdProcessOf(fd, ::getuid()).status().code(), StatusCode::kInvalidArgument);
  ::close(fd);
  EXPECT_EQ(PidfdProcessOf(-1, ::getuid()).status().code(), StatusCode::kInvalidArgument);
}

TEST(PidfdProcessTest, AProcessThatExitedIsNotFound) {
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  StatusOr<int> fd = OpenPidfd(child);
  ASSERT_TRUE(fd.ok());
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);  // reaped: its pid is free for reuse
  EXPECT_EQ(PidfdProcessOf(*fd, ::getuid()).status().code(), StatusCode::kNotFound);
  ::close(*fd);
}

}  // namespace
}  // namespace process_test
}  // namespace rota::exec
