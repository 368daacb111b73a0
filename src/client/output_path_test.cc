// What `rota submit` says of an output file the job could not open. The refusals that need
// another user's permissions are in tests/daemon/test_permissions.py (root passes access(2)).
#include "client/output_path.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "testing/temp_dir.h"

namespace rota::client {
namespace output_path_test {
namespace {

class OutputPathTest : public ::testing::Test {
 protected:
  void ExpectRefused(const std::string& output, const std::string& mentions) {
    Status s = CheckOutputPath(output, dir_.path());
    ASSERT_FALSE(s.ok()) << output;
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find(mentions), std::string::npos) << s.message();
    EXPECT_EQ(s.message().find('\n'), std::string::npos);
  }
  rota::testing::TempDir dir_;
};

TEST_F(OutputPathTest, FilesInAnExistingDirectoryAreAccepted) {
  ASSERT_TRUE(dir_.ok());
  EXPECT_TRUE(CheckOutputPath("", dir_.path()).ok());                  // rota-%j.out in cwd
  EXPECT_TRUE(CheckOutputPath("out-%j.txt", dir_.path()).ok());
  EXPECT_TRUE(CheckOutputPath(dir_.File("abs.log"), "/").ok());
  std::ofstream(dir_.File("old.log")) << "earlier run\n";
  EXPECT_TRUE(CheckOutputPath("old.log", dir_.path()).ok());          // appended to
  EXPECT_TRUE(CheckOutputPath("/dev/null", dir_.path()).ok());        // a writable file in /dev
}

TEST_F(OutputPathTest, AMissingDirectoryIsRefusedWithTheCommandThatMakesIt) {
  ExpectRefused("results/run.log", "mkdir -p " + dir_.File("results"));
  ExpectRefused("results/run-%j.log", "does not exist");
  ExpectRefused(dir_.File("a/b/c.log"), "mkdir -p " + dir_.File("a/b"));
}

TEST_F(OutputPathTest, DirectoriesLinksAndNonDirectoriesAreRefused) {
  ASSERT_EQ(::mkdir(dir_.File("logs").c_str(), 0755), 0);
  ExpectRefused("logs", "is a directory");
  ExpectRefused("logs/", "names a directory");
  ASSERT_EQ(::symlink("/etc/passwd", dir_.File("link.log").c_str()), 0);
  ExpectRefused("link.log", "symbolic link");
  std::ofstream(dir_.File("plain")) << "x";
  ExpectRefused("plain/run.log", "is not a directory");
  // A named pipe: whoever reads it would get the job's output.
  ASSERT_EQ(::mkfifo(dir_.File("pipe").c_str(), 0666), 0);
  ExpectRefused("pipe", "is a named pipe");
}

TEST_F(OutputPathTest, TheDefaultOutputIsNamedAsSuch) {
  Status s = CheckOutputPath("", dir_.File("gone"));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("the default output " + dir_.File("gone") + "/rota-%j.out"), std::string::npos)
      << s.message();
}

TEST_F(OutputPathTest, ADirectoryPartWithTheJobIdIsNotJudged) {
  EXPECT_TRUE(CheckOutputPath("run-%j/out.log", dir_.path()).ok());
}

}  // namespace
}  // namespace output_path_test
}  // namespace rota::client
