#include "cli/usage_format.h"

#include <gtest/gtest.h>

#include "cli/utc_test.h"

namespace rota::cli {
namespace usage_format_test {
namespace {

using UsageFormatTest = UtcTest;

nlohmann::json Reply() {
  return nlohmann::json::parse(R"({
    "ok": true, "now": 1704196800, "week_start": 1704067200, "days_covered": 2,
    "users": [
      {"name": "alice", "week_gpu_hours": 12.3, "quota_gpu_hours": 40, "pool_gpu_hours": 1.5, "jobs": 3,
       "outside_gpu_hours": 7.4,
       "avg_wait_seconds": 150, "allocated_util": 63.4, "idle_gpu_hours": 0.5, "no_shows": 1, "overruns": 0},
      {"name": "张伟", "week_gpu_hours": 2, "quota_gpu_hours": null, "pool_gpu_hours": 0, "jobs": 0,
       "avg_wait_seconds": 0, "allocated_util": null, "idle_gpu_hours": 0, "no_shows": 0, "overruns": 2}],
    "projects": [{"name": "nlp", "week_gpu_hours": 14.25, "quota_gpu_hours": null}],
    "days": [
      {"day": "2024-01-01", "start": 1704067200, "gpu_hours": {}, "total_gpu_hours": 0, "avg_wait_seconds": 0, "allocated_util": null},
      {"day": "2024-01-02", "start": 1704153600, "gpu_hours": {"alice": 4}, "total_gpu_hours": 6.5, "avg_wait_seconds": 90, "allocated_util": 50}],
    "totals": {"avg_wait_seconds": 150, "allocated_util": 61, "idle_gpu_hours": 3.3, "no_shows": 1, "overruns": 2}
  })");
}

// The line of `text` that starts with `start`.
std::string LineStarting(const std::string& text, const std::string& start) {
  size_t at = text.find("\n" + start);
  if (at == std::string::npos) return "";
  at += 1;
  return text.substr(at, text.find('\n', at) - at);
}

TEST_F(UsageFormatTest, UsersProjectsDaysAndTotals) {
  const std::string text = FormatUsage(Reply(), 7);
  EXPECT_NE(text.find("OUTSIDE"), std::string::npos) << text;  // alice's jobs outside Rota
  EXPECT_EQ(text.rfind("This week (since Mon 01-01 00:00), GPU-hours:\n", 0), 0u) << text;
  // alice: hours with one decimal, the quota, the wait as a duration, utilisation rounded.
  const std::string alice = LineStarting(text, "alice");
  for (const char* part : {"12.3", "40.0", "1.5", "7.4", "2m", "63%", "0.5"}) {
    EXPECT_NE(alice.find(part), std::string::npos) << part << " in: " << alice;
  }
  // No quota and no measurement print as "-"; the columns of the Chinese name's row line up with
  // alice's by display width.
  const std::string zhang = LineStarting(text, "张伟");
  ASSERT_FALSE(zhang.empty()) << text;
  EXPECT_NE(zhang.find(" - "), std::string::npos) << zhang;
  EXPECT_EQ(DisplayWidth(zhang.substr(0, zhang.find("2.0") + 3)), DisplayWidth(alice.substr(0, alice.find("12.3") + 4)))
      << text;
  EXPECT_FALSE(LineStarting(text, "nlp").empty()) << text;
  EXPECT_NE(LineStarting(text, "2024-01-02").find("6.5"), std::string::npos) << text;
  EXPECT_NE(LineStarting(text, "2024-01-02").find("50%"), std::string::npos) << text;
  EXPECT_NE(text.find("Lab, last 2 days: average wait 2m, utilisation of allocated GPUs 61%, 3.3 idle GPU-hours, "
                      "1 no-shows, 2 overruns\n"),
            std::string::npos)
      << text;
}

TEST_F(UsageFormatTest, ShowsOnlyTheMostRecentDays) {
  const std::string text = FormatUsage(Reply(), 1);
  EXPECT_EQ(text.find("2024-01-01"), std::string::npos) << text;
  EXPECT_NE(text.find("2024-01-02"), std::string::npos) << text;
}

// A lab without jobs outside Rota (one server, or nobody bypasses it) sees no such column.
TEST_F(UsageFormatTest, NoOutsideColumnWhereNobodyHasAny) {
  nlohmann::json reply = Reply();
  reply["users"][0]["outside_gpu_hours"] = 0;
  const std::string text = FormatUsage(reply, 7);
  EXPECT_EQ(text.find("OUTSIDE"), std::string::npos) << text;
  EXPECT_NE(LineStarting(text, "alice").find("12.3"), std::string::npos) << text;
}

}  // namespace
}  // namespace usage_format_test
}  // namespace rota::cli
