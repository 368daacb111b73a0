// Tested by channels_test.cc.
//
// Design: the spec carries every kind's options so that the configuration layer fills one struct
// per table without knowing the channel classes; only the options of `type` are used.
#include "notify/channels.h"

#include "notify/channel_check.h"

namespace rota::notify {

StatusOr<std::unique_ptr<Channel>> MakeChannel(const ChannelSpec& spec) {
  if (Status s = CheckChannelSpec(spec); !s.ok()) return s;  // names the channel
  if (spec.type == "email") return MakeEmailChannel(spec.email);
  if (spec.type == "tty") return MakeTtyChannel(spec.tty);
  return MakeWebhookChannel(*ParseWebhookKind(spec.type), spec.webhook);
}

}  // namespace rota::notify
