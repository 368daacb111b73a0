// Tests of jobs on the wire: a submit request's "job" read into a record (defaults, every field's
// refusal naming the field), the output path's %j, and a record written back (what another user
// sees of it).
#include "api/job_json.h"

#include <gtest/gtest.h>

#include <string>

namespace rota::api {
namespace job_json_test {
namespace {

using nlohmann::json;

json Minimal() { return {{"command", {"python", "train.py"}}, {"cwd", "/home/alice/exp"}}; }

std::string Refusal(json job, bool interactive = false) {
  StatusOr<store::JobRecord> r = JobFromRequest(job, interactive);
  EXPECT_FALSE(r.ok()) << job.dump();
  if (r.ok()) return "";
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  return r.status().message();
}

TEST(JobJsonTest, DefaultsOfAMinimalJob) {
  StatusOr<store::JobRecord> r = JobFromRequest(Minimal(), false);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->command, (std::vector<std::string>{"python", "train.py"}));
  EXPECT_EQ(r->job.name, "python");
  EXPECT_EQ(r->job.time_limit, kHour);
  EXPECT_EQ(r->job.tier, Tier::kRegular);
  EXPECT_EQ(r->job.request.kind, RequestKind::kWholeGpus);
  EXPECT_EQ(r->job.request.gpus, 1);
  EXPECT_EQ(r->job.signal, 0);  // no warning signal unless asked
  EXPECT_EQ(r->job.grace, 0);
  EXPECT_FALSE(r->job.requeue);
  EXPECT_EQ(r->output, "/home/alice/exp/rota-%j.out");
  EXPECT_EQ(ExpandOutput(r->output, 42), "/home/alice/exp/rota-42.out");
}

TEST(JobJsonTest, ASignalGetsTwoMinutesOfGraceUnlessItSaysOtherwise) {
  json j = Minimal();
  j["signal"] = 10;
  EXPECT_EQ(JobFromRequest(j, false)->job.grace, 120);
  j["grace"] = 30;
  EXPECT_EQ(JobFromRequest(j, false)->job.grace, 30);
  json no_signal = Minimal();
  no_signal["grace"] = 30;  // a grace without a signal means nothing
  EXPECT_EQ(JobFromRequest(no_signal, false)->job.grace, 0);
}

TEST(JobJsonTest, EveryBadFieldIsRefusedByName) {
  auto with = [](const char* key, json value) {
    json j = Minimal();
    j[key] = std::move(value);
    return j;
  };
  EXPECT_NE(Refusal(json::array()).find("\"job\" must be an object"), std::string::npos);
  EXPECT_NE(Refusal(with("command", json::array())).find("command"), std::string::npos);
  EXPECT_NE(Refusal(with("command", {""})).find("names no program"), std::string::npos);
  EXPECT_NE(Refusal(with("command", {1, 2})).find("command"), std::string::npos);
  EXPECT_NE(Refusal(with("cwd", "relative/dir")).find("cwd"), std::string::npos);
  EXPECT_NE(Refusal(with("env", {{"A=B", "x"}})).find("env"), std::string::npos);
  EXPECT_NE(Refusal(with("env", {{"A", 1}})).find("env"), std::string::npos);
  EXPECT_NE(Refusal(with("time_limit", 0)).find("time_limit"), std::string::npos);
  EXPECT_NE(Refusal(with("time_limit", "1h")).find("time_limit"), std::string::npos);
  EXPECT_NE(Refusal(with("tier", "urgent")).find("\"urgent\""), std::string::npos);
  EXPECT_NE(Refusal(with("signal", 65)).find("signal"), std::string::npos);
  EXPECT_NE(Refusal(with("grace", -1)).find("grace"), std::string::npos);
  EXPECT_NE(Refusal(with("requeue", "yes")).find("requeue"), std::string::npos);
  EXPECT_NE(Refusal(with("after", {0})).find("after"), std::string::npos);
  EXPECT_NE(Refusal(with("after_ok", 3)).find("after_ok"), std::string::npos);
  EXPECT_NE(Refusal(with("output", "")).find("output"), std::string::npos);
  EXPECT_NE(Refusal(with("request", {{"kind", "tpu"}})).find("kind"), std::string::npos);
  EXPECT_NE(Refusal(with("request", {{"kind", "gpu_mem"}})).find("memory"), std::string::npos);
  EXPECT_NE(Refusal(with("request", {{"kind", "mig"}})).find("profile"), std::string::npos);
  EXPECT_NE(Refusal(with("request", {{"gpus", 0}})).find("gpus"), std::string::npos);
}

TEST(JobJsonTest, AnImageIsANameNotAnOption) {
  json j = Minimal();
  EXPECT_EQ(JobFromRequest(j, false)->image, "");
  for (const char* ok : {"pytorch/pytorch", "ghcr.io/lab/img:v1.2", "img@sha256:0123abcd", "localhost/rota-test:1",
                         "/opt/images/a.sif", "docker://ubuntu:22.04"}) {
    j["image"] = ok;
    StatusOr<store::JobRecord> r = JobFromRequest(j, false);
    ASSERT_TRUE(r.ok()) << ok << ": " << r.status().message();
    EXPECT_EQ(r->image, ok);
    EXPECT_EQ(JobToJson(*r, nullptr, true).at("image"), ok);
  }
  auto refusal = [&](json image) {
    j["image"] = std::move(image);
    return Refusal(j);
  };
  EXPECT_NE(refusal("--privileged").find("\"image\" starts with '-'"), std::string::npos);
  EXPECT_NE(refusal("img;rm -rf /").find("only letters"), std::string::npos);
  EXPECT_NE(refusal("/opt/../etc/shadow").find(".."), std::string::npos);
  EXPECT_NE(refusal(std::string(256, 'a')).find("255"), std::string::npos);
  EXPECT_NE(refusal("a\nb").find("only letters"), std::string::npos);
  EXPECT_NE(refusal(7).find("\"image\" must be a string"), std::string::npos);
  // A session in a container (rota run --image): checked as a batch job's image is.
  json session = {{"cwd", "/home/alice"}, {"image", "pytorch/pytorch"}};
  EXPECT_EQ(JobFromRequest(session, true)->image, "pytorch/pytorch");
  session["image"] = "-it";
  EXPECT_NE(Refusal(session, true).find("\"image\" starts with '-'"), std::string::npos);
}

TEST(JobJsonTest, ASessionNeedsNoCommandAndHasNoOutput) {
  StatusOr<store::JobRecord> r = JobFromRequest({{"cwd", "/tmp"}}, true);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->interactive);
  EXPECT_EQ(r->job.name, "shell");
  EXPECT_TRUE(r->output.empty());
  EXPECT_FALSE(JobFromRequest({{"cwd", "/tmp"}}, false).ok());  // a batch job needs one
}

TEST(JobJsonTest, OthersSeeTheStateButNotHowItEnded) {
  StatusOr<store::JobRecord> r = JobFromRequest(Minimal(), false);
  ASSERT_TRUE(r.ok());
  r->job.id = 7;
  r->job.user = "alice";
  r->state = store::JobState::kFailed;
  r->end_reason = "Failed(exit 3): /home/alice/secret-project";
  r->exit_code = 3;
  const json mine = JobToJson(*r, nullptr, true);
  const json theirs = JobToJson(*r, nullptr, false);
  EXPECT_EQ(mine["state"], "failed");
  EXPECT_EQ(theirs["state"], "failed");
  EXPECT_EQ(mine["end_reason"], r->end_reason);
  EXPECT_EQ(mine["exit_code"], 3);
  EXPECT_EQ(theirs.dump().find("secret-project"), std::string::npos) << theirs.dump();
  EXPECT_EQ(theirs.dump().find("/home/alice"), std::string::npos) << theirs.dump();
}

}  // namespace
}  // namespace job_json_test
}  // namespace rota::api
