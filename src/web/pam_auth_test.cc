// Tests of what password sign-in decides before PAM: the first ordinary uid and the service file.
#include "web/pam_auth.h"

#include <gtest/gtest.h>

#include <fstream>

#include "testing/temp_dir.h"

namespace rota::web {
namespace pam_auth_test {
namespace {

TEST(PamAuthTest, FirstUserUidFromLoginDefs) {
  testing::TempDir dir;
  const std::string defs = dir.path() + "/login.defs";
  std::ofstream(defs) << "# comment\nUID_MAX 60000\nUID_MIN\t\t 2000\n";
  EXPECT_EQ(FirstUserUid(defs), 2000u);
  std::ofstream(defs) << "UID_MAX 60000\n";
  EXPECT_EQ(FirstUserUid(defs), 1000u);  // not set: Debian's default
  EXPECT_EQ(FirstUserUid(dir.path() + "/none"), 1000u);
}

TEST(PamAuthTest, TheServiceFileMustBeThere) {
  testing::TempDir dir;
  Status missing = PamServiceReady("rota", dir.path());
  EXPECT_EQ(missing.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(missing.message().find(dir.path() + "/rota"), std::string::npos);
  std::ofstream(dir.path() + "/rota") << "auth required pam_deny.so\n";
  EXPECT_TRUE(PamServiceReady("rota", dir.path()).ok());
}

}  // namespace
}  // namespace pam_auth_test
}  // namespace rota::web
