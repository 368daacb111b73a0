// Tests of what rotad counts of its own work: waits and passes, starts and ends, idle
// card-seconds between samples, and how they read in `rota status` and /metrics.
#include "daemon/counters.h"

#include <gtest/gtest.h>

namespace rota::daemon {
namespace counters_test {
namespace {

TEST(SchedulerCountersTest, WaitsStartsAndEnds) {
  SchedulerCounters c;
  c.JobStarted(1000, 1300);  // waited 5 minutes
  c.JobStarted(0, 1300);     // submit time unknown: counted, not timed
  c.JobEnded("completed");
  c.JobEnded("completed");
  c.JobEnded("requeued");
  EXPECT_EQ(c.started(), 2u);
  web::MetricsWriter w;
  c.WriteRuns(w);
  const std::string text = w.text();
  EXPECT_NE(text.find("rota_job_wait_seconds_count 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("rota_job_wait_seconds_sum 300\n"), std::string::npos) << text;
  EXPECT_NE(text.find("rota_jobs_started_total 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("rota_jobs_ended_total{reason=\"completed\"} 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("rota_jobs_ended_total{reason=\"requeued\"} 1\n"), std::string::npos) << text;
}

TEST(SchedulerCountersTest, PassesLastMeanAndLongest) {
  SchedulerCounters c;
  EXPECT_EQ(c.PassesJson()["passes"], 0);
  EXPECT_EQ(c.PassesJson()["mean_ms"], 0.0);
  c.PassTook(0.002);
  c.PassTook(0.004);
  c.PassTook(0.001);
  const nlohmann::json j = c.PassesJson();
  EXPECT_EQ(j["passes"], 3);
  EXPECT_DOUBLE_EQ(j["last_ms"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(j["max_ms"].get<double>(), 4.0);
  EXPECT_NEAR(j["mean_ms"].get<double>(), 7.0 / 3, 1e-9);
}

TEST(SchedulerCountersTest, IdleCardSecondsAreCountedBetweenSamples) {
  SchedulerCounters c;
  c.CardsSampled(4, 1000);  // the first sample starts the count
  EXPECT_EQ(c.idle_gpu_seconds(), 0);
  c.CardsSampled(3, 1010);  // three idle cards for the 10 s since the last sample
  EXPECT_EQ(c.idle_gpu_seconds(), 30);
  c.CardsSampled(0, 1010);  // no time passed
  c.CardsSampled(2, 1005);  // a clock set back counts nothing
  EXPECT_EQ(c.idle_gpu_seconds(), 30);
  web::MetricsWriter w;
  c.WriteIdle(w);
  EXPECT_NE(w.text().find("rota_idle_gpu_seconds_total 30\n"), std::string::npos) << w.text();
}

}  // namespace
}  // namespace counters_test
}  // namespace rota::daemon
