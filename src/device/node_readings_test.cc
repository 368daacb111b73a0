#include "device/node_readings.h"

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
    s.gpus.push_back(g);
  }
  s.gpus[1].health = Unavailable("GPU is lost");
  return s;
}

TEST(NodeReadingsTest, RoundTripsThroughJson) {
  NodeReadings r = ReadingsOf("gpu-07", TwoCards(), 1234);
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
}

}  // namespace
}  // namespace rota::device
