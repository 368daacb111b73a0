#include <gtest/gtest.h>

#include "store/job_store.h"
#include "testing/temp_dir.h"

namespace rota::store {
namespace gpu_state_test {
namespace {

constexpr Time kT0 = 1'700'000'000;

TEST(GpuState, DrainsSurviveReopeningAndEndOneKindAtATime) {
  testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  {
    auto store = JobStore::Open(dir.File("rota.db"));
    ASSERT_TRUE(store.ok()) << store.status().message();
    GpuDrain admin{"GPU-a", GpuDrain::Kind::kAdmin, "root", "fan noise", kT0};
    GpuDrain health{"GPU-a", GpuDrain::Kind::kHealth, "rotad", "GPU_IS_LOST", kT0 + 5};
    ASSERT_TRUE((*store)->SaveDrain(admin, 2).ok());
    ASSERT_TRUE((*store)->SaveDrain(health, 2).ok());
  }
  auto store = JobStore::Open(dir.File("rota.db"));
  ASSERT_TRUE(store.ok());
  auto drains = (*store)->LoadDrains();
  ASSERT_TRUE(drains.ok()) << drains.status().message();
  ASSERT_EQ(drains->size(), 2u);
  EXPECT_EQ((*drains)[0], (GpuDrain{"GPU-a", GpuDrain::Kind::kAdmin, "root", "fan noise", kT0}));
  EXPECT_EQ((*drains)[1].kind, GpuDrain::Kind::kHealth);

  ASSERT_TRUE((*store)->RemoveDrain("GPU-a", GpuDrain::Kind::kHealth, 2, "rotad", "healthy again", kT0 + 9).ok());
  drains = (*store)->LoadDrains();
  ASSERT_TRUE(drains.ok());
  ASSERT_EQ(drains->size(), 1u);
  EXPECT_EQ((*drains)[0].kind, GpuDrain::Kind::kAdmin);

  auto events = (*store)->GpuEvents("GPU-a");
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 3u);
  EXPECT_EQ((*events)[0], (GpuEvent{kT0, "GPU-a", 2, "drain", "fan noise", "root"}));
  EXPECT_EQ((*events)[1].event, "drained");
  EXPECT_EQ((*events)[2], (GpuEvent{kT0 + 9, "GPU-a", 2, "healthy", "healthy again", "rotad"}));
}

TEST(GpuState, EventsFilterByCard) {
  testing::TempDir dir;
  auto store = JobStore::Open(dir.File("rota.db"));
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE((*store)->AddGpuEvent({kT0, "GPU-a", 0, "suspect", "timeout", "rotad"}).ok());
  ASSERT_TRUE((*store)->AddGpuEvent({kT0 + 1, "GPU-b", 1, "suspect", "lost", "rotad"}).ok());
  auto a = (*store)->GpuEvents("GPU-a");
  ASSERT_TRUE(a.ok());
  ASSERT_EQ(a->size(), 1u);
  EXPECT_EQ((*a)[0].reason, "timeout");
  auto all = (*store)->GpuEvents("");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 2u);
}

}  // namespace
}  // namespace gpu_state_test
}  // namespace rota::store

namespace rota::store {
namespace gpu_state_test {
namespace {

TEST(AuditEvents, JobsBookingsAndGpusTogetherOldestFirst) {
  testing::TempDir dir;
  auto store = JobStore::Open(dir.File("rota.db"));
  ASSERT_TRUE(store.ok());
  JobRecord job;
  job.job.user = "alice";
  job.command = {"true"};
  job.cwd = "/";
  auto id = (*store)->Submit(job, kT0 + 10);
  ASSERT_TRUE(id.ok());
  ASSERT_TRUE((*store)->AddGpuEvent({kT0 + 5, "GPU-a", 0, "suspect", "lost", "rotad"}).ok());
  BookingRecord b;
  b.entry.spec.user = "bob";
  b.entry.spec.start = kT0 + kDay;
  b.entry.spec.end = kT0 + kDay + kHour;
  b.entry.state = BookingState::kConfirmed;
  ASSERT_TRUE((*store)->AddBooking(b, "bob", kT0 + 20).ok());
  auto all = (*store)->AuditEvents(kT0, 0, 100);
  ASSERT_TRUE(all.ok()) << all.status().message();
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].kind, "gpu");
  EXPECT_EQ((*all)[0].to, "suspect");
  EXPECT_EQ((*all)[1].kind, "job");
  EXPECT_EQ((*all)[1].owner, "alice");
  EXPECT_EQ((*all)[1].from, "");
  EXPECT_EQ((*all)[1].reason, "Submitted");
  EXPECT_EQ((*all)[2].kind, "booking");
  EXPECT_EQ((*all)[2].owner, "bob");
  auto only_job = (*store)->AuditEvents(0, *id, 100);
  ASSERT_TRUE(only_job.ok());
  ASSERT_EQ(only_job->size(), 1u);
  EXPECT_EQ((*only_job)[0].id, *id);
  auto newest = (*store)->AuditEvents(kT0, 0, 1);  // the limit keeps the newest
  ASSERT_TRUE(newest.ok());
  ASSERT_EQ(newest->size(), 1u);
  EXPECT_EQ((*newest)[0].kind, "booking");
  EXPECT_TRUE((*store)->AuditEvents(kT0 + 30, 0, 100)->empty());
}

}  // namespace
}  // namespace gpu_state_test
}  // namespace rota::store
