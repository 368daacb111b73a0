#include "daemon/notify_routing.h"

#include <algorithm>

#include "notify/channels.h"

namespace rota::daemon {

namespace {

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

bool IsWarning(const std::string& event) {
  return event == "idle_warning" || event == "stuck_warning" || event == "over_memory" ||
         event == "time_limit_soon" || event == "booking_ending_soon" || event == "booking_overrun";
}

std::vector<store::OutboxRow> RouteEvent(const notify::Event& e, const config::NotifyConfig& nc,
                                         const std::map<std::string, config::UserConfig>& users, Time now) {
  std::vector<store::OutboxRow> rows;
  std::vector<std::string> used;
  auto add = [&](const std::string& channel, const std::string& recipient, std::vector<std::string> mentions,
                 const std::string& language) {
    notify::Message m = notify::Render(e, language);
    store::OutboxRow r;
    r.channel = channel;
    r.recipient = recipient;
    r.mentions = std::move(mentions);
    r.event = e.name;
    r.language = language;
    r.subject = m.subject;
    r.body = m.text;
    r.created = now;
    r.next_attempt = now;
    rows.push_back(std::move(r));
    used.push_back(channel);
  };
  if (!e.user.empty()) {
    auto found = users.find(e.user);
    const config::UserConfig* u = found == users.end() ? nullptr : &found->second;
    const bool wants = Contains(u && u->events ? *u->events : nc.user_events, e.name);
    const bool warning = IsWarning(e.name);
    const std::string language = u && !u->language.empty() ? u->language : nc.language;
    std::vector<std::string> channels = u && u->channels ? *u->channels : nc.user_channels;
    for (const auto& [name, spec] : nc.channels) {
      if (warning && spec.type == "tty" && !Contains(channels, name)) channels.push_back(name);
    }
    for (const std::string& c : channels) {
      auto spec = nc.channels.find(c);
      if (spec == nc.channels.end()) continue;
      const std::string& type = spec->second.type;
      if (!wants && !(warning && type == "tty")) continue;
      const std::string_view key = notify::MentionKey(type);
      std::string id;
      if (key == "email") {
        id = u ? u->email : "";
        if (id.empty()) continue;  // nobody to mail
      } else if (key == "user" || key.empty()) {
        id = e.user;
      } else if (u) {
        id = key == "feishu"     ? u->feishu
             : key == "dingtalk" ? u->dingtalk
             : key == "wecom"    ? u->wecom
                                 : u->slack;
      }
      add(c, e.user, id.empty() ? std::vector<std::string>{} : std::vector<std::string>{id}, language);
    }
  }
  if (Contains(nc.admin_events, e.name)) {
    for (const std::string& c : nc.admin_channels) {
      auto spec = nc.channels.find(c);
      if (spec == nc.channels.end() || spec->second.type == "tty" || Contains(used, c)) continue;
      add(c, "", {}, nc.language);
    }
  }
  return rows;
}

std::string WhoIsTold(const std::vector<store::OutboxRow>& rows, const std::string& user) {
  std::vector<std::string> owner, admins;
  for (const store::OutboxRow& r : rows) (r.recipient.empty() ? admins : owner).push_back(r.channel);
  std::string told;
  if (!owner.empty()) told = user + " (" + Join(owner, ", ") + ")";
  if (!admins.empty()) told += (told.empty() ? "" : " and ") + std::string("the admins (") + Join(admins, ", ") + ")";
  return told;
}

}  // namespace rota::daemon
