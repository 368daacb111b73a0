// [containers]: which runtime runs jobs that name an image, which images, mounts and network.
// Tested by config_test.cc (Config.Containers*).
#include <functional>

#include "config/sections.h"

namespace rota::config {

std::string ContainersConfig::Program() const {
  if (!program.empty()) return program;
  return std::string("/usr/bin/") + exec::ContainerRuntimeName(runtime);
}

namespace internal {
namespace {

// Section::Strings with the example of a good value after each complaint.
std::vector<std::string> StringList(Section& s, std::string_view key, std::string_view example,
                                    const std::function<std::string(const std::string&)>& check) {
  return s
      .Strings(key,
               [&](const std::string& v) {
                 const std::string why = check(v);
                 return why.empty() ? why : why + " (use " + std::string(example) + ")";
               })
      .value_or(std::vector<std::string>{});
}

}  // namespace

void ReadContainers(Section& root, Config& config) {
  const toml::table* t = root.Table("containers");
  if (!t) return;
  Section s(*t, "[containers]", root.errors());
  ContainersConfig& c = config.containers;
  if (auto r = s.Choice<exec::ContainerRuntime>("runtime", {{"podman", exec::ContainerRuntime::kPodman},
                                                            {"docker", exec::ContainerRuntime::kDocker},
                                                            {"apptainer", exec::ContainerRuntime::kApptainer}})) {
    c.runtime = *r;
  }
  if (auto program = s.String("program")) {
    if (!program->empty() && (*program)[0] != '/') {
      s.Fail(*s.Get("program"), "program", "is not an absolute path (use \"/usr/bin/podman\")");
    } else {
      c.program = *program;
    }
  }
  c.runtime_args = StringList(s, "runtime_args", "[\"--runtime\", \"runc\"]",
                              [](const std::string& a) { return a.empty() ? "is empty" : ""; });
  if (s.Get("images")) {
    c.images = StringList(s, "images", "[\"docker.io/pytorch/pytorch:*\"]", [](const std::string& p) {
      return p.empty() ? "is empty" : "";
    });
  }
  StringList(s, "mounts", "[\"/data/datasets:ro\"]", [&](const std::string& m) {
    StatusOr<exec::ContainerMount> parsed = exec::ParseContainerMount(m);
    if (!parsed.ok()) return parsed.status().message();
    c.mounts.push_back(*parsed);
    return std::string();
  });
  if (auto dir = s.String("data_dir")) {
    StatusOr<exec::ContainerMount> parsed = exec::ParseContainerMount(*dir);
    if (dir->find(':') != std::string::npos || !parsed.ok()) {
      s.Fail(*s.Get("data_dir"), "data_dir", "is not an absolute directory path (use \"/data/{user}\")");
    } else {
      c.data_dir = *dir;
    }
  }
  if (auto network = s.Bool("network")) c.network = *network;
  if (auto root_ok = s.Bool("allow_root")) c.allow_root = *root_ok;
  c.env = StringList(s, "env", "[\"WANDB_API_KEY\", \"HF_HOME\"]",
                     [](const std::string& n) { return exec::IsShellName(n) ? "" : "is not a variable name"; });
  if (auto g = s.Choice<exec::ContainerGpus>("gpus", {{"auto", exec::ContainerGpus::kAuto},
                                                      {"cdi", exec::ContainerGpus::kCdi},
                                                      {"devices", exec::ContainerGpus::kDevices}})) {
    c.gpus = *g;
  }
  s.Finish();
}

}  // namespace internal
}  // namespace rota::config
