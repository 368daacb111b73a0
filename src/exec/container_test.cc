#include "exec/container.h"

#include <gtest/gtest.h>

#include <map>

#include "exec/container_argv.h"
#include "exec/spec.h"

namespace rota::exec {
namespace {

LaunchSpec PodmanJob() {
  LaunchSpec s;
  s.job_id = 42;
  s.uid = 1000;
  s.gid = 1000;
  s.groups = {1000, 27};
  s.user = "ana";
  s.argv = {"python", "train.py", "--lr", "0.1"};
  s.cwd = "/home/ana/exp1";
  s.memory_limit_bytes = 8LL << 30;
  s.max_processes = 512;
  s.container.runtime = ContainerRuntime::kPodman;
  s.container.program = "/usr/bin/podman";
  s.container.global_args = {"--runtime", "runc"};
  s.container.image = "docker.io/pytorch/pytorch:2.1";
  s.container.name = "rota-job-42-9f0c1a2b";
  s.container.gpu_ids = {"GPU-aaaa", "GPU-bbbb"};
  s.container.gpu_minors = {0, 3};
  return s;
}

ContainerPlace Place() {
  ContainerPlace p;
  p.mounts = {{"/home/ana", "/home/ana", false, true, false}, {"/data/datasets", "/data/datasets", true, false, false}};
  p.env_file = "/proc/self/fd/5";
  p.device_nodes = GpuDeviceNodes({0, 3});
  p.nofile_soft = 1024;
  p.nofile_hard = 4096;
  return p;
}

// podman-run(1): options before the image, "--" ends them, the command follows the image.
TEST(ContainerArgv, PodmanGivesTheUserTheLimitsAndOnlyItsCards) {
  const std::vector<std::string> expected = {
      "/usr/bin/podman", "--runtime", "runc", "run", "--rm", "--name", "rota-job-42-9f0c1a2b",
      "--label", "rota.job=42", "--init", "--pull", "never", "--log-driver", "none",
      "--security-opt", "no-new-privileges", "--cap-drop", "all",
      "--user", "1000:1000", "--group-add", "27",  // the primary group is not added twice
      "--network", "none", "--env-file", "/proc/self/fd/5", "--memory", "8589934592",
      "--pids-limit", "512", "--ulimit", "nofile=1024:4096",
      "--device", "/dev/nvidia0", "--device", "/dev/nvidia3", "--device", "/dev/nvidiactl",
      "--device", "/dev/nvidia-uvm", "--device", "/dev/nvidia-uvm-tools",
      "--volume", "/home/ana:/home/ana", "--volume", "/data/datasets:/data/datasets:ro",
      "--workdir", "/home/ana/exp1", "--", "docker.io/pytorch/pytorch:2.1", "python", "train.py", "--lr", "0.1"};
  EXPECT_EQ(ContainerRunArgv(PodmanJob(), Place()), expected);
}

TEST(ContainerArgv, PodmanWithCdiNamesTheCardsByUuid) {
  ContainerPlace place = Place();
  place.cdi = true;
  std::vector<std::string> a = ContainerRunArgv(PodmanJob(), place);
  std::string joined;
  for (const std::string& s : a) joined += s + " ";
  EXPECT_NE(joined.find("--device nvidia.com/gpu=GPU-aaaa --device nvidia.com/gpu=GPU-bbbb "), std::string::npos);
  EXPECT_EQ(joined.find("/dev/nvidia0"), std::string::npos) << joined;
}

TEST(ContainerArgv, NetworkAndTheImagesUserWhenTheLabAllows) {
  LaunchSpec s = PodmanJob();
  s.container.network = true;
  s.container.as_owner = false;
  std::vector<std::string> a = ContainerRunArgv(s, Place());
  EXPECT_EQ(std::find(a.begin(), a.end(), "--user"), a.end());
  EXPECT_EQ(std::find(a.begin(), a.end(), "--network"), a.end());
  // Never the lifting of the other bounds.
  EXPECT_NE(std::find(a.begin(), a.end(), "no-new-privileges"), a.end());
}

// docker container run: --gpus takes CSV, so a list of devices is quoted inside the value.
TEST(ContainerArgv, DockerGivesGpusByUuid) {
  LaunchSpec s = PodmanJob();
  s.container.runtime = ContainerRuntime::kDocker;
  s.container.program = "/usr/bin/docker";
  s.container.global_args = {};
  std::vector<std::string> a = ContainerRunArgv(s, Place());
  auto gpus = std::find(a.begin(), a.end(), "--gpus");
  ASSERT_NE(gpus, a.end());
  EXPECT_EQ(*(gpus + 1), "\"device=GPU-aaaa,GPU-bbbb\"");
  EXPECT_EQ(std::find(a.begin(), a.end(), "/dev/nvidia0"), a.end());
  EXPECT_EQ(a[1], "run");
  EXPECT_EQ(a[a.size() - 6], "--");
  EXPECT_EQ(ContainerRemoveArgv(s.container), (std::vector<std::string>{"/usr/bin/docker", "rm", "--force",
                                                                         "rota-job-42-9f0c1a2b"}));
}

// apptainer exec: runs as the user; binds with --bind, the directory with --pwd, GPUs with --nv.
TEST(ContainerArgv, ApptainerRunsAsTheUser) {
  LaunchSpec s = PodmanJob();
  s.container.runtime = ContainerRuntime::kApptainer;
  s.container.program = "/usr/bin/apptainer";
  s.container.global_args = {};
  s.container.image = "/opt/images/pytorch.sif";
  ContainerPlace p = Place();
  p.env_file.clear();
  const std::vector<std::string> expected = {
      "/usr/bin/apptainer", "exec", "--cleanenv", "--contain", "--nv",
      "--bind", "/home/ana:/home/ana", "--bind", "/data/datasets:/data/datasets:ro",
      "--pwd", "/home/ana/exp1", "--", "/opt/images/pytorch.sif", "python", "train.py", "--lr", "0.1"};
  EXPECT_EQ(ContainerRunArgv(s, p), expected);
  EXPECT_TRUE(ContainerRemoveArgv(s.container).empty());
  EXPECT_FALSE(StartedByRoot(ContainerRuntime::kApptainer));
  EXPECT_EQ(ApptainerProcessEnv({{"ROTA_JOB_ID", "42"}}).at("APPTAINERENV_ROTA_JOB_ID"), "42");
}

TEST(ContainerArgv, PodmanRemovesWithoutWaitingAndWithoutComplaint) {
  EXPECT_EQ(ContainerRemoveArgv(PodmanJob().container),
            (std::vector<std::string>{"/usr/bin/podman", "--runtime", "runc", "rm", "--force", "--time", "0",
                                      "--ignore", "rota-job-42-9f0c1a2b"}));
}

TEST(ContainerArgv, NoDevicesForCardsWithoutNodes) {
  EXPECT_TRUE(GpuDeviceNodes({-1, -1}).empty());  // simulated cards
  EXPECT_EQ(GpuDeviceNodes({2}).front(), "/dev/nvidia2");
}

TEST(ContainerImage, Patterns) {
  const std::vector<std::string> lab = {"docker.io/pytorch/*", "localhost/rota-*:1"};
  EXPECT_TRUE(ImageAllowed("docker.io/pytorch/pytorch:2.1", lab));
  EXPECT_TRUE(ImageAllowed("localhost/rota-test:1", lab));
  EXPECT_FALSE(ImageAllowed("localhost/rota-test:2", lab));
  EXPECT_FALSE(ImageAllowed("docker.io/library/ubuntu", lab));
  EXPECT_FALSE(ImageAllowed("anything", {}));
  EXPECT_TRUE(ImageAllowed("a/b/c:d", {"*"}));
}

TEST(ContainerMounts, Parse) {
  auto m = ParseContainerMount("/data/datasets:ro");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->source, "/data/datasets");
  EXPECT_EQ(m->target, "/data/datasets");
  EXPECT_TRUE(m->read_only);
  EXPECT_FALSE(m->users);
  m = ParseContainerMount("/data/{user}:/workspace");
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(m->users);
  EXPECT_FALSE(m->read_only);
  EXPECT_EQ(ForUser(*m, "ana").source, "/data/ana");
  EXPECT_EQ(ForUser(*m, "ana").target, "/workspace");
  for (const char* bad : {"data", "/a:b", "/a:/b:/c", "/a:/b:rx", "/a/../etc", "/a:/", ""}) {
    EXPECT_FALSE(ParseContainerMount(bad).ok()) << bad;
  }
}

// A file system of directories: path -> (owner, mode); symlinks marked with S_IFLNK.
class FakeTree {
 public:
  void Dir(const std::string& path, uid_t uid, mode_t mode) { nodes_[path] = {uid, S_IFDIR | mode}; }
  void Link(const std::string& path) { nodes_[path] = {0, S_IFLNK | 0777}; }
  Lstat lstat() const {
    return [this](const std::string& p, struct stat* st) {
      auto it = nodes_.find(p);
      if (it == nodes_.end()) {
        errno = ENOENT;
        return -1;
      }
      *st = {};
      st->st_uid = it->second.first;
      st->st_mode = it->second.second;
      return 0;
    };
  }

 private:
  std::map<std::string, std::pair<uid_t, mode_t>> nodes_;
};

TEST(ContainerMounts, RootIsTheDeepestDirectoryOnlyRootCanMove) {
  FakeTree t;
  t.Dir("/", 0, 0755);
  t.Dir("/home", 0, 0755);
  t.Dir("/home/ana", 1000, 0750);
  t.Dir("/home/ana/exp1", 1000, 0755);
  t.Dir("/tmp", 0, 01777);
  t.Dir("/tmp/x", 1000, 0755);
  t.Dir("/tmp/shared", 0, 0755);
  t.Dir("/tmp/shared/in", 1000, 0755);
  t.Dir("/data", 0, 0775);  // group-writable: the lab group may rename what is in it
  t.Dir("/data/ana", 1000, 0755);
  t.Dir("/srv", 1000, 0755);
  t.Dir("/opt", 0, 0755);
  t.Link("/opt/link");
  // The user may rename exp1 (and put a symlink in its place): the mount is their home.
  EXPECT_EQ(*MountRoot("/home/ana/exp1", t.lstat()), "/home/ana");
  EXPECT_EQ(*MountRoot("/home/ana", t.lstat()), "/home/ana");
  // In a sticky directory only an entry's owner may move it: x is the user's, shared is root's.
  EXPECT_EQ(*MountRoot("/tmp/x", t.lstat()), "/tmp");
  EXPECT_EQ(*MountRoot("/tmp/shared/in", t.lstat()), "/tmp/shared/in");
  EXPECT_EQ(*MountRoot("/data/ana", t.lstat()), "/data");
  EXPECT_EQ(*MountRoot("/opt/link", t.lstat()), "/opt");
  EXPECT_EQ(*MountRoot("/srv", t.lstat()), "/srv");  // the user's, but only root may move it
  FakeTree odd;  // a root directory that someone else may change: nothing below it is safe
  odd.Dir("/", 0, 0777);
  odd.Dir("/srv", 0, 0755);
  StatusOr<std::string> none = MountRoot("/srv", odd.lstat());
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_FALSE(MountRoot("relative/path", t.lstat()).ok());
  EXPECT_NE(MountRoot("/", t.lstat()).status().message().find("the root directory is not mounted"), std::string::npos);
  EXPECT_FALSE(MountRoot("/home/bob", t.lstat()).ok());  // lstat fails: said, not guessed
}

TEST(ContainerEnv, KeepsWhatDescribesTheJobNotTheSubmitHost) {
  std::map<std::string, std::string> env = {{"PATH", "/opt/conda/bin:/usr/bin"}, {"LD_LIBRARY_PATH", "/x"},
                                            {"LANG", "zh_CN.UTF-8"}, {"LC_TIME", "C"}, {"HOME", "/home/ana"},
                                            {"ROTA_JOB_ID", "42"}, {"CUDA_VISIBLE_DEVICES", "GPU-a"},
                                            {"WANDB_API_KEY", "k"}, {"SECRET", "s"}};
  std::map<std::string, std::string> kept = KeptForContainer(env, {"WANDB_API_KEY"});
  EXPECT_EQ(kept.count("PATH"), 0u);
  EXPECT_EQ(kept.count("LD_LIBRARY_PATH"), 0u);
  EXPECT_EQ(kept.count("SECRET"), 0u);
  for (const char* name : {"LANG", "LC_TIME", "HOME", "ROTA_JOB_ID", "CUDA_VISIBLE_DEVICES", "WANDB_API_KEY"}) {
    EXPECT_EQ(kept.count(name), 1u) << name;
  }
}

TEST(ContainerEnv, HomeOnlyWhenMountedAndNoLineTheEnvFileCannotHold) {
  std::map<std::string, std::string> env = {{"HOME", "/home/ana"}, {"A", "1"}, {"B", "two\nlines"},
                                            {"1X", "bad name"}, {"a.b", "bad name"}, {"E", ""}};
  std::map<std::string, std::string> out = ContainerEnv(env, {{"/home/ana", "/home/ana", false, true, false}});
  EXPECT_EQ(out, (std::map<std::string, std::string>{{"A", "1"}, {"E", ""}, {"HOME", "/home/ana"}}));
  out = ContainerEnv(env, {{"/home/ana/exp", "/home/ana/exp", false, true, false},
                           {"/home/anabel", "/home/anabel", false, true, false}});
  EXPECT_EQ(out.count("HOME"), 0u);  // below a mount is not above it, nor a sibling with its prefix
  EXPECT_EQ(EnvFileText({{"A", "1"}, {"E", ""}}), "A=1\nE=\n");
  EXPECT_TRUE(IsShellName("WANDB_API_KEY"));
  EXPECT_TRUE(IsShellName("_x1"));
  for (const char* bad : {"", "1X", "A-B", "a.b", "A B", "Ä"}) EXPECT_FALSE(IsShellName(bad)) << bad;
}

TEST(ContainerSpecFile, RoundTrip) {
  JobSpec spec;
  spec.launch = PodmanJob();
  spec.launch.container.mounts = {{"/data/{user}", "/workspace", false, true, true}};
  spec.launch.container.gpus = ContainerGpus::kDevices;
  spec.token = "t";
  StatusOr<JobSpec> back = SpecFromJson(SpecToJson(spec));
  ASSERT_TRUE(back.ok()) << back.status().message();
  const ContainerSpec& c = back->launch.container;
  EXPECT_EQ(c.runtime, ContainerRuntime::kPodman);
  EXPECT_EQ(c.program, "/usr/bin/podman");
  EXPECT_EQ(c.global_args, spec.launch.container.global_args);
  EXPECT_EQ(c.image, spec.launch.container.image);
  EXPECT_EQ(c.name, spec.launch.container.name);
  ASSERT_EQ(c.mounts.size(), 1u);
  EXPECT_EQ(c.mounts[0].target, "/workspace");
  EXPECT_TRUE(c.mounts[0].users);
  EXPECT_TRUE(c.mounts[0].optional);
  EXPECT_EQ(c.gpus, ContainerGpus::kDevices);
  EXPECT_EQ(c.gpu_ids, spec.launch.container.gpu_ids);
  EXPECT_EQ(c.gpu_minors, spec.launch.container.gpu_minors);
  // A job without a container has none after the round trip, and no "container" key.
  spec.launch.container = {};
  EXPECT_EQ(SpecToJson(spec).find("container"), std::string::npos);
  EXPECT_EQ(SpecFromJson(SpecToJson(spec))->launch.container.runtime, ContainerRuntime::kNone);
  std::string bad = SpecToJson(spec);
  bad.insert(bad.size() - 1, ",\"container\":{\"runtime\":\"lxc\"}");
  EXPECT_NE(SpecFromJson(bad).status().message().find("lxc"), std::string::npos);
}

}  // namespace
}  // namespace rota::exec
