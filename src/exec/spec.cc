// Tested by spec_test.cc. nlohmann::json throws; every exception is caught here.
#include "exec/spec.h"

#include <nlohmann/json.hpp>

#include "json/bounded.h"

namespace rota::exec {

using nlohmann::json;

std::string SpecPath(const std::string& run_dir, JobId job) {
  return run_dir + "/" + std::to_string(job) + ".spec";
}

std::string ResultPath(const std::string& run_dir, JobId job) {
  return run_dir + "/" + std::to_string(job) + ".result";
}

namespace {

json ContainerToJson(const ContainerSpec& c) {
  json mounts = json::array();
  for (const ContainerMount& m : c.mounts) {
    mounts.push_back({{"source", m.source}, {"target", m.target}, {"read_only", m.read_only},
                      {"users", m.users}, {"optional", m.optional}});
  }
  const char* gpus = c.gpus == ContainerGpus::kCdi ? "cdi" : c.gpus == ContainerGpus::kDevices ? "devices" : "auto";
  return {{"runtime", ContainerRuntimeName(c.runtime)},
          {"program", c.program},
          {"global_args", c.global_args},
          {"image", c.image},
          {"name", c.name},
          {"mounts", mounts},
          {"network", c.network},
          {"as_owner", c.as_owner},
          {"gpus", gpus},
          {"gpu_ids", c.gpu_ids},
          {"gpu_minors", c.gpu_minors}};
}

// Throws json::exception on a missing or mistyped field (caught by SpecFromJson).
StatusOr<ContainerSpec> ContainerFromJson(const json& j) {
  ContainerSpec c;
  const std::string name = j.at("runtime").get<std::string>();
  std::optional<ContainerRuntime> runtime = ParseContainerRuntime(name);
  if (!runtime) return InvalidArgument("bad job spec: unknown container runtime '" + name + "'");
  c.runtime = *runtime;
  c.program = j.at("program").get<std::string>();
  c.global_args = j.at("global_args").get<std::vector<std::string>>();
  c.image = j.at("image").get<std::string>();
  c.name = j.at("name").get<std::string>();
  for (const json& m : j.at("mounts")) {
    c.mounts.push_back({m.at("source").get<std::string>(), m.at("target").get<std::string>(),
                        m.at("read_only").get<bool>(), m.at("users").get<bool>(), m.at("optional").get<bool>()});
  }
  c.network = j.at("network").get<bool>();
  c.as_owner = j.at("as_owner").get<bool>();
  const std::string gpus = j.at("gpus").get<std::string>();
  c.gpus = gpus == "cdi" ? ContainerGpus::kCdi : gpus == "devices" ? ContainerGpus::kDevices : ContainerGpus::kAuto;
  c.gpu_ids = j.at("gpu_ids").get<std::vector<std::string>>();
  c.gpu_minors = j.at("gpu_minors").get<std::vector<int>>();
  return c;
}

}  // namespace

std::string SpecToJson(const JobSpec& spec) {
  const LaunchSpec& l = spec.launch;
  json j = {{"job_id", l.job_id},
            {"uid", l.uid},
            {"gid", l.gid},
            {"groups", l.groups},
            {"user", l.user},
            {"argv", l.argv},
            {"cwd", l.cwd},
            {"env", l.env},
            {"output", l.output},
            {"memory_limit_bytes", l.memory_limit_bytes},
            {"max_processes", l.max_processes},
            {"max_open_files", l.max_open_files},
            {"cpu_weight", l.cpu_weight},
            {"processes_in_cgroup", l.processes_in_cgroup},
            {"note", l.note},
            {"cgroup", spec.cgroup},
            {"token", spec.token}};
  if (l.container.runtime != ContainerRuntime::kNone) j["container"] = ContainerToJson(l.container);
  if (l.attached) j["attached"] = true;
  return j.dump();
}

StatusOr<JobSpec> SpecFromJson(const std::string& text) {
  StatusOr<json> parsed = ParseBoundedJson(text, kMaxJsonDepth, JsonFloats::kWithinInt32);
  if (!parsed.ok()) return InvalidArgument("bad job spec: " + parsed.status().message());
  try {
    const json& j = *parsed;
    JobSpec spec;
    LaunchSpec& l = spec.launch;
    l.job_id = j.at("job_id").get<JobId>();
    l.uid = j.at("uid").get<uid_t>();
    l.gid = j.at("gid").get<gid_t>();
    l.groups = j.at("groups").get<std::vector<gid_t>>();
    l.user = j.at("user").get<std::string>();
    l.argv = j.at("argv").get<std::vector<std::string>>();
    l.cwd = j.at("cwd").get<std::string>();
    l.env = j.at("env").get<std::map<std::string, std::string>>();
    l.output = j.at("output").get<std::string>();
    l.memory_limit_bytes = j.at("memory_limit_bytes").get<std::int64_t>();
    // Absent in the specs of an older rotad (jobs launched before an upgrade): no limits.
    l.max_processes = j.value("max_processes", std::int64_t{0});
    l.max_open_files = j.value("max_open_files", std::int64_t{0});
    l.cpu_weight = j.value("cpu_weight", 0);
    l.processes_in_cgroup = j.value("processes_in_cgroup", false);
    l.note = j.value("note", std::string());
    l.attached = j.value("attached", false);
    if (auto c = j.find("container"); c != j.end()) {
      StatusOr<ContainerSpec> container = ContainerFromJson(*c);
      if (!container.ok()) return container.status();
      l.container = *container;
    }
    spec.cgroup = j.at("cgroup").get<std::string>();
    spec.token = j.value("token", std::string());
    return spec;
  } catch (const json::exception& e) {
    return InvalidArgument(std::string("bad job spec: ") + e.what());
  }
}

std::string ResultToJson(const ExitInfo& info) {
  json j = {{"kind", ExitKindName(info.kind)},
            {"exit_code", info.exit_code},
            {"signal", info.signal},
            {"reason", info.reason},
            {"end_time", info.end_time}};
  if (info.machine_fault) j["machine_fault"] = true;
  return j.dump();
}

StatusOr<ExitInfo> ResultFromJson(const std::string& text) {
  StatusOr<json> parsed = ParseBoundedJson(text, kMaxJsonDepth, JsonFloats::kWithinInt32);
  if (!parsed.ok()) return InvalidArgument("bad job result: " + parsed.status().message());
  try {
    const json& j = *parsed;
    ExitInfo info;
    std::string kind = j.at("kind").get<std::string>();
    if (kind == "exited") {
      info.kind = ExitInfo::Kind::kExited;
    } else if (kind == "signalled") {
      info.kind = ExitInfo::Kind::kSignalled;
    } else if (kind == "start_failed") {
      info.kind = ExitInfo::Kind::kStartFailed;
    } else {
      return InvalidArgument("bad job result: unknown kind '" + kind + "'");
    }
    info.exit_code = j.value("exit_code", 0);
    info.signal = j.value("signal", 0);
    info.reason = j.value("reason", std::string());
    info.end_time = j.value("end_time", std::int64_t{0});
    info.machine_fault = j.value("machine_fault", false);
    return info;
  } catch (const json::exception& e) {
    return InvalidArgument(std::string("bad job result: ") + e.what());
  }
}

}  // namespace rota::exec
