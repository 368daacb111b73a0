// The chat and webhook channels against a real HTTP server on 127.0.0.1 (notify_test_util.h)
// that checks each platform's payload and signature and answers the way each platform does.
#include "notify/webhooks.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <nlohmann/json.hpp>

#include "notify/codec.h"
#include "notify/notify_test_util.h"

namespace rota::notify {
namespace webhooks_test {
namespace {

using nlohmann::json;
using testing::HttpRequest;
using testing::HttpServer;
using testing::QueryParams;
using testing::TestServer;

// HMAC-SHA256 straight from OpenSSL's one-shot API, base64: the test's own computation.
std::string Hmac64(const std::string& key, const std::string& message) {
  unsigned char md[32];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), md, &len);
  return Base64Encode(std::string(reinterpret_cast<char*>(md), len));
}

std::unique_ptr<Channel> Make(WebhookKind kind, const std::string& url, const std::string& secret = "",
                              std::chrono::milliseconds timeout = std::chrono::milliseconds(10'000),
                              WallClockMs clock = RealWallClockMs) {
  WebhookOptions o;
  o.url = url;
  o.secret = secret;
  o.proxy = "none";  // straight to 127.0.0.1 whatever proxy the environment names
  o.timeout = timeout;
  o.clock = std::move(clock);
  auto c = MakeWebhookChannel(kind, std::move(o));
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? std::move(c).value() : nullptr;
}

HttpRequest OnlyRequest(HttpServer& server) {
  auto r = server.requests();
  EXPECT_EQ(r.size(), 1u);
  return r.empty() ? HttpRequest{} : r[0];
}

const Message kMessage{
    "GPU 2 空闲 15 分钟", "作业 17 的 GPU 利用率低于 5%。\n运行 rota keep 17 保留它。", "idle_warning", {}};

TEST(NotifyWebhook, SignaturesMatchVectorsFromPythonHmac) {
  // python3: base64.b64encode(hmac.new(f"{ts}\n{secret}".encode(), b"", sha256).digest())
  EXPECT_EQ(FeishuSign(1599360473, "demo-secret"), "3/MaVZ8JLIy4TUG+7KSFJqvUkTKd+HWY8g+56DZWq8s=");
  // python3: base64.b64encode(hmac.new(secret.encode(), f"{ts}\n{secret}".encode(), sha256).digest())
  EXPECT_EQ(DingTalkSign(1577262236757, "SEC1234567890abcdef"),
            "f7qQ1A8KagEZ45y1gasTtKsEq5ERTeDXP9T+WkIqzDk=");
  EXPECT_EQ(UrlEncode(DingTalkSign(1577262236757, "SEC1234567890abcdef")),
            "f7qQ1A8KagEZ45y1gasTtKsEq5ERTeDXP9T%2BWkIqzDk%3D");
}

TEST(NotifyWebhook, FeishuSendsSignedTextWithMentions) {
  HttpServer server;
  server.Answer(200, R"({"code":0,"data":{},"msg":"success"})");
  auto channel = Make(WebhookKind::kFeishu, server.url("/open-apis/bot/v2/hook/TOKEN123"), "feishu-secret");
  Message m = kMessage;
  m.mentions = {"ou_7d8a6e6df7621556ce0d21922b676706"};
  Status s = channel->Send(m);
  ASSERT_TRUE(s.ok()) << s.ToString();
  HttpRequest r = OnlyRequest(server);
  EXPECT_EQ(r.method, "POST");
  EXPECT_EQ(r.path, "/open-apis/bot/v2/hook/TOKEN123");
  EXPECT_EQ(r.headers["content-type"], "application/json; charset=utf-8");
  json body = json::parse(r.body);
  EXPECT_EQ(body["msg_type"], "text");
  EXPECT_EQ(body["content"]["text"], m.subject + "\n" + m.text +
                                         " <at user_id=\"ou_7d8a6e6df7621556ce0d21922b676706\">"
                                         "ou_7d8a6e6df7621556ce0d21922b676706</at>");
  // The signature is recomputed from the timestamp the server received.
  std::string ts = body["timestamp"];
  EXPECT_NEAR(std::stoll(ts), RealWallClockMs() / 1000, 60);
  EXPECT_EQ(body["sign"], Hmac64(ts + "\nfeishu-secret", ""));
}

TEST(NotifyWebhook, FeishuWithoutSecretSendsNoSignature) {
  HttpServer server;
  server.Answer(200, R"({"StatusCode":0,"StatusMessage":"success"})");  // the older answer
  ASSERT_TRUE(Make(WebhookKind::kFeishu, server.url("/hook/x"))->Send(kMessage).ok());
  json body = json::parse(OnlyRequest(server).body);
  EXPECT_FALSE(body.contains("sign"));
  EXPECT_FALSE(body.contains("timestamp"));
}

TEST(NotifyWebhook, FeishuRefusalOnHttp200IsReportedWithItsMessage) {
  HttpServer server;
  server.Answer(
      200,
      R"({"code":19021,"data":{},"msg":"sign match fail or timestamp is not within one hour from current time"})");
  auto channel = Make(WebhookKind::kFeishu, server.url("/open-apis/bot/v2/hook/TOKEN123"), "wrong");
  Status s = channel->Send(kMessage);
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied) << s.ToString();
  EXPECT_NE(s.message().find("code 19021"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("sign match fail"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("clock"), std::string::npos) << s.message();
  EXPECT_EQ(s.message().find("TOKEN123"), std::string::npos) << "the token leaked: " << s.message();
  EXPECT_FALSE(IsRetryable(s));

  server.Answer(200,
                R"({"code":11232,"msg":"frequency limited psm[lark.oapi.app_platform_runtime]appID[1]"})");
  Status limited = channel->Send(kMessage);
  EXPECT_EQ(limited.code(), StatusCode::kResourceExhausted) << limited.ToString();
  EXPECT_TRUE(IsRetryable(limited));

  server.Answer(200, "<html>not a bot</html>", "text/html");
  Status html = channel->Send(kMessage);
  EXPECT_EQ(html.code(), StatusCode::kFailedPrecondition) << html.ToString();
  EXPECT_NE(html.message().find("not the platform's JSON"), std::string::npos) << html.message();
}

TEST(NotifyWebhook, DingTalkSignsTheUrlAndMentionsByIdOrMobile) {
  HttpServer server;
  server.Answer(200, R"({"errcode":0,"errmsg":"ok"})");
  auto channel = Make(WebhookKind::kDingTalk, server.url("/robot/send?access_token=TOKEN456"), "SECdingtalk");
  Message m = kMessage;
  m.mentions = {"manager4711", "13800000000"};
  Status s = channel->Send(m);
  ASSERT_TRUE(s.ok()) << s.ToString();
  HttpRequest r = OnlyRequest(server);
  EXPECT_EQ(r.path, "/robot/send");
  auto q = QueryParams(r.query);
  EXPECT_EQ(q["access_token"], "TOKEN456");
  ASSERT_TRUE(q.count("timestamp") && q.count("sign")) << r.query;
  EXPECT_NEAR(std::stoll(q["timestamp"]), RealWallClockMs(), 60'000);  // milliseconds
  EXPECT_EQ(q["sign"], Hmac64("SECdingtalk", q["timestamp"] + "\nSECdingtalk"));
  json body = json::parse(r.body);
  EXPECT_EQ(body["msgtype"], "text");
  EXPECT_EQ(body["text"]["content"], m.subject + "\n" + m.text + " @manager4711 @13800000000");
  EXPECT_EQ(body["at"]["atUserIds"], json::array({"manager4711"}));
  EXPECT_EQ(body["at"]["atMobiles"], json::array({"13800000000"}));
  EXPECT_EQ(body["at"]["isAtAll"], false);
}

TEST(NotifyWebhook, DingTalkErrcodesAreReported) {
  HttpServer server;
  auto channel = Make(WebhookKind::kDingTalk, server.url("/robot/send?access_token=TOKEN456"), "SECwrong");
  server.Answer(200, R"({"errcode":310000,"errmsg":"sign not match"})");
  Status s = channel->Send(kMessage);
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied) << s.ToString();
  EXPECT_NE(s.message().find("DingTalk refused the message: errcode 310000 \"sign not match\""),
            std::string::npos)
      << s.message();
  EXPECT_EQ(s.message().find("TOKEN456"), std::string::npos) << "the token leaked: " << s.message();

  server.Answer(200, R"({"errcode":130101,"errmsg":"send too fast, exceed 20 times per minute"})");
  Status fast = channel->Send(kMessage);
  EXPECT_EQ(fast.code(), StatusCode::kResourceExhausted) << fast.ToString();
  EXPECT_NE(fast.message().find("send too fast"), std::string::npos);
}

TEST(NotifyWebhook, WeComSendsTextWithMentionedList) {
  HttpServer server;
  server.Answer(200, R"({"errcode":0,"errmsg":"ok"})");
  auto channel = Make(WebhookKind::kWeCom, server.url("/cgi-bin/webhook/send?key=KEY789"));
  Message m = kMessage;
  m.mentions = {"zhangsan", "13900000000"};
  ASSERT_TRUE(channel->Send(m).ok());
  HttpRequest r = OnlyRequest(server);
  EXPECT_EQ(QueryParams(r.query)["key"], "KEY789");
  json body = json::parse(r.body);
  EXPECT_EQ(body["msgtype"], "text");
  EXPECT_EQ(body["text"]["content"], m.subject + "\n" + m.text);
  EXPECT_EQ(body["text"]["mentioned_list"], json::array({"zhangsan"}));
  EXPECT_EQ(body["text"]["mentioned_mobile_list"], json::array({"13900000000"}));
}

TEST(NotifyWebhook, WeComLongTextIsCutAtACharacterWithinItsLimit) {
  HttpServer server;
  server.Answer(200, R"({"errcode":0,"errmsg":"ok"})");
  std::string text;
  for (int i = 0; i < 1000; ++i) text += "作";  // 3000 bytes
  Message m{"长消息", text, "test", {}};
  ASSERT_TRUE(Make(WebhookKind::kWeCom, server.url("/send?key=k"))->Send(m).ok());
  std::string content = json::parse(OnlyRequest(server).body)["text"]["content"];
  EXPECT_LE(content.size(), 2048u);
  EXPECT_EQ(content.substr(content.size() - 3), "\xE2\x80\xA6");
  EXPECT_EQ((content.size() - std::string("长消息\n").size() - 3) % 3, 0u);  // whole characters
}

TEST(NotifyWebhook, WeComErrcodesAreReported) {
  HttpServer server;
  server.Answer(200, R"({"errcode":93000,"errmsg":"invalid webhook url, hint: [1700000000_1_abc]"})");
  Status s = Make(WebhookKind::kWeCom, server.url("/send?key=KEY789"))->Send(kMessage);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.ToString();
  EXPECT_NE(s.message().find("WeCom refused the message: errcode 93000"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("invalid webhook url"), std::string::npos);
  server.Answer(200, R"({"errcode":45009,"errmsg":"api freq out of limit"})");
  EXPECT_EQ(Make(WebhookKind::kWeCom, server.url("/send?key=k"))->Send(kMessage).code(),
            StatusCode::kResourceExhausted);
}

TEST(NotifyWebhook, SlackSendsEscapedTextWithMentions) {
  HttpServer server;
  server.Answer(200, "ok", "text/plain");
  auto channel = Make(WebhookKind::kSlack, server.url("/services/T000/B000/XXXX"));
  Message m{"Job <17> ended", "a & b > c", "job_ended", {"U012AB3CD"}};
  ASSERT_TRUE(channel->Send(m).ok());
  json body = json::parse(OnlyRequest(server).body);
  EXPECT_EQ(body, json({{"text", "*Job &lt;17&gt; ended*\na &amp; b &gt; c\n<@U012AB3CD>"}}));
}

TEST(NotifyWebhook, SlackHttpErrorsCarryTheirReason) {
  HttpServer server;
  server.Answer(404, "no_service", "text/plain");
  auto channel = Make(WebhookKind::kSlack, server.url("/services/T000/B000/XXXX"));
  Status s = channel->Send(kMessage);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.ToString();
  EXPECT_NE(s.message().find("HTTP 404: no_service"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("create a new one"), std::string::npos) << s.message();
  EXPECT_EQ(s.message().find("XXXX"), std::string::npos) << "the token leaked: " << s.message();
  EXPECT_EQ(channel->Describe(), "slack http://127.0.0.1:" + std::to_string(server.port()) + "/...");
}

TEST(NotifyWebhook, GenericWebhookSendsTheMessageAsSignedJson) {
  HttpServer server;
  server.Answer(204, "");
  auto channel = Make(WebhookKind::kJson, server.url("/rota"), "hook-secret",
                      std::chrono::milliseconds(10'000), [] { return std::int64_t{1709647380123}; });
  Message m = kMessage;
  m.mentions = {"alice"};
  ASSERT_TRUE(channel->Send(m).ok());
  HttpRequest r = OnlyRequest(server);
  json body = json::parse(r.body);
  EXPECT_EQ(body, json({{"source", "rota"},
                        {"event", "idle_warning"},
                        {"subject", m.subject},
                        {"text", m.text},
                        {"mentions", {"alice"}},
                        {"time", 1709647380}}));
  EXPECT_EQ(r.headers["x-rota-timestamp"], "1709647380");
  EXPECT_EQ(r.headers["x-rota-signature"],
            "sha256=" + HexEncode(*Base64Decode(Hmac64("hook-secret", "1709647380." + r.body))));
}

TEST(NotifyWebhook, InvalidUtf8IsReplacedNotThrown) {
  HttpServer server;
  Message m{"job \xff\xfe", "name \xc3", "job_ended", {}};
  ASSERT_TRUE(Make(WebhookKind::kJson, server.url("/rota"))->Send(m).ok());
  json body = json::parse(OnlyRequest(server).body);
  EXPECT_EQ(body["subject"], "job \xEF\xBF\xBD\xEF\xBF\xBD");  // U+FFFD twice
}

TEST(NotifyWebhook, Http500IsRetryable) {
  HttpServer server;
  server.Answer(500, "internal error", "text/plain");
  for (WebhookKind kind : {WebhookKind::kFeishu, WebhookKind::kDingTalk, WebhookKind::kWeCom,
                           WebhookKind::kSlack, WebhookKind::kJson}) {
    Status s = Make(kind, server.url("/hook"))->Send(kMessage);
    EXPECT_EQ(s.code(), StatusCode::kUnavailable) << WebhookKindName(kind) << ": " << s.ToString();
    EXPECT_NE(s.message().find("HTTP 500"), std::string::npos) << s.message();
    EXPECT_TRUE(IsRetryable(s));
  }
}

TEST(NotifyWebhook, AReceiverThatNeverAnswersTimesOut) {
  HttpServer server;
  server.NeverAnswer();
  Status s =
      Make(WebhookKind::kFeishu, server.url("/hook"), "", std::chrono::milliseconds(300))->Send(kMessage);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
  EXPECT_NE(s.message().find("timed out after 300 ms"), std::string::npos) << s.message();
  EXPECT_EQ(server.requests().size(), 1u);  // the request arrived; the answer never came
}

TEST(NotifyWebhook, ConnectionRefusedIsUnavailable) {
  std::string url = "http://127.0.0.1:" + std::to_string(TestServer::ClosedPort()) + "/hook";
  Status s = Make(WebhookKind::kDingTalk, url)->Send(kMessage);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.ToString();
  EXPECT_NE(s.message().find("could not connect"), std::string::npos) << s.message();
}

TEST(NotifyWebhook, OptionsAreCheckedUpFront) {
  WebhookOptions o;
  o.url = "ftp://example.com/hook";
  EXPECT_EQ(MakeWebhookChannel(WebhookKind::kSlack, o).status().code(), StatusCode::kInvalidArgument);
  o.url = "https://hooks.slack.com/services/T/B/X";
  o.secret = "s";
  EXPECT_EQ(MakeWebhookChannel(WebhookKind::kSlack, o).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseWebhookKind("lark"), WebhookKind::kFeishu);
  EXPECT_EQ(ParseWebhookKind("teams"), std::nullopt);
}

}  // namespace
}  // namespace webhooks_test
}  // namespace rota::notify
