// Tests of who hears of an event: a user's channels and mention ids, the events they want, their
// language, warnings that reach terminals anyway, the admins' copy and where it is not doubled.
#include "daemon/notify_routing.h"

#include <gtest/gtest.h>

#include <set>

namespace rota::daemon {
namespace notify_routing_test {
namespace {

constexpr Time kNow = 1796115600;

notify::ChannelSpec Channel(const std::string& name, const std::string& type) {
  notify::ChannelSpec c;
  c.name = name;
  c.type = type;
  return c;
}

// mail (email), lab (feishu), desk (slack), terminals (tty), admin-mail (email).
config::NotifyConfig Lab() {
  config::NotifyConfig n;
  for (auto [name, type] : std::vector<std::pair<std::string, std::string>>{
           {"mail", "email"}, {"lab", "feishu"}, {"desk", "slack"}, {"terminals", "tty"}, {"admin-mail", "email"}}) {
    n.channels[name] = Channel(name, type);
  }
  n.user_channels = {"mail", "lab"};
  n.user_events = {"job_ended", "idle_warning"};
  n.admin_channels = {"admin-mail", "lab"};
  n.admin_events = {"idle_action", "idle_warning"};
  return n;
}

std::map<std::string, config::UserConfig> Users() {
  config::UserConfig alice;
  alice.email = "alice@lab.example.edu";
  alice.feishu = "ou_alice";
  alice.language = "en";
  config::UserConfig bob;  // no email, no ids: Chinese, the lab's default
  return {{"alice", alice}, {"bob", bob}};
}

notify::Event Event(const std::string& name, const std::string& user) {
  notify::Event e;
  e.name = name;
  e.user = user;
  e.job = 7;
  e.job_name = "train";
  e.host = "gpu1";
  return e;
}

std::set<std::string> ChannelsOf(const std::vector<store::OutboxRow>& rows) {
  std::set<std::string> out;
  for (const store::OutboxRow& r : rows) out.insert(r.channel);
  return out;
}

TEST(NotifyRoutingTest, AUsersEventGoesToTheirChannelsWithTheirIdsInTheirLanguage) {
  const std::vector<store::OutboxRow> rows = RouteEvent(Event("job_ended", "alice"), Lab(), Users(), kNow);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(ChannelsOf(rows), (std::set<std::string>{"mail", "lab"}));
  for (const store::OutboxRow& r : rows) {
    EXPECT_EQ(r.recipient, "alice");
    EXPECT_EQ(r.language, "en");
    EXPECT_EQ(r.event, "job_ended");
    EXPECT_EQ(r.created, kNow);
    EXPECT_EQ(r.next_attempt, kNow);
    EXPECT_FALSE(r.subject.empty());
    EXPECT_EQ(r.mentions, std::vector<std::string>{r.channel == "mail" ? "alice@lab.example.edu" : "ou_alice"});
  }
}

TEST(NotifyRoutingTest, NobodyToMailNoWishNoMessage) {
  // bob has no address: no mail; his lab message has no mention, in the lab's language.
  std::vector<store::OutboxRow> rows = RouteEvent(Event("job_ended", "bob"), Lab(), Users(), kNow);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].channel, "lab");
  EXPECT_TRUE(rows[0].mentions.empty());
  EXPECT_EQ(rows[0].language, "zh");
  // An event nobody wants: nothing (job_started is not among the user events here).
  EXPECT_TRUE(RouteEvent(Event("job_started", "alice"), Lab(), Users(), kNow).empty());
  // A user's own choice replaces the lab's.
  std::map<std::string, config::UserConfig> users = Users();
  users["alice"].channels = std::vector<std::string>{"desk"};
  users["alice"].events = std::vector<std::string>{"job_started"};
  rows = RouteEvent(Event("job_started", "alice"), Lab(), users, kNow);
  EXPECT_EQ(ChannelsOf(rows), std::set<std::string>{"desk"});
  EXPECT_TRUE(RouteEvent(Event("job_ended", "alice"), Lab(), users, kNow).empty());
}

TEST(NotifyRoutingTest, WarningsReachTheTerminalsAndTheAdminsWithoutDoubles) {
  // An idle warning: alice's channels, her terminals too, and the admins' copy by admin-mail
  // only (lab carries her copy already).
  std::vector<store::OutboxRow> rows = RouteEvent(Event("idle_warning", "alice"), Lab(), Users(), kNow);
  EXPECT_EQ(ChannelsOf(rows), (std::set<std::string>{"mail", "lab", "terminals", "admin-mail"}));
  for (const store::OutboxRow& r : rows) {
    if (r.channel == "terminals") {
      EXPECT_EQ(r.mentions, std::vector<std::string>{"alice"});
    }
    if (r.channel == "admin-mail") {
      EXPECT_EQ(r.recipient, "");
    }
  }
  EXPECT_EQ(WhoIsTold(rows, "alice"), "alice (mail, lab, terminals) and the admins (admin-mail)");
  // Even a user who wants no warnings gets them on the terminal.
  std::map<std::string, config::UserConfig> users = Users();
  users["alice"].events = std::vector<std::string>{};
  rows = RouteEvent(Event("idle_warning", "alice"), Lab(), users, kNow);
  EXPECT_EQ(ChannelsOf(rows), (std::set<std::string>{"terminals", "admin-mail", "lab"}));
  // An admins' event alone: the admin channels, never a terminal.
  rows = RouteEvent(Event("idle_action", ""), Lab(), Users(), kNow);
  EXPECT_EQ(ChannelsOf(rows), (std::set<std::string>{"admin-mail", "lab"}));
  EXPECT_EQ(WhoIsTold(rows, ""), "the admins (admin-mail, lab)");
}

TEST(NotifyRoutingTest, UnknownChannelsAreSkipped) {
  config::NotifyConfig n = Lab();
  n.user_channels = {"gone", "lab"};
  n.admin_channels = {"also-gone"};
  const std::vector<store::OutboxRow> rows = RouteEvent(Event("idle_warning", "alice"), n, Users(), kNow);
  EXPECT_EQ(ChannelsOf(rows), (std::set<std::string>{"lab", "terminals"}));
}

}  // namespace
}  // namespace notify_routing_test
}  // namespace rota::daemon
