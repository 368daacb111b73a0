// Tests of the spec and result files shared by the executor and rota-shepherd.
#include "exec/spec.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace rota::exec {
namespace spec_test {
namespace {

TEST(ExecutorSpecTest, SpecRoundTrips) {
  JobSpec spec;
  spec.launch.job_id = 42;
  spec.launch.uid = 1000;
  spec.launch.gid = 100;
  spec.launch.groups = {100, 27};
  spec.launch.user = "ana";
  spec.launch.argv = {"python", "train.py", "--lr=0.1", "with space"};
  spec.launch.cwd = "/home/ana";
  spec.launch.env = {{"PATH", "/usr/bin"}, {"CUDA_VISIBLE_DEVICES", "GPU-1"}, {"UNICODE", "héllo"}};
  spec.launch.output = "/home/ana/rota-42.out";
  spec.launch.memory_limit_bytes = 1LL << 34;
  spec.launch.note = R"({"gpus":[0]})";
  spec.launch.max_processes = 4096;
  spec.launch.max_open_files = 1024;
  spec.launch.cpu_weight = 200;
  spec.launch.processes_in_cgroup = true;
  spec.cgroup = "/sys/fs/cgroup/rota/job-42";
  spec.token = "0123456789abcdef";
  StatusOr<JobSpec> back = SpecFromJson(SpecToJson(spec));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->launch.job_id, 42);
  EXPECT_EQ(back->launch.uid, 1000u);
  EXPECT_EQ(back->launch.gid, 100u);
  EXPECT_EQ(back->launch.groups, spec.launch.groups);
  EXPECT_EQ(back->launch.user, "ana");
  EXPECT_EQ(back->launch.argv, spec.launch.argv);
  EXPECT_EQ(back->launch.cwd, spec.launch.cwd);
  EXPECT_EQ(back->launch.env, spec.launch.env);
  EXPECT_EQ(back->launch.output, spec.launch.output);
  EXPECT_EQ(back->launch.memory_limit_bytes, spec.launch.memory_limit_bytes);
  EXPECT_EQ(back->launch.note, spec.launch.note);
  EXPECT_EQ(back->launch.max_processes, 4096);
  EXPECT_EQ(back->launch.max_open_files, 1024);
  EXPECT_EQ(back->launch.cpu_weight, 200);
  EXPECT_TRUE(back->launch.processes_in_cgroup);
  // A spec an older rotad wrote (before the limits) reads as no limits.
  nlohmann::json old = nlohmann::json::parse(SpecToJson(spec));
  for (const char* k : {"max_processes", "max_open_files", "cpu_weight", "processes_in_cgroup"}) old.erase(k);
  StatusOr<JobSpec> older = SpecFromJson(old.dump());
  ASSERT_TRUE(older.ok()) << older.status().ToString();
  EXPECT_EQ(older->launch.max_processes, 0);
  EXPECT_FALSE(older->launch.processes_in_cgroup);
  EXPECT_EQ(back->cgroup, spec.cgroup);
  EXPECT_EQ(back->token, spec.token);
}

TEST(ExecutorSpecTest, BadSpecIsInvalidArgument) {
  EXPECT_EQ(SpecFromJson("{").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(SpecFromJson("{\"job_id\":1}").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(SpecFromJson("[]").status().code(), StatusCode::kInvalidArgument);
  // A state file is read as every JSON text from outside is: nested deeper than the bound, refused.
  const std::string deep = "{\"job_id\":" + std::string(100000, '[') + std::string(100000, ']') + "}";
  StatusOr<JobSpec> spec = SpecFromJson(deep);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().message(), "bad job spec: the JSON text nests deeper than 32 levels");
  EXPECT_FALSE(ResultFromJson(deep).ok());
}

TEST(ExecutorSpecTest, ResultRoundTrips) {
  ExitInfo info;
  info.kind = ExitInfo::Kind::kSignalled;
  info.signal = 9;
  info.reason = "out of memory (memory.max reached)";
  info.end_time = 1'700'000'000;
  StatusOr<ExitInfo> back = ResultFromJson(ResultToJson(info));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->kind, info.kind);
  EXPECT_EQ(back->signal, 9);
  EXPECT_EQ(back->reason, info.reason);
  EXPECT_EQ(back->end_time, info.end_time);

  StatusOr<ExitInfo> exited = ResultFromJson(R"({"kind":"exited","exit_code":3,"end_time":5})");
  ASSERT_TRUE(exited.ok());
  EXPECT_EQ(exited->kind, ExitInfo::Kind::kExited);
  EXPECT_EQ(exited->exit_code, 3);
  StatusOr<ExitInfo> failed = ResultFromJson(R"({"kind":"start_failed","reason":"cannot run 'x': No such file or directory"})");
  ASSERT_TRUE(failed.ok());
  EXPECT_EQ(failed->kind, ExitInfo::Kind::kStartFailed);
  EXPECT_FALSE(failed->machine_fault) << "a result without the flag (an older shepherd's) is the job's fault";
}

TEST(ExecutorSpecTest, AMachineFaultRoundTrips) {
  ExitInfo info;
  info.kind = ExitInfo::Kind::kStartFailed;
  info.reason = "cannot fork: Resource temporarily unavailable";
  info.machine_fault = true;
  StatusOr<ExitInfo> back = ResultFromJson(ResultToJson(info));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(back->machine_fault);
  info.machine_fault = false;
  EXPECT_EQ(ResultToJson(info).find("machine_fault"), std::string::npos);
}

TEST(ExecutorSpecTest, BadResultIsInvalidArgument) {
  EXPECT_EQ(ResultFromJson("").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ResultFromJson(R"({"kind":"vanished"})").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ResultFromJson(R"({"kind":"exited","exit_code":"x"})").status().code(), StatusCode::kInvalidArgument);
}

TEST(ExecutorSpecTest, FileNames) {
  EXPECT_EQ(SpecPath("/run/rota", 5), "/run/rota/5.spec");
  EXPECT_EQ(ResultPath("/run/rota", 5), "/run/rota/5.result");
  EXPECT_STREQ(ExitKindName(ExitInfo::Kind::kStartFailed), "start_failed");
}

}  // namespace
}  // namespace spec_test
}  // namespace rota::exec
