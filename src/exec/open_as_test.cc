// Tests of opening a user's file with that user's rights. As root, nobody's rights are taken
// (uid 65534): root's access no longer counts. As an ordinary user, only one's own files.
#include "exec/open_as.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "testing/temp_dir.h"

namespace rota::exec {
namespace open_as_test {
namespace {

constexpr uid_t kNobody = 65534;

class OpenAsUserTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "takes another user's rights: run as root (CI does)";
  }
  std::string Write(const std::string& name, const std::string& text, uid_t owner, mode_t mode) {
    const std::string p = dir_.path() + "/" + name;
    std::ofstream(p) << text;
    EXPECT_EQ(::chown(p.c_str(), owner, owner), 0);
    EXPECT_EQ(::chmod(p.c_str(), mode), 0);
    return p;
  }
  testing::TempDir dir_;
};

TEST_F(OpenAsUserTest, TheOwnersOwnFileIsOpened) {
  const std::string p = Write("out", "hello", kNobody, 0600);
  StatusOr<OpenedFile> f = OpenAsUser(p, kNobody, kNobody, {});
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->size, 5);
  char buf[8] = {};
  EXPECT_EQ(::pread(f->fd, buf, sizeof buf, 0), 5);
  ::close(f->fd);
}

TEST_F(OpenAsUserTest, ADirectoryTheUserMayNotEnterIsNotEnteredForThem) {
  // The audit: root opened a user's own file inside a root-only directory on the user's behalf.
  const std::string locked = dir_.path() + "/root-only";
  ASSERT_EQ(::mkdir(locked.c_str(), 0700), 0);
  const std::string p = locked + "/out";
  std::ofstream(p) << "x";
  ASSERT_EQ(::chown(p.c_str(), kNobody, kNobody), 0);
  StatusOr<OpenedFile> f = OpenAsUser(p, kNobody, kNobody, {});
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(f.status().message().find("Permission denied"), std::string::npos) << f.status().message();
}

TEST_F(OpenAsUserTest, LinksDevicesAndOthersFilesAreRefused) {
  const std::string mine = Write("mine", "x", kNobody, 0644);
  const std::string link = dir_.path() + "/link";
  ASSERT_EQ(::symlink(mine.c_str(), link.c_str()), 0);
  EXPECT_EQ(OpenAsUser(link, kNobody, kNobody, {}).status().code(), StatusCode::kPermissionDenied);
  StatusOr<OpenedFile> dev = OpenAsUser("/dev/null", kNobody, kNobody, {});
  ASSERT_FALSE(dev.ok());
  EXPECT_NE(dev.status().message().find("not a regular file"), std::string::npos);
  const std::string roots = Write("roots", "secret", 0, 0644);  // readable, but not theirs
  StatusOr<OpenedFile> other = OpenAsUser(roots, kNobody, kNobody, {});
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find("does not belong to uid 65534"), std::string::npos);
  EXPECT_EQ(OpenAsUser(dir_.path() + "/none", kNobody, kNobody, {}).status().code(), StatusCode::kNotFound);
  // A FIFO of the user's does not block the open (O_NONBLOCK), and is refused.
  const std::string fifo = dir_.path() + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  ASSERT_EQ(::chown(fifo.c_str(), kNobody, kNobody), 0);
  EXPECT_EQ(OpenAsUser(fifo, kNobody, kNobody, {}).status().code(), StatusCode::kPermissionDenied);
}

}  // namespace
}  // namespace open_as_test
}  // namespace rota::exec
