// Tested by webhooks_test.cc (each platform's refusals answered by a real local HTTP server).
//
// Design: the Chinese platforms answer HTTP 200 with a JSON code when they refuse a message, so
// the JSON is read first and its code decides; the HTTP status matters only when there is no
// code. The codes and messages below are the ones the platforms document or are seen to send:
//   Feishu   {"code":19021,"msg":"sign match fail or timestamp is not within one hour from
//            current time"}, 19022 IP not allowed, 19024 keyword not found, 11232 frequency
//            limited, 9499 bad request; success {"code":0,...} or the older {"StatusCode":0}.
//   DingTalk {"errcode":310000,"errmsg":"sign not match"} (also keywords not in content, IP not
//            in the allow list), 300001 token is not exist, 130101 send too fast (20 a minute).
//   WeCom    {"errcode":93000,"errmsg":"invalid webhook url..."}, 45009 api freq out of limit
//            (20 a minute), 40008 invalid message type, 44004 empty content.
//   Slack    HTTP 200 "ok"; otherwise 400 invalid_payload, 403 action_prohibited, 404
//            no_service / channel_not_found, 410 channel_is_archived, as plain text.
#include <nlohmann/json.hpp>

#include "json/bounded.h"
#include "notify/curl_util.h"
#include "notify/webhooks.h"

namespace rota::notify {

namespace {

using nlohmann::json;

struct Known {
  long code;
  StatusCode status;
  const char* hint;
};

constexpr Known kFeishu[] = {
    {19021, StatusCode::kPermissionDenied,
     "check the bot's secret, and that this machine's clock is right: the timestamp must be within an hour"},
    {19022, StatusCode::kPermissionDenied, "this machine's address is not in the bot's IP allow list"},
    {19024, StatusCode::kFailedPrecondition,
     "the bot requires a keyword the message lacks: remove the keyword rule or use signing instead"},
    {11232, StatusCode::kResourceExhausted, "the bot's rate limit: send fewer messages"},
    {9499, StatusCode::kFailedPrecondition, "the platform could not read the request"},
};
constexpr Known kDingTalk[] = {
    {310000, StatusCode::kPermissionDenied,
     "check the robot's secret (SEC...) and this machine's clock, its keywords and its IP allow list"},
    {300001, StatusCode::kFailedPrecondition,
     "the access_token in the URL is wrong or the robot was removed"},
    {300005, StatusCode::kFailedPrecondition,
     "the access_token in the URL is wrong or the robot was removed"},
    {130101, StatusCode::kResourceExhausted, "DingTalk allows 20 messages a minute per robot"},
    {410100, StatusCode::kResourceExhausted,
     "DingTalk throttles this robot for a while: send fewer messages"},
};
constexpr Known kWeCom[] = {
    {93000, StatusCode::kFailedPrecondition, "the key in the URL is wrong or the robot was removed"},
    {45009, StatusCode::kResourceExhausted, "WeCom allows 20 messages a minute per robot"},
    {93004, StatusCode::kPermissionDenied, "the robot was disabled"},
    {93008, StatusCode::kPermissionDenied, "the robot is not in the group any more"},
};

template <size_t N>
Status PlatformRefusal(const Known (&table)[N], const char* platform, const char* field, long code,
                       const std::string& msg, std::string_view what) {
  std::string m = std::string(what) + ": " + platform + " refused the message: " + field + " " +
                  std::to_string(code) + " \"" + msg + "\"";
  for (const Known& k : table) {
    if (k.code == code) return Status(k.status, m + " (" + k.hint + ")");
  }
  return FailedPrecondition(m + " (see the platform's error code list)");
}

// The value of `key` as an integer code, when `j` has one (a number or a numeric string).
std::optional<long> Code(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) return std::nullopt;
  if (it->is_number_integer()) return it->get<long>();
  if (it->is_string()) {
    try {
      return std::stol(it->get<std::string>());
    } catch (...) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

std::string Text(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

const char* SlackHint(std::string_view body) {
  if (body.find("invalid_payload") != std::string_view::npos) return "Slack could not read the JSON";
  if (body.find("no_service") != std::string_view::npos || body.find("no_team") != std::string_view::npos ||
      body.find("invalid_token") != std::string_view::npos) {
    return "the webhook was removed or the URL is wrong: create a new one";
  }
  if (body.find("channel_not_found") != std::string_view::npos) return "the webhook's channel was deleted";
  if (body.find("channel_is_archived") != std::string_view::npos) return "the webhook's channel is archived";
  if (body.find("action_prohibited") != std::string_view::npos) return "a workspace admin restricted posting";
  return "";
}

}  // namespace

Status ReadWebhookAnswer(WebhookKind kind, long http_status, std::string_view body, std::string_view what) {
  internal::HttpResponse r{http_status, "", std::string(body)};
  bool http_ok = http_status >= 200 && http_status < 300;
  switch (kind) {
    case WebhookKind::kSlack:
      return http_ok ? Status::Ok() : internal::HttpFailure(r, what, SlackHint(body));
    case WebhookKind::kJson:
      return http_ok ? Status::Ok() : internal::HttpFailure(r, what);
    case WebhookKind::kFeishu:
    case WebhookKind::kDingTalk:
    case WebhookKind::kWeCom:
      break;
  }
  StatusOr<json> parsed = ParseBoundedJson(body);
  const json j = parsed.ok() ? std::move(*parsed) : json();
  if (!j.is_object()) {
    if (!http_ok) return internal::HttpFailure(r, what);
    return FailedPrecondition(std::string(what) + ": the answer is not the platform's JSON (is the URL a " +
                              WebhookKindName(kind) + " bot webhook?): " + TruncateUtf8(body, 200));
  }
  if (kind == WebhookKind::kFeishu) {
    if (auto code = Code(j, "code"); code && *code != 0) {
      return PlatformRefusal(kFeishu, "Feishu", "code", *code, Text(j, "msg"), what);
    }
    if (auto code = Code(j, "StatusCode"); code && *code != 0) {
      return PlatformRefusal(kFeishu, "Feishu", "StatusCode", *code, Text(j, "StatusMessage"), what);
    }
    if (!http_ok) return internal::HttpFailure(r, what);
    if (!Code(j, "code") && !Code(j, "StatusCode")) {
      return FailedPrecondition(std::string(what) +
                                ": the answer has no code (is the URL a feishu bot webhook?)");
    }
    return Status::Ok();
  }
  auto errcode = Code(j, "errcode");
  if (errcode && *errcode != 0) {
    return kind == WebhookKind::kDingTalk
               ? PlatformRefusal(kDingTalk, "DingTalk", "errcode", *errcode, Text(j, "errmsg"), what)
               : PlatformRefusal(kWeCom, "WeCom", "errcode", *errcode, Text(j, "errmsg"), what);
  }
  if (!http_ok) return internal::HttpFailure(r, what);
  if (!errcode) {
    return FailedPrecondition(std::string(what) + ": the answer has no errcode (is the URL a " +
                              WebhookKindName(kind) + " robot webhook?)");
  }
  return Status::Ok();
}

}  // namespace rota::notify
