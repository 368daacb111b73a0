#include "web/api_map.h"

#include <gtest/gtest.h>

#include "json/bounded.h"

namespace rota::web {
namespace api_map_test {
namespace {

TEST(ApiMap, StatusOfReply) {
  EXPECT_EQ(HttpStatusOfReply({{"ok", true}}), 200);
  auto err = [](const char* code) { return nlohmann::json{{"ok", false}, {"error", {{"code", code}, {"message", "m"}}}}; };
  EXPECT_EQ(HttpStatusOfReply(err("invalid_argument")), 400);
  EXPECT_EQ(HttpStatusOfReply(err("unauthenticated")), 401);
  EXPECT_EQ(HttpStatusOfReply(err("permission_denied")), 403);
  EXPECT_EQ(HttpStatusOfReply(err("not_found")), 404);
  EXPECT_EQ(HttpStatusOfReply(err("failed_precondition")), 409);
  EXPECT_EQ(HttpStatusOfReply(err("already_exists")), 409);
  EXPECT_EQ(HttpStatusOfReply(err("internal")), 500);
  EXPECT_EQ(HttpStatusOfReply(nlohmann::json::object()), 500);
}

TEST(ApiMap, Ops) {
  EXPECT_TRUE(ReadOnlyOp("status"));
  EXPECT_FALSE(ReadOnlyOp("cancel"));
  EXPECT_TRUE(PublicOp("bookings"));
  EXPECT_FALSE(PublicOp("logs"));
  EXPECT_FALSE(RefusedOverHttp("run").empty());
  EXPECT_FALSE(RefusedOverHttp("web_login").empty());
  EXPECT_TRUE(RefusedOverHttp("cancel").empty());
}

TEST(ApiMap, QueryValuesParseAsJsonElseStrings) {
  std::multimap<std::string, std::string> q = {{"job_id", "12"}, {"user", "alice"}, {"all", "true"}, {"x", "[1"}};
  nlohmann::json r = QueryToRequest(q);
  EXPECT_EQ(r["job_id"], 12);
  EXPECT_EQ(r["user"], "alice");
  EXPECT_EQ(r["all"], true);
  EXPECT_EQ(r["x"], "[1");
  // A value nested deeper than a request may be is not read as JSON: it stays the text it was.
  const std::string deep = std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
  const std::string fits = std::string(kMaxJsonDepth - 1, '[') + std::string(kMaxJsonDepth - 1, ']');
  nlohmann::json d = QueryToRequest({{"all", deep}, {"ok", fits}});
  EXPECT_EQ(d["all"], deep);
  EXPECT_TRUE(d["ok"].is_array());
  EXPECT_LE(JsonDepth(d), kMaxJsonDepth);
}

TEST(ApiMap, MapApiCallMakesTheSocketRequestOrRefusesHere) {
  const std::multimap<std::string, std::string> none;
  // A GET's query; the path's operation and this API's version, whatever the call said.
  ApiCall get = MapApiCall(true, "show", {{"job_id", "12"}, {"op", "cancel"}, {"v", "7"}}, "");
  ASSERT_EQ(get.status, 200) << get.message;
  EXPECT_EQ(get.request, (nlohmann::json{{"job_id", 12}, {"op", "show"}, {"v", 1}}));
  // A POST's body; an empty one is an empty request.
  ApiCall post = MapApiCall(false, "cancel", none, R"({"job_id": 12, "op": "queue"})");
  ASSERT_EQ(post.status, 200) << post.message;
  EXPECT_EQ(post.request, (nlohmann::json{{"job_id", 12}, {"op", "cancel"}, {"v", 1}}));
  EXPECT_EQ(MapApiCall(false, "queue", none, "").request, (nlohmann::json{{"op", "queue"}, {"v", 1}}));
  // Refused here, each with its status, code and a message.
  ApiCall socket_only = MapApiCall(false, "run", none, "{}");
  EXPECT_EQ(socket_only.status, 400);
  EXPECT_EQ(socket_only.code, "invalid_argument");
  EXPECT_NE(socket_only.message.find("\"run\""), std::string::npos) << socket_only.message;
  ApiCall get_write = MapApiCall(true, "cancel", {{"job_id", "12"}}, "");
  EXPECT_EQ(get_write.status, 405);
  EXPECT_EQ(get_write.message, "\"cancel\" changes state: use POST");
  for (const char* body : {"[1]", "{", "\"x\"", "{\"a\": 1} {"}) {
    ApiCall bad = MapApiCall(false, "queue", none, body);
    EXPECT_EQ(bad.status, 400) << body;
    EXPECT_EQ(bad.message.rfind("the request body is not a JSON object", 0), 0u) << bad.message;
  }
  std::string deep(kMaxJsonDepth + 1, '[');
  deep = "{\"a\":" + deep;
  EXPECT_EQ(MapApiCall(false, "queue", none, deep).status, 400);
}

}  // namespace
}  // namespace api_map_test
}  // namespace rota::web
