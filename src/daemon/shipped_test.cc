#include "daemon/shipped.h"

#include <gtest/gtest.h>

#include "testing/temp_dir.h"

namespace rota::daemon {
namespace shipped_test {
namespace {

TEST(ShippedPath, TheBuildsOwnPathWhereItExistsElseBesideTheProgram) {
  testing::TempDir dir;
  EXPECT_EQ(ShippedPath(dir.path(), "web"), dir.path());
  // This test program's ../share/rota/<name> does not exist: the compiled-in path stays, for the
  // caller's message about it.
  EXPECT_EQ(ShippedPath(dir.File("gone"), "no-such-name-here"), dir.File("gone"));
}

}  // namespace
}  // namespace shipped_test
}  // namespace rota::daemon
