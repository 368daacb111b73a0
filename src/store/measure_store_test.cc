#include <gtest/gtest.h>

#include "store/job_store.h"
#include "testing/temp_dir.h"

namespace rota::store {
namespace measure_store_test {
namespace {

constexpr Time kT0 = 1'700'000'000;

JobRecord OneGpuJob() {
  JobRecord r;
  r.job.user = "alice";
  r.job.tier = Tier::kRegular;
  r.job.request.kind = RequestKind::kWholeGpus;
  r.job.request.gpus = 1;
  r.job.time_limit = kHour;
  r.job.signal = 15;
  r.uid = 1001;
  r.command = {"true"};
  return r;
}

TEST(JobMeasuresTest, RunsOfOneJobAddUpAndSurviveReopening) {
  testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  JobId ended = 0, running = 0, old = 0;
  {
    auto store = JobStore::Open(dir.File("rota.db"));
    ASSERT_TRUE(store.ok()) << store.status().message();
    JobStore& s = **store;
    StartInfo start;
    start.placement.alloc.gpus = {0};
    start.placement.gpu_uuids = {"GPU-a"};
    for (JobId* id : {&old, &ended, &running}) {
      auto submitted = s.Submit(OneGpuJob(), kT0);
      ASSERT_TRUE(submitted.ok()) << submitted.status().message();
      *id = *submitted;
      ASSERT_TRUE(s.MarkStarted(*id, start, kT0 + 10).ok());
    }
    ASSERT_TRUE(s.MarkEnded(old, JobState::kCompleted, 0, "Completed", kT0 + 100).ok());
    // Two runs of `ended` (the first one requeued): their measures add up.
    ASSERT_TRUE(s.AddJobMeasures(ended, {100, 40, 30}).ok());
    ASSERT_TRUE(s.AddJobMeasures(ended, {50, 10, 20}).ok());
    ASSERT_TRUE(s.MarkEnded(ended, JobState::kCompleted, 0, "Completed", kT0 + 1000).ok());
    ASSERT_TRUE(s.AddJobMeasures(running, {60, 60, 0}).ok());
    ASSERT_TRUE(s.AddJobMeasures(old, {1, 1, 0}).ok());
  }
  auto store = JobStore::Open(dir.File("rota.db"));
  ASSERT_TRUE(store.ok());
  auto measures = (*store)->LoadJobMeasures(kT0 + 500);
  ASSERT_TRUE(measures.ok()) << measures.status().message();
  // `old` ended before `since`; the running job is always included.
  ASSERT_EQ(measures->size(), 2u);
  EXPECT_EQ(measures->count(old), 0u);
  EXPECT_DOUBLE_EQ(measures->at(ended).measured_gpu_seconds, 150);
  EXPECT_DOUBLE_EQ(measures->at(ended).busy_gpu_seconds, 50);
  EXPECT_DOUBLE_EQ(measures->at(ended).idle_gpu_seconds, 50);
  EXPECT_DOUBLE_EQ(measures->at(running).busy_gpu_seconds, 60);
}

}  // namespace
}  // namespace measure_store_test
}  // namespace rota::store
