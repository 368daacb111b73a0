// Tested by config_test.cc and values_test.cc; `rota config check` by tests/cli_e2e.sh.
//
// Design: parsing is one pass that never stops at the first mistake: each section reader records
// its errors in a shared list and carries on with defaults, and the caller gets every problem at
// once (an admin fixing a config should not have to run the check ten times). toml++ throws on
// syntax errors; that one exception is caught here and becomes an error like the others, since a
// file that is not TOML has nothing further to check.
#include "config/config.h"

#include <sys/sysinfo.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "config/reader.h"
#include "config/sections.h"
#include "config/toml_guard.h"
#include "config/values.h"

namespace rota::config {

const char* GpuSourceName(GpuSource s) {
  return s == GpuSource::kSimulated ? "simulated" : "nvml";
}

namespace {

bool IsAbsolute(const std::string& path) { return !path.empty() && path[0] == '/'; }

void ReadTopLevel(internal::Section& s, Config& c) {
  if (auto g = s.String("admin_group")) c.admin_group = *g;
  if (auto r = s.Bool("allow_root_jobs")) c.allow_root_jobs = *r;
  if (auto m = s.Memory("default_mem_per_gpu")) c.default_mem_per_gpu = *m;
  if (auto log = s.String("log")) {
    if (*log == "stderr" || IsAbsolute(*log)) {
      c.log = *log;
    } else {
      s.Fail(*s.Get("log"), "log", "is not a log destination (use \"stderr\" or an absolute file path)");
    }
  }
  for (auto [key, field] : {std::pair{"state_dir", &c.state_dir}, std::pair{"socket", &c.socket}}) {
    auto path = s.String(key);
    if (!path) continue;
    if (path->empty() || IsAbsolute(*path)) {
      *field = *path;
    } else {
      s.Fail(*s.Get(key), key, "is not an absolute path (use /var/lib/rota, or leave it out for the default)");
    }
  }
}

}  // namespace

StatusOr<Config> ParseConfig(std::string_view text, std::string_view name) {
  if (const std::optional<TomlTrap> trap = FindTomlTrap(text)) {
    return InvalidArgument(std::string(name) + ':' + std::to_string(trap->line) + ':' +
                           std::to_string(trap->column) + ": " + trap->what + " (not valid TOML)");
  }
  toml::table table;
  try {
    table = toml::parse(text, name);
  } catch (const toml::parse_error& e) {
    const auto& at = e.source().begin;
    return InvalidArgument(std::string(name) + ':' + std::to_string(at.line) + ':' + std::to_string(at.column) +
                           ": " + std::string(e.description()) + " (not valid TOML)");
  } catch (const TomlCheckFailed& e) {
    // A check of toml++'s own (config/toml.h): the text is invalid where toml++ does not say.
    return InvalidArgument(std::string(name) +
                           ": not valid TOML (the reader stopped on a check of its own: " + e.what() +
                           "; look for a stray bracket, comma or quote)");
  }
  internal::Errors errors;
  internal::Section root(table, "", &errors);
  Config c;
  ReadTopLevel(root, c);
  internal::ReadPolicy(root, c);
  internal::ReadQuota(root, c);
  internal::ReadGpus(root, c);
  internal::ReadInventory(root, c);
  internal::ReadRules(root, c);
  internal::ReadAdvice(root, c);
  internal::ReadContainers(root, c);
  internal::ReadBookings(root, c);
  internal::ReadWatch(root, c);
  internal::ReadWeb(root, c);
  internal::ReadLimits(root, c);
  internal::ReadEngine(root, c);
  internal::ReadNotify(root, c);
  internal::ReadPeople(root, c);
  root.Finish();
  if (!errors.empty()) return InvalidArgument(errors.Join(name));
  return c;
}

StatusOr<Config> LoadConfig(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    int err = errno;
    std::string why = path + ": cannot read the configuration: " + std::strerror(err);
    return err == EACCES ? PermissionDenied(why) : NotFound(why);
  }
  std::ostringstream text;
  text << in.rdbuf();
  return ParseConfig(text.str(), path);
}

std::vector<std::string> Warnings(const Config& c, MiB server_memory) {
  std::vector<std::string> out;
  // Not refused: it is the admin's choice, and harmless (a limit nothing reaches); said because
  // it is most likely a slip (a unit, or a value meant for a bigger server).
  if (server_memory > 0 && c.default_mem_per_gpu > server_memory) {
    out.push_back("default_mem_per_gpu = " + FormatMemory(c.default_mem_per_gpu) +
                  " is more than this server's memory (" + FormatMemory(server_memory) +
                  "): jobs that ask for no --mem-per-gpu have no effective host-memory limit");
  }
  // A runtime that is not there fails every --image job at its start: said before the students find out.
  if (c.containers.runtime != exec::ContainerRuntime::kNone && ::access(c.containers.Program().c_str(), X_OK) != 0) {
    out.push_back("[containers] runtime = \"" + std::string(exec::ContainerRuntimeName(c.containers.runtime)) +
                  "\", but " + c.containers.Program() +
                  " is not an executable here: jobs with --image will fail to start (install it, or set program)");
  }
  return out;
}

MiB ServerMemory() {
  struct sysinfo si {};
  if (::sysinfo(&si) != 0) return 0;
  return static_cast<MiB>(static_cast<unsigned long long>(si.totalram) * si.mem_unit / (1024 * 1024));
}

std::string Summary(const Config& c) {
  const Policy& p = c.policy;
  std::string gpus;
  if (c.gpu_source == GpuSource::kNvml) {
    gpus = "GPUs from NVML";
  } else {
    int mig = 0;
    for (const Gpu& g : c.simulated_gpus) mig += g.mig.empty() ? 0 : 1;
    gpus = std::to_string(c.simulated_gpus.size()) + " simulated GPUs";
    if (mig > 0) gpus += " (" + std::to_string(mig) + " in MIG mode)";
  }
  std::string preempt = "off";
  if (p.preemption) {
    preempt.clear();
    for (int t = 0; t < kTierCount; ++t) {
      if (p.IsPreemptible(static_cast<Tier>(t))) preempt += (preempt.empty() ? "" : "+") + std::string(TierName(static_cast<Tier>(t)));
    }
    if (preempt.empty()) preempt = "none";
  }
  std::string tz = c.timezone;
  if (!ParseUtcOffset(tz)) tz += p.zone.fixed() ? " (" + FormatUtcOffset(p.zone.OffsetAt(0)) + ")" : " (tz database)";
  return gpus + ", " + std::to_string(c.users.size()) + " users, " + std::to_string(p.quota.role_hours.size()) +
         " roles, " + std::to_string(c.projects.size()) + " projects; policy " + AlgorithmName(p.algorithm) +
         ", accounts per " + AccountModeName(p.mode) + ", preemption " + preempt + ", timezone " + tz +
         (c.containers.runtime != exec::ContainerRuntime::kNone
              ? std::string("; containers: ") + exec::ContainerRuntimeName(c.containers.runtime)
              : std::string());
}

}  // namespace rota::config
