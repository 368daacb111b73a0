// Tests of the refusal log's per-caller budget: a flood is said, counted and summed up, and one
// caller's flood leaves another's refusals logged.
#include "daemon/refusal_log.h"

#include <gtest/gtest.h>

namespace rota::daemon {
namespace refusal_log_test {
namespace {

constexpr Time kNow = 1796004000;

TEST(RefusalLogTest, SaysWhoWhatAndWhy) {
  RefusalLog log;
  std::vector<std::string> lines =
      log.Note("1001", "bob", "cancel", PermissionDenied("job 4 belongs to alice"), kNow);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "refused cancel from bob: permission_denied: job 4 belongs to alice");
  EXPECT_TRUE(RefusalLog::Warns(StatusCode::kPermissionDenied));
  EXPECT_TRUE(RefusalLog::Warns(StatusCode::kResourceExhausted));
  EXPECT_FALSE(RefusalLog::Warns(StatusCode::kInvalidArgument));
  EXPECT_EQ(log.Note("1001", "bob", "", InvalidArgument("not JSON"), kNow)[0],
            "refused a request from bob: invalid_argument: not JSON");
}

TEST(RefusalLogTest, AFloodIsCountedThenSummedUp) {
  RefusalLog log;
  int logged = 0;
  for (int i = 0; i < 1000; ++i) logged += static_cast<int>(log.Note("7", "mallory", "show", NotFound("x"), kNow + i % 30).size());
  EXPECT_EQ(logged, RefusalLog::kLinesPerWindow);
  // The last line logged says that what follows is counted.
  RefusalLog again;
  std::vector<std::string> last;
  for (int i = 0; i < RefusalLog::kLinesPerWindow; ++i) last = again.Note("7", "mallory", "show", NotFound("x"), kNow);
  EXPECT_NE(last[0].find("counted, not logged one by one"), std::string::npos) << last[0];
  // Another caller is not held back by mallory's flood.
  EXPECT_EQ(log.Note("8", "bob", "show", NotFound("y"), kNow + 1).size(), 1u);
  // Once the window is over, the count comes first, then the new refusal.
  std::vector<std::string> after = log.Note("7", "mallory", "show", NotFound("z"), kNow + RefusalLog::kWindow);
  ASSERT_EQ(after.size(), 2u);
  EXPECT_EQ(after[0], "refused 990 more request(s) from mallory in the minute before (not logged one by one)");
  EXPECT_EQ(after[1], "refused show from mallory: not_found: z");
}

TEST(RefusalLogTest, ManyCallersDoNotGrowWithoutBound) {
  RefusalLog log;
  for (uid_t uid = 0; uid < 20000; ++uid) {
    // Every caller a new one, each a minute apart from the others' start: old windows are dropped.
    EXPECT_EQ(log.Note(std::to_string(uid), "u", "hello", InvalidArgument("x"), kNow + uid * RefusalLog::kWindow).size(), 1u);
  }
  EXPECT_LE(log.callers(), 4097u);
}

}  // namespace
}  // namespace refusal_log_test
}  // namespace rota::daemon
