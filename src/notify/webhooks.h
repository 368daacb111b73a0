// Chat and webhook channels: one JSON POST per Send() through libcurl.
//
//   kFeishu    Feishu/Lark custom bot: msg_type text, mentions as <at user_id="ou_...">; with a
//              secret, "timestamp" (seconds) and "sign" in the body (FeishuSign).
//   kDingTalk  DingTalk custom robot: msgtype text, "at" with atUserIds/atMobiles; with a
//              secret, &timestamp=MS&sign=... appended to the URL (DingTalkSign).
//   kWeCom     WeCom (企业微信) group robot: msgtype text, mentioned_list/mentioned_mobile_list.
//   kSlack     Slack incoming webhook: {"text": ...}, mentions as <@U123>.
//   kJson      any receiver: the Message as JSON; with a secret, X-Rota-Timestamp and
//              X-Rota-Signature: sha256=hex(HMAC-SHA256(secret, timestamp + "." + body)).
//
// The Chinese platforms answer HTTP 200 when they refuse a message: their JSON "code"
// (Feishu) or "errcode" (DingTalk, WeCom) decides, and their message is reported
// (ReadWebhookAnswer; docs/notify.md lists the codes).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "notify/channel.h"

namespace rota::notify {

enum class WebhookKind { kFeishu, kDingTalk, kWeCom, kSlack, kJson };

// "feishu" (or "lark"), "dingtalk", "wecom", "slack", "webhook"; nullopt for anything else.
std::optional<WebhookKind> ParseWebhookKind(std::string_view name);
const char* WebhookKindName(WebhookKind kind);

struct WebhookOptions {
  std::string url;      // the webhook URL as the platform gave it (it holds the bot's token)
  std::string secret;   // signing secret (Feishu, DingTalk "SEC...", the generic webhook); empty = unsigned
  std::string ca_file;  // a PEM file of CAs to trust instead of the system's; empty = system
  // An HTTP(S) proxy URL; empty = libcurl's default (the https_proxy/http_proxy/no_proxy
  // environment variables); "none" = connect directly whatever the environment says.
  std::string proxy;
  std::chrono::milliseconds timeout = kDefaultSendTimeout;
  WallClockMs clock = RealWallClockMs;  // for the signed timestamps
};

// Checks the options (an http:// or https:// URL; WeCom and Slack take no secret) and returns
// the channel, or InvalidArgument naming what to fix.
StatusOr<std::unique_ptr<Channel>> MakeWebhookChannel(WebhookKind kind, WebhookOptions options);

// --- The pure parts, exposed for tests -------------------------------------------------------

// Feishu: base64(HMAC-SHA256(key = timestamp + "\n" + secret, message = "")), timestamp in s.
std::string FeishuSign(std::int64_t timestamp_s, std::string_view secret);
// DingTalk: base64(HMAC-SHA256(key = secret, message = timestamp + "\n" + secret)), timestamp in
// ms; the URL carries it percent-encoded.
std::string DingTalkSign(std::int64_t timestamp_ms, std::string_view secret);

struct WebhookRequest {
  std::string url;
  std::string body;                  // JSON
  std::vector<std::string> headers;  // besides Content-Type
};
// What the channel of `kind` sends for `message` at `now_ms`.
WebhookRequest BuildWebhookRequest(WebhookKind kind, const WebhookOptions& options, const Message& message,
                                   std::int64_t now_ms);

// Judges the platform's answer: OK, or a Status naming `what`, the platform's code and message,
// and a hint (kResourceExhausted for rate limits, kPermissionDenied for bad signatures).
Status ReadWebhookAnswer(WebhookKind kind, long http_status, std::string_view body, std::string_view what);

// At most `max_bytes` of `text`, cut at a UTF-8 character boundary, with "…" when cut.
std::string TruncateUtf8(std::string_view text, size_t max_bytes);

}  // namespace rota::notify
