// Tests of the price table: good rows are read, every bad row is named with its line and left
// out while the rest is used, and a table without a needed column is refused.
#include "config/prices.h"

#include <gtest/gtest.h>

namespace rota::config {
namespace prices_test {
namespace {

constexpr char kHeader[] = "provider,region,instance_type,gpu_model,gpu_count,price_per_hour,spot_price,currency,date\n";

TEST(Prices, GoodRowsAreReadAndBadOnesNamedWithTheirLines) {
  const std::string text = std::string(kHeader) +
                           "aws,us-east-1,p4de.24xlarge,A100 80GB,8,40.9657,12.5,USD,2024-01-01\n"  // line 2
                           "gcp,us-central1,a2,A100 80GB,eight,5.07,,USD,2024-01-01\n"             // 3: count
                           "x,r,i,A100,1,-3,,USD,2024-01-01\n"                                     // 4: price
                           "x,r,i,A100,1,3,cheap,USD,2024-01-01\n"                                 // 5: spot
                           "x,r,i,A100,1,3,,dollars,2024-01-01\n"                                  // 6: currency
                           "x,r,i,A100,1,3,,USD,01/01/2024\n"                                      // 7: date
                           "x,r,i,A100,1,3\n"                                                      // 8: fields
                           ",r,i,A100,1,3,,USD,2024-01-01\n"                                       // 9: provider
                           "\"aliyun\",cn-beijing,\"gn7e, 8 cards\",A100 80GB,8,200,,CNY,2024-02-01\n";  // 10
  StatusOr<PriceTable> t = ParsePrices(text, "gpu-prices.csv");
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->rows.size(), 2u);
  EXPECT_EQ(t->rows[0].instance, "p4de.24xlarge");
  EXPECT_EQ(t->rows[0].gpu_count, 8);
  EXPECT_DOUBLE_EQ(t->rows[0].hourly, 40.9657);
  EXPECT_DOUBLE_EQ(t->rows[0].spot, 12.5);
  EXPECT_EQ(t->rows[0].line, 2);
  EXPECT_EQ(t->rows[1].instance, "gn7e, 8 cards");
  EXPECT_LT(t->rows[1].spot, 0);
  EXPECT_EQ(t->rows[1].currency, "CNY");
  ASSERT_EQ(t->problems.size(), 7u);
  const char* expected[] = {"gpu-prices.csv:3: gpu_count \"eight\"", "gpu-prices.csv:4: price_per_hour \"-3\"",
                            "gpu-prices.csv:5: spot_price \"cheap\"", "gpu-prices.csv:6: currency \"dollars\"",
                            "gpu-prices.csv:7: date \"01/01/2024\"",  "gpu-prices.csv:8: expected 9 fields",
                            "gpu-prices.csv:9: provider, instance_type and gpu_model"};
  for (size_t i = 0; i < std::size(expected); ++i) {
    EXPECT_EQ(t->problems[i].rfind(expected[i], 0), 0u) << t->problems[i];
  }
}

TEST(Prices, ATableWithoutANeededColumnIsRefused) {
  StatusOr<PriceTable> t = ParsePrices("provider,region,gpu_model\naws,x,A100\n", "p.csv");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("p.csv: no column \"instance_type\""), std::string::npos) << t.status().message();
  EXPECT_FALSE(ParsePrices("", "p.csv").ok());
  EXPECT_EQ(LoadPrices("/nonexistent/prices.csv").status().code(), StatusCode::kNotFound);
}

TEST(Prices, TheShippedTableReadsWithoutAProblem) {
  StatusOr<PriceTable> t = LoadPrices(std::string(ROTA_SOURCE_DIR) + "/packaging/gpu-prices.csv");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_TRUE(t->problems.empty()) << t->problems.front();
  EXPECT_GE(t->rows.size(), 5u);
}

}  // namespace
}  // namespace prices_test
}  // namespace rota::config
