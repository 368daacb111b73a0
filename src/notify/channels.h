// Building channels from configuration: the one entry point the daemon needs. A [notify]
// section (docs/notify.md) is read into ChannelSpec values by the configuration layer; MakeChannel
// turns each into a Channel. Also the per-platform defaults the outbox should respect.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"
#include "notify/channel.h"
#include "notify/channel_check.h"  // CheckChannelSpec, DefaultMessagesPerMinute, MentionKey
#include "notify/email.h"
#include "notify/tty.h"
#include "notify/webhooks.h"

namespace rota::notify {

// One configured channel ([notify.channels.NAME]).
struct ChannelSpec {
  std::string name;        // NAME: how logs, `rota notify test --channel` and the audit trail call it
  std::string type;        // "email", "feishu" (or "lark"), "dingtalk", "wecom", "slack", "webhook", "tty"
  EmailOptions email;      // used when type is "email"
  WebhookOptions webhook;  // used for the chat and webhook types
  TtyOptions tty;          // used when type is "tty"
};

// The channel `spec` describes, or InvalidArgument "[notify.channels.NAME] ..." saying what to fix.
StatusOr<std::unique_ptr<Channel>> MakeChannel(const ChannelSpec& spec);

}  // namespace rota::notify
