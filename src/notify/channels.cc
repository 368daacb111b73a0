// Tested by channels_test.cc.
//
// Design: the spec carries every kind's options so that the configuration layer fills one struct
// per table without knowing the channel classes; only the options of `type` are used.
#include "notify/channels.h"

namespace rota::notify {

StatusOr<std::unique_ptr<Channel>> MakeChannel(const ChannelSpec& spec) {
  std::string where = "[notify.channels." + spec.name + "] ";
  StatusOr<std::unique_ptr<Channel>> made = InvalidArgument("");
  if (spec.type == "email") {
    made = MakeEmailChannel(spec.email);
  } else if (spec.type == "tty") {
    made = MakeTtyChannel(spec.tty);
  } else if (auto kind = ParseWebhookKind(spec.type)) {
    made = MakeWebhookChannel(*kind, spec.webhook);
  } else {
    return InvalidArgument(
        where + "type \"" + spec.type +
        "\" is not a channel type (use email, feishu, dingtalk, wecom, slack, webhook or tty)");
  }
  if (!made.ok()) return Status(made.status().code(), where + made.status().message());
  return made;
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

}  // namespace rota::notify
