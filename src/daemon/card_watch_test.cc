// The card watch alone (card_watch.h), over a real store in a temporary directory and a made-up
// process table: who a GPU process belongs to (a job through its cgroup or its parent chain, a
// user outside Rota, nobody when it cannot be read), a card's health and its drains across a
// restart, and what `rota resume` refuses.
#include "daemon/card_watch.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "testing/daemon/parts.h"
#include "testing/temp_dir.h"

namespace rota::daemon {
namespace card_watch_test {
namespace {

constexpr Time kNow = 1796115600;

Gpu Card(int index) {
  Gpu g;
  g.index = index;
  g.uuid = "GPU-" + std::to_string(index);
  g.model = "NVIDIA A100-SXM4-80GB";
  g.memory = 81920;
  return g;
}

device::GpuInfo Info(int index, std::vector<int> pids) {
  device::GpuInfo info;
  info.index = index;
  info.uuid = "GPU-" + std::to_string(index);
  for (int pid : pids) info.processes.push_back(device::ProcessInfo{pid, 1024, -1});
  return info;
}

class CardWatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = testing::OpenStore(dir_);
    ASSERT_NE(store_, nullptr);
    watch_ = MakeWatch();
  }

  std::unique_ptr<CardWatch> MakeWatch() {
    CardWatch::ProcessReader reader;
    reader.identity = [this](pid_t pid) -> StatusOr<exec::ProcessIdentity> {
      ++reads_;
      auto it = procs_.find(pid);
      if (it == procs_.end()) return NotFound("no process " + std::to_string(pid));
      return it->second;
    };
    reader.start_time = [this](pid_t pid) -> StatusOr<unsigned long long> {
      auto it = procs_.find(pid);
      if (it == procs_.end()) return NotFound("no process");
      return static_cast<unsigned long long>(1000 + pid);
    };
    reader.user_name = [](uid_t uid) -> std::optional<std::string> {
      if (uid == 20001) return "alice";
      if (uid == 20002) return "bob";
      return std::nullopt;
    };
    auto w = std::make_unique<CardWatch>(*store_, reader);
    EXPECT_TRUE(w->LoadDrains().ok());
    return w;
  }

  void Process(pid_t pid, pid_t ppid, uid_t uid, std::string cgroup = "") {
    procs_[pid] = exec::ProcessIdentity{pid, ppid, uid, uid, std::move(cgroup)};
  }

  testing::TempDir dir_{"rota-card-watch"};
  std::unique_ptr<store::JobStore> store_;
  std::unique_ptr<CardWatch> watch_;
  std::map<pid_t, exec::ProcessIdentity> procs_;
  int reads_ = 0;
  const std::vector<Gpu> cards_ = {Card(0), Card(1)};
  const HealthRules rules_{3, 3};
};

TEST_F(CardWatchTest, ProcessesAreAttributedToTheirJobsTheirUsersOrNobody) {
  // Job 7 runs in a cgroup; job 8 (no cgroup) under shepherd 500; pid 900 is bob's own; 901 is gone.
  Process(100, 1, 20001, "/rota/job-7");
  Process(500, 1, 20001);
  Process(501, 500, 20001);
  Process(502, 501, 20001);  // launcher -> python -> worker
  Process(900, 1, 20002);
  Process(950, 1, 4242);  // a uid with no name
  CardWatch::RunningJobs running;
  running.cgroups = {{7, "/rota/job-7"}, {8, ""}};
  running.pids = {{500, 8}};
  watch_->TakeSample(device::Snapshot{"550", {Info(0, {100, 502}), Info(1, {900, 901, 950})}, {}}, running, kNow);

  EXPECT_EQ(watch_->Owner(100).job, 7);
  EXPECT_EQ(watch_->Owner(100).user, "alice");
  EXPECT_EQ(watch_->Owner(502).job, 8);
  EXPECT_EQ(watch_->Owner(900).job, 0);
  EXPECT_EQ(watch_->Owner(900).user, "bob");
  EXPECT_EQ(watch_->Owner(901).uid, -1);  // cannot be read
  EXPECT_EQ(watch_->Owner(950).user, "4242");
  EXPECT_EQ(watch_->sampled_at(), kNow);
  EXPECT_EQ(watch_->last_sample().driver_version, "550");

  // Job 7 is placed on card 1 only: its process on card 0 is not covered by it.
  const CardWatch::PlacedOn placed = [](JobId id, const std::string& uuid) {
    return (id == 7 && uuid == "GPU-1") || (id == 8 && uuid == "GPU-0");
  };
  EXPECT_EQ(watch_->Leftovers("GPU-0", placed), std::vector<std::string>{"pid 100 (alice, job 7)"});
  EXPECT_EQ(watch_->Leftovers("GPU-1", placed),
            (std::vector<std::string>{"pid 900 (bob)", "pid 901", "pid 950 (4242)"}));

  // The next sample: known processes keep their owner without reading /proc again while their
  // job runs; once job 7 has ended its process is read again (and is now outside Rota).
  const int before = reads_;
  watch_->TakeSample(device::Snapshot{"550", {Info(0, {100, 502}), Info(1, {900})}, {}}, running, kNow + 60);
  EXPECT_EQ(reads_, before);
  running.cgroups.erase(7);
  watch_->TakeSample(device::Snapshot{"550", {Info(0, {100})}, {}}, running, kNow + 120);
  EXPECT_GT(reads_, before);
  EXPECT_EQ(watch_->Owner(100).job, 0);
  EXPECT_EQ(watch_->Owner(900).uid, -1);  // no longer on a card: forgotten
}

TEST_F(CardWatchTest, AFailingCardIsSuspectThenDrainedAndStaysDrainedAcrossARestart) {
  device::Snapshot snap{"550", {Info(0, {}), Info(1, {})}, {}};
  snap.gpus[1].health = Unavailable("GPU is lost");
  watch_->TakeSample(snap, {}, kNow);
  CardWatch::Observation seen = watch_->ObserveCards(cards_, -1, rules_, kNow);
  EXPECT_TRUE(seen.changed);
  EXPECT_TRUE(seen.drained.empty());
  EXPECT_EQ(watch_->State("GPU-1").health.state, HealthState::kSuspect);
  EXPECT_TRUE(watch_->State("GPU-1").Out());
  EXPECT_FALSE(watch_->State("GPU-0").Out());
  seen = watch_->ObserveCards(cards_, -1, rules_, kNow + 60);
  EXPECT_FALSE(seen.changed);
  seen = watch_->ObserveCards(cards_, -1, rules_, kNow + 120);
  ASSERT_EQ(seen.newly_drained.size(), 1u);
  EXPECT_EQ(seen.newly_drained[0],
            (std::pair<size_t, std::string>{1, "drained after 3 failed samples: GPU is lost"}));
  EXPECT_EQ(seen.drained, std::vector<size_t>{1});
  // Still drained at the next sample (its jobs are stopped again if any are left), not "new".
  seen = watch_->ObserveCards(cards_, -1, rules_, kNow + 180);
  EXPECT_TRUE(seen.newly_drained.empty());
  EXPECT_EQ(seen.drained, std::vector<size_t>{1});

  // A restart keeps it drained, with its reason.
  watch_ = MakeWatch();
  EXPECT_EQ(watch_->State("GPU-1").health.state, HealthState::kDrained);
  EXPECT_EQ(watch_->State("GPU-1").health.error, "GPU is lost");

  // Fine and empty for three samples: back.
  const device::Snapshot fine{"550", {Info(0, {}), Info(1, {})}, {}};
  watch_->TakeSample(fine, {}, kNow + 240);
  for (int i = 0; i < 2; ++i) watch_->ObserveCards(cards_, -1, rules_, kNow + 240);
  EXPECT_EQ(watch_->State("GPU-1").health.state, HealthState::kDrained);
  seen = watch_->ObserveCards(cards_, -1, rules_, kNow + 240);
  EXPECT_TRUE(seen.changed);
  EXPECT_EQ(watch_->State("GPU-1").health.state, HealthState::kHealthy);
  EXPECT_TRUE(MakeWatch()->State("GPU-1").health.state ==
              HealthState::kHealthy);  // the drain's end is recorded
}

TEST_F(CardWatchTest, WhenTheSourceHangsOnOneCardOnlyThatCardIsJudged) {
  watch_->TakeSample(Unavailable("NVML call timed out"), {}, kNow);
  EXPECT_EQ(watch_->sample_error(), "NVML call timed out");
  watch_->ObserveCards(cards_, /*stuck=*/1, rules_, kNow);
  EXPECT_EQ(watch_->State("GPU-0").health.state, HealthState::kHealthy);
  EXPECT_EQ(watch_->State("GPU-1").health.state, HealthState::kSuspect);
  EXPECT_EQ(watch_->State("GPU-1").health.error, "NVML call timed out");
  // A card missing from a good sample is a failure of that card.
  watch_->TakeSample(device::Snapshot{"550", {Info(1, {})}, {}}, {}, kNow + 60);
  EXPECT_EQ(watch_->sample_error(), "");
  watch_->ObserveCards(cards_, -1, rules_, kNow + 60);
  EXPECT_EQ(watch_->State("GPU-0").health.error, "missing from enumeration");
  EXPECT_EQ(watch_->State("GPU-1").health.state, HealthState::kHealthy);
}

TEST_F(CardWatchTest, AnAdminsDrainIsKeptUntilResumeAndResumeRefusesWhatIsNotReady) {
  EXPECT_EQ(watch_->Resume(cards_[0], {}, "root", kNow).message(), "GPU 0 is not drained");
  ASSERT_TRUE(watch_->Drain(cards_[0], "root", "fan noise", kNow).ok());
  watch_ = MakeWatch();  // a restart
  ASSERT_TRUE(watch_->State("GPU-0").admin_drain.has_value());
  EXPECT_EQ(watch_->State("GPU-0").admin_drain->reason, "fan noise");
  EXPECT_TRUE(watch_->State("GPU-0").Out());
  const Status held = watch_->Resume(cards_[0], {"pid 900 (bob)"}, "root", kNow);
  EXPECT_EQ(held.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(held.message(), "GPU 0 is still held by pid 900 (bob) outside its Rota jobs; stop them first");
  // A card that reads badly now is not resumed.
  device::Snapshot bad{"550", {Info(0, {}), Info(1, {})}, {}};
  bad.gpus[0].health = Unavailable("uncorrected ECC errors: 2");
  watch_->TakeSample(bad, {}, kNow);
  watch_->ObserveCards(cards_, -1, rules_, kNow);
  EXPECT_EQ(watch_->Resume(cards_[0], {}, "root", kNow).message(),
            "GPU 0 is not healthy: uncorrected ECC errors: 2 (it comes back once it reads fine and nothing "
            "is left on it)");
  watch_->TakeSample(device::Snapshot{"550", {Info(0, {}), Info(1, {})}, {}}, {}, kNow + 60);
  watch_->ObserveCards(cards_, -1, rules_, kNow + 60);
  ASSERT_TRUE(watch_->Resume(cards_[0], {}, "root", kNow + 60).ok());
  EXPECT_FALSE(watch_->State("GPU-0").Out());
  EXPECT_FALSE(MakeWatch()->State("GPU-0").Out());
}

}  // namespace
}  // namespace card_watch_test
}  // namespace rota::daemon
