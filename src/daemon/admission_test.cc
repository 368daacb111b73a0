// Admission alone (admission.h), over a real store and an inventory of two 80 GB cards: a job
// made the caller's (the lab's default signal where it asked for none), refused for what can
// never work here (unknown project, more host memory than the server has, dependencies on no
// job or on a job that failed, a request no card could hold, root's jobs), the limits on one
// user (pending jobs, submit rate; admins exempt), and the group commit of a batch. The same
// through a whole daemon: dispatch_test.cc; through real processes: tests/daemon/test_jobs.py.
#include "daemon/admission.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "testing/daemon/parts.h"
#include "testing/fake_clock.h"
#include "testing/temp_dir.h"

namespace rota::daemon {
namespace admission_test {
namespace {

using nlohmann::json;

constexpr Time kStart = 1796115600;

constexpr char kConfig[] = R"(
[policy]
default_signal = "USR1@300"
[limits]
pending_per_user = 3
submit_rate = 1
submit_burst = 4
[projects.llm]
hours = 500
)";

json Job(json fields = json::object()) {
  json job = {{"command", {"python", "train.py"}},
              {"cwd", "/home/alice"},
              {"request", {{"gpus", 1}}},
              {"time_limit", kHour}};
  job.update(fields);
  return {{"job", job}};
}

class AdmissionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_ = testing::ParsedConfig(kConfig);
    store_ = testing::OpenStore(dir_);
    ASSERT_NE(store_, nullptr);
    const device::Snapshot snap = testing::IdleCards(2);
    cards_.Load(&snap);
    Admission::Setup s;
    s.store = store_.get();
    s.clock = &clock_;
    s.config = &config_;
    s.host_memory = 64 * 1024;  // 64G
    s.jobs = &jobs_;
    s.cards = &cards_;
    s.cards_unknown = [this] { return cards_unknown_; };
    s.engine_refuses = [this](const Request&) { return engine_refuses_; };
    s.end_of = [this](JobId id) -> StatusOr<JobEndSeen> {
      auto it = ended_.find(id);
      if (it == ended_.end()) return NotFound("no job " + std::to_string(id));
      return it->second;
    };
    admission_ = std::make_unique<Admission>(std::move(s));
  }

  Status Refusal(const json& request, const Caller& caller) {
    return admission_->Prepare(caller, request, /*interactive=*/false, 0).status();
  }

  testing::TempDir dir_;
  testing::FakeClock clock_{kStart};
  config::Config config_;
  std::unique_ptr<store::JobStore> store_;
  Inventory cards_;
  JobTable jobs_;
  std::map<JobId, JobEndSeen> ended_;
  bool cards_unknown_ = false;
  std::string engine_refuses_;
  std::unique_ptr<Admission> admission_;
  const Caller alice_ = testing::Person("alice", 20001);
  const Caller root_ = testing::Person("root", 0, true);
};

TEST_F(AdmissionTest, AJobIsTheCallersWithTheLabsSignalWhereItAskedForNone) {
  StatusOr<store::JobRecord> rec = admission_->Prepare(alice_, Job({{"name", "t"}}), false, 0);
  ASSERT_TRUE(rec.ok()) << rec.status().message();
  EXPECT_EQ(rec->job.user, "alice");
  EXPECT_EQ(rec->uid, 20001);
  EXPECT_EQ(rec->job.signal, 10);  // SIGUSR1
  EXPECT_EQ(rec->job.grace, 300);
  StatusOr<store::JobRecord> own =
      admission_->Prepare(alice_, Job({{"signal", 12}, {"grace", 60}}), false, 0);
  ASSERT_TRUE(own.ok());
  EXPECT_EQ(own->job.signal, 12);
  EXPECT_EQ(own->job.grace, 60);

  Caller nameless = alice_;
  nameless.name.clear();
  EXPECT_EQ(Refusal(Job(), nameless).code(), StatusCode::kPermissionDenied);
  const Status as_root = Refusal(Job(), root_);
  EXPECT_EQ(as_root.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(as_root.message().find("allow_root_jobs"), std::string::npos) << as_root.message();
  EXPECT_EQ(Refusal({{"nojob", 1}}, alice_).code(), StatusCode::kInvalidArgument);
}

TEST_F(AdmissionTest, WhatCanNeverWorkHereIsRefusedSayingWhy) {
  config_.limits.pending_per_user = 0;  // only the checks of what can never work
  config_.limits.submit_rate = 0;
  const Status project = Refusal(Job({{"project", "robots"}}), alice_);
  EXPECT_NE(project.message().find("unknown project \"robots\" (this server has: llm)"), std::string::npos)
      << project.message();
  EXPECT_TRUE(admission_->Prepare(alice_, Job({{"project", "llm"}}), false, 0).ok());

  const Status memory = Refusal(Job({{"request", {{"gpus", 2}}}, {"mem_per_gpu", 40 * 1024}}), alice_);
  EXPECT_EQ(memory.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(memory.message().find("this server has 64G"), std::string::npos) << memory.message();

  const Status cards = Refusal(Job({{"request", {{"gpus", 3}}}}), alice_);
  EXPECT_EQ(cards.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(cards.message().find("can never run here"), std::string::npos) << cards.message();
  // A cluster whose cards are not known yet (it did not answer at rotad's start): the job waits
  // for them instead of being refused on cards nobody has read.
  cards_unknown_ = true;
  EXPECT_TRUE(admission_->Prepare(alice_, Job({{"request", {{"gpus", 3}}}}), false, 0).ok());
  cards_unknown_ = false;
  // An engine that cannot run a shape says so at submission.
  engine_refuses_ = "memory shares do not run through Slurm yet";
  const Status shape = Refusal(Job({{"request", {{"gpus", 1}}}}), alice_);
  EXPECT_EQ(shape.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(shape.message(), "memory shares do not run through Slurm yet");
  engine_refuses_.clear();

  EXPECT_NE(Refusal(Job({{"after", {77}}}), alice_).message().find("--after 77: no such job"),
            std::string::npos);
  ended_[5] = JobEndSeen{true, false, "Failed(exit 1)", "bob"};
  const Status failed = Refusal(Job({{"after_ok", {5}}}), alice_);
  EXPECT_EQ(failed.code(), StatusCode::kFailedPrecondition);
  // Bob's end reason is his: alice learns only that it did not complete.
  EXPECT_NE(failed.message().find("without completing (it is bob's job)"), std::string::npos)
      << failed.message();
  EXPECT_TRUE(admission_->Prepare(alice_, Job({{"after", {5}}}), false, 0).ok());  // any end will do
  ended_[6] = JobEndSeen{false, false, "Preempted (requeued)", "bob"};             // pending again
  EXPECT_TRUE(admission_->Prepare(alice_, Job({{"after_ok", {6}}}), false, 0).ok());
}

TEST_F(AdmissionTest, AShareOfAClustersCardIsWholeSharesOrRefusedWhereItCannotBeShared) {
  config_.limits.submit_rate = 0;
  const json share = Job({{"request", {{"kind", "gpu_mem"}, {"memory", 15 * 1024}}}});
  // This machine's cards: the share as asked.
  StatusOr<store::JobRecord> here = admission_->Prepare(alice_, share, false, 0);
  ASSERT_TRUE(here.ok()) << here.status().message();
  EXPECT_EQ(here->job.request.memory, 15 * 1024);
  // A Slurm node's two 80 GB cards of their own types with 8 shards: 20 GiB in whole shares.
  device::Snapshot snap = testing::IdleCards(2);
  for (device::GpuInfo& g : snap.gpus) {
    g.node = "gpu1";
    g.cluster_name = "card" + std::to_string(g.index);
    g.cluster_shares = 8;
  }
  cards_.Load(&snap);
  StatusOr<store::JobRecord> shards = admission_->Prepare(alice_, share, false, 0);
  ASSERT_TRUE(shards.ok()) << shards.status().message();
  EXPECT_EQ(shards->job.request.memory, 2 * snap.gpus[0].memory_total / 8);
  // One of them without shards: no share runs, and the job is not queued.
  snap.gpus[1].cluster_shares = 0;
  cards_.Load(&snap);
  const Status refused = Refusal(share, alice_);
  EXPECT_EQ(refused.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.message().find("GPU 1 on gpu1 has no shards"), std::string::npos) << refused.message();
  EXPECT_TRUE(admission_->Prepare(alice_, Job(), false, 0).ok());  // whole GPUs still run
}

TEST_F(AdmissionTest, OneUsersPendingJobsAndRateAreLimitedAndAdminsAreNot) {
  ActiveJob waiting;
  waiting.rec.job.id = 1;
  waiting.rec.uid = 20001;
  waiting.rec.state = store::JobState::kPending;
  jobs_.Add(waiting);
  EXPECT_TRUE(admission_->Prepare(alice_, Job(), false, 0).ok());  // 2 pending
  EXPECT_TRUE(admission_->Prepare(alice_, Job(), false, 0).ok());  // 3
  const Status full = Refusal(Job(), alice_);
  EXPECT_EQ(full.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(full.message().find("you have 3 pending jobs"), std::string::npos) << full.message();
  const Caller admin = testing::Person("carol", 20003, true);
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(admission_->Prepare(admin, Job(), false, 0).ok());
  // The rate, in bursts of 4 for each user (nothing is stored here, so each is counted again
  // from the table: no pending job of bob's).
  const Caller bob = testing::Person("bob", 20002);
  for (int i = 0; i < 4; ++i) {
    admission_->Recount();
    EXPECT_TRUE(admission_->Prepare(bob, Job(), false, 0).ok()) << i;
  }
  admission_->Recount();
  const Status fast = Refusal(Job(), bob);
  EXPECT_EQ(fast.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(fast.message().find("faster than one user may"), std::string::npos) << fast.message();
}

TEST_F(AdmissionTest, ABatchIsStoredInOneGoAndAnsweredInOrder) {
  EXPECT_TRUE(admission_->Flush().empty());
  for (int i = 0; i < 3; ++i) {
    StatusOr<store::JobRecord> rec =
        admission_->Prepare(alice_, Job({{"name", "n" + std::to_string(i)}}), false, 0);
    ASSERT_TRUE(rec.ok());
    admission_->Batch(100 + i, i == 1 ? json("mine") : json(), std::move(*rec));
  }
  clock_.Set(kStart + 5);
  const std::vector<Admission::Answer> answers = admission_->Flush();
  ASSERT_EQ(answers.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(answers[i].conn, ConnId(100 + i));
    ASSERT_TRUE(answers[i].reply.value("ok", false)) << answers[i].reply.dump();
    EXPECT_TRUE(answers[i].stored);
    const JobId id = answers[i].reply["job_id"].get<JobId>();
    ASSERT_NE(jobs_.find(id), jobs_.end());
    EXPECT_EQ(jobs_.at(id).rec.job.name, "n" + std::to_string(i));
    EXPECT_EQ(jobs_.at(id).rec.job.submit_time, kStart + 5);
    EXPECT_EQ(store_->Get(id)->state, store::JobState::kPending);
  }
  EXPECT_EQ(answers[1].reply["tag"], "mine");
  EXPECT_FALSE(answers[0].reply.contains("tag"));
  EXPECT_TRUE(admission_->Flush().empty());
}

}  // namespace
}  // namespace admission_test
}  // namespace rota::daemon
