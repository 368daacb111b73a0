// Tests of what `rota advise` prints for each kind of answer: a job worth renting for, one worth
// waiting for, one whose start nobody can foresee, a job not waiting, and a missing price table.
#include "cli/advise_format.h"

#include <gtest/gtest.h>

#include "cli/utc_test.h"

namespace rota::cli {
namespace advise_format_test {
namespace {

using nlohmann::json;

class AdviseFormatTest : public UtcTest {};

json Job(bool advise) {
  return {{"job_id", 12}, {"state", "pending"}, {"name", "train"}, {"user", "alice"},
          {"expected_start", 1796400000}, {"estimated", true}, {"wait_seconds", 100800},
          {"backlog_gpu_hours", 340.25}, {"cards", 2}, {"gpu_model", "NVIDIA A100-SXM4-80GB"}, {"hours", 6.0},
          {"advise", advise},
          {"options", {{{"provider", "gcp"}, {"region", "us-central1"}, {"instance_type", "a2-ultragpu-1g"},
                        {"gpu_model", "A100 80GB"}, {"gpu_count", 1}, {"instances", 2}, {"price_per_hour", 5.0688},
                        {"spot_price", 1.6}, {"currency", "USD"}, {"date", "2024-01-01"}, {"cost", 60.8256},
                        {"spot_cost", 19.2}}}}};
}

TEST_F(AdviseFormatTest, AWaitWorthRentingFor) {
  const std::string text = FormatAdvice({{"threshold_seconds", 86400}, {"jobs", {Job(true)}}});
  EXPECT_EQ(text,
            "Job 12 (train), alice: expected to start in about 1d04h (2026-12-04 16:00, estimated from the time "
            "limits of the jobs ahead).\n"
            "  The lab's backlog ahead of it: 340 GPU-hours.\n"
            "  Renting 2 x NVIDIA A100-SXM4-80GB for 6h00m (its time limit) would cost about:\n"
            "    60.83 USD  gcp us-central1 2 x a2-ultragpu-1g (1 x A100 80GB), spot about 19.20; prices of "
            "2024-01-01\n");
}

TEST_F(AdviseFormatTest, AForecastIsSaidAndJudgesTheDeadline) {
  json j = Job(true);
  // Likely in 2 hours, 90% within 5, to run 3 hours: a deadline in 9 hours is within reach.
  j["forecast"] = {{"p50", 1796320800 + 7200}, {"p90", 1796320800 + 5 * 3600}, {"runtime", 3 * 3600}};
  j["deadline"] = 1796320800 + 9 * 3600;
  j["deadline_at_risk"] = false;
  std::string text = FormatAdvice({{"now", 1796320800}, {"threshold_seconds", 86400}, {"jobs", {j}}});
  EXPECT_NE(text.find("  Likely to start in about 2h00m (2026-12-03 20:00), 90% by 2026-12-03 23:00, and to run "
                      "about 3h00m, from the lab's history.\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  Its deadline, 2026-12-04 03:00, is within reach: started at its p90, it would end about "
                      "2026-12-04 02:00.\n"),
            std::string::npos)
      << text;
  j["deadline_at_risk"] = true;
  text = FormatAdvice({{"now", 1796320800}, {"threshold_seconds", 86400}, {"jobs", {j}}});
  EXPECT_NE(text.find("is at risk: started at its p90, it would end about 2026-12-04 02:00.\n"), std::string::npos)
      << text;
  // A p90 within the threshold: the deadline, not the wait, is why renting is advised.
  EXPECT_NE(text.find("  The wait is short, but not short enough for the deadline.\n"), std::string::npos) << text;
}

TEST_F(AdviseFormatTest, WaitingUnforeseenNotWaitingAndNoTable) {
  json short_wait = Job(false);
  json unknown = Job(true);
  unknown["expected_start"] = nullptr;
  unknown["options"] = json::array();
  const std::string text = FormatAdvice({{"threshold_seconds", 86400},
                                         {"prices", "/etc/rota/gpu-prices.csv"},
                                         {"prices_error", "/etc/rota/gpu-prices.csv: cannot open"},
                                         {"jobs", {short_wait, unknown, {{"job_id", 3}, {"state", "running"}}}}});
  EXPECT_NE(text.find("rota: no price table: /etc/rota/gpu-prices.csv: cannot open\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  That is within 1d00h: waiting is the better deal.\n"), std::string::npos) << text;
  EXPECT_NE(text.find("Job 12 (train), alice: no start can be foreseen yet"), std::string::npos) << text;
  EXPECT_NE(text.find("  The price table has no instance with NVIDIA A100-SXM4-80GB: ask the admins to add one.\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Job 3: not waiting (running).\n"), std::string::npos) << text;
  EXPECT_EQ(FormatAdvice({{"jobs", json::array()}}), "No waiting jobs.\n");
  json almost = Job(false);
  almost["backlog_gpu_hours"] = 3.9989;  // two cards for a little under two hours
  EXPECT_NE(FormatAdvice({{"jobs", {almost}}}).find("ahead of it: 4 GPU-hours.\n"), std::string::npos);
}

TEST_F(AdviseFormatTest, ADeadlineAtRiskIsSaidAndAdvisedOnEvenForAShortWait) {
  json job = Job(true);  // expected 2026-12-04 16:00 (UTC), 6 h limit: it may run until 22:00
  job["wait_seconds"] = 3600;
  job["deadline"] = 1796400000 + 4 * 3600;
  job["deadline_at_risk"] = true;
  const std::string text = FormatAdvice({{"threshold_seconds", 86400}, {"jobs", {job}}});
  EXPECT_NE(text.find("  Its deadline, 2026-12-04 20:00, is at risk: started then, it may run until 2026-12-04 22:00 "
                      "(its time limit).\n  The wait is short, but not short enough for the deadline.\n  Renting 2 x"),
            std::string::npos)
      << text;
  json fine = Job(false);
  fine["deadline"] = 1796400000 + 7 * 3600;
  fine["deadline_at_risk"] = false;
  EXPECT_NE(FormatAdvice({{"threshold_seconds", 86400}, {"jobs", {fine}}})
                .find("  Its deadline, 2026-12-04 23:00, is within reach: it should end by 2026-12-04 22:00 at the "
                      "latest.\n  That is within"),
            std::string::npos);
  json unforeseen = Job(true);
  unforeseen["expected_start"] = nullptr;
  unforeseen["deadline"] = 1796400000;
  unforeseen["deadline_at_risk"] = true;
  EXPECT_NE(FormatAdvice({{"jobs", {unforeseen}}}).find("is at risk: no start can be foreseen.\n"), std::string::npos);
}

}  // namespace
}  // namespace advise_format_test
}  // namespace rota::cli
