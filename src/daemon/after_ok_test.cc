// Tests of what --after-ok means once its jobs have ended: why a job can never start (in words
// its owner may read, another user's reasons kept private, chains named not quoted), jobs held
// out while an end is not known, Completed ends remembered (the store not read again) up to a
// bound, refused cancels said once.
#include "daemon/after_ok.h"

#include <gtest/gtest.h>

#include <map>

namespace rota::daemon {
namespace after_ok_test {
namespace {

Job Waiting(JobId id, std::vector<JobId> after_ok, std::string user = "alice") {
  Job j;
  j.id = id;
  j.user = std::move(user);
  j.after_ok = std::move(after_ok);
  return j;
}

// Ends by job id, counting the reads (the store's).
struct Ends {
  std::map<JobId, StatusOr<JobEndSeen>> ends;
  int reads = 0;
  AfterOk::EndOf Reader() {
    return [this](JobId id) -> StatusOr<JobEndSeen> {
      ++reads;
      auto it = ends.find(id);
      return it == ends.end() ? StatusOr<JobEndSeen>(NotFound("no job")) : it->second;
    };
  }
};

const AfterOk::IsActive kNoneActive = [](JobId) { return false; };

TEST(AfterOkTest, WhyAJobCanNeverStart) {
  AfterOk a;
  Ends e;
  e.ends.insert_or_assign(1, StatusOr<JobEndSeen>(JobEndSeen{true, false, "Failed(exit 3): /home/alice/run.sh", "alice"}));
  e.ends.insert_or_assign(2, StatusOr<JobEndSeen>(JobEndSeen{true, false, "Failed(exit 1): /home/bob/secret", "bob"}));
  e.ends.insert_or_assign(3, StatusOr<JobEndSeen>(JobEndSeen{true, false, "Cancelled: job 1, which it waited for (--after-ok), ended: ...", "alice"}));
  EXPECT_EQ(a.NeverSatisfied(Waiting(10, {1}), kNoneActive, e.Reader()),
            "Cancelled: job 1, which it waited for (--after-ok), ended: Failed(exit 3): /home/alice/run.sh");
  // Another user's job: how it ended is theirs.
  EXPECT_EQ(a.NeverSatisfied(Waiting(11, {2}), kNoneActive, e.Reader()),
            "Cancelled: job 2, which it waited for (--after-ok), ended without completing (it is bob's job)");
  // A chain: the job it waited for was itself cancelled for its --after-ok: named, not quoted.
  EXPECT_EQ(a.NeverSatisfied(Waiting(12, {3}), kNoneActive, e.Reader()),
            "Cancelled: job 3, which it waited for (--after-ok), ended cancelled");
}

TEST(AfterOkTest, ActiveAndCompletedJobsAreNoReason) {
  AfterOk a;
  Ends e;
  e.ends.insert_or_assign(1, StatusOr<JobEndSeen>(JobEndSeen{true, true, "Completed", "alice"}));
  const AfterOk::IsActive five_active = [](JobId id) { return id == 5; };
  EXPECT_EQ(a.NeverSatisfied(Waiting(10, {1, 5, 10}), five_active, e.Reader()), "");  // 10: itself
  EXPECT_EQ(e.reads, 1);
  EXPECT_EQ(a.NeverSatisfied(Waiting(11, {1}), five_active, e.Reader()), "");
  EXPECT_EQ(e.reads, 1);  // job 1 is known to have completed: not read again
  EXPECT_FALSE(a.held(10));
}

TEST(AfterOkTest, AnEndNotKnownHoldsTheJobOutUntilTheNextPass) {
  AfterOk a;
  Ends e;
  e.ends.insert_or_assign(1, StatusOr<JobEndSeen>(Unavailable("database is locked")));
  e.ends.insert_or_assign(2, StatusOr<JobEndSeen>(JobEndSeen{false, false, "", "alice"}));  // requeued, or its end not recorded yet
  EXPECT_EQ(a.NeverSatisfied(Waiting(10, {1}), kNoneActive, e.Reader()), "");
  EXPECT_EQ(a.NeverSatisfied(Waiting(11, {2}), kNoneActive, e.Reader()), "");
  EXPECT_TRUE(a.held(10));
  EXPECT_TRUE(a.held(11));
  a.StartPass(kNoneActive);
  EXPECT_FALSE(a.held(10));
  EXPECT_FALSE(a.held(11));
}

TEST(AfterOkTest, CompletedEndsAreRememberedUpToABound) {
  AfterOk a;
  Ends e;
  for (JobId id = 1; id <= static_cast<JobId>(AfterOk::kMetKept) + 1; ++id) {
    e.ends.insert_or_assign(id, StatusOr<JobEndSeen>(JobEndSeen{true, true, "Completed", "alice"}));
    EXPECT_EQ(a.NeverSatisfied(Waiting(100000 + id, {id}), kNoneActive, e.Reader()), "");
  }
  const int reads = e.reads;
  // The first ones were forgotten when the bound was reached: read again.
  EXPECT_EQ(a.NeverSatisfied(Waiting(999999, {1}), kNoneActive, e.Reader()), "");
  EXPECT_EQ(e.reads, reads + 1);
  // The last one is still known.
  EXPECT_EQ(a.NeverSatisfied(Waiting(999998, {static_cast<JobId>(AfterOk::kMetKept) + 1}), kNoneActive, e.Reader()), "");
  EXPECT_EQ(e.reads, reads + 1);
}

TEST(AfterOkTest, ARefusedCancelIsSaidOnceAndForgottenWhenTheJobIsGone) {
  AfterOk a;
  EXPECT_TRUE(a.Refused(7));
  EXPECT_FALSE(a.Refused(7));
  a.StartPass([](JobId id) { return id == 7; });  // still pending
  EXPECT_FALSE(a.Refused(7));
  a.StartPass(kNoneActive);  // its owner cancelled it
  EXPECT_TRUE(a.Refused(7));
  a.Cancelled(7);
  EXPECT_TRUE(a.Refused(7));
}

}  // namespace
}  // namespace after_ok_test
}  // namespace rota::daemon
