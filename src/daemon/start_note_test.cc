#include "daemon/start_note.h"

#include <gtest/gtest.h>

namespace rota::daemon {
namespace start_note_test {
namespace {

TEST(StartNoteTest, RoundTripsEverythingAStartRecords) {
  StartNote note;
  note.time = 1'790'000'123;
  note.start.placement.alloc.gpus = {2};
  note.start.placement.alloc.mig = 1;
  note.start.placement.alloc.memory = 0;
  note.start.placement.gpu_uuids = {"GPU-2"};
  note.start.placement.mig_uuid = "MIG-2-1";
  note.start.preemptible = true;
  note.start.from_pool = true;
  note.start.reason = "Started on GPU 2 (preemptible)";
  StatusOr<StartNote> back = StartNoteFromJson(StartNoteToJson(note));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->time, note.time);
  EXPECT_EQ(back->start.placement, note.start.placement);
  EXPECT_TRUE(back->start.preemptible);
  EXPECT_TRUE(back->start.from_pool);
  EXPECT_EQ(back->start.reason, note.start.reason);

  note.start.placement = {};
  note.start.placement.alloc.gpus = {0, 3};
  note.start.placement.alloc.memory = 20480;
  note.start.placement.gpu_uuids = {"GPU-0", "GPU-3"};
  note.start.preemptible = false;
  back = StartNoteFromJson(StartNoteToJson(note));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->start.placement, note.start.placement);
  EXPECT_FALSE(back->start.preemptible);
}

TEST(StartNoteTest, MalformedNotesAreRefused) {
  EXPECT_EQ(StartNoteFromJson("").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(StartNoteFromJson("{\"time\":1}").status().code(), StatusCode::kInvalidArgument);
  StartNote note;
  note.start.placement.alloc.gpus = {0, 1};
  note.start.placement.gpu_uuids = {"GPU-0"};
  StatusOr<StartNote> back = StartNoteFromJson(StartNoteToJson(note));
  ASSERT_FALSE(back.ok());
  EXPECT_NE(back.status().message().find("differ in length"), std::string::npos);
}

}  // namespace
}  // namespace start_note_test
}  // namespace rota::daemon
