// The allocation watch alone (allocation_watch.h), on samples the test makes: what a sample says
// of whole cards and of a memory share (its own processes), the GPU-seconds measured, an idle
// job warned then reclaimed (and a keep that restarts its clock), a share over its memory noted
// then stopped. The same rules through a whole daemon on virtual time: lifecycle_test.cc.
#include "daemon/allocation_watch.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "testing/daemon/parts.h"
#include "testing/fake_clock.h"
#include "testing/temp_dir.h"

namespace rota::daemon {
namespace allocation_watch_test {
namespace {

using nlohmann::json;

constexpr Time kStart = 1796115600;

device::GpuInfo Card(int index, int util, MiB used) {
  device::GpuInfo info;
  info.index = index;
  info.uuid = "GPU-" + std::to_string(index);
  info.pci_bus_id = "00000000:0" + std::to_string(index) + ":00.0";
  info.memory_total = 81920;
  info.memory_used = used;
  info.util_gpu = util;
  return info;
}

class AllocationWatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = testing::OpenStore(dir_);
    ASSERT_NE(store_, nullptr);
    device::Snapshot first{"550", {Card(0, 0, 0), Card(1, 0, 0)}, {}};
    cards_.Load(&first);
    CardWatch::ProcessReader reader;
    // Process 700 + N is job N's (its cgroup).
    reader.identity = [](pid_t pid) -> StatusOr<exec::ProcessIdentity> {
      return exec::ProcessIdentity{pid, 1, 20001, 20001, "/rota/job-" + std::to_string(pid - 700)};
    };
    reader.start_time = [](pid_t) -> StatusOr<unsigned long long> { return 1ULL; };
    reader.user_name = [](uid_t) -> std::optional<std::string> { return "alice"; };
    card_watch_ = std::make_unique<CardWatch>(*store_, reader);
    notes_ = testing::QuietNotifications(*store_, clock_, config_);
    AllocationWatch::Setup s;
    s.store = store_.get();
    s.config = &config_;
    s.jobs = &jobs_;
    s.cards = &cards_;
    s.watch = card_watch_.get();
    s.notes = notes_.get();
    s.note_job = [this](JobId id, const std::string& line, Time) { trail_[id].push_back(line); };
    s.stop = [this](ActiveJob& a, Time now) { stopped_.emplace_back(a.rec.job.id, now); };
    watch_ = std::make_unique<AllocationWatch>(std::move(s));
  }

  // alice's job `id` running since kStart on `cards` (a share of `share` MiB when not 0).
  ActiveJob& Run(JobId id, std::vector<int> cards, MiB share = 0) {
    ActiveJob a;
    a.rec.job.id = id;
    a.rec.job.user = "alice";
    a.rec.uid = 20001;
    a.rec.state = store::JobState::kRunning;
    a.rec.start_time = kStart;
    a.rec.cgroup = "/rota/job-" + std::to_string(id);
    a.rec.placement = cards_.PlacementOf(Allocation{cards, -1, share});
    return jobs_.Add(std::move(a));
  }

  // A sample at `now` with the cards as given, attributed to the running jobs, then measured and
  // watched, as after each sample in the daemon.
  void Sample(std::vector<device::GpuInfo> cards, Time now) {
    CardWatch::RunningJobs running;
    for (const auto& [id, a] : jobs_) running.cgroups[id] = a.rec.cgroup;
    card_watch_->TakeSample(device::Snapshot{"550", std::move(cards), {}}, running, now);
    watch_->Measure(now);
    watch_->Watch(now);
  }

  std::string Trail(JobId id) {
    std::string all;
    for (const std::string& line : trail_[id]) all += line + "\n";
    return all;
  }

  testing::TempDir dir_{"rota-allocation-watch"};
  testing::FakeClock clock_{kStart};
  config::Config config_;
  std::unique_ptr<store::JobStore> store_;
  Inventory cards_;
  JobTable jobs_;
  std::unique_ptr<CardWatch> card_watch_;
  std::unique_ptr<Notifications> notes_;
  std::unique_ptr<AllocationWatch> watch_;
  std::map<JobId, std::vector<std::string>> trail_;
  std::vector<std::pair<JobId, Time>> stopped_;
};

TEST_F(AllocationWatchTest, WholeCardsReadAsTheirMeanAndAShareAsItsOwnProcesses) {
  ActiveJob& whole = Run(1, {0, 1});
  card_watch_->TakeSample(device::Snapshot{"550", {Card(0, 40, 8192), Card(1, 60, 24576)}, {}}, {}, kStart);
  AllocationWatch::Reading r = watch_->Read(1, whole);
  EXPECT_EQ(r.util, 50);
  EXPECT_DOUBLE_EQ(r.memory, 32768.0 / (2 * 81920));

  jobs_.Take(jobs_.find(1));
  ActiveJob& share = Run(2, {0}, 20480);
  ActiveJob& neighbour = Run(3, {0}, 20480);
  device::GpuInfo card = Card(0, 90, 30000);
  card.processes = {{702, 10240, 30}, {703, 19760, 60}};  // job 2's and job 3's
  CardWatch::RunningJobs running;
  running.cgroups = {{2, share.rec.cgroup}, {3, neighbour.rec.cgroup}};
  card_watch_->TakeSample(device::Snapshot{"550", {card, Card(1, 0, 0)}, {}}, running, kStart);
  r = watch_->Read(2, share);
  EXPECT_EQ(r.util, 30);  // its own process's, not the card's 90
  EXPECT_EQ(r.used, 10240);
  EXPECT_DOUBLE_EQ(r.memory, 0.5);  // of the 20 GiB it declared
}

TEST_F(AllocationWatchTest, GpuSecondsAreMeasuredBusyAndIdleBetweenSamples) {
  ActiveJob& a = Run(1, {0, 1});
  Sample({Card(0, 50, 100), Card(1, 50, 100)}, kStart);  // the first sample starts the clock
  Sample({Card(0, 50, 100), Card(1, 50, 100)}, kStart + 60);
  EXPECT_DOUBLE_EQ(a.measures.measured_gpu_seconds, 120);
  EXPECT_DOUBLE_EQ(a.measures.busy_gpu_seconds, 60);
  EXPECT_DOUBLE_EQ(a.measures.idle_gpu_seconds, 0);
  Sample({Card(0, 1, 100), Card(1, 1, 100)}, kStart + 120);  // under idle_util (5%)
  EXPECT_DOUBLE_EQ(a.measures.idle_gpu_seconds, 120);
  Sample({Card(0, 1, 100), Card(1, 1, 100)}, kStart + 300);  // a gap of 3 minutes: not counted
  EXPECT_DOUBLE_EQ(a.measures.measured_gpu_seconds, 240);
}

TEST_F(AllocationWatchTest, AnIdleJobIsWarnedThenReclaimedUnlessKept) {
  config_.watch.reclaim = true;
  Run(1, {0});
  Run(2, {1});
  for (Time t = kStart; t <= kStart + 20 * kMinute; t += kMinute) Sample({Card(0, 1, 0), Card(1, 1, 0)}, t);
  EXPECT_NE(
      Trail(1).find("Idle: GPU utilisation 1% over the last 15m, memory 0% in use; `rota keep 1` keeps it "
                    "(3 left today), else at 30m idle it is stopped (its signal, grace, then the stop)"),
      std::string::npos)
      << Trail(1);
  Caller alice;
  alice.name = "alice";
  alice.uid = 20001;
  const json kept = watch_->Keep(alice, 2, kStart + 20 * kMinute);
  ASSERT_TRUE(kept.value("ok", false)) << kept.dump();
  EXPECT_EQ(kept["keeps_left"], 2);
  for (Time t = kStart + 21 * kMinute; t <= kStart + 30 * kMinute; t += kMinute) {
    Sample({Card(0, 1, 0), Card(1, 1, 0)}, t);
  }
  ASSERT_EQ(stopped_.size(), 1u);  // job 1; job 2 was kept
  EXPECT_EQ(stopped_[0], (std::pair<JobId, Time>{1, kStart + 30 * kMinute}));
  EXPECT_EQ(jobs_.at(1).stop_reason,
            "Reclaimed: idle for 30m (GPU utilisation 1% over the last 15m, memory 0% in use)");
  EXPECT_EQ(watch_->Keep(alice, 9, kStart)["error"]["code"], "failed_precondition");  // not running
}

TEST_F(AllocationWatchTest, AShareOverItsMemoryIsNotedThenStoppedWhenTheRulesSaySo) {
  config_.watch.over_memory_stop = true;
  ActiveJob& share = Run(2, {0}, 10240);
  device::GpuInfo card = Card(0, 80, 12288);
  card.processes = {{702, 12288, 80}};  // 12 GiB on a 10 GiB share
  Sample({card, Card(1, 0, 0)}, kStart);
  EXPECT_NE(
      Trail(2).find("Over its memory: uses 12G of the 10G it declared; others on GPU 0 may run out; if it "
                    "stays over for 5m, it is stopped"),
      std::string::npos)
      << Trail(2);
  Sample({card, Card(1, 0, 0)}, kStart + 4 * kMinute);
  EXPECT_TRUE(stopped_.empty());
  Sample({card, Card(1, 0, 0)}, kStart + 5 * kMinute);
  ASSERT_EQ(stopped_.size(), 1u);
  EXPECT_EQ(share.stop_reason, "Stopped: over its memory for 5m (uses 12G of the 10G it declared)");
}

}  // namespace
}  // namespace allocation_watch_test
}  // namespace rota::daemon
