// Tests of the wire protocol's shared pieces: error codes and the exit codes of `rota`, replies
// read back into a Status whatever shape they come in, the tag's bounds, time fields.
#include "api/protocol.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace rota::api {
namespace protocol_test {
namespace {

using nlohmann::json;

TEST(ProtocolTest, ErrorCodesRoundTripAndMapToExitCodes) {
  for (StatusCode c : {StatusCode::kInvalidArgument, StatusCode::kNotFound, StatusCode::kPermissionDenied,
                       StatusCode::kAlreadyExists, StatusCode::kFailedPrecondition, StatusCode::kResourceExhausted,
                       StatusCode::kUnavailable, StatusCode::kInternal}) {
    EXPECT_EQ(ParseErrorCode(ErrorCode(c)), c) << ErrorCode(c);
  }
  EXPECT_EQ(ParseErrorCode("no_such_code"), StatusCode::kInternal);
  EXPECT_EQ(ExitCodeForError("invalid_argument"), kExitUsage);
  EXPECT_EQ(ExitCodeForError("unsupported_version"), kExitUsage);
  EXPECT_EQ(ExitCodeForError("unavailable"), kExitUnreachable);
  EXPECT_EQ(ExitCodeForError("permission_denied"), kExitFailed);
  EXPECT_EQ(ExitCodeForError("something new"), kExitFailed);
}

TEST(ProtocolTest, RepliesOfAnyShapeReadBackWithoutThrowing) {
  EXPECT_TRUE(StatusOfReply(OkReply()).ok());
  Status s = StatusOfReply(ErrorReply(NotFound("no job 7")));
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "no job 7");
  // What a broken or hostile peer may send: an error, never an exception.
  for (const char* text : {R"([])", R"("ok")", R"({})", R"({"ok": false})", R"({"ok": "yes"})",
                           R"({"ok": false, "error": "bad"})", R"({"ok": false, "error": {"code": 7}})",
                           R"({"ok": false, "error": {"code": "not_found", "message": ["x"]}})"}) {
    Status bad = Status();
    EXPECT_NO_THROW(bad = StatusOfReply(json::parse(text))) << text;
    EXPECT_FALSE(bad.ok()) << text;
  }
  s = StatusOfReply(json::parse(R"({"ok": false, "error": {"code": 7, "message": "m"}})"));
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_EQ(s.message(), "m");
}

TEST(ProtocolTest, TagsAreScalarsOfBoundedSize) {
  EXPECT_TRUE(CheckTag(json::object()).ok());
  EXPECT_TRUE(CheckTag({{"tag", 12}}).ok());
  EXPECT_TRUE(CheckTag({{"tag", nullptr}}).ok());
  EXPECT_TRUE(CheckTag({{"tag", std::string(kMaxTagBytes, 'x')}}).ok());
  EXPECT_FALSE(CheckTag({{"tag", std::string(kMaxTagBytes + 1, 'x')}}).ok());
  EXPECT_FALSE(CheckTag({{"tag", json::array({1})}}).ok());
  EXPECT_FALSE(CheckTag({{"tag", {{"a", 1}}}}).ok());
}

TEST(ProtocolTest, TimeFields) {
  EXPECT_EQ(*TimeField(json::object(), "since", 5), 5);
  EXPECT_EQ(*TimeField({{"since", 1796083200}}, "since", 5), 1796083200);
  StatusOr<Time> bad = TimeField({{"since", "yesterday"}}, "since", 5);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "\"since\" must be a time (Unix seconds)");
  EXPECT_FALSE(TimeField({{"since", 1.5}}, "since", 5).ok());
}

TEST(ProtocolTest, TheSocketFlagThenRotaSocketThenTheUsersThenTheSystems) {
  EXPECT_EQ(ClientSocketPath("/x/y.sock"), "/x/y.sock");
  const char* old = std::getenv("ROTA_SOCKET");
  const std::string saved = old ? old : "";
  setenv("ROTA_SOCKET", "/from/env.sock", 1);
  EXPECT_EQ(ClientSocketPath(""), "/from/env.sock");
  if (old) {
    setenv("ROTA_SOCKET", saved.c_str(), 1);
  } else {
    unsetenv("ROTA_SOCKET");
  }
}

}  // namespace
}  // namespace protocol_test
}  // namespace rota::api
