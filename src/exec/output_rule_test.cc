#include "exec/output_rule.h"

#include <gtest/gtest.h>

#include <string>

namespace rota::exec {
namespace {

struct stat Of(mode_t mode, uid_t uid) {
  struct stat st {};
  st.st_mode = mode;
  st.st_uid = uid;
  return st;
}

TEST(OutputRuleTest, AFileOfTheOwnersOrADeviceAndNothingElse) {
  EXPECT_EQ(JudgeOutput(Of(S_IFREG | 0644, 1000), 1000), OutputFault::kNone);
  EXPECT_EQ(JudgeOutput(Of(S_IFCHR | 0666, 0), 1000), OutputFault::kNone);  // /dev/null, root's
  EXPECT_EQ(JudgeOutput(Of(S_IFREG | 0644, 1001), 1000), OutputFault::kOthersFile);
  EXPECT_EQ(JudgeOutput(Of(S_IFREG | 0666, 1000), 1000), OutputFault::kWorldWritable);
  EXPECT_EQ(JudgeOutput(Of(S_IFIFO | 0600, 1000), 1000), OutputFault::kPipe);  // even one's own
  EXPECT_EQ(JudgeOutput(Of(S_IFLNK | 0777, 1000), 1000), OutputFault::kLink);
  EXPECT_EQ(JudgeOutput(Of(S_IFSOCK | 0600, 1000), 1000), OutputFault::kNeither);
  EXPECT_EQ(JudgeOutput(Of(S_IFDIR | 0755, 1000), 1000), OutputFault::kNeither);
  EXPECT_EQ(std::string(OutputFaultWords(OutputFault::kPipe)), "is a named pipe");
  EXPECT_EQ(std::string(OutputFaultWords(OutputFault::kNone)), "");
}

}  // namespace
}  // namespace rota::exec
