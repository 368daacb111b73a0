// The container runtimes' command lines for a job (exec/container.h), as documented by each:
//   podman run  (docs.podman.io, podman-run(1), Podman 4.3), docker run (docs.docker.com, "docker
//   container run", Engine 20.10+), apptainer exec (apptainer.org, user guide 1.1).
// Pure: the shepherd's child finds out what the machine has (ContainerPlace) and execs the result.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "exec/container.h"
#include "exec/executor.h"

namespace rota::exec {

// What the shepherd's child found out just before exec.
struct ContainerPlace {
  std::vector<ContainerMount> mounts;     // the working directory's root first; resolved, no duplicates
  std::string env_file;                   // podman, docker: the file of NAME=value lines they read
  bool cdi = false;                       // podman: give GPUs by CDI name
  std::vector<std::string> device_nodes;  // podman without CDI: the device nodes to pass through
  // The job's resource limits (--ulimit), soft and hard; 0 = leave the runtime's default.
  long long nofile_soft = 0, nofile_hard = 0;
  long long nproc_soft = 0, nproc_hard = 0;
  // An attached job (LaunchSpec::attached): its input stays open (-i), and on a terminal the
  // container gets one of its own (-t), which the runtime relays to the owner's.
  bool input = false;
  bool tty = false;
};

// The device nodes a Podman job on cards with these minors gets without CDI: its cards' and the
// driver's shared ones (nvidiactl, nvidia-uvm, nvidia-uvm-tools), in that order.
std::vector<std::string> GpuDeviceNodes(const std::vector<int>& minors);

// podman/docker: argv of `run`, which stays attached (its output is the job's log), proxies the
// signals it gets to the container, removes it at the end and exits with the command's status.
// apptainer: argv of `exec`. REQUIRES: spec.container.runtime != kNone.
std::vector<std::string> ContainerRunArgv(const LaunchSpec& spec, const ContainerPlace& place);

// Removes the job's container whatever its state (what a SIGKILL to the attached client cannot
// do); empty for Apptainer, whose container is its processes.
std::vector<std::string> ContainerRemoveArgv(const ContainerSpec& container);

// Exits 0 when the image is on this machine (podman image exists; docker image inspect); empty
// for Apptainer, whose image is a file.
std::vector<std::string> ContainerImageCheckArgv(const ContainerSpec& container);

// The container's name for one launch of a job: rota-job-<id>-<the launch token's first 12>.
std::string ContainerName(JobId job, const std::string& token);

// The job's environment as the container gets it: names that are not shell identifiers are
// left out (an env file cannot hold them), as are values with a newline; HOME only when it lies
// in a mount (else the image's own stays).
std::map<std::string, std::string> ContainerEnv(const std::map<std::string, std::string>& env,
                                                const std::vector<ContainerMount>& mounts);
// NAME=value lines, as `--env-file` reads them.
std::string EnvFileText(const std::map<std::string, std::string>& env);
// Apptainer's own environment: each variable as APPTAINERENV_NAME (what --cleanenv lets in),
// plus PATH and LANG for apptainer itself.
std::map<std::string, std::string> ApptainerProcessEnv(const std::map<std::string, std::string>& env);

// Which of the submit environment's variables a container job keeps (the rest describe the
// submit host: PATH, LD_LIBRARY_PATH, CONDA_*, ...): locale, time zone, terminal, user and home,
// every ROTA_*, CUDA_* and NVIDIA_* variable, and the names the lab lists ([containers] env).
std::map<std::string, std::string> KeptForContainer(const std::map<std::string, std::string>& env,
                                                    const std::vector<std::string>& also);

}  // namespace rota::exec
