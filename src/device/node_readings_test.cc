#include "device/node_readings.h"

#include <signal.h>

#include <gtest/gtest.h>

namespace rota::device {
namespace {

Snapshot TwoCards() {
  Snapshot s;
  for (int i = 0; i < 2; ++i) {
    GpuInfo g;
    g.uuid = "GPU-" + std::to_string(i);
    g.index = i;
    g.name = "NVIDIA A100-SXM4-80GB";
    g.memory_total = 81920;
    g.memory_used = 1000 * (i + 1);
    g.util_gpu = 40 + i;
    g.util_memory = 10;
    g.temperature = 50;
    g.power_mw = 200000;
    g.processes.resize(static_cast<size_t>(i));
    for (ProcessInfo& p : g.processes) {
      p.pid = 4242;
      p.used_memory = 512;
    }
    s.gpus.push_back(g);
  }
  s.gpus[1].health = Unavailable("GPU is lost");
  return s;
}

// The agent's reader of its node's /proc, here one that knows pid 4242 only.
std::optional<NodeProcess> Who(const ProcessInfo& p) {
  if (p.pid == 4343) return NodeProcess{p.pid, 1, 1002, "CORP\\bob smith", "5;x", p.used_memory};
  if (p.pid != 4242) return std::nullopt;
  return NodeProcess{p.pid, 987654321, 1001, "alice", "57", p.used_memory};
}

TEST(NodeReadingsTest, RoundTripsThroughJson) {
  NodeReadings r = ReadingsOf("gpu-07", TwoCards(), 1234, Who);
  StatusOr<NodeReadings> back = ReadingsFromJson(ReadingsToJson(r));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->node, "gpu-07");
  EXPECT_EQ(back->sampled, 1234);
  ASSERT_EQ(back->cards.size(), 2u);
  EXPECT_EQ(back->cards[1].index, 1);
  EXPECT_EQ(back->cards[1].util_gpu, 41);
  EXPECT_EQ(back->cards[1].memory_used, 2000);
  EXPECT_EQ(back->cards[1].processes, 1);
  EXPECT_EQ(back->cards[1].health, "GPU is lost");
  EXPECT_EQ(back->cards[0].health, "");
  ASSERT_EQ(back->cards[1].procs.size(), 1u);
  EXPECT_EQ(back->cards[1].procs[0], (NodeProcess{4242, 987654321, 1001, "alice", "57", 512}));
  EXPECT_TRUE(back->cards[0].procs.empty());
  // Without a reader, processes are counted only; one the reader cannot read is left out.
  EXPECT_TRUE(ReadingsOf("gpu-07", TwoCards(), 1).cards[1].procs.empty());
  Snapshot gone = TwoCards();
  gone.gpus[1].processes[0].pid = 99;
  NodeReadings r2 = ReadingsOf("gpu-07", gone, 1, Who);
  EXPECT_TRUE(r2.cards[1].procs.empty());
  EXPECT_EQ(r2.cards[1].processes, 1);
  // A name the head would refuse is left out, not the node's readings.
  gone.gpus[1].processes[0].pid = 4343;
  NodeReadings r3 = ReadingsOf("gpu-07", gone, 1, Who);
  ASSERT_EQ(r3.cards[1].procs.size(), 1u);
  EXPECT_EQ(r3.cards[1].procs[0].user, "");
  EXPECT_EQ(r3.cards[1].procs[0].slurm_job, "");
  EXPECT_EQ(r3.cards[1].procs[0].uid, 1002);
  EXPECT_TRUE(ReadingsFromJson(ReadingsToJson(r3)).ok());
}

TEST(NodeReadingsTest, KeepsAtMostSoManyProcessesACard) {
  Snapshot s = TwoCards();
  s.gpus[0].processes.assign(kMaxCardProcesses + 5, ProcessInfo{4242, 1, -1});
  NodeReadings r = ReadingsOf("n1", s, 1, Who);
  EXPECT_EQ(r.cards[0].procs.size(), kMaxCardProcesses);
  EXPECT_EQ(r.cards[0].processes, static_cast<int>(kMaxCardProcesses + 5));
  EXPECT_TRUE(ReadingsFromJson(ReadingsToJson(r)).ok());
}

// The agent signals only what it named as nobody's job on its own cards, whatever the reply says.
TEST(NodeReadingsTest, AnAgentCarriesOutOnlyOrdersForOutsideProcessesItNamed) {
  NodeReadings sent;
  CardReading c;
  c.procs = {{100, 7, 1001, "bob", "", 1}, {101, 8, 1002, "eve", "55", 1}, {102, 9, 0, "root", "", 1},
             {103, 10, -1, "", "", 1}};
  sent.cards = {c};
  auto order = [](int pid, long long start, int sig) {
    return nlohmann::json{{"pid", pid}, {"start_time", start}, {"signal", sig}};
  };
  nlohmann::json reply = {{"ok", true},
                          {"stop", {order(100, 7, SIGTERM), order(100, 7, SIGTERM),  // once
                                    order(100, 6, SIGKILL),                          // another process
                                    order(101, 8, SIGKILL),                          // a Slurm job's
                                    order(102, 9, SIGKILL),                          // root's
                                    order(103, 10, SIGKILL),                         // whose uid is unknown
                                    order(999, 1, SIGKILL),                          // not named
                                    order(100, 7, 9999), order(100, 7, SIGSTOP), "x",
                                    nlohmann::json{{"pid", 100}, {"signal", SIGKILL}}}}};  // no start time
  EXPECT_EQ(OrdersToCarryOut(reply, sent), (std::vector<StopOrder>{{100, 7, SIGTERM}}));
  EXPECT_TRUE(OrdersToCarryOut(nlohmann::json::array(), sent).empty());
  EXPECT_TRUE(OrdersToCarryOut({{"stop", "all"}}, sent).empty());
  // What the head sends is what the agent reads.
  EXPECT_EQ(OrdersToCarryOut({{"stop", StopOrdersToJson({{100, 7, SIGKILL}})}}, sent),
            (std::vector<StopOrder>{{100, 7, SIGKILL}}));
}

TEST(NodeReadingsTest, FindsTheSlurmJobInACgroupPath) {
  EXPECT_EQ(SlurmJobOfCgroup("/system.slice/slurmstepd.scope/job_42/step_batch/user/task_0"), "42");
  EXPECT_EQ(SlurmJobOfCgroup("/slurm/uid_1000/job_7/step_0"), "7");
  EXPECT_EQ(SlurmJobOfCgroup("/slurm/uid_1000/job_7"), "7");
  for (const char* none : {"", "/", "/user.slice/user-1000.slice/session-3.scope", "/job_/x", "/job_4x/y",
                           "/myjob_42", "/rota/job-17"}) {
    EXPECT_EQ(SlurmJobOfCgroup(none), "") << none;
  }
}

TEST(NodeReadingsTest, RefusesWhatIsNotAReading) {
  const nlohmann::json good = ReadingsToJson(ReadingsOf("n1", TwoCards(), 1));
  auto with = [&](const char* key, nlohmann::json v) {
    nlohmann::json j = good;
    j[key] = std::move(v);
    return ReadingsFromJson(j);
  };
  auto card_with = [&](const char* key, nlohmann::json v) {
    nlohmann::json j = good;
    j["cards"][0][key] = std::move(v);
    return ReadingsFromJson(j);
  };
  EXPECT_FALSE(ReadingsFromJson(nlohmann::json::array()).ok());
  EXPECT_FALSE(with("node", "").ok());
  EXPECT_FALSE(with("node", "../etc").ok());
  EXPECT_FALSE(with("node", "n1 n2").ok());
  EXPECT_FALSE(with("node", std::string(65, 'a')).ok());
  EXPECT_FALSE(with("cards", "all").ok());
  EXPECT_FALSE(with("cards", nlohmann::json::array({1})).ok());
  EXPECT_FALSE(card_with("util_gpu", 101).ok());
  EXPECT_FALSE(card_with("util_gpu", "50").ok());
  EXPECT_FALSE(card_with("temperature", -2).ok());
  EXPECT_FALSE(card_with("memory_used", 1LL << 40).ok());
  EXPECT_FALSE(card_with("index", 1).ok());   // twice
  EXPECT_FALSE(card_with("index", 64).ok());  // out of range
  EXPECT_FALSE(card_with("name", std::string(129, 'x')).ok());
  nlohmann::json many = good;
  many["cards"] = nlohmann::json::array();
  for (int i = 0; i < 65; ++i) many["cards"].push_back({{"index", i}});
  EXPECT_FALSE(ReadingsFromJson(many).ok());
  EXPECT_TRUE(card_with("util_gpu", nullptr).ok());  // unknown is fine
  // Processes: bounded, each one's fields checked.
  const nlohmann::json proc = {{"pid", 7}, {"start_time", 1}, {"uid", 1000}, {"user", "bob"}, {"slurm_job", "12"}};
  auto proc_with = [&](const char* key, nlohmann::json v) {
    nlohmann::json p = proc;
    p[key] = std::move(v);
    return card_with("procs", nlohmann::json::array({p}));
  };
  EXPECT_TRUE(proc_with("used_memory", 100).ok());
  EXPECT_FALSE(card_with("procs", "7").ok());
  EXPECT_FALSE(card_with("procs", nlohmann::json::array({7})).ok());
  EXPECT_FALSE(card_with("procs", nlohmann::json::array({{{"uid", 1}}})).ok());  // no pid
  EXPECT_FALSE(proc_with("pid", 0).ok());
  EXPECT_FALSE(proc_with("pid", 1LL << 23).ok());
  EXPECT_FALSE(proc_with("uid", 1LL << 33).ok());
  EXPECT_FALSE(proc_with("user", "bob smith").ok());
  EXPECT_FALSE(proc_with("user", "../root").ok());
  EXPECT_FALSE(proc_with("slurm_job", "12;rm").ok());
  EXPECT_FALSE(proc_with("slurm_job", std::string(21, '1')).ok());
  EXPECT_FALSE(proc_with("start_time", -1).ok());
  nlohmann::json crowd = nlohmann::json::array();
  for (size_t i = 0; i <= kMaxCardProcesses; ++i) crowd.push_back(proc);
  EXPECT_FALSE(card_with("procs", crowd).ok());
}

TEST(NodeReadingsTest, LaysReadingsOntoTheCardsOfTheirNodeByPosition) {
  std::vector<GpuInfo> cards(5);
  const char* nodes[] = {"n1", "n2", "n1", "n2", "n1"};
  for (size_t i = 0; i < cards.size(); ++i) {
    cards[i].node = nodes[i];
    cards[i].memory_total = 81920;
  }
  NodeReadings r = ReadingsOf("n2", TwoCards(), 1);
  ApplyReadings(r, cards);
  EXPECT_EQ(cards[1].util_gpu, 40);  // n2's first card
  EXPECT_EQ(cards[3].util_gpu, 41);  // n2's second
  EXPECT_EQ(cards[3].memory_free, 81920 - 2000);
  EXPECT_EQ(cards[3].temperature, 50);
  for (size_t i : {0u, 2u, 4u}) EXPECT_EQ(cards[i].util_gpu, -1) << i;  // n1's untouched
  ApplyReadings(ReadingsOf("n2", TwoCards(), 1, Who), cards);
  ASSERT_EQ(cards[3].node_processes.size(), 1u);
  EXPECT_EQ(cards[3].node_processes[0].user, "alice");
  EXPECT_TRUE(cards[1].node_processes.empty());
  for (size_t i : {0u, 2u, 4u}) EXPECT_TRUE(cards[i].node_processes.empty()) << i;
}

}  // namespace
}  // namespace rota::device
