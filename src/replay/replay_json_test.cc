// Tests of the replay figures' JSON: the per-policy figures from a real replay, each user's waits,
// the recorded waits, and a tuning candidate's weights and size basis.
#include "replay/replay_json.h"

#include <gtest/gtest.h>

namespace rota::replay {
namespace replay_json_test {
namespace {

sim::Trace TwoUsers() {
  sim::Trace t;
  for (int i = 0; i < 4; ++i) {
    sim::TraceJob j;
    j.line = i + 2;
    j.submit = 0;
    j.duration = 100 * (i + 1);
    j.gpus = 1;
    j.user = i % 2 ? "bo" : "ana";
    t.jobs.push_back(j);
  }
  return t;
}

TEST(ReplayJson, ThePolicysFiguresAndEachUsersWaits) {
  sim::SimConfig c;
  c.gpus = 1;
  c.gpus_per_node = 1;
  c.policy.algorithm = Algorithm::kFifo;
  c.keep_outcomes = true;
  StatusOr<sim::SimResult> r = sim::Simulate(TwoUsers(), c);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const nlohmann::json j = ResultJson(*r, 0.25, true);
  EXPECT_EQ(j["policy"], "fifo");
  EXPECT_EQ(j["jobs"], 4);
  EXPECT_DOUBLE_EQ(j["wall_seconds"].get<double>(), 0.25);
  // One card, in submit order: waits 0, 100, 300, 600.
  EXPECT_DOUBLE_EQ(j["avg_wait"].get<double>(), 250);
  EXPECT_DOUBLE_EQ(j["max_wait"].get<double>(), 600);
  EXPECT_TRUE(j.contains("idle_gpu_seconds"));
  EXPECT_FALSE(j.contains("bookings"));
  ASSERT_EQ(j["per_user"].size(), 2u);
  EXPECT_EQ(j["per_user"][0]["user"], "ana");
  EXPECT_DOUBLE_EQ(j["per_user"][0]["avg_wait"].get<double>(), 150);  // 0 and 300
  EXPECT_DOUBLE_EQ(j["per_user"][1]["avg_wait"].get<double>(), 350);  // 100 and 600
  EXPECT_FALSE(ResultJson(*r, 0, false).contains("per_user"));
  const nlohmann::json rec = RecordedJson(r->outcomes, 1);
  EXPECT_EQ(rec["jobs"], 4);
  EXPECT_DOUBLE_EQ(rec["avg_wait"].get<double>(), 250);
  EXPECT_EQ(rec["per_user"].size(), 2u);
}

TEST(ReplayJson, ATuningCandidateSaysItsWeightsAndWhatSizeIsOn) {
  sim::TuneCandidate c;
  c.weights.age = 250;
  c.time_of_day = false;
  c.size_by_prediction = true;
  const nlohmann::json j = TuneFiguresJson(c);
  EXPECT_EQ(j["weights"]["age"], 250);
  EXPECT_EQ(j["time_of_day"], false);
  EXPECT_EQ(j["size_by"], "prediction");
  EXPECT_TRUE(j["per_user"].is_array());
}

}  // namespace
}  // namespace replay_json_test
}  // namespace rota::replay
