// Tests of the depth-bounded JSON reader: deep texts are refused before any value is built, at
// the bound and not one level earlier, and whatever passes can be copied and dumped.
#include "json/bounded.h"

#include <gtest/gtest.h>

#include <string>

namespace rota {
namespace bounded_test {
namespace {

std::string Nested(int levels, char open = '[', char close = ']') {
  return std::string(static_cast<size_t>(levels), open) + std::string(static_cast<size_t>(levels), close);
}

TEST(BoundedJsonTest, ReadsAnOrdinaryRequest) {
  StatusOr<nlohmann::json> j = ParseBoundedJson(R"({"v":1,"op":"submit","job":{"env":{"A":"1"},"command":["a","b"]}})");
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  EXPECT_EQ((*j)["job"]["command"][1], "b");
  EXPECT_EQ(JsonDepth(*j), 3);
}

TEST(BoundedJsonTest, FloatsNoIntegerCanHoldAreRefusedWhereAskedFor) {
  // fuzz/shepherd_files: a spec's 4.88889e+56 was read as a long (undefined behaviour).
  // A whole number past 2^64 is a float to nlohmann, and refused too.
  for (const char* text : {R"({"uid": 4.88889e+56})", R"([-2147483649.5])", R"({"a": [1e300]})", "2147483648.0",
                           "99999999999999999999"}) {
    StatusOr<nlohmann::json> j = ParseBoundedJson(text, kMaxJsonDepth, JsonFloats::kWithinInt32);
    ASSERT_FALSE(j.ok()) << text;
    EXPECT_NE(j.status().message().find("out of range"), std::string::npos) << j.status().message();
    EXPECT_TRUE(ParseBoundedJson(text).ok()) << "any float by default: " << text;
  }
  for (const char* text : {R"({"a": 2147483647.5, "b": -2147483648.0, "c": 1e9})",
                           R"({"whole": 18446744073709551615, "neg": -9223372036854775808})"}) {
    EXPECT_TRUE(ParseBoundedJson(text, kMaxJsonDepth, JsonFloats::kWithinInt32).ok()) << text;
  }
}

TEST(BoundedJsonTest, TheBoundItselfIsAcceptedOneMoreIsNot) {
  EXPECT_TRUE(ParseBoundedJson(Nested(kMaxJsonDepth)).ok());
  StatusOr<nlohmann::json> deep = ParseBoundedJson(Nested(kMaxJsonDepth + 1));
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(deep.status().message(), "the JSON text nests deeper than 32 levels");
  // Objects count as arrays do, and so do mixtures.
  std::string objects;
  for (int i = 0; i < 4; ++i) objects += "{\"a\":[";
  objects += "1";
  for (int i = 0; i < 4; ++i) objects += "]}";
  EXPECT_TRUE(ParseBoundedJson(objects, 8).ok());
  EXPECT_FALSE(ParseBoundedJson(objects, 7).ok());
}

TEST(BoundedJsonTest, BracketsInsideStringsAreNotNesting) {
  const std::string text = "{\"tag\":\"" + Nested(1000) + "\"}";
  StatusOr<nlohmann::json> j = ParseBoundedJson(text, 2);
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  EXPECT_EQ((*j)["tag"].get<std::string>().size(), 2000u);
}

TEST(BoundedJsonTest, AHundredThousandLevelsAreRefusedNotACrash) {
  // The audit's attack: 200 KB of nested arrays. Copying and dumping such a value overflows the
  // stack; refused here, it is never built.
  StatusOr<nlohmann::json> j = ParseBoundedJson("{\"tag\":" + Nested(100000) + "}");
  ASSERT_FALSE(j.ok());
  EXPECT_NE(j.status().message().find("deeper than"), std::string::npos);
  // Unbalanced: a text that only opens is refused as deep, not read to its end.
  EXPECT_FALSE(ParseBoundedJson(std::string(1 << 20, '[')).ok());
}

TEST(BoundedJsonTest, MalformedTextSaysWhere) {
  StatusOr<nlohmann::json> j = ParseBoundedJson("{\"v\":1,");
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(j.status().message(), "not valid JSON (at byte 8)");
  EXPECT_FALSE(ParseBoundedJson("").ok());
  EXPECT_FALSE(ParseBoundedJson("{} {}").ok());  // one text, not two
  EXPECT_TRUE(ParseBoundedJson("7").ok());       // a scalar is a JSON text (callers check the type)
}

TEST(BoundedJsonTest, DepthOfBuiltValues) {
  EXPECT_EQ(JsonDepth(nlohmann::json(3)), 0);
  EXPECT_EQ(JsonDepth(nlohmann::json::array()), 1);
  nlohmann::json v = nlohmann::json::object();
  nlohmann::json* at = &v;
  for (int i = 0; i < 5000; ++i) at = &((*at)["a"] = nlohmann::json::object());
  EXPECT_EQ(JsonDepth(v), 5001);  // counted without recursion
  // v's destructor is iterative in nlohmann::json 3.11: nothing deep is copied here.
}

}  // namespace
}  // namespace bounded_test
}  // namespace rota
