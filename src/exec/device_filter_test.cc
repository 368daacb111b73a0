// Tests of the device program on a real cgroup v2 (as root, where BPF is allowed): the devices it
// lists are refused to the cgroup's processes, others are not, and other cgroups are untouched.
#include "exec/device_filter.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "exec/cgroup.h"
#include "exec/files.h"

namespace rota::exec {
namespace device_filter_test {
namespace {

// Where a test cgroup can go: the v2 mount, from /proc/self/mountinfo.
std::string CgroupMount() {
  std::ifstream in("/proc/self/mountinfo");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::optional<Cgroup2Mount> m = FindCgroup2Mount(text);
  return m ? m->mount_point : "";
}

// In a child moved into `dir`: errno of opening each path (0 when it opened).
std::vector<int> OpenErrorsIn(const std::string& dir, const std::vector<std::string>& paths) {
  int pipefd[2];
  EXPECT_EQ(::pipe(pipefd), 0);
  pid_t child = ::fork();
  if (child == 0) {
    if (!WriteControlFile(dir + "/cgroup.procs", "0").ok()) ::_exit(3);
    for (const std::string& p : paths) {
      int fd = ::open(p.c_str(), O_RDONLY);
      int err = fd < 0 ? errno : 0;
      if (::write(pipefd[1], &err, sizeof err) != sizeof err) ::_exit(4);
    }
    ::_exit(0);
  }
  ::close(pipefd[1]);
  std::vector<int> out;
  int err;
  while (::read(pipefd[0], &err, sizeof err) == sizeof err) out.push_back(err);
  ::close(pipefd[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  return out;
}

class DeviceFilterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "BPF device programs need root (CI runs as root)";
    if (!DeviceFilterAvailable()) GTEST_SKIP() << "this kernel loads no device program here";
    const std::string mount = CgroupMount();
    if (mount.empty()) GTEST_SKIP() << "no cgroup v2";
    dir_ = mount + "/rota-device-filter-test-" + std::to_string(::getpid());
    other_ = dir_ + "-other";
    if (::mkdir(dir_.c_str(), 0755) != 0 || ::mkdir(other_.c_str(), 0755) != 0) {
      GTEST_SKIP() << "cannot make a cgroup under " << mount;
    }
  }
  void TearDown() override {
    if (!dir_.empty()) ::rmdir(dir_.c_str());
    if (!other_.empty()) ::rmdir(other_.c_str());
  }
  std::string dir_, other_;
};

TEST_F(DeviceFilterTest, ListedDevicesAreRefusedOthersAreNot) {
  struct stat null_st {}, zero_st {};
  ASSERT_EQ(::stat("/dev/null", &null_st), 0);
  ASSERT_EQ(::stat("/dev/zero", &zero_st), 0);
  const CharDevice null_dev{major(null_st.st_rdev), minor(null_st.st_rdev)};
  const CharDevice urandom{1, 9};
  ASSERT_TRUE(DenyDevices(dir_, {urandom, null_dev}).ok());
  EXPECT_EQ(OpenErrorsIn(dir_, {"/dev/null", "/dev/zero", "/dev/urandom"}),
            (std::vector<int>{EPERM, 0, EPERM}));
  // Another cgroup is not concerned.
  EXPECT_EQ(OpenErrorsIn(other_, {"/dev/null", "/dev/urandom"}), (std::vector<int>{0, 0}));
  (void)zero_st;
}

TEST_F(DeviceFilterTest, AnEmptyListAttachesNothing) {
  ASSERT_TRUE(DenyDevices(dir_, {}).ok());
  EXPECT_EQ(OpenErrorsIn(dir_, {"/dev/null"}), (std::vector<int>{0}));
  EXPECT_EQ(DenyDevices("/nonexistent-cgroup", {{1, 3}}).code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace device_filter_test
}  // namespace rota::exec
