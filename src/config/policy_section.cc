// Tested by config_test.cc.
//
// Design: the file's [policy], [quota] and [preemption] map onto rota::Policy field by field;
// a key that is absent leaves Policy{}'s default in place, so the defaults live in one place
// (core/policy.h) and an empty file is the default policy. Durations are strings ("14d") rather
// than bare numbers, whose unit would be a guess.
#include <string>
#include <utility>
#include <vector>

#include "config/sections.h"
#include "config/tzdb.h"
#include "config/values.h"
#include "core/signal_spec.h"

namespace rota::config::internal {

namespace {

void ReadWeights(Section& policy, Weights& w) {
  const toml::table* t = policy.Table("weights");
  if (!t) return;
  Section s(*t, "[policy.weights]", policy.errors());
  const char* hint = "a weight such as 1000";
  std::pair<const char*, double*> fields[] = {
      {"tier", &w.tier}, {"fairshare", &w.fairshare}, {"age", &w.age}, {"size", &w.size}, {"penalty", &w.penalty}};
  for (auto [key, field] : fields) {
    if (auto v = s.Number(key, 0, hint)) *field = *v;
  }
  s.Finish();
}

void ReadTimeOfDay(Section& policy, std::vector<TimeOfDayRule>& rules) {
  const toml::array* a = policy.Array("time_of_day");
  if (!a) return;
  rules.clear();  // given: replaces the default table; `time_of_day = []` turns it off
  for (const toml::node& n : *a) {
    const toml::table* t = n.as_table();
    if (!t) {
      policy.Fail(n, "time_of_day entry", "is not a table (use [[policy.time_of_day]] or { days = ..., ... })");
      continue;
    }
    Section s(*t, "[[policy.time_of_day]]", policy.errors());
    TimeOfDayRule r;
    bool ok = true;
    if (auto days = s.String("days")) {
      if (auto mask = ParseWeekdays(*days)) {
        r.weekdays = *mask;
      } else {
        s.Fail(*s.Get("days"), "days", "is not a set of weekdays (use \"mon-fri\", \"sat,sun\", \"all\")");
        ok = false;
      }
    }
    for (auto [key, field] : {std::pair{"from", &r.start_minute}, std::pair{"to", &r.end_minute}}) {
      auto text = s.String(key);
      std::optional<int> minute = text ? ParseClock(*text) : std::nullopt;
      if (minute) {
        *field = *minute;
      } else {
        if (text) s.Fail(*s.Get(key), key, "is not a time of day (use HH:MM, 00:00 to 23:59)");
        if (!s.Get(key)) s.FailAt(t->source(), std::string("needs ") + key + " = \"HH:MM\"");
        ok = false;
      }
    }
    if (auto f = s.Number("factor", 0, "a multiplier such as 0.5 or 1.5")) {
      r.factor = *f;
    } else if (!s.Get("factor")) {
      s.FailAt(t->source(), "needs factor = a multiplier such as 0.5");
      ok = false;
    } else {
      ok = false;
    }
    s.Finish();
    if (ok) rules.push_back(r);
  }
}

// Whether `zone` has ever had, or will have, UTC offset `offset` (from 1970 on).
bool HasOffset(const Zone& zone, int offset) {
  if (zone.OffsetAt(0) == offset) return true;
  for (const Zone::Transition& t : zone.TransitionsIn(0, kNever)) {
    if (t.offset == offset) return true;
  }
  return false;
}

// Design (docs/design.md, "Time zones"): a zone name of the tz database is read with its
// daylight saving; an offset is a fixed zone. A name the database does not hold stays accepted
// as a label when utc_offset gives the offset (configurations from before names were read).
void ReadTimezone(Section& s, Config& config) {
  auto tz = s.String("timezone");
  const toml::node* offset_node = s.Get("utc_offset");
  auto offset_text = s.String("utc_offset");
  std::optional<int> offset;
  if (offset_text) {
    offset = ParseUtcOffset(*offset_text);
    if (!offset) s.Fail(*offset_node, "utc_offset", "is not a UTC offset (use \"+08:00\", \"-05:00\" or \"UTC\")");
  }
  if (tz) {
    config.timezone = *tz;
    if (auto from_tz = ParseUtcOffset(*tz)) {
      if (offset && *from_tz != *offset) {
        s.Fail(*offset_node, "utc_offset", "disagrees with timezone " + Show(*s.Get("timezone")));
      }
      config.policy.zone = *from_tz;
      return;
    }
    StatusOr<Zone> zone = LoadZone(*tz);
    if (zone.ok()) {
      if (offset && !HasOffset(*zone, *offset)) {
        s.Fail(*offset_node, "utc_offset",
               "disagrees with timezone " + Show(*s.Get("timezone")) +
                   " (a zone of the tz database, read with its daylight saving: leave utc_offset out)");
      }
      config.policy.zone = std::move(*zone);
      return;
    }
    if (!offset) {
      s.Fail(*s.Get("timezone"), "timezone",
             zone.status().message() + "; give a zone name such as \"Asia/Shanghai\" or \"Europe/Berlin\", "
             "or a UTC offset (\"+08:00\", \"UTC\")");
      return;
    }
  }
  if (offset) {
    config.policy.zone = *offset;
    if (!tz) config.timezone = FormatUtcOffset(*offset);
  }
}

}  // namespace

void ReadPolicy(Section& root, Config& config) {
  const toml::table* t = root.Table("policy");
  if (!t) return;
  Section s(*t, "[policy]", root.errors());
  Policy& p = config.policy;
  // The names come from the core, so the config and the command line accept the same words.
  std::vector<std::pair<std::string, Algorithm>> algorithms;
  for (Algorithm a : kAlgorithms) algorithms.emplace_back(AlgorithmName(a), a);
  if (auto a = s.Choice<Algorithm>("algorithm", algorithms)) p.algorithm = *a;
  std::vector<std::pair<std::string, AccountMode>> modes;
  for (AccountMode m : kAccountModes) modes.emplace_back(AccountModeName(m), m);
  if (auto m = s.Choice<AccountMode>("mode", modes)) p.mode = *m;
  ReadWeights(s, p.weights);
  if (auto d = s.DurationOf("age_max", 1)) p.age_max = *d;
  if (auto v = s.Number("age_cap", 1, "a cap of 1 or more, such as 1.0 or 2.0")) p.age_cap = *v;
  if (auto d = s.DurationOf("fairshare_half_life", 1)) p.fairshare_half_life = *d;
  if (auto v = s.Number("size_max_gpu_hours", 1, "GPU-hours such as 256")) p.size_max_gpu_hours = *v;
  if (auto b = s.Choice<bool>("size_by", {{"limit", false}, {"prediction", true}})) p.size_by_prediction = *b;
  ReadTimeOfDay(s, p.time_of_day);
  if (auto v = s.Integer("heavy_gpus", 1, 1024)) p.heavy_gpus = static_cast<int>(*v);
  if (auto d = s.DurationOf("heavy_time", 1)) p.heavy_time = *d;
  ReadTimezone(s, config);
  if (auto v = s.Integer("plan_depth", 0, 1000000)) p.plan_depth = static_cast<int>(*v);
  if (auto d = s.DurationOf("protect_after", 0)) p.protect_after = *d;
  if (auto v = s.Integer("protect_max", 0, 1000000)) p.protect_max = static_cast<int>(*v);
  if (auto d = s.DurationOf("promise_slack", 0)) p.promise_slack = *d;
  if (auto b = s.Bool("protect_foreseen")) p.protect_foreseen = *b;
  if (auto v = s.String("default_signal")) {
    if (!v->empty()) {
      StatusOr<SignalSpec> spec = ParseSignalSpec(*v);
      if (spec.ok()) {
        config.default_signal = *spec;
      } else {
        // The reader names the value already: what ParseSignalSpec says after its quoted text.
        const std::string m = spec.status().message();
        const size_t at = m.find("\": ");
        s.Fail(*s.Get("default_signal"), "default_signal",
               "is not a warning signal: " + (at == std::string::npos ? m : m.substr(at + 3)));
      }
    }
  }
  s.Finish();
}

void ReadQuota(Section& root, Config& config) {
  QuotaPolicy& q = config.policy.quota;
  if (const toml::table* t = root.Table("quota")) {
    Section s(*t, "[quota]", root.errors());
    if (auto h = s.Hours("default")) q.default_hours = *h;
    if (auto day = s.String("week_start_day")) {
      if (auto d = ParseWeekday(*day)) {
        q.week_start_day = *d;
      } else {
        s.Fail(*s.Get("week_start_day"), "week_start_day", "is not a weekday (use \"mon\" ... \"sun\")");
      }
    }
    if (auto b = s.Bool("overflow_as_explore")) q.overflow_as_explore = *b;
    if (const toml::table* roles = s.Table("roles")) {
      Section r(*roles, "[quota.roles]", root.errors());
      for (const auto& [name, node] : *roles) {
        if (auto h = r.Hours(name.str())) q.role_hours[std::string(name.str())] = *h;
      }
      r.Finish();
    }
    s.Finish();
  }
  if (const toml::table* t = root.Table("preemption")) {
    Section s(*t, "[preemption]", root.errors());
    Policy& p = config.policy;
    if (auto b = s.Bool("enabled")) p.preemption = *b;
    if (const toml::array* tiers = s.Array("tiers")) {
      std::uint8_t mask = 0;
      bool ok = true;
      for (const toml::node& n : *tiers) {
        const auto* name = n.as_string();
        auto tier = name ? ParseTier(name->get()) : std::nullopt;
        if (!tier) {
          s.Fail(n, "tiers entry", "is not a tier (use \"explore\", \"regular\" or \"thesis\")");
          ok = false;
          continue;
        }
        mask = static_cast<std::uint8_t>(mask | (1u << static_cast<int>(*tier)));
      }
      if (ok) p.preemptible_tiers = mask;
    }
    s.Finish();
  }
}

}  // namespace rota::config::internal
