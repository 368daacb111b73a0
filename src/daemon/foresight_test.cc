// Start forecasts in the daemon (foresight.h) over a real store: what the ended jobs teach (only
// runs that took their course; page after page, from where it stopped, also after a restart),
// the calibration from stored first forecasts, the forecast of a waiting job and when it is
// recomputed, and the plan on limits as the p90 before any calibration.
#include "daemon/foresight.h"

#include <gtest/gtest.h>

#include "testing/builders.h"
#include "testing/daemon/parts.h"
#include "testing/temp_dir.h"

namespace rota::daemon {
namespace foresight_test {
namespace {

constexpr Time kStart = 1796115600;  // Tuesday 2026-12-01 09:00 UTC

class ForesightTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_ = testing::ParsedConfig("");
    store_ = testing::OpenStore(dir_);
    ASSERT_NE(store_, nullptr);
    state_.gpus = testing::Cards(1);
    foresight_ = Make();
  }

  std::unique_ptr<Foresight> Make() {
    Foresight::Setup s;
    s.store = store_.get();
    s.config = &config_;
    s.jobs = &jobs_;
    s.state = [this] {
      ++computed_;
      return state_;
    };
    return std::make_unique<Foresight>(s);
  }

  // A job of `user` named `name` with `limit` that ran `run` seconds from `start` and ended as
  // `state`; with a first forecast of `forecast` seconds made at its submission when positive.
  JobId Ended(const std::string& user, const std::string& name, Duration limit, Time start, Duration run,
              JobState state = JobState::kCompleted, Duration forecast = 0, Duration waited = 0) {
    store::JobRecord r;
    r.job.user = user;
    r.job.name = name;
    r.job.time_limit = limit;
    r.uid = 1000;
    r.command = {"true"};
    const Time submit = start - waited;
    StatusOr<JobId> id = store_->Submit(r, submit);
    EXPECT_TRUE(id.ok());
    if (forecast > 0) {
      EXPECT_TRUE(store_->SetForecast(*id, submit, submit + forecast).ok());
    }
    store::StartInfo info;
    info.placement.alloc.gpus = {0};
    info.placement.gpu_uuids = {"GPU-0"};
    EXPECT_TRUE(store_->MarkStarted(*id, info, start).ok());
    EXPECT_TRUE(store_->MarkEnded(*id, state, 0, "x", start + run).ok());
    return *id;
  }

  Job Waiting(JobId id, const std::string& user, const std::string& name, Duration limit) {
    Job j = testing::MakeJob(id, user, 1, limit, kStart);
    j.name = name;
    return j;
  }

  // A 4-hour job of Ana's on the only card since 09:00 (job 50); Bo's 2-hour job waits (51).
  void AnaRunsBoWaits() {
    RunningJob r;
    r.job = Waiting(50, "ana", "", 4 * kHour);
    r.alloc.gpus = {0};
    r.start_time = kStart;
    state_.running.push_back(r);
    state_.pending.push_back(Waiting(51, "bo", "", 2 * kHour));
  }

  testing::TempDir dir_{"rota-foresight"};
  config::Config config_;
  std::unique_ptr<store::JobStore> store_;
  JobTable jobs_;
  ClusterState state_;
  int computed_ = 0;
  std::unique_ptr<Foresight> foresight_;
};

TEST_F(ForesightTest, RunsThatTookTheirCourseTeachRunTimes) {
  for (int i = 0; i < 3; ++i) Ended("ana", "train", 4 * kHour, kStart + i * kHour, kHour);
  Ended("ana", "train", 4 * kHour, kStart + 4 * kHour, 3 * kHour, JobState::kTimeout);  // a limit counts
  Ended("ana", "train", 4 * kHour, kStart + 8 * kHour, 60, JobState::kCancelled);       // a cancel does not
  Ended("ana", "train", 4 * kHour, kStart + 9 * kHour, 60, JobState::kPreempted);       // nor a preemption
  const RuntimePrediction p = foresight_->Runtime(Waiting(99, "ana", "train", 8 * kHour), kStart + kDay);
  EXPECT_EQ(foresight_->learnt(), 4);
  EXPECT_EQ(p.basis, RuntimeBasis::kUserKey);
  EXPECT_EQ(p.samples, 4);
  EXPECT_EQ(p.runtime, 2 * kHour);  // the median ratio of 1/4, 1/4, 1/4, 3/4 (1/4) of 8 hours
}

TEST_F(ForesightTest, ItReadsOnFromWhereItStoppedAcrossPagesAndRestarts) {
  // More ended jobs than a page holds, submitted in one commit (a durable commit each would make
  // this test a storm of disk flushes for everything running beside it).
  std::vector<store::JobRecord> records(1005);
  for (size_t i = 0; i < records.size(); ++i) {
    records[i].job.user = "u" + std::to_string(i % 7);
    records[i].job.time_limit = kHour;
    records[i].uid = 1000;
    records[i].command = {"true"};
  }
  StatusOr<std::vector<JobId>> ids = store_->SubmitMany(records, kStart - 60);
  ASSERT_TRUE(ids.ok());
  store::StartInfo info;
  info.placement.alloc.gpus = {0};
  info.placement.gpu_uuids = {"GPU-0"};
  for (size_t i = 0; i < ids->size(); ++i) {
    const Time start = kStart + static_cast<Time>(i) * 10;
    ASSERT_TRUE(store_->MarkStarted((*ids)[i], info, start).ok());
    ASSERT_TRUE(store_->MarkEnded((*ids)[i], JobState::kCompleted, 0, "x", start + 600).ok());
  }
  foresight_->Runtime(Waiting(1, "u1", "", kHour), kStart + kDay);
  EXPECT_EQ(foresight_->learnt(), 1005);
  // Nothing new: nothing read twice; two more after a pass: those two.
  foresight_->Changed();
  foresight_->Runtime(Waiting(1, "u1", "", kHour), kStart + kDay);
  EXPECT_EQ(foresight_->learnt(), 1005);
  Ended("u1", "", kHour, kStart + 20000, 600);
  Ended("u2", "", kHour, kStart + 20010, 600);
  foresight_->Changed();
  foresight_->Runtime(Waiting(1, "u1", "", kHour), kStart + kDay);
  EXPECT_EQ(foresight_->learnt(), 1007);
  // An end recorded after a later one (within the hour before it): learnt too, once.
  Ended("u3", "", kHour, kStart + 20010 - 1800, 600);
  foresight_->Changed();
  foresight_->Runtime(Waiting(1, "u1", "", kHour), kStart + kDay);
  EXPECT_EQ(foresight_->learnt(), 1008);
  foresight_->Changed();
  foresight_->Runtime(Waiting(1, "u1", "", kHour), kStart + kDay);
  EXPECT_EQ(foresight_->learnt(), 1008);
  // A restart reads the last 60 days again.
  foresight_ = Make();
  foresight_->Runtime(Waiting(1, "u1", "", kHour), kStart + kDay);
  EXPECT_EQ(foresight_->learnt(), 1008);
  foresight_ = Make();
  foresight_->Runtime(Waiting(1, "u1", "", kHour), kStart + 61 * kDay);
  EXPECT_EQ(foresight_->learnt(), 0);
}

TEST_F(ForesightTest, AWaitingJobIsForecastOnHistoryAndCalibratedOnStoredForecasts) {
  // Ana's jobs run a quarter of their limits; a 4-hour job of hers runs on the only card since
  // 09:00, so the next starts at 10:00 (not 13:00, its limit).
  for (int i = 0; i < 3; ++i) Ended("ana", "", 4 * kHour, kStart - kDay + i * kHour, kHour);
  AnaRunsBoWaits();
  const Foresight::Entry* e = foresight_->Of(51, kStart + 60);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->forecast, kStart + kHour);
  EXPECT_EQ(e->range.p50, kStart + kHour);
  EXPECT_EQ(e->range.samples, 0);
  EXPECT_EQ(e->range.p90, kNever);  // no plan on limits yet (no pass), no calibration: no p90
  EXPECT_EQ(e->runtime.basis, RuntimeBasis::kLab);
  EXPECT_TRUE(Foresight::Telling(*e));
  EXPECT_EQ(computed_, 1);
  // Asked again with nothing changed: the same computation.
  foresight_->All(kStart + 61);
  EXPECT_EQ(computed_, 1);
  EXPECT_EQ(foresight_->Of(52, kStart + 61), nullptr);

  // Twenty jobs whose first forecasts foresaw 30 min and that waited 30 min (17 of them) or
  // 3 hours (3): the 18th of the 20 ratios (the 90th percentile) is (3 h + 10 min) / (30 + 10 min),
  // 4.75, which scales this forecast's 59 minutes (made at 09:01) plus ten.
  for (int i = 0; i < 17; ++i) {
    Ended("cy", "", kHour, kStart - 12 * kHour + i * 60, 60, JobState::kCompleted, 1800, 1800);
  }
  for (int i = 0; i < 3; ++i) {
    Ended("cy", "", kHour, kStart - 11 * kHour + i * 60, 60, JobState::kCompleted, 1800, 3 * kHour);
  }
  foresight_->Changed();
  e = foresight_->Of(51, kStart + 60);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(computed_, 2);
  EXPECT_EQ(e->range.samples, 20);
  EXPECT_EQ(e->range.p50, e->forecast);
  EXPECT_EQ(e->range.p90, kStart + 60 + (3540 + 600) * 19 / 4 - 600);
}

// Last week at this hour a thesis job of Zed's came in half an hour later and ran half an hour:
// under the rota policy the forecast foresees it again, taking the card first when Ana's job ends
// (the tiers order the queue), so Bo's job starts at 10:30, not 10:00. A job cancelled before it
// ever ran is not foreseen again, nor one of more than a week ago; under fifo nothing later
// goes first.
TEST_F(ForesightTest, UnderRotaTheLastWeeksJobsAreForeseenAgain) {
  for (int i = 0; i < 3; ++i) Ended("ana", "", 4 * kHour, kStart - kDay + i * kHour, kHour);
  auto thesis = [this](const std::string& user, Time submit) {
    store::JobRecord r;
    r.job.user = user;
    r.job.tier = Tier::kThesis;
    r.job.time_limit = 2 * kHour;
    r.uid = 1001;
    r.command = {"true"};
    StatusOr<JobId> id = store_->Submit(r, submit);
    EXPECT_TRUE(id.ok());
    return *id;
  };
  const JobId zed = thesis("zed", kStart - kWeek + 30 * kMinute);
  store::StartInfo info;
  info.placement.alloc.gpus = {0};
  info.placement.gpu_uuids = {"GPU-0"};
  ASSERT_TRUE(store_->MarkStarted(zed, info, kStart - kWeek + 30 * kMinute).ok());
  ASSERT_TRUE(store_->MarkEnded(zed, JobState::kCompleted, 0, "x", kStart - kWeek + kHour).ok());
  const JobId yan = thesis("yan", kStart - kWeek + 20 * kMinute);
  ASSERT_TRUE(store_->Cancel(yan, "yan", kStart - kWeek + 21 * kMinute).ok());
  // A week and ten seconds before the forecast: not again (it would come in at once).
  const JobId old = thesis("old", kStart - kWeek + 50);
  ASSERT_TRUE(store_->MarkStarted(old, info, kStart - kWeek + 50).ok());
  ASSERT_TRUE(store_->MarkEnded(old, JobState::kCompleted, 0, "x", kStart - kWeek + 1850).ok());

  AnaRunsBoWaits();
  const Foresight::Entry* e = foresight_->Of(51, kStart + 60);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->forecast, kStart + 90 * kMinute);
  // The week's jobs that ran or run or wait: Ana's three, Zed's, and the two in the state.
  EXPECT_EQ(foresight_->ToJson(*e)["arrivals"], 6);

  config_ = testing::ParsedConfig("[policy]\nalgorithm = \"fifo\"\n");
  foresight_ = Make();
  e = foresight_->Of(51, kStart + 60);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->forecast, kStart + kHour);
  EXPECT_EQ(foresight_->ToJson(*e)["arrivals"], 0);
}

TEST_F(ForesightTest, WithoutHistoryAForecastTellsNothingNew) {
  state_.pending.push_back(Waiting(51, "bo", "", 2 * kHour));
  const Foresight::Entry* e = foresight_->Of(51, kStart);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->runtime.basis, RuntimeBasis::kLimit);
  EXPECT_FALSE(Foresight::Telling(*e));
  EXPECT_EQ(foresight_->ToJson(*e)["runtime_basis"], "time limit");
}

}  // namespace
}  // namespace foresight_test
}  // namespace rota::daemon
