// Tested by webhooks_test.cc (payloads and signatures checked against a real local HTTP server,
// and the signatures against vectors computed with Python's hmac module).
//
// Design: each platform's text message is the simplest that carries a subject, a text and
// mentions; nlohmann-json writes the JSON (invalid UTF-8 in a job name becomes U+FFFD instead of
// an exception). Sources for the formats and the signing (checked through the docs search):
//   Feishu  https://open.feishu.cn/document/client-docs/bot-v3/add-custom-bot ("timestamp +
//           "\n" + secret" as the HMAC key of an empty message; open-lark's custom_bot.rs and
//           electricbubble/feishu-bot-api's genSign do the same)
//   DingTalk https://open.dingtalk.com/document/robots/customize-robot-security-settings (the
//           secret as the key of "timestamp\n" + secret, ms timestamp, URL-encoded; mirrored at
//           apifox.com/apidoc/docs-site/467052/doc-3550006) and .../robots/custom-robot-access
//           (text with "at": atMobiles, atUserIds, isAtAll)
//   WeCom   https://developer.work.weixin.qq.com/document/path/91770 (text: content,
//           mentioned_list, mentioned_mobile_list; content at most 2048 bytes)
//   Slack   https://api.slack.com/messaging/webhooks and .../reference/surfaces/formatting
//           (escape &, <, >; <@U123> mentions)
#include <nlohmann/json.hpp>

#include "notify/codec.h"
#include "notify/webhooks.h"

namespace rota::notify {

namespace {

using nlohmann::json;

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// Subject and text as one chat message.
std::string ChatText(const Message& m) {
  if (m.subject.empty()) return m.text;
  if (m.text.empty()) return m.subject;
  return m.subject + "\n" + m.text;
}

// A phone number (DingTalk atMobiles, WeCom mentioned_mobile_list) rather than a user id.
bool IsMobile(std::string_view id) {
  if (id.size() < 5) return false;
  for (char c : id) {
    if (!((c >= '0' && c <= '9') || c == '+' || c == '-')) return false;
  }
  return true;
}

// Keeps a mention id from breaking out of the markup it is put in.
std::string CleanId(std::string_view id) {
  std::string out;
  for (char c : id) {
    if (c != '"' && c != '<' && c != '>' && c != '&' && c != '|' && static_cast<unsigned char>(c) >= 0x20)
      out += c;
  }
  return out;
}

std::string SlackEscape(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else
      out += c;
  }
  return out;
}

}  // namespace

std::string TruncateUtf8(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  static constexpr std::string_view kEllipsis = "\xE2\x80\xA6";  // …
  if (max_bytes < kEllipsis.size()) return std::string();
  size_t n = max_bytes - kEllipsis.size();
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  return std::string(text.substr(0, n)) + std::string(kEllipsis);
}

std::string FeishuSign(std::int64_t timestamp_s, std::string_view secret) {
  return Base64Encode(HmacSha256(std::to_string(timestamp_s) + "\n" + std::string(secret), ""));
}

std::string DingTalkSign(std::int64_t timestamp_ms, std::string_view secret) {
  return Base64Encode(HmacSha256(secret, std::to_string(timestamp_ms) + "\n" + std::string(secret)));
}

WebhookRequest BuildWebhookRequest(WebhookKind kind, const WebhookOptions& options, const Message& m,
                                   std::int64_t now_ms) {
  WebhookRequest r;
  r.url = options.url;
  std::string text = ChatText(m);
  switch (kind) {
    case WebhookKind::kFeishu: {
      for (const std::string& id : m.mentions) {
        std::string clean = CleanId(id);
        text += " <at user_id=\"" + clean + "\">" + clean + "</at>";
      }
      json j = {{"msg_type", "text"}, {"content", {{"text", text}}}};
      if (!options.secret.empty()) {
        std::int64_t ts = now_ms / 1000;
        j["timestamp"] = std::to_string(ts);
        j["sign"] = FeishuSign(ts, options.secret);
      }
      r.body = Dump(j);
      break;
    }
    case WebhookKind::kDingTalk: {
      json user_ids = json::array(), mobiles = json::array();
      for (const std::string& id : m.mentions) {
        (IsMobile(id) ? mobiles : user_ids).push_back(id);
        text += " @" + CleanId(id);  // DingTalk shows the mention only where "@id" is in the text
      }
      json j = {{"msgtype", "text"},
                {"text", {{"content", text}}},
                {"at", {{"atUserIds", user_ids}, {"atMobiles", mobiles}, {"isAtAll", false}}}};
      r.body = Dump(j);
      if (!options.secret.empty()) {
        r.url += (r.url.find('?') == std::string::npos ? "?" : "&");
        r.url += "timestamp=" + std::to_string(now_ms) +
                 "&sign=" + UrlEncode(DingTalkSign(now_ms, options.secret));
      }
      break;
    }
    case WebhookKind::kWeCom: {
      json users = json::array(), mobiles = json::array();
      for (const std::string& id : m.mentions) (IsMobile(id) ? mobiles : users).push_back(id);
      json t = {{"content", TruncateUtf8(text, 2048)}};
      if (!users.empty()) t["mentioned_list"] = users;
      if (!mobiles.empty()) t["mentioned_mobile_list"] = mobiles;
      r.body = Dump(json{{"msgtype", "text"}, {"text", t}});
      break;
    }
    case WebhookKind::kSlack: {
      std::string s = m.subject.empty() ? SlackEscape(m.text)
                                        : "*" + SlackEscape(m.subject) + "*" +
                                              (m.text.empty() ? "" : "\n" + SlackEscape(m.text));
      for (size_t i = 0; i < m.mentions.size(); ++i)
        s += (i ? " " : "\n") + ("<@" + CleanId(m.mentions[i]) + ">");
      r.body = Dump(json{{"text", s}});
      break;
    }
    case WebhookKind::kJson: {
      json j = {{"source", "rota"}, {"event", m.event},       {"subject", m.subject},
                {"text", m.text},   {"mentions", m.mentions}, {"time", now_ms / 1000}};
      r.body = Dump(j);
      if (!options.secret.empty()) {
        std::string ts = std::to_string(now_ms / 1000);
        r.headers.push_back("X-Rota-Timestamp: " + ts);
        r.headers.push_back("X-Rota-Signature: sha256=" +
                            HexEncode(HmacSha256(options.secret, ts + "." + r.body)));
      }
      break;
    }
  }
  return r;
}

}  // namespace rota::notify
