// [rules] and [advice]. [rules]: what `rota rules` says in the admin's own words (daemon/rules_text.h): how a newcomer
// gets an account, and the lab's rules that no key decides. Tested by config_test.cc.
#include "config/sections.h"

namespace rota::config::internal {

namespace {

constexpr size_t kMaxText = 4000;  // bytes of the account text or of one note
constexpr size_t kMaxNotes = 50;

}  // namespace

void ReadRules(Section& root, Config& config) {
  const toml::table* t = root.Table("rules");
  if (!t) return;
  Section s(*t, "[rules]", root.errors());
  if (auto account = s.String("account")) {
    if (account->size() > kMaxText) {
      s.Fail(*s.Get("account"), "account", "is longer than 4000 bytes (link to a longer page instead)");
    } else {
      config.rules.account = *account;
    }
  }
  if (const toml::array* notes = s.Array("notes")) {
    if (notes->size() > kMaxNotes) s.FailAt(notes->source(), "notes: at most 50 entries");
    for (const toml::node& n : *notes) {
      const auto* text = n.as_string();
      if (!text || text->get().find_first_not_of(" \t\n") == std::string::npos || text->get().size() > kMaxText) {
        s.Fail(n, "notes entry", "is not a sentence of 1 to 4000 bytes (use [\"Clean up /data/tmp weekly.\"])");
      } else if (config.rules.notes.size() < kMaxNotes) {
        config.rules.notes.push_back(text->get());
      }
    }
  }
  s.Finish();
}

void ReadAdvice(Section& root, Config& config) {
  const toml::table* t = root.Table("advice");
  if (!t) return;
  Section s(*t, "[advice]", root.errors());
  if (auto prices = s.String("prices")) {
    if (prices->empty() || (*prices)[0] != '/') {
      s.Fail(*s.Get("prices"), "prices", "is not an absolute path (use \"/etc/rota/gpu-prices.csv\")");
    } else {
      config.advice.prices = *prices;
    }
  }
  if (auto d = s.DurationOf("wait_threshold", 0)) config.advice.wait_threshold = *d;
  s.Finish();
}

}  // namespace rota::config::internal
