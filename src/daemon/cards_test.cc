// The card watch's rules, in-process on virtual time (testing::InProcessDaemon with FakeCards):
// a failing card goes suspect, then drained after [gpus] drain_after failed samples, its jobs
// stop (requeued where asked) and it comes back by itself once healthy and empty; a source that
// fails as a whole stops nothing; a process nobody started through Rota keeps its card from new
// work until it leaves. The same rules through the real NVML code (the fake libnvidia-ml) are
// in tests/daemon/test_gpus.py.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "testing/daemon/in_process.h"

namespace rota::daemon {
namespace cards_test {
namespace {

using nlohmann::json;
using testing::InProcessDaemon;

constexpr Time kStart = testing::kTuesdayMorning;
const std::string kTwoCards = testing::SimulatedCards(2);

json OneGpu() { return {{"request", {{"gpus", 1}}}, {"time_limit", 4 * kHour}}; }

// Card `index` as `rota gpus --json` shows it.
json Card(InProcessDaemon& d, int index) {
  const json reply = d.Call("root", {{"op", "gpus"}});
  for (const json& g : reply.value("gpus", json::array())) {
    if (g.value("index", -1) == index) return g;
  }
  ADD_FAILURE() << "no card " << index << " in " << reply.dump();
  return json::object();
}

// The index of the card job `id` runs on.
int CardOf(InProcessDaemon& d, JobId id) {
  const json job = d.Show(id);
  const json gpus = job.value("gpus", json::array());
  if (gpus.size() != 1) {
    ADD_FAILURE() << "job " << id << " is not on one card: " << job.dump();
    return -1;
  }
  return gpus[0].get<int>();
}

std::string History(InProcessDaemon& d, JobId id) {
  const json reply = d.Call("root", {{"op", "show"}, {"job_id", id}});
  std::string all;
  for (const json& e : reply["events"]) all += e.value("reason", "") + "\n";
  return all;
}

TEST(CardsTest, AFailingCardIsSuspectThenDrainedAndItsJobStops) {
  InProcessDaemon d(kTwoCards, kStart);  // drain_after = 3 by default
  ASSERT_TRUE(d.ok());
  const JobId victim = d.Submit("alice", OneGpu());
  const JobId survivor = d.Submit("bob", OneGpu());
  const int bad = CardOf(d, victim);
  ASSERT_NE(bad, CardOf(d, survivor));

  d.cards().SetHealth(bad, Unavailable("GPU is lost"));
  d.Sample();
  json card = Card(d, bad);
  EXPECT_EQ(card["health"], "suspect") << card.dump();
  EXPECT_EQ(card["health_error"], "GPU is lost");
  EXPECT_TRUE(d.engine().Running(victim));  // one bad read stops nothing
  d.Advance(kMinute);
  d.Sample();
  EXPECT_TRUE(d.engine().Running(victim));
  d.Advance(kMinute);
  d.Sample();  // the third failed sample in a row
  card = Card(d, bad);
  EXPECT_EQ(card["health"], "drained") << card.dump();
  EXPECT_EQ(card["drained_by"], "health");
  d.Settle();
  EXPECT_FALSE(d.engine().Running(victim));
  const json job = d.Show(victim);
  EXPECT_EQ(job["state"], "node_fail") << job.dump();
  EXPECT_EQ(job["end_reason"], "NodeFail: GPU " + std::to_string(bad) + " failed: GPU is lost") << job.dump();
  EXPECT_EQ(job["end_time"], kStart + 2 * kMinute);
  EXPECT_TRUE(d.engine().Running(survivor));

  // Nothing new lands on it.
  const JobId waiting = d.Submit("carol", OneGpu());
  d.Advance(kMinute);
  d.Sample();
  EXPECT_EQ(d.State(waiting), "pending");

  // Fine again and empty: back after three good samples (recover_after), and carol starts on it.
  d.cards().SetHealth(bad, Status());
  d.Advance(kMinute);
  d.Sample();
  d.Advance(kMinute);
  d.Sample();
  EXPECT_EQ(Card(d, bad)["health"], "drained");
  EXPECT_EQ(d.State(waiting), "pending");
  d.Advance(kMinute);
  d.Sample();
  card = Card(d, bad);
  EXPECT_EQ(card["health"], "healthy") << card.dump();
  EXPECT_FALSE(card["drained"].get<bool>());
  EXPECT_EQ(d.State(waiting), "running");
  EXPECT_EQ(CardOf(d, waiting), bad);
}

TEST(CardsTest, AJobThatAskedForItIsRequeuedWhenItsCardFails) {
  InProcessDaemon d("[gpus]\ndrain_after = 1\n" + kTwoCards.substr(std::string("[gpus]\n").size()), kStart);
  ASSERT_TRUE(d.ok());
  json job = OneGpu();
  job["requeue"] = true;
  const JobId id = d.Submit("alice", job);
  const int bad = CardOf(d, id);
  d.cards().SetHealth(bad, Unavailable("uncorrected ECC errors: 3"));
  d.Advance(kMinute);
  d.Sample();
  d.Settle();
  // Requeued, and started again at once on the other card.
  EXPECT_EQ(d.State(id), "running");
  EXPECT_EQ(d.engine().launches(), (std::vector<JobId>{id, id}));
  EXPECT_NE(CardOf(d, id), bad);
  EXPECT_NE(History(d, id).find("NodeFail: GPU " + std::to_string(bad) +
                                " failed: uncorrected ECC errors: 3 (requeued)"),
            std::string::npos)
      << History(d, id);
}

TEST(CardsTest, ASourceThatFailsAsAWholeMakesCardsSuspectButStopsNoJobUntilDrainAfter) {
  InProcessDaemon d(kTwoCards, kStart);
  ASSERT_TRUE(d.ok());
  const JobId id = d.Submit("alice", OneGpu());
  d.cards().FailSamples(Unavailable("NVML: driver not loaded"));
  d.Sample();
  const json reply = d.Call("root", {{"op", "gpus"}});
  EXPECT_EQ(reply["sample_error"], "NVML: driver not loaded") << reply.dump();
  EXPECT_EQ(Card(d, 0)["health"], "suspect");
  EXPECT_EQ(Card(d, 1)["health"], "suspect");
  EXPECT_TRUE(d.engine().Running(id));
  d.cards().FailSamples(Status());
  d.Sample();
  EXPECT_EQ(Card(d, 0)["health"], "healthy");
  EXPECT_EQ(Card(d, 1)["health"], "healthy");
  EXPECT_TRUE(d.engine().Running(id));
}

TEST(CardsTest, AnOutsideProcessKeepsItsCardFromNewWorkUntilItLeaves) {
  InProcessDaemon d(kTwoCards, kStart);
  ASSERT_TRUE(d.ok());
  // A process of this test's own user (a real pid, so its owner can be read from /proc).
  const int pid = static_cast<int>(::getpid());
  d.cards().AddProcess(0, pid, 3276);
  d.Sample();
  EXPECT_TRUE(Card(d, 0)["held_outside"].get<bool>());
  const JobId first = d.Submit("alice", OneGpu());
  const JobId second = d.Submit("bob", OneGpu());
  EXPECT_EQ(CardOf(d, first), 1);
  d.Advance(kMinute);
  d.Sample();
  EXPECT_EQ(d.State(second), "pending");
  const json events = d.Call("root", {{"op", "events"}});
  int told = 0;
  for (const json& e : events.value("events", json::array())) {
    if (e.value("kind", "") == "gpu" && e.value("to", "") == "outside") {
      ++told;
      EXPECT_NE(e.value("reason", "").find("pid " + std::to_string(pid) + " ("), std::string::npos)
          << e.dump();
      EXPECT_NE(e.value("reason", "").find("uses GPU 0 (3.2G) outside Rota"), std::string::npos) << e.dump();
    }
  }
  EXPECT_EQ(told, 1) << events.dump();  // once per process, not once per sample
  d.cards().RemoveProcess(0, pid);
  d.Advance(kMinute);
  d.Sample();
  EXPECT_FALSE(Card(d, 0)["held_outside"].get<bool>());
  EXPECT_EQ(d.State(second), "running");
  EXPECT_EQ(CardOf(d, second), 0);
}

}  // namespace
}  // namespace cards_test
}  // namespace rota::daemon
