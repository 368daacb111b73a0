// Tested by channels_test.cc, email_test.cc and webhooks_test.cc (through the Make functions).
#include "notify/channel_check.h"

#include "notify/channels.h"
#include "notify/mime.h"

namespace rota::notify {

namespace internal {

bool StartsWith(const std::string& s, std::string_view prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

std::string UrlHost(const std::string& url) {
  size_t start = url.find("://");
  start = start == std::string::npos ? 0 : start + 3;
  size_t end = url.find_first_of("/?#", start);
  std::string host = url.substr(start, end == std::string::npos ? std::string::npos : end - start);
  if (size_t at = host.rfind('@'); at != std::string::npos) host = host.substr(at + 1);
  if (!host.empty() && host[0] == '[') return host.substr(0, host.find(']') + 1);
  return host.substr(0, host.find(':'));
}

bool IsLoopback(const std::string& host) {
  return host == "localhost" || StartsWith(host, "127.") || host == "[::1]";
}

std::string RedactUrl(std::string_view url) {
  size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return "(a URL without scheme://)";
  size_t host_start = scheme_end + 3;
  size_t host_end = url.find_first_of("/?#", host_start);
  std::string_view host =
      url.substr(host_start, host_end == std::string_view::npos ? host_end : host_end - host_start);
  if (size_t at = host.rfind('@'); at != std::string_view::npos) host.remove_prefix(at + 1);
  std::string out = std::string(url.substr(0, host_start)) + std::string(host);
  if (host_end != std::string_view::npos && host_end + 1 < url.size()) out += "/...";
  return out;
}

}  // namespace internal

using internal::IsLoopback;
using internal::StartsWith;
using internal::UrlHost;

std::optional<WebhookKind> ParseWebhookKind(std::string_view name) {
  if (name == "feishu" || name == "lark") return WebhookKind::kFeishu;
  if (name == "dingtalk") return WebhookKind::kDingTalk;
  if (name == "wecom") return WebhookKind::kWeCom;
  if (name == "slack") return WebhookKind::kSlack;
  if (name == "webhook") return WebhookKind::kJson;
  return std::nullopt;
}

const char* WebhookKindName(WebhookKind kind) {
  switch (kind) {
    case WebhookKind::kFeishu:
      return "feishu";
    case WebhookKind::kDingTalk:
      return "dingtalk";
    case WebhookKind::kWeCom:
      return "wecom";
    case WebhookKind::kSlack:
      return "slack";
    case WebhookKind::kJson:
      return "webhook";
  }
  return "webhook";
}

Status CheckEmailOptions(const EmailOptions& options) {
  bool smtps = StartsWith(options.url, "smtps://");
  if (!smtps && !StartsWith(options.url, "smtp://")) {
    return InvalidArgument("email url \"" + internal::RedactUrl(options.url) +
                           "\" must start with smtp:// (plain or STARTTLS) or smtps:// (implicit TLS)");
  }
  if (UrlHost(options.url).empty()) return InvalidArgument("email url \"" + options.url + "\" has no host");
  if (smtps && options.starttls) {
    return InvalidArgument("email starttls is for smtp:// URLs; " + options.url +
                           " is already TLS (drop starttls)");
  }
  auto from = ParseMailAddress(options.from);
  if (!from)
    return InvalidArgument("email from \"" + options.from +
                           "\" is not an address (use \"Rota <rota@lab.example.edu>\")");
  for (const std::string& t : options.to) {
    auto a = ParseMailAddress(t);
    if (!a) return InvalidArgument("email to \"" + t + "\" is not an address");
  }
  if (options.username.empty() && !options.password.empty()) {
    return InvalidArgument("email password is set but username is not");
  }
  if (!options.username.empty() && !smtps && !options.starttls && !IsLoopback(UrlHost(options.url))) {
    return InvalidArgument("email would send the password in clear text to " + UrlHost(options.url) +
                           " (use smtps:// or starttls = true)");
  }
  if (options.timeout.count() <= 0) return InvalidArgument("email timeout must be positive");
  return Status();
}

Status CheckWebhookOptions(WebhookKind kind, const WebhookOptions& options) {
  std::string name = WebhookKindName(kind);
  if (options.url.rfind("https://", 0) != 0 && options.url.rfind("http://", 0) != 0) {
    return InvalidArgument(name + " url \"" + internal::RedactUrl(options.url) +
                           "\" must start with https://");
  }
  if (!options.secret.empty() && (kind == WebhookKind::kWeCom || kind == WebhookKind::kSlack)) {
    return InvalidArgument(name + " webhooks are not signed: drop the secret (the URL is the credential)");
  }
  if (options.timeout.count() <= 0) return InvalidArgument(name + " timeout must be positive");
  return Status();
}

Status CheckTtyOptions(const TtyOptions& options) {
  if (options.timeout.count() <= 0) return InvalidArgument("terminal timeout must be positive");
  return Status();
}

int DefaultMessagesPerMinute(std::string_view type) {
  if (type == "dingtalk" || type == "wecom") return 20;
  if (type == "feishu" || type == "lark") return 100;
  if (type == "slack") return 60;
  return 0;
}

std::string_view MentionKey(std::string_view type) {
  if (type == "email") return "email";
  if (type == "feishu" || type == "lark") return "feishu";
  if (type == "dingtalk") return "dingtalk";
  if (type == "wecom") return "wecom";
  if (type == "slack") return "slack";
  if (type == "tty") return "user";
  return "";
}

Status CheckChannelSpec(const ChannelSpec& spec) {
  const std::string where = "[notify.channels." + spec.name + "] ";
  Status s;
  if (spec.type == "email") {
    s = CheckEmailOptions(spec.email);
  } else if (spec.type == "tty") {
    s = CheckTtyOptions(spec.tty);
  } else if (auto kind = ParseWebhookKind(spec.type)) {
    s = CheckWebhookOptions(*kind, spec.webhook);
  } else {
    return InvalidArgument(where + "type \"" + spec.type +
                           "\" is not a channel type (use email, feishu, dingtalk, wecom, slack, webhook or tty)");
  }
  if (!s.ok()) return Status(s.code(), where + s.message());
  return s;
}

}  // namespace rota::notify
