// Tested by config_test.cc.
//
// Design: users and projects are tables keyed by name, so a name appears once by construction
// (TOML rejects a duplicate table). A user's role must be one of [quota.roles]: a misspelt role
// would otherwise silently give the user the default quota.
#include <string>

#include "config/sections.h"

namespace rota::config::internal {

namespace {

void ReadUser(const std::string& name, const toml::table& t, Section& users, Config& config) {
  Section s(t, "[users." + KeyName(name) + "]", users.errors());
  UserConfig u;
  QuotaPolicy& q = config.policy.quota;
  if (auto role = s.String("role")) {
    if (q.role_hours.count(*role)) {
      u.role = *role;
      q.user_role[name] = *role;
    } else {
      std::string known;
      for (const auto& [r, hours] : std::map<std::string, double>(q.role_hours.begin(), q.role_hours.end())) {
        known += (known.empty() ? "" : ", ") + r;
      }
      s.Fail(*s.Get("role"), "role",
             known.empty() ? "is not defined: [quota.roles] defines no roles (add it there)"
                           : "is not defined in [quota.roles] (defined: " + known + ")");
    }
  }
  if (auto h = s.Hours("quota")) {
    u.quota_hours = *h;
    q.user_hours[name] = *h;
  }
  if (auto email = s.String("email")) {
    if (email->find('@') == std::string::npos || email->find(' ') != std::string::npos) {
      s.Fail(*s.Get("email"), "email", "is not an email address (use name@example.edu)");
    } else {
      u.email = *email;
    }
  }
  for (auto [key, field] : {std::pair{"feishu", &u.feishu}, std::pair{"dingtalk", &u.dingtalk},
                            std::pair{"wecom", &u.wecom}, std::pair{"slack", &u.slack}}) {
    if (auto id = s.String(key)) *field = *id;
  }
  ReadUserNotify(s, config, u);
  s.Finish();
  config.users[name] = std::move(u);
}

}  // namespace

void ReadPeople(Section& root, Config& config) {
  if (const toml::table* users = root.Table("users")) {
    Section s(*users, "[users]", root.errors());
    for (const auto& [key, node] : *users) {
      std::string name(key.str());
      if (const toml::table* t = node.as_table()) {
        ReadUser(name, *t, s, config);
      } else {
        s.Fail(node, KeyName(name), "is not a table (use [users." + KeyName(name) + "] with role, email, ...)");
      }
    }
  }
  if (const toml::table* projects = root.Table("projects")) {
    Section s(*projects, "[projects]", root.errors());
    for (const auto& [key, node] : *projects) {
      std::string name(key.str());
      const toml::table* t = node.as_table();
      if (!t) {
        s.Fail(node, KeyName(name), "is not a table (use [projects." + KeyName(name) + "] hours = 500)");
        continue;
      }
      Section p(*t, "[projects." + KeyName(name) + "]", root.errors());
      ProjectConfig project;
      if (auto h = p.Hours("hours")) {
        project.hours = *h;
        config.policy.quota.project_hours[name] = *h;
      }
      p.Finish();
      config.projects[name] = project;
    }
  }
}

}  // namespace rota::config::internal
