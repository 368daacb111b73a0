// The job table alone (job_table.h): what the scheduler is given (pending, held out, running,
// released, withdrawn), what the last pass said of the pending jobs, sessions bound to their
// connections and let go with their jobs, the start retries' backoff, and a requeued job's fresh
// record.
#include "daemon/job_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace rota::daemon {
namespace job_table_test {
namespace {

constexpr Time kNow = 1796115600;

ActiveJob Pending(JobId id) {
  ActiveJob a;
  a.rec.job.id = id;
  a.rec.job.user = "alice";
  a.rec.job.request.gpus = 1;
  a.rec.state = store::JobState::kPending;
  return a;
}

ActiveJob Running(JobId id, int card) {
  ActiveJob a = Pending(id);
  a.rec.state = store::JobState::kRunning;
  a.rec.start_time = kNow - 600;
  a.rec.placement.alloc.gpus = {card};
  a.rec.pid = 4000 + id;
  return a;
}

std::vector<JobId> Ids(const std::vector<Job>& jobs) {
  std::vector<JobId> out;
  for (const Job& j : jobs) out.push_back(j.id);
  return out;
}

std::vector<JobId> Ids(const std::vector<RunningJob>& jobs) {
  std::vector<JobId> out;
  for (const RunningJob& j : jobs) out.push_back(j.job.id);
  return out;
}

TEST(JobTableTest, TheSchedulerIsGivenWhatMayStartWhatIsHeldOutAndWhatHoldsCards) {
  JobTable t;
  AfterOk after_ok;
  t.Add(Pending(1));
  ActiveJob retrying = Pending(2);
  retrying.retry_at = kNow + 5;
  t.Add(retrying);
  t.Add(Pending(3));
  t.Add(Running(4, 0));
  ActiveJob released = Running(5, 1);
  released.released_at = kNow - 1;  // its processes are gone: its card is free
  t.Add(released);
  t.Add(Pending(6));
  after_ok.Hold(6);  // the end of a job it waits for is not known
  // Job 3's start could not be recorded: its launch is being withdrawn, its card held.
  store::JobRecord withdrawn = t.at(3).rec;
  t.Withdraw(withdrawn, Allocation{{1}, -1, 0}, kNow);

  ClusterState st;
  t.AddTo(st, after_ok, kNow);
  EXPECT_EQ(Ids(st.pending), std::vector<JobId>{1});
  std::sort(st.held.begin(), st.held.end());
  EXPECT_EQ(st.held, (std::vector<JobId>{2, 3, 5, 6}));
  EXPECT_EQ(Ids(st.running), (std::vector<JobId>{4, 3}));  // the withdrawn launch holds its card
  EXPECT_EQ(st.running[1].kill_at, kNever);                // nothing times it out

  // Once the engine says it is gone, and its retry is due, job 3 may start again; job 2 too.
  EXPECT_TRUE(t.ForgetWithdrawn(3));
  EXPECT_FALSE(t.ForgetWithdrawn(3));
  ClusterState later;
  t.AddTo(later, after_ok, kNow + 5);
  EXPECT_EQ(Ids(later.pending), (std::vector<JobId>{1, 2, 3}));
}

TEST(JobTableTest, WhatThePassSaidOfThePendingJobsAndOfThoseHeldOut) {
  JobTable t;
  AfterOk after_ok;
  t.Add(Pending(1));
  t.Add(Pending(2));
  ActiveJob retrying = Pending(3);
  retrying.retry_at = kNow + 20;
  t.Add(retrying);
  t.Add(Pending(4));
  after_ok.Hold(4);
  PendingInfo second{2, WaitReason::kResources, kNow + 3600, false, {}};
  PendingInfo first{1, WaitReason::kPriority, kNow + 7200, false, {}};
  EXPECT_EQ(t.NoteWaiting({second, first}, after_ok, kNow), kNow + 20);  // the retry to wake for
  EXPECT_EQ(t.waiting_order(), (std::vector<JobId>{2, 1, 3, 4}));
  EXPECT_EQ(t.PositionOf(2), 1);
  EXPECT_EQ(t.PositionOf(4), 4);
  EXPECT_EQ(t.PositionOf(99), 5);
  ASSERT_NE(t.Waiting(3), nullptr);
  EXPECT_EQ(t.Waiting(3)->reason, WaitReason::kStartRetry);
  EXPECT_EQ(t.Waiting(3)->expected_start, kNow + 20);
  EXPECT_EQ(t.Waiting(4)->reason, WaitReason::kDependency);
  EXPECT_EQ(t.Waiting(4)->expected_start, kNever);
  // A job taken out leaves no note behind.
  t.Take(t.find(1));
  EXPECT_EQ(t.Waiting(1), nullptr);
  EXPECT_EQ(t.size(), 3u);
}

// A pass that lists no reasons leaves the notes to its explainer, which the first reader calls,
// once until the next such pass; an explained pass's notes are read as they are. The explainer's
// own reads take the notes as they are (no recursion).
TEST(JobTableTest, NotesOfAPassThatListedNoReasonsAreMadeWhenFirstRead) {
  JobTable t;
  AfterOk after_ok;
  t.Add(Pending(1));
  t.Add(Pending(2));
  EXPECT_TRUE(t.AnyPending());
  int explained = 0;
  t.SetExplainer([&] {
    ++explained;
    EXPECT_EQ(t.Waiting(1), nullptr);  // as they are: the unexplained pass listed none
    PendingInfo one{1, WaitReason::kResources, kNow + 60, false, {}};
    PendingInfo two{2, WaitReason::kPriority, kNow + 120, false, {}};
    t.NoteWaiting({two, one}, after_ok, kNow);
  });
  t.NoteWaiting({}, after_ok, kNow, /*explained=*/false);
  EXPECT_FALSE(t.explained());
  EXPECT_EQ(explained, 0);  // nobody asked yet
  EXPECT_EQ(t.PositionOf(2), 1);
  EXPECT_EQ(explained, 1);
  EXPECT_TRUE(t.explained());
  ASSERT_NE(t.Waiting(1), nullptr);
  EXPECT_EQ(t.Waiting(1)->reason, WaitReason::kResources);
  EXPECT_EQ(t.waiting_order(), (std::vector<JobId>{2, 1}));
  EXPECT_EQ(t.waiting().size(), 2u);
  EXPECT_EQ(explained, 1);  // made once until the next pass
  // An explained pass: its notes, no explainer.
  PendingInfo first{1, WaitReason::kPriority, kNow + 30, false, {}};
  t.NoteWaiting({first}, after_ok, kNow + 1);
  EXPECT_EQ(t.waiting_order(), (std::vector<JobId>{1}));
  EXPECT_EQ(explained, 1);
  // The next unexplained pass: made again when read.
  t.NoteWaiting({}, after_ok, kNow + 2, false);
  EXPECT_EQ(t.Waiting(2)->reason, WaitReason::kPriority);
  EXPECT_EQ(explained, 2);
  // Nothing pending: none to explain, and AnyPending says so without asking.
  t.Take(t.find(1));
  t.Take(t.find(2));
  t.NoteWaiting({}, after_ok, kNow + 3, false);
  EXPECT_FALSE(t.AnyPending());
  EXPECT_EQ(explained, 2);
}

TEST(JobTableTest, ASessionIsBoundToItsConnectionUntilItsJobIsTakenOrItLetsGo) {
  JobTable t;
  ActiveJob session = Pending(7);
  session.rec.interactive = true;
  session.session = 42;
  t.Add(session);
  EXPECT_EQ(t.SessionOf(42), 7);
  EXPECT_EQ(t.SessionOf(43), 0);
  ActiveJob taken = t.Take(t.find(7));
  EXPECT_EQ(taken.rec.job.id, 7);
  EXPECT_EQ(t.SessionOf(42), 0);
  EXPECT_TRUE(t.sessions().empty());

  t.Add(session);
  t.Unbind(42);  // the client closed: the job stays until it is cancelled or ended
  EXPECT_EQ(t.SessionOf(42), 0);
  EXPECT_EQ(t.count(7), 1u);
}

TEST(JobTableTest, FailedStartsBackOffFromFiveSecondsToFiveMinutes) {
  EXPECT_EQ(JobTable::RetryAt(0, kNow), kNow + 5);
  EXPECT_EQ(JobTable::RetryAt(1, kNow), kNow + 10);
  EXPECT_EQ(JobTable::RetryAt(5, kNow), kNow + 160);
  EXPECT_EQ(JobTable::RetryAt(6, kNow), kNow + 300);
  EXPECT_EQ(JobTable::RetryAt(1000, kNow), kNow + 300);
  JobTable t;
  EXPECT_EQ(t.StartNotRecorded(kNow), kNow + 5);  // the failures in a row of all jobs
  EXPECT_EQ(t.StartNotRecorded(kNow), kNow + 10);
  EXPECT_EQ(t.start_record_failures(), 2);
  t.StartRecorded();
  EXPECT_EQ(t.StartNotRecorded(kNow), kNow + 5);
}

TEST(JobTableTest, ARequeuedJobIsPendingAgainWithItsRunForgotten) {
  ActiveJob ended = Running(9, 1);
  ended.rec.signalled = ended.rec.preempted = true;
  ended.rec.kill_at = kNow;
  ended.rec.cgroup = "/rota/job-9";
  ended.launch_failures = 2;
  ActiveJob fresh = JobTable::Requeued(ended, /*launch_failed=*/false, kNow);
  EXPECT_EQ(fresh.rec.job.id, 9);
  EXPECT_EQ(fresh.rec.state, store::JobState::kPending);
  EXPECT_EQ(fresh.rec.start_time, 0);
  EXPECT_TRUE(fresh.rec.placement.alloc.gpus.empty());
  EXPECT_FALSE(fresh.rec.signalled || fresh.rec.preempted);
  EXPECT_EQ(fresh.rec.kill_at, kNever);
  EXPECT_EQ(fresh.rec.pid, 0);
  EXPECT_TRUE(fresh.rec.cgroup.empty());
  EXPECT_EQ(fresh.retry_at, 0);  // at once
  // A launch this machine could not make waits, longer each time.
  ActiveJob again = JobTable::Requeued(ended, /*launch_failed=*/true, kNow);
  EXPECT_EQ(again.retry_at, kNow + 20);
  EXPECT_EQ(again.launch_failures, 3);
}

TEST(JobTableTest, AJobIsAwaitedWhileAPendingJobWaitsForIt) {
  JobTable t;
  t.Add(Running(1, 0));
  ActiveJob after = Pending(2);
  after.rec.job.after = {1};
  t.Add(after);
  ActiveJob after_ok = Pending(3);
  after_ok.rec.job.after_ok = {4};
  t.Add(after_ok);
  EXPECT_TRUE(t.Awaited(1));
  EXPECT_TRUE(t.Awaited(4));   // --after-ok, the job it names not in the table
  EXPECT_FALSE(t.Awaited(2));  // nobody waits for it
  ActiveJob running = Running(5, 1);
  running.rec.job.after = {6};  // started: it waits for nothing any more
  t.Add(running);
  EXPECT_FALSE(t.Awaited(6));
  t.Take(t.find(2));
  EXPECT_FALSE(t.Awaited(1));
}

}  // namespace
}  // namespace job_table_test
}  // namespace rota::daemon
