#include "notify/channels.h"

#include <gtest/gtest.h>

namespace rota::notify {
namespace channels_test {
namespace {

TEST(NotifyChannels, MakesEachTypeAndNamesTheTableOnErrors) {
  ChannelSpec mail{"mail", "email", {}, {}, {}};
  mail.email.url = "smtps://mail.example.edu";
  mail.email.from = "Rota <rota@lab.example.edu>";
  auto made = MakeChannel(mail);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  EXPECT_EQ((*made)->Describe(), "email smtps://mail.example.edu (implicit TLS) from rota@lab.example.edu");

  ChannelSpec lark{"lab-group", "lark", {}, {}, {}};
  lark.webhook.url = "https://open.feishu.cn/open-apis/bot/v2/hook/SECRET-TOKEN";
  lark.webhook.secret = "s";
  made = MakeChannel(lark);
  ASSERT_TRUE(made.ok());
  EXPECT_EQ((*made)->Describe(), "feishu https://open.feishu.cn/... (signed)");

  EXPECT_TRUE(MakeChannel({"terminals", "tty", {}, {}, {}}).ok());

  Status bad = MakeChannel({"group", "teams", {}, {}, {}}).status();
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.message().rfind("[notify.channels.group] type \"teams\"", 0), 0u) << bad.message();
  Status no_url = MakeChannel({"ding", "dingtalk", {}, {}, {}}).status();
  EXPECT_EQ(no_url.message().rfind("[notify.channels.ding] dingtalk url", 0), 0u) << no_url.message();
}

TEST(NotifyChannels, LimitsAndMentionKeys) {
  EXPECT_EQ(DefaultMessagesPerMinute("dingtalk"), 20);
  EXPECT_EQ(DefaultMessagesPerMinute("wecom"), 20);
  EXPECT_EQ(DefaultMessagesPerMinute("email"), 0);
  EXPECT_EQ(MentionKey("lark"), "feishu");
  EXPECT_EQ(MentionKey("tty"), "user");
  EXPECT_EQ(MentionKey("webhook"), "");
}

}  // namespace
}  // namespace channels_test
}  // namespace rota::notify
