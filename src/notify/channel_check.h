// Checking a channel's configuration without building it: what the configuration layer (and so
// `rota config check`) needs, with no libcurl behind it, so that the rota command line does not
// load libcurl and its dozens of libraries on every run. MakeChannel runs the same checks before
// it builds a channel. Tested by channels_test.cc and the channel tests.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "notify/email.h"
#include "notify/tty.h"
#include "notify/webhooks.h"

namespace rota::notify {

struct ChannelSpec;

// OK, or InvalidArgument "[notify.channels.NAME] ..." saying what to fix.
Status CheckChannelSpec(const ChannelSpec& spec);
Status CheckEmailOptions(const EmailOptions& options);
Status CheckWebhookOptions(WebhookKind kind, const WebhookOptions& options);
Status CheckTtyOptions(const TtyOptions& options);

// The messages a minute a channel of `type` may send before the platform starts refusing them
// (DingTalk and WeCom robots: 20; Feishu custom bots: 100; Slack incoming webhooks: about one a
// second); 0 = no platform limit (email, terminals). The outbox paces each channel below it.
int DefaultMessagesPerMinute(std::string_view type);

// Which id of a user a channel of `type` takes in Message::mentions: "email", "feishu",
// "dingtalk", "wecom", "slack" (the [users.NAME] key holding it), "user" (the user name itself,
// for terminals), or "" for the generic webhook (which gets the user names).
std::string_view MentionKey(std::string_view type);

namespace internal {

bool StartsWith(const std::string& s, std::string_view prefix);
// The host of "scheme://user@host:port/path" ("[::1]" keeps its brackets).
std::string UrlHost(const std::string& url);
bool IsLoopback(const std::string& host);
// The URL without what may be a secret: "scheme://host[:port]/..." (no user info, path or query;
// webhook URLs carry their token in the path or the query).
std::string RedactUrl(std::string_view url);

}  // namespace internal

}  // namespace rota::notify
