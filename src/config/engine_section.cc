// [engine]: what runs the jobs (config.h, EngineConfig). Tested by config_test.cc.
#include "config/sections.h"

namespace rota::config::internal {

namespace {

// An absolute path (not checked to exist: rotad says so at start, with what it looked for).
std::optional<std::string> AbsolutePath(Section& s, std::string_view key, bool empty_ok) {
  std::optional<std::string> v = s.String(key);
  if (!v) return std::nullopt;
  if ((v->empty() && !empty_ok) || (!v->empty() && (*v)[0] != '/')) {
    s.Fail(*s.Get(key), key, "is not an absolute path");
    return std::nullopt;
  }
  return v;
}

bool ValidTag(const std::string& tag) {
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  if (tag.empty() || tag.size() > 32 || !letter(tag[0])) return false;
  for (char c : tag) {
    if (!letter(c) && !(c >= '0' && c <= '9') && c != '_') return false;
  }
  return true;
}

}  // namespace

void ReadEngine(Section& root, Config& config) {
  const toml::table* t = root.Table("engine");
  if (!t) {
    if (config.gpu_source == GpuSource::kSlurm) {
      root.FailAt(root.table().source(), "[gpus] source = \"slurm\" needs [engine] kind = \"slurm\"");
    }
    return;
  }
  Section s(*t, "[engine]", root.errors());
  EngineConfig& e = config.engine;
  if (auto k = s.Choice<EngineKind>("kind", {{"local", EngineKind::kLocal}, {"slurm", EngineKind::kSlurm}}))
    e.kind = *k;
  if (auto v = AbsolutePath(s, "bin_dir", false)) e.bin_dir = *v;
  if (auto v = AbsolutePath(s, "slurm_conf", true)) e.slurm_conf = *v;
  if (auto v = s.String("partition")) e.partition = *v;
  if (auto v = s.String("account")) e.account = *v;
  if (auto v = s.String("node")) e.node = *v;
  if (auto d = s.DurationOf("command_timeout", 1)) e.command_timeout = *d;
  if (auto v = s.Number("poll_interval", 0.1, "seconds, e.g. 1")) e.poll_interval = *v;
  if (auto v = s.String("gpu_model")) e.gpu_model = *v;
  if (auto m = s.Memory("gpu_memory")) e.gpu_memory = *m;
  if (auto v = s.String("tag")) {
    if (ValidTag(*v)) {
      e.tag = *v;
    } else {
      s.Fail(*s.Get("tag"), "tag", "must be a letter then up to 31 letters, digits or '_', e.g. \"rota\"");
    }
  }
  if (auto v = AbsolutePath(s, "agent_tokens", true)) e.agent_tokens = *v;
  if (auto d = s.DurationOf("agent_stale_after", 1)) e.agent_stale_after = *d;
  s.Finish();
  if (config.gpu_source == GpuSource::kSlurm && e.kind != EngineKind::kSlurm) {
    s.FailAt(t->source(), "[gpus] source = \"slurm\" needs [engine] kind = \"slurm\"");
  }
}

}  // namespace rota::config::internal
