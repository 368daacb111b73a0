// Tests of the daemon's request readers: defaults for what is missing or null, a named refusal
// for anything of another type or out of range, never an exception.
#include "api/request_fields.h"

#include <gtest/gtest.h>

namespace rota::api::fields {
namespace request_fields_test {
namespace {

using nlohmann::json;

TEST(RequestFieldsTest, MissingAndNullTakeTheDefault) {
  const json r = {{"n", nullptr}};
  EXPECT_EQ(*Bool(r, "all"), false);
  EXPECT_EQ(*Bool(r, "n", true), true);
  EXPECT_EQ(*Text(r, "gpu", "x"), "x");
  EXPECT_EQ(*Int(r, "limit", 50, 1, 100), 50);
  EXPECT_EQ(*Bool(json::array(), "all", true), true);  // not an object: nothing is there
}

TEST(RequestFieldsTest, ValuesOfTheRightType) {
  const json r = {{"all", true}, {"gpu", "0"}, {"limit", 7}, {"job_id", 12}};
  EXPECT_EQ(*Bool(r, "all"), true);
  EXPECT_EQ(*Text(r, "gpu"), "0");
  EXPECT_EQ(*Int(r, "limit", 50, 1, 100), 7);
  EXPECT_EQ(*Id(r, "job_id", "a job id"), 12);
}

TEST(RequestFieldsTest, EverythingElseIsRefusedByName) {
  EXPECT_EQ(Bool({{"all", 1}}, "all").status().message(), "\"all\" must be true or false");
  EXPECT_EQ(Bool({{"all", "true"}}, "all").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Text({{"gpu", 5}}, "gpu").status().message(), "\"gpu\" must be text (a JSON string)");
  EXPECT_FALSE(Text({{"gpu", json::array()}}, "gpu").ok());
  EXPECT_EQ(Int({{"limit", 0}}, "limit", 50, 1, 100).status().message(), "\"limit\" must be a whole number from 1 to 100");
  EXPECT_FALSE(Int({{"limit", 101}}, "limit", 50, 1, 100).ok());
  EXPECT_FALSE(Int({{"limit", 1.5}}, "limit", 50, 1, 100).ok());
  EXPECT_FALSE(Int({{"limit", "7"}}, "limit", 50, 1, 100).ok());
  EXPECT_FALSE(Int({{"limit", 18446744073709551615ULL}}, "limit", 50, 1, INT64_MAX).ok());
  EXPECT_EQ(Id(json::object(), "job_id", "a job id").status().message(),
            "\"job_id\" must be a job id (a positive whole number)");
  EXPECT_FALSE(Id({{"job_id", 0}}, "job_id", "a job id").ok());
  EXPECT_FALSE(Id({{"job_id", -3}}, "job_id", "a job id").ok());
  EXPECT_FALSE(Id({{"job_id", "12"}}, "job_id", "a job id").ok());
  EXPECT_FALSE(Id({{"job_id", 18446744073709551615ULL}}, "job_id", "a job id").ok());
}

}  // namespace
}  // namespace request_fields_test
}  // namespace rota::api::fields
