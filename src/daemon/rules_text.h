// The lab's rules in plain words (`rota rules`, the web page's Rules tab): what the running
// configuration decides about quotas, tiers, bookings, peak hours, idle cards and time limits,
// with how to get an account and the commands a new student needs, in Chinese or English.
// A pure function of the configuration and of what the reader may see of the week's usage; the
// daemon fills the usage and sends the document, the command line and the page lay it out.
// Tested by rules_text_test.cc; end to end by tests/daemon/test_rules.py and tests/web/run.mjs.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"

namespace rota::daemon {

// One line of a section: a sentence, or a command (`code`) with what it does (`text`).
struct RulesItem {
  std::string text;
  std::string code;  // a command to type; "" for a plain sentence
};

struct RulesSection {
  std::string id;  // stable across languages: "quota", "tiers", "peak", "bookings", "idle", ...
  std::string heading;
  std::vector<RulesItem> items;
};

// Where one person stands this quota week.
struct Standing {
  std::string user;
  std::string role;          // "" = none
  double quota_hours = -1;   // weekly GPU-hours; negative = no quota (or quotas are per project)
  double week_hours = 0;     // used this quota week
};

struct RulesDoc {
  std::string title;
  std::vector<RulesSection> sections;
  std::vector<Standing> standing;  // Standings(): what the quota section says of whom
};

// Who reads the rules and what they may see of the quota week: their own GPU-hours, and an
// admin's everyone's (by user name; those absent have used nothing).
struct RulesReader {
  std::string name;
  bool admin = false;
  std::map<std::string, double> week_hours;  // GPU-hours used in the current quota week
};

// The reader's own standing first (none for an anonymous reader), then, for an admin, every
// configured user's and everyone's with usage, by name.
std::vector<Standing> Standings(const config::Config& config, const RulesReader& reader);

// `language` "zh" or "en" (anything else is English).
RulesDoc DescribeRules(const config::Config& config, const RulesReader& reader, std::string_view language);

}  // namespace rota::daemon
