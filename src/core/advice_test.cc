// Tests of rent-or-wait's arithmetic: which table models name which cards, how many instances a
// request needs, and which options come first.
#include "core/advice.h"

#include <gtest/gtest.h>

namespace rota {
namespace advice_test {
namespace {

GpuPrice Row(std::string provider, std::string model, int count, double hourly, double spot = -1,
             std::string currency = "USD") {
  GpuPrice p;
  p.provider = std::move(provider);
  p.region = "r";
  p.instance = p.provider + "-" + std::to_string(count);
  p.gpu_model = std::move(model);
  p.gpu_count = count;
  p.hourly = hourly;
  p.spot = spot;
  p.currency = std::move(currency);
  p.date = "2024-01-01";
  return p;
}

TEST(Advice, TableModelsNameCardsByTheirWords) {
  EXPECT_TRUE(ModelMatches("A100 80GB", "NVIDIA A100-SXM4-80GB"));
  EXPECT_TRUE(ModelMatches("a100 80gb", "NVIDIA A100 80GB PCIe"));
  EXPECT_TRUE(ModelMatches("RTX 4090", "NVIDIA GeForce RTX 4090"));
  EXPECT_TRUE(ModelMatches("H100", "NVIDIA H100 80GB HBM3"));
  EXPECT_FALSE(ModelMatches("A100 40GB", "NVIDIA A100-SXM4-80GB"));  // another memory size
  EXPECT_FALSE(ModelMatches("A10", "NVIDIA A100-SXM4-80GB"));        // a word, not a prefix
  EXPECT_FALSE(ModelMatches("", "NVIDIA A100-SXM4-80GB"));
  EXPECT_FALSE(ModelMatches("NVIDIA", "NVIDIA A100-SXM4-80GB"));
}

TEST(Advice, WholeInstancesForTheRequestCheapestFirstOnePerProvider) {
  const std::vector<GpuPrice> table = {
      Row("aws", "A100 80GB", 8, 40.0),       Row("gcp", "A100 80GB", 1, 5.0, 1.5),
      Row("gcp", "A100 80GB", 8, 38.0),       Row("azure", "A100 80GB", 1, 3.5),
      Row("aws", "A100 40GB", 8, 30.0),       Row("aliyun", "A100 80GB", 8, 200.0, -1, "CNY"),
  };
  // 2 cards for 6 hours.
  std::vector<RentOption> o = RentOptions(table, "NVIDIA A100-SXM4-80GB", 2, 6, 10);
  ASSERT_EQ(o.size(), 4u);
  EXPECT_EQ(o[0].price.provider, "aliyun");  // grouped by currency: CNY before USD
  EXPECT_EQ(o[0].instances, 1);
  EXPECT_DOUBLE_EQ(o[0].cost, 1200);
  EXPECT_EQ(o[1].price.provider, "azure");
  EXPECT_EQ(o[1].instances, 2);
  EXPECT_DOUBLE_EQ(o[1].cost, 2 * 3.5 * 6);
  EXPECT_LT(o[1].spot_cost, 0);  // none listed
  EXPECT_EQ(o[2].price.provider, "gcp");  // its one-card row (60) beats its eight-card one (228)
  EXPECT_EQ(o[2].price.gpu_count, 1);
  EXPECT_DOUBLE_EQ(o[2].spot_cost, 2 * 1.5 * 6);
  EXPECT_EQ(o[3].price.provider, "aws");  // the 40GB row does not name these cards
  EXPECT_DOUBLE_EQ(o[3].cost, 240);
  // 9 cards need two eight-card instances; the limit keeps the cheapest.
  o = RentOptions(table, "NVIDIA A100-SXM4-80GB", 9, 1, 2);
  ASSERT_EQ(o.size(), 2u);
  EXPECT_EQ(o[1].price.provider, "azure");
  EXPECT_EQ(o[1].instances, 9);
  EXPECT_TRUE(RentOptions(table, "NVIDIA H100 80GB HBM3", 1, 1, 5).empty());
  EXPECT_TRUE(RentOptions(table, "NVIDIA A100-SXM4-80GB", 0, 1, 5).empty());
}

}  // namespace
}  // namespace advice_test
}  // namespace rota
