// Tests of the zone as data on the wire: what rotad writes reads back as the same offsets over
// the span it covers, and what is not a zone is refused.
#include "api/zone_json.h"

#include <gtest/gtest.h>

#include "testing/zones.h"

namespace rota::api {
namespace zone_json_test {
namespace {

using nlohmann::json;
using rota::testing::Utc;

TEST(ZoneJsonTest, ASpanReadsBackWithItsOffsets) {
  const Zone berlin = rota::testing::Berlin();
  const Time from = Utc(2026, 3, 23, 0), to = Utc(2026, 11, 1, 0);
  const json j = ZoneJson(berlin, from, to);
  EXPECT_EQ(j["name"], "Europe/Berlin");
  EXPECT_EQ(j["offset"], 3600);
  EXPECT_EQ(j["transitions"].size(), 2u);
  std::optional<Zone> back = ZoneFromJson(j);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->name(), "Europe/Berlin");
  for (Time t = from; t <= to; t += 3 * kHour + 7) ASSERT_EQ(back->OffsetAt(t), berlin.OffsetAt(t)) << t;
  // A span without a change: the offset in force, no transitions.
  const json summer = ZoneJson(berlin, Utc(2026, 6, 1, 0), Utc(2026, 6, 8, 0));
  EXPECT_EQ(summer["offset"], 7200);
  EXPECT_TRUE(summer["transitions"].empty());
  EXPECT_EQ(ZoneFromJson(summer)->OffsetAt(Utc(2026, 6, 3, 0)), 7200);
  // A fixed offset.
  const json cst = ZoneJson(Zone(8 * 3600), from, to);
  EXPECT_EQ(cst, json::parse(R"({"name": "", "offset": 28800, "transitions": []})"));
  EXPECT_TRUE(ZoneFromJson(cst)->fixed());
}

TEST(ZoneJsonTest, WhatIsNotAZoneIsRefused) {
  for (const char* bad : {
           R"(null)", R"([])", R"({})", R"({"name": "x", "offset": 0})",
           R"({"name": 1, "offset": 0, "transitions": []})",
           R"({"name": "", "offset": 1e9, "transitions": []})",
           R"({"name": "", "offset": 100000, "transitions": []})",
           R"({"name": "", "offset": 0, "transitions": [[2, 3600], [1, 0]]})",
           R"({"name": "", "offset": 0, "transitions": [[1, 3600], [1, 0]]})",
           R"({"name": "", "offset": 0, "transitions": [[1]]})",
           R"({"name": "", "offset": 0, "transitions": [[1, "x"]]})",
           R"({"name": "", "offset": 0, "transitions": [1]})",
       }) {
    EXPECT_FALSE(ZoneFromJson(json::parse(bad)).has_value()) << bad;
  }
  json many = {{"name", "x"}, {"offset", 0}, {"transitions", json::array()}};
  for (std::size_t i = 0; i <= kMaxZoneTransitions; ++i) many["transitions"].push_back({i, 0});
  EXPECT_FALSE(ZoneFromJson(many).has_value());
}

}  // namespace
}  // namespace zone_json_test
}  // namespace rota::api
