#include <gtest/gtest.h>

#include "store/job_store.h"
#include "store/test_dir.h"

namespace rota::store {
namespace {

constexpr Time kT0 = 1'700'000'000;

TEST(GpuState, DrainsSurviveReopeningAndEndOneKindAtATime) {
  TestDir dir;
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
  TestDir dir;
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
}  // namespace rota::store
