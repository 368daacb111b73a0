// [watch]: idle, stuck and over-memory allocations (core/watch.h, WatchRules). Tested by
// config_test.cc.
#include "config/sections.h"

namespace rota::config::internal {

void ReadWatch(Section& root, Config& config) {
  const toml::table* t = root.Table("watch");
  if (!t) return;
  Section s(*t, "[watch]", root.errors());
  WatchRules& w = config.watch;
  if (auto b = s.Bool("enabled")) w.enabled = *b;
  if (auto n = s.Integer("idle_util", 0, 100)) w.idle_util = static_cast<int>(*n);
  if (auto d = s.DurationOf("idle_after", 1)) w.idle_after = *d;
  if (auto d = s.DurationOf("act_after", 1)) w.act_after = *d;
  if (auto v = s.Number("stuck_memory", 0, "a fraction such as 0.9")) w.stuck_memory = *v;
  if (auto a = s.Choice<bool>("action", {{"notify", false}, {"reclaim", true}})) w.reclaim = *a;
  if (auto n = s.Integer("keeps_per_day", 0, 100)) w.keeps_per_day = static_cast<int>(*n);
  if (auto v = s.Number("over_memory", 1, "a factor such as 1.05")) w.over_memory = *v;
  if (auto d = s.DurationOf("over_memory_after", 0)) w.over_memory_after = *d;
  if (auto a = s.Choice<bool>("over_memory_action", {{"notify", false}, {"stop", true}})) w.over_memory_stop = *a;
  if (auto a = s.Choice<bool>("outside_action", {{"notify", false}, {"stop", true}})) w.outside_stop = *a;
  if (auto d = s.DurationOf("outside_grace", 0)) w.outside_grace = *d;
  s.Finish();
  if (w.act_after < w.idle_after) {
    s.FailAt(t->source(), "act_after must not be shorter than idle_after (the warning comes first)");
  }
}

}  // namespace rota::config::internal
