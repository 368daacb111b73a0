// Tests of passing descriptors over a socketpair: one with the bytes, several, and none.
#include "unixio/fd_passing.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

namespace rota::unixio {
namespace fd_passing_test {
namespace {

TEST(FdPassingTest, ADescriptorTravelsWithItsBytes) {
  int pair[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
  int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ASSERT_EQ(SendWithFd(pair[0], "hi", 2, devnull), 2);
  ASSERT_EQ(SendWithFd(pair[0], "!", 1, -1), 1);
  char buf[8] = {};
  int fds[kMaxFds];
  std::size_t n = 0;
  ASSERT_EQ(ReceiveWithFds(pair[1], buf, 2, fds, &n), 2);
  ASSERT_EQ(n, 1u);
  struct stat a {}, b {};
  ASSERT_EQ(::fstat(devnull, &a), 0);
  ASSERT_EQ(::fstat(fds[0], &b), 0);
  EXPECT_EQ(a.st_rdev, b.st_rdev);  // the same file
  EXPECT_NE(::fcntl(fds[0], F_GETFD) & FD_CLOEXEC, 0);
  ::close(fds[0]);
  ASSERT_EQ(ReceiveWithFds(pair[1], buf, sizeof buf, fds, &n), 1);
  EXPECT_EQ(n, 0u);
  ::close(devnull);
  ::close(pair[0]);
  ::close(pair[1]);
}

}  // namespace
}  // namespace fd_passing_test
}  // namespace rota::unixio
