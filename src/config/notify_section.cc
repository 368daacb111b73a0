// [notify] and [notify.channels.NAME]: the lab's notification channels and who hears what
// (docs/notify.md). Tested by config_test.cc.
//
// Design: every channel is checked here with notify::CheckChannelSpec (its URL, addresses and
// secrets, the same checks MakeChannel makes before it builds one, without libcurl and without
// the network), so a channel that cannot work is a configuration error with its line, not a
// failure at the first message. Secrets may live in
// files readable by root only (url_file, secret_file, password_file), read here.
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <string>

#include "config/sections.h"
#include "notify/channel_check.h"
#include "notify/templates.h"

namespace rota::config::internal {

namespace {

// A string array of names each accepted by `known`; records an error per bad entry.
std::optional<std::vector<std::string>> Names(Section& s, std::string_view key,
                                              const std::function<bool(const std::string&)>& known,
                                              std::string_view what) {
  return s.Strings(key, [&](const std::string& name) { return known(name) ? std::string() : std::string(what); });
}

// The value of `key`, or of the file named by `key`_file (its first line); both is an error.
std::optional<std::string> Secret(Section& s, const std::string& key, bool& failed) {
  std::optional<std::string> value = s.String(key);
  std::optional<std::string> file = s.String(key + "_file");
  if (value && file) {
    s.Fail(*s.Get(key + "_file"), key + "_file", "and " + key + " are both set (keep one)");
    return value;
  }
  if (!file) return value;
  std::ifstream in(*file);
  std::string line;
  if (!in || !std::getline(in, line)) {
    s.Fail(*s.Get(key + "_file"), key + "_file", "cannot be read (it must exist and be readable by rotad)");
    failed = true;
    return std::nullopt;
  }
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

void ReadChannel(const std::string& name, const toml::table& t, Errors* errors, NotifyConfig& n) {
  Section s(t, "[notify.channels." + KeyName(name) + "]", errors);
  notify::ChannelSpec spec;
  spec.name = name;
  if (auto type = s.String("type")) spec.type = *type;
  bool unreadable = false;
  if (auto url = Secret(s, "url", unreadable)) spec.email.url = spec.webhook.url = *url;
  if (auto secret = Secret(s, "secret", unreadable)) spec.webhook.secret = *secret;
  if (auto password = Secret(s, "password", unreadable)) spec.email.password = *password;
  if (auto b = s.Bool("starttls")) spec.email.starttls = *b;
  if (auto u = s.String("username")) spec.email.username = *u;
  if (auto f = s.String("from")) spec.email.from = *f;
  if (const toml::array* to = s.Array("to")) {
    for (const toml::node& a : *to) {
      if (const auto* v = a.as_string()) {
        spec.email.to.push_back(v->get());
      } else {
        s.Fail(a, "to entry", "is not an email address string");
      }
    }
  }
  if (auto ca = s.String("ca_file")) spec.email.ca_file = spec.webhook.ca_file = *ca;
  if (auto p = s.String("proxy")) spec.webhook.proxy = *p;
  if (auto u = s.String("utmp_file")) spec.tty.utmp_file = *u;
  if (auto d = s.DurationOf("timeout", 1)) {
    spec.email.timeout = spec.webhook.timeout = spec.tty.timeout = std::chrono::seconds(*d);
  }
  int per_minute = notify::DefaultMessagesPerMinute(spec.type);
  if (auto p = s.Integer("per_minute", 0, 100000)) per_minute = static_cast<int>(*p);
  s.Finish();
  if (unreadable) return;
  if (spec.type.empty()) {
    s.FailAt(t.source(), "has no type (use email, feishu, dingtalk, wecom, slack, webhook or tty)");
    return;
  }
  if (Status checked = notify::CheckChannelSpec(spec); !checked.ok()) {
    s.FailAt(t.source(), checked.message().substr(checked.message().find("] ") + 2));
    return;
  }
  n.per_minute[name] = per_minute;
  n.channels[name] = std::move(spec);
}

}  // namespace

void ReadNotify(Section& root, Config& config) {
  NotifyConfig& n = config.notify;
  for (std::string_view e : notify::EventNames()) {
    if (notify::IsAdminEvent(e)) n.admin_events.emplace_back(e);
    if (!notify::IsAdminEvent(e) && e != "gpu_drained" && e != "test") n.user_events.emplace_back(e);
  }
  n.user_events.emplace_back("idle_action");  // the owner hears what was done to their job
  n.user_events.emplace_back("stuck_action");
  n.user_events.emplace_back("over_memory_action");
  n.user_events.emplace_back("booking_overrun");
  n.user_events.emplace_back("outside_process");  // their process on a card without an allocation
  const toml::table* t = root.Table("notify");
  if (!t) return;
  Section s(*t, "[notify]", root.errors());
  if (auto l = s.Choice<std::string>("language", {{"zh", "zh"}, {"en", "en"}})) n.language = *l;
  const toml::table* channels = s.Table("channels");
  if (channels) {
    for (const auto& [key, node] : *channels) {
      std::string name(key.str());
      if (const toml::table* c = node.as_table()) {
        ReadChannel(name, *c, root.errors(), n);
      } else {
        s.Fail(node, "channels." + KeyName(name),
               "is not a table (use [notify.channels." + KeyName(name) + "] type = ...)");
      }
    }
  }
  auto channel = [&](const std::string& c) { return channels != nullptr && channels->contains(c); };
  const std::string no_channel = "is not a channel defined under [notify.channels]";
  auto event = [](const std::string& e) { return notify::IsEventName(e); };
  const std::string no_event = "is not an event name (see docs/notify.md: job_ended, idle_warning, ...)";
  if (auto v = Names(s, "admin_channels", channel, no_channel)) n.admin_channels = *v;
  for (const std::string& c : n.admin_channels) {
    auto it = n.channels.find(c);
    if (it != n.channels.end() && it->second.type == "email" && it->second.email.to.empty()) {
      s.Fail(*s.Get("admin_channels"), "admin_channels",
             "names the email channel \"" + c +
                 "\", which has no `to` for the admins' addresses (add to = [\"admin@...\"] " +
                 "to [notify.channels." + KeyName(c) + "], or use a channel of its own for them)");
    }
  }
  if (auto v = Names(s, "admin_events", event, no_event)) n.admin_events = *v;
  if (auto v = Names(s, "user_channels", channel, no_channel)) {
    n.user_channels = *v;
  } else {
    // Every channel but mail with fixed recipients (`to`: the admins' list, which would get
    // every user's messages).
    for (const auto& [name, spec] : n.channels) {
      if (spec.type != "email" || spec.email.to.empty()) n.user_channels.push_back(name);
    }
  }
  if (auto v = Names(s, "user_events", event, no_event)) n.user_events = *v;
  if (auto d = s.DurationOf("first_backoff", 1)) n.retry.first_backoff = *d;
  if (auto d = s.DurationOf("max_backoff", 1)) n.retry.max_backoff = *d;
  if (auto d = s.DurationOf("max_age", 1)) n.retry.max_age = *d;
  if (auto a = s.Integer("max_attempts", 1, 1000)) n.retry.max_attempts = static_cast<int>(*a);
  if (auto f = s.Integer("fail_after", 1, 1000)) n.fail_after = static_cast<int>(*f);
  if (auto d = s.DurationOf("time_limit_warning", 0)) n.time_limit_warning = *d;
  if (auto d = s.DurationOf("keep_messages", 0)) n.keep_messages = *d;
  s.Finish();
}

// Called by ReadUser: a user's language, channels and events.
void ReadUserNotify(Section& s, const Config& config, UserConfig& u) {
  if (auto l = s.Choice<std::string>("language", {{"zh", "zh"}, {"en", "en"}})) u.language = *l;
  auto channel = [&](const std::string& c) { return config.notify.channels.count(c) > 0; };
  auto event = [](const std::string& e) { return notify::IsEventName(e); };
  u.channels = Names(s, "notify", channel, "is not a channel defined under [notify.channels]");
  u.events =
      Names(s, "events", event, "is not an event name (see docs/notify.md: job_ended, idle_warning, ...)");
}

}  // namespace rota::config::internal
