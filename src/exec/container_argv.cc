// Tested by container_test.cc (each runtime's command line, flag by flag, against its manual)
// and tests/daemon/test_containers.py (Podman, for real).
#include "exec/container_argv.h"

#include <algorithm>

namespace rota::exec {

namespace {

bool Under(const std::string& path, const std::string& dir) {
  return path == dir || (path.starts_with(dir) && (dir == "/" || path[dir.size()] == '/'));
}

// The runtime's program and its global options, before any verb.
std::vector<std::string> Runtime(const ContainerSpec& c) {
  std::vector<std::string> a = {c.program};
  a.insert(a.end(), c.global_args.begin(), c.global_args.end());
  return a;
}

std::string Ulimit(const char* name, long long soft, long long hard) {
  return std::string(name) + "=" + std::to_string(soft) + ":" + std::to_string(hard);
}

// The flags Podman and Docker share (podman-run(1) mirrors docker run's).
void RootRuntimeFlags(const LaunchSpec& spec, const ContainerPlace& place, std::vector<std::string>& a) {
  const ContainerSpec& c = spec.container;
  a.insert(a.end(), {"run", "--rm", "--name", c.name, "--label", "rota.job=" + std::to_string(spec.job_id)});
  // An init as PID 1 passes the signals on (a shell as PID 1 would ignore SIGTERM) and reaps.
  a.insert(a.end(), {"--init", "--pull", "never", "--log-driver", "none"});
  if (place.input) a.push_back("--interactive");
  if (place.tty) a.push_back("--tty");
  a.insert(a.end(), {"--security-opt", "no-new-privileges", "--cap-drop", "all"});
  if (c.as_owner) {
    a.insert(a.end(), {"--user", std::to_string(spec.uid) + ":" + std::to_string(spec.gid)});
    for (gid_t g : spec.groups) {
      if (g != spec.gid) a.insert(a.end(), {"--group-add", std::to_string(g)});
    }
  }
  if (!c.network) a.insert(a.end(), {"--network", "none"});
  if (!place.env_file.empty()) a.insert(a.end(), {"--env-file", place.env_file});
  if (spec.memory_limit_bytes > 0) a.insert(a.end(), {"--memory", std::to_string(spec.memory_limit_bytes)});
  if (spec.max_processes > 0) a.insert(a.end(), {"--pids-limit", std::to_string(spec.max_processes)});
  if (place.nofile_hard > 0) a.insert(a.end(), {"--ulimit", Ulimit("nofile", place.nofile_soft, place.nofile_hard)});
  if (place.nproc_hard > 0) a.insert(a.end(), {"--ulimit", Ulimit("nproc", place.nproc_soft, place.nproc_hard)});
}

void Mounts(const std::vector<ContainerMount>& mounts, const char* flag, std::vector<std::string>& a) {
  for (const ContainerMount& m : mounts) {
    a.insert(a.end(), {flag, m.source + ":" + m.target + (m.read_only ? ":ro" : "")});
  }
}

}  // namespace

std::vector<std::string> GpuDeviceNodes(const std::vector<int>& minors) {
  std::vector<std::string> out;
  for (int m : minors) {
    if (m >= 0) out.push_back("/dev/nvidia" + std::to_string(m));
  }
  if (!out.empty()) out.insert(out.end(), {"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools"});
  return out;
}

std::vector<std::string> ContainerRunArgv(const LaunchSpec& spec, const ContainerPlace& place) {
  const ContainerSpec& c = spec.container;
  std::vector<std::string> a = Runtime(c);
  switch (c.runtime) {
    case ContainerRuntime::kPodman:
      RootRuntimeFlags(spec, place, a);
      if (place.cdi) {
        for (const std::string& id : c.gpu_ids) a.insert(a.end(), {"--device", "nvidia.com/gpu=" + id});
      } else {
        for (const std::string& node : place.device_nodes) a.insert(a.end(), {"--device", node});
      }
      Mounts(place.mounts, "--volume", a);
      a.insert(a.end(), {"--workdir", spec.cwd});
      break;
    case ContainerRuntime::kDocker:
      RootRuntimeFlags(spec, place, a);
      // The quotes are part of the value: --gpus reads CSV, and a list of devices has commas.
      if (!c.gpu_ids.empty()) a.insert(a.end(), {"--gpus", "\"device=" + rota::Join(c.gpu_ids, ",") + "\""});
      Mounts(place.mounts, "--volume", a);
      a.insert(a.end(), {"--workdir", spec.cwd});
      break;
    case ContainerRuntime::kApptainer:
      // Runs as the job's user, in the job's cgroup: its limits and device filter hold as for any
      // job. --contain: no home, /tmp or /dev of the host beyond the binds given; --cleanenv: only
      // the APPTAINERENV_ variables. Its network is the host's (isolating it needs root).
      a.insert(a.end(), {"exec", "--cleanenv", "--contain"});
      if (!c.gpu_ids.empty()) a.push_back("--nv");
      Mounts(place.mounts, "--bind", a);
      a.insert(a.end(), {"--pwd", spec.cwd});
      break;
    case ContainerRuntime::kNone:
      return spec.argv;
  }
  a.push_back("--");  // the image and the command are never read as options
  a.push_back(c.image);
  a.insert(a.end(), spec.argv.begin(), spec.argv.end());
  return a;
}

std::vector<std::string> ContainerRemoveArgv(const ContainerSpec& c) {
  std::vector<std::string> a = Runtime(c);
  switch (c.runtime) {
    case ContainerRuntime::kPodman:
      a.insert(a.end(), {"rm", "--force", "--time", "0", "--ignore", c.name});
      return a;
    case ContainerRuntime::kDocker:
      a.insert(a.end(), {"rm", "--force", c.name});
      return a;
    case ContainerRuntime::kApptainer:
    case ContainerRuntime::kNone:
      break;
  }
  return {};
}

std::vector<std::string> ContainerImageCheckArgv(const ContainerSpec& c) {
  std::vector<std::string> a = Runtime(c);
  switch (c.runtime) {
    case ContainerRuntime::kPodman:
      a.insert(a.end(), {"image", "exists", "--", c.image});
      return a;
    case ContainerRuntime::kDocker:
      a.insert(a.end(), {"image", "inspect", "--format", "{{.Id}}", "--", c.image});
      return a;
    case ContainerRuntime::kApptainer:
    case ContainerRuntime::kNone:
      break;
  }
  return {};
}

std::string ContainerName(JobId job, const std::string& token) {
  return "rota-job-" + std::to_string(job) + "-" + token.substr(0, 12);
}

std::map<std::string, std::string> ContainerEnv(const std::map<std::string, std::string>& env,
                                                const std::vector<ContainerMount>& mounts) {
  std::map<std::string, std::string> out;
  for (const auto& [name, value] : env) {
    if (!IsShellName(name) || value.find('\n') != std::string::npos || value.find('\0') != std::string::npos) continue;
    const std::string& path = value;  // a structured binding cannot be captured before C++20's fix
    if (name == "HOME" && std::none_of(mounts.begin(), mounts.end(),
                                       [&](const ContainerMount& m) { return Under(path, m.target); })) {
      continue;
    }
    out[name] = value;
  }
  return out;
}

std::string EnvFileText(const std::map<std::string, std::string>& env) {
  std::string out;
  for (const auto& [name, value] : env) out += name + "=" + value + "\n";
  return out;
}

std::map<std::string, std::string> ApptainerProcessEnv(const std::map<std::string, std::string>& env) {
  std::map<std::string, std::string> out = {{"PATH", "/usr/local/bin:/usr/bin:/bin"}, {"LANG", "C.UTF-8"}};
  for (const auto& [name, value] : env) out["APPTAINERENV_" + name] = value;
  return out;
}

std::map<std::string, std::string> KeptForContainer(const std::map<std::string, std::string>& env,
                                                    const std::vector<std::string>& also) {
  static const std::vector<std::string> kNames = {"LANG", "LANGUAGE", "TZ", "TERM", "USER", "LOGNAME", "HOME"};
  std::map<std::string, std::string> out;
  for (const auto& [name, value] : env) {
    const bool keep = name.starts_with("LC_") || name.starts_with("ROTA_") || name.starts_with("CUDA_") ||
                      name.starts_with("NVIDIA_") ||
                      std::find(kNames.begin(), kNames.end(), name) != kNames.end() ||
                      std::find(also.begin(), also.end(), name) != also.end();
    if (keep) out[name] = value;
  }
  return out;
}

}  // namespace rota::exec
