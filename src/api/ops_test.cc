// Tests of the table of operations: its entries agree with each other and with docs/api.md,
// which has a section for each operation the table lists.
#include "api/ops.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace rota::api {
namespace ops_test {
namespace {

TEST(OpsTest, NamesAreUniqueAndEachEntryAgreesWithItself) {
  std::set<std::string_view> names;
  for (const OpInfo& op : Ops()) {
    EXPECT_TRUE(names.insert(op.name).second) << op.name;
    EXPECT_EQ(FindOp(op.name), &op);
    EXPECT_EQ(op.access == OpAccess::kAdmin, !op.admin_action.empty()) << op.name;
    if (op.public_read) {
      EXPECT_TRUE(op.read_only) << op.name << ": public but not read-only";
    }
    if (!op.socket_only.empty()) {
      EXPECT_FALSE(op.public_read) << op.name;
    }
  }
  EXPECT_EQ(FindOp("nonsense"), nullptr);
  EXPECT_EQ(FindOp(""), nullptr);
  EXPECT_EQ(OpNames().substr(0, 20), "hello, submit, run, ");
}

TEST(OpsTest, WhatOnlyAdminsMayDoAndWhatNeedsTheSocket) {
  for (const char* op : {"drain", "resume", "reload", "approve", "reject", "notify_test", "notify_log"}) {
    ASSERT_NE(FindOp(op), nullptr) << op;
    EXPECT_EQ(FindOp(op)->access, OpAccess::kAdmin) << op;
  }
  for (const char* op : {"run", "session_end", "session_signal", "session_attach", "web_login", "token_create"}) {
    EXPECT_FALSE(FindOp(op)->socket_only.empty()) << op;
  }
  EXPECT_TRUE(FindOp("submit")->socket_only.empty());
  EXPECT_TRUE(FindOp("queue")->public_read);
  EXPECT_FALSE(FindOp("logs")->public_read);  // one user's output, never anonymous
  EXPECT_FALSE(FindOp("cancel")->read_only);
}

// docs/api.md has a "### `op`" heading (alone or with others) for every operation.
TEST(OpsTest, EveryOperationIsDocumented) {
  std::ifstream in(std::string(ROTA_SOURCE_DIR) + "/docs/api.md");
  ASSERT_TRUE(in.good());
  std::set<std::string> documented;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("### ", 0) != 0) continue;
    for (std::size_t at = line.find('`'); at != std::string::npos; at = line.find('`', at)) {
      const std::size_t end = line.find('`', at + 1);
      if (end == std::string::npos) break;
      documented.insert(line.substr(at + 1, end - at - 1));
      at = end + 1;
    }
  }
  for (const OpInfo& op : Ops()) {
    EXPECT_TRUE(documented.count(std::string(op.name))) << op.name << " has no section in docs/api.md";
  }
}

}  // namespace
}  // namespace ops_test
}  // namespace rota::api
