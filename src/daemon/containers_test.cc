#include "daemon/containers.h"

#include <gtest/gtest.h>

namespace rota::daemon {
namespace containers_test {
namespace {

config::Config Lab() {
  config::Config c;
  c.containers.runtime = exec::ContainerRuntime::kPodman;
  c.containers.runtime_args = {"--runtime", "runc"};
  c.containers.images = {"docker.io/pytorch/*", "localhost/lab-*"};
  c.containers.mounts = {{"/data/datasets", "/data/datasets", true, false, false},
                         {"/scratch/{user}", "/scratch", false, true, false}};
  c.containers.data_dir = "/data/{user}";
  return c;
}

TEST(ContainersTest, AnImageRunsWhereTheLabSetUpContainersAndAllowsIt) {
  config::Config c = Lab();
  EXPECT_TRUE(CheckImage(c, "docker.io/pytorch/pytorch:2.1", true).ok());
  Status s = CheckImage(c, "docker.io/library/ubuntu", true);
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(s.message().find("not one this lab allows (docker.io/pytorch/*, localhost/lab-*)"), std::string::npos);
  s = CheckImage(c, "localhost/lab-a:1", false);  // Podman is started by root: a user's rotad cannot
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("does not run as root"), std::string::npos) << s.message();
  c.containers.runtime = exec::ContainerRuntime::kApptainer;  // runs as the user: any rotad may
  EXPECT_TRUE(CheckImage(c, "localhost/lab-a:1", false).ok());
  c.engine.kind = config::EngineKind::kSlurm;
  EXPECT_NE(CheckImage(c, "localhost/lab-a:1", true).message().find("only with the local engine"), std::string::npos);
  config::Config none;
  EXPECT_NE(CheckImage(none, "localhost/lab-a:1", true).message().find("runs no containers"), std::string::npos);
}

TEST(ContainersTest, TheLaunchGetsTheLabsRuntimeTheUsersMountsAndTheJobsCards) {
  store::JobRecord rec;
  rec.image = "localhost/lab-a:1";
  rec.placement.gpu_uuids = {"GPU-a", "GPU-b"};
  exec::ContainerSpec spec = ContainerFor(Lab().containers, rec, "ana", {0, 1});
  EXPECT_EQ(spec.runtime, exec::ContainerRuntime::kPodman);
  EXPECT_EQ(spec.program, "/usr/bin/podman");
  EXPECT_EQ(spec.global_args, (std::vector<std::string>{"--runtime", "runc"}));
  EXPECT_EQ(spec.image, "localhost/lab-a:1");
  EXPECT_TRUE(spec.name.empty());  // the shepherd names it per launch
  ASSERT_EQ(spec.mounts.size(), 3u);
  EXPECT_EQ(spec.mounts[0].source, "/data/datasets");
  EXPECT_FALSE(spec.mounts[0].users);
  EXPECT_EQ(spec.mounts[1].source, "/scratch/ana");
  EXPECT_EQ(spec.mounts[1].target, "/scratch");
  EXPECT_TRUE(spec.mounts[1].users);
  EXPECT_EQ(spec.mounts[2].source, "/data/ana");  // the data directory: only where it exists
  EXPECT_TRUE(spec.mounts[2].users);
  EXPECT_TRUE(spec.mounts[2].optional);
  EXPECT_FALSE(spec.network);
  EXPECT_TRUE(spec.as_owner);
  EXPECT_EQ(spec.gpu_ids, (std::vector<std::string>{"GPU-a", "GPU-b"}));
  EXPECT_EQ(spec.gpu_minors, (std::vector<int>{0, 1}));

  rec.placement.mig_uuid = "MIG-x";  // a slice: only its own UUID
  config::ContainersConfig lab = Lab().containers;
  lab.allow_root = true;
  lab.network = true;
  spec = ContainerFor(lab, rec, "ana", {});
  EXPECT_EQ(spec.gpu_ids, std::vector<std::string>{"MIG-x"});
  EXPECT_FALSE(spec.as_owner);
  EXPECT_TRUE(spec.network);
}

}  // namespace
}  // namespace containers_test
}  // namespace rota::daemon
