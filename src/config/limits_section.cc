// [limits]: what one user may take of rotad (config.h, LimitsConfig; docs/security.md). Tested by
// config_test.cc.
#include "config/sections.h"

namespace rota::config::internal {

void ReadLimits(Section& root, Config& config) {
  const toml::table* t = root.Table("limits");
  if (!t) return;
  Section s(*t, "[limits]", root.errors());
  LimitsConfig& l = config.limits;
  if (auto n = s.Integer("connections_per_user", 1, 1 << 20)) l.connections_per_user = static_cast<int>(*n);
  if (auto n = s.Integer("connections", 16, 1 << 20)) l.connections = static_cast<int>(*n);
  if (auto d = s.DurationOf("idle_timeout", 1)) l.idle_timeout = *d;
  if (auto d = s.DurationOf("request_timeout", 1)) l.request_timeout = *d;
  if (auto n = s.Integer("pending_per_user", 0, 1 << 30)) l.pending_per_user = static_cast<int>(*n);
  if (auto v = s.Number("submit_rate", 0, "submissions per second, e.g. 20 (0 = no limit)")) l.submit_rate = *v;
  if (auto v = s.Number("submit_burst", 1, "a number of submissions, e.g. 1000")) l.submit_burst = *v;
  if (auto n = s.Integer("ids_per_request", 100, 1 << 20)) l.ids_per_request = static_cast<int>(*n);
  if (auto n = s.Integer("history_limit", 10, 1 << 20)) l.history_limit = static_cast<int>(*n);
  if (auto n = s.Integer("job_processes", 0, 1 << 22)) l.job_processes = *n;
  if (auto n = s.Integer("job_open_files", 0, 1 << 24)) l.job_open_files = *n;
  if (auto n = s.Integer("cpu_weight_per_gpu", 0, 10000)) l.cpu_weight_per_gpu = static_cast<int>(*n);
  s.Finish();
}

}  // namespace rota::config::internal
