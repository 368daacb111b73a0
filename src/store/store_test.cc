#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "store/job_store.h"
#include "testing/temp_dir.h"

namespace rota::store {
namespace store_test {
namespace {

constexpr Time kT0 = 1'700'000'000;

JobRecord MakeJob(std::string user = "alice", std::string name = "train") {
  JobRecord r;
  r.job.user = std::move(user);
  r.job.project = "vision";
  r.job.name = std::move(name);
  r.job.tier = Tier::kThesis;
  r.job.request.kind = RequestKind::kWholeGpus;
  r.job.request.gpus = 2;
  r.job.time_limit = 4 * kHour;
  r.job.after = {3, 5};
  r.job.after_ok = {4};
  r.job.signal = 10;
  r.job.grace = 300;
  r.job.requeue = true;
  r.job.host_mem_per_gpu = 40 * 1024;
  r.uid = 1001;
  r.command = {"python", "train.py", "--lr", "3e-4"};
  r.cwd = "/home/alice/proj";
  r.env = {{"PATH", "/usr/bin"}, {"HOME", "/home/alice"}};
  r.output = "/home/alice/proj/rota-%j.out";
  return r;
}

StartInfo TwoGpus() {
  StartInfo s;
  s.placement.alloc.gpus = {0, 1};
  s.placement.gpu_uuids = {"GPU-aaaa", "GPU-bbbb"};
  s.preemptible = true;
  s.pid = 4242;
  s.pgid = 4242;
  s.cgroup = "/sys/fs/cgroup/rota.slice/job-1";
  return s;
}

std::unique_ptr<JobStore> OpenOrDie(const std::string& path) {
  auto store = JobStore::Open(path);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  return store.ok() ? std::move(*store) : nullptr;
}

class JobStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    store_ = OpenOrDie(path());
    ASSERT_NE(store_, nullptr);
  }
  std::string path() const { return dir_.File("rota.db"); }
  JobId SubmitOrDie(const JobRecord& r, Time now) {
    auto id = store_->Submit(r, now);
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    return id.ok() ? *id : 0;
  }
  JobState StateOf(JobId id) { return store_->Get(id)->state; }

  testing::TempDir dir_;
  std::unique_ptr<JobStore> store_;
};

TEST_F(JobStoreTest, SubmitAndGetRoundTrip) {
  JobRecord in = MakeJob();
  JobId id = SubmitOrDie(in, kT0);
  EXPECT_EQ(id, 1);
  auto out = store_->Get(id);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->job.id, id);
  EXPECT_EQ(out->job.user, "alice");
  EXPECT_EQ(out->job.project, "vision");
  EXPECT_EQ(out->job.name, "train");
  EXPECT_EQ(out->job.tier, Tier::kThesis);
  EXPECT_EQ(out->job.request.kind, RequestKind::kWholeGpus);
  EXPECT_EQ(out->job.request.gpus, 2);
  EXPECT_EQ(out->job.time_limit, 4 * kHour);
  EXPECT_EQ(out->job.submit_time, kT0);
  EXPECT_EQ(out->job.after, (std::vector<JobId>{3, 5}));
  EXPECT_EQ(out->job.after_ok, (std::vector<JobId>{4}));
  EXPECT_EQ(out->job.grace, 300);
  EXPECT_TRUE(out->job.requeue);
  EXPECT_EQ(out->job.host_mem_per_gpu, 40 * 1024);
  EXPECT_EQ(out->uid, 1001);
  EXPECT_EQ(out->command, in.command);
  EXPECT_EQ(out->cwd, in.cwd);
  EXPECT_EQ(out->env, in.env);
  EXPECT_EQ(out->output, in.output);
  EXPECT_EQ(out->state, JobState::kPending);
  EXPECT_EQ(out->start_time, 0);
  EXPECT_EQ(out->kill_at, kNever);
  EXPECT_EQ(out->exit_code, std::nullopt);

  // MIG and memory-share requests keep their fields too.
  JobRecord mig = MakeJob();
  mig.job.request = {RequestKind::kMig, 1, 0, "3g.40gb"};
  EXPECT_EQ(store_->Get(SubmitOrDie(mig, kT0))->job.request.mig_profile, "3g.40gb");
  JobRecord share = MakeJob();
  share.job.request = {RequestKind::kMemShare, 1, 20 * 1024, ""};
  auto got = store_->Get(SubmitOrDie(share, kT0));
  EXPECT_EQ(got->job.request.kind, RequestKind::kMemShare);
  EXPECT_EQ(got->job.request.memory, 20 * 1024);
}

TEST_F(JobStoreTest, SubmitRejectsIncompleteJobs) {
  JobRecord r = MakeJob();
  r.command.clear();
  EXPECT_EQ(store_->Submit(r, kT0).status().code(), StatusCode::kInvalidArgument);
  r = MakeJob("");
  EXPECT_EQ(store_->Submit(r, kT0).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(JobStoreTest, SubmitManyIsAllOrNothingAndKeepsOrder) {
  JobRecord a = MakeJob("alice");
  JobRecord b = MakeJob("bob");
  JobRecord bad = MakeJob("carol");
  bad.command.clear();
  EXPECT_EQ(store_->SubmitMany({a, bad, b}, kT0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(store_->LoadActive()->empty());

  auto ids = store_->SubmitMany({a, b}, kT0);
  ASSERT_TRUE(ids.ok()) << ids.status().ToString();
  ASSERT_EQ(ids->size(), 2u);
  EXPECT_LT((*ids)[0], (*ids)[1]);
  EXPECT_EQ(store_->Get((*ids)[0])->job.user, "alice");
  EXPECT_EQ(store_->Get((*ids)[1])->job.user, "bob");
  EXPECT_EQ(store_->Events((*ids)[1])->size(), 1u);
}

TEST_F(JobStoreTest, UserRequestsAreFullySyncedBookkeepingIsNot) {
  auto sync = [&] { return *store_->db().QueryText("PRAGMA synchronous"); };
  JobId id = SubmitOrDie(MakeJob(), kT0);
  EXPECT_EQ(sync(), "2");  // FULL: the submission survives a power loss
  ASSERT_TRUE(store_->MarkStarted(id, TwoGpus(), kT0 + 1).ok());
  EXPECT_EQ(sync(), "1");  // NORMAL: survives a crash of rotad
  ASSERT_TRUE(store_->MarkEnded(id, JobState::kCompleted, 0, "Completed", kT0 + 2).ok());
  EXPECT_EQ(sync(), "1");
  JobId other = SubmitOrDie(MakeJob(), kT0 + 3);
  ASSERT_TRUE(store_->Cancel(other, "alice", kT0 + 4).ok());
  EXPECT_EQ(sync(), "2");
  // Bookkeeping written with NORMAL is still there after reopening.
  store_.reset();
  store_ = OpenOrDie(path());
  EXPECT_EQ(StateOf(id), JobState::kCompleted);
}

TEST_F(JobStoreTest, CancelRequestOfARunningJobIsRecordedAndFoundAgain) {
  JobId id = SubmitOrDie(MakeJob(), kT0);
  EXPECT_EQ(store_->MarkCancelRequested(id, "bob", kT0).code(), StatusCode::kFailedPrecondition);  // pending
  ASSERT_TRUE(store_->MarkStarted(id, TwoGpus(), kT0 + 1).ok());
  EXPECT_EQ(*store_->CancelRequestedBy(id), "");
  ASSERT_TRUE(store_->MarkCancelRequested(id, "carol", kT0 + 2).ok());
  EXPECT_EQ(StateOf(id), JobState::kRunning);
  store_.reset();
  store_ = OpenOrDie(path());
  EXPECT_EQ(*store_->CancelRequestedBy(id), "carol");
  EXPECT_EQ(store_->Events(id)->back().actor, "carol");
  // A requeue spends the request.
  ASSERT_TRUE(store_->Requeue(id, "NodeFail (requeued)", kT0 + 3).ok());
  EXPECT_EQ(*store_->CancelRequestedBy(id), "");
}

TEST_F(JobStoreTest, NotesGoIntoTheHistoryOfPendingAndRunningJobsInTheirState) {
  JobId id = SubmitOrDie(MakeJob(), kT0);
  ASSERT_TRUE(store_->NoteJob(id, "Not started: no room; tried again in 5 s", "rotad", kT0 + 1).ok());
  EXPECT_EQ(StateOf(id), JobState::kPending);
  ASSERT_TRUE(store_->MarkStarted(id, TwoGpus(), kT0 + 2).ok());
  ASSERT_TRUE(store_->NoteJob(id, "Idle for 15m", "rotad", kT0 + 3).ok());
  std::vector<JobEvent> events = *store_->Events(id);
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[1].from, JobState::kPending);
  EXPECT_EQ(events[1].to, JobState::kPending);
  EXPECT_EQ(events[1].reason, "Not started: no room; tried again in 5 s");
  EXPECT_EQ(events[3].from, JobState::kRunning);
  EXPECT_EQ(events[3].to, JobState::kRunning);
  ASSERT_TRUE(store_->MarkEnded(id, JobState::kCompleted, 0, "Completed", kT0 + 4).ok());
  EXPECT_EQ(store_->NoteJob(id, "late", "rotad", kT0 + 5).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(store_->Events(id)->size(), 5u);
}

TEST_F(JobStoreTest, InteractiveFlagRoundTrips) {
  JobRecord r = MakeJob();
  r.interactive = true;
  EXPECT_TRUE(store_->Get(SubmitOrDie(r, kT0))->interactive);
  EXPECT_FALSE(store_->Get(SubmitOrDie(MakeJob(), kT0))->interactive);
}

TEST_F(JobStoreTest, Utf8NamesRoundTrip) {
  JobRecord r = MakeJob("张伟", "训练模型-第一轮");
  r.job.project = "视觉组";
  r.cwd = "/home/张伟/实验";
  r.env["LANG"] = "zh_CN.UTF-8";
  r.env["备注"] = "中文";
  JobId id = SubmitOrDie(r, kT0);
  store_.reset();
  store_ = OpenOrDie(path());
  auto out = store_->Get(id);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->job.user, "张伟");
  EXPECT_EQ(out->job.name, "训练模型-第一轮");
  EXPECT_EQ(out->job.project, "视觉组");
  EXPECT_EQ(out->cwd, "/home/张伟/实验");
  EXPECT_EQ(out->env.at("备注"), "中文");
  EXPECT_EQ(store_->Events(id)->front().actor, "张伟");
}

TEST_F(JobStoreTest, ReopenKeepsData) {
  JobId a = SubmitOrDie(MakeJob(), kT0);
  JobId b = SubmitOrDie(MakeJob("bob"), kT0 + 1);
  ASSERT_TRUE(store_->MarkStarted(a, TwoGpus(), kT0 + 10).ok());
  store_.reset();
  store_ = OpenOrDie(path());
  EXPECT_EQ(StateOf(a), JobState::kRunning);
  EXPECT_EQ(StateOf(b), JobState::kPending);
  // Ids keep growing (AUTOINCREMENT never reuses one).
  EXPECT_EQ(SubmitOrDie(MakeJob(), kT0 + 20), 3);
}

TEST_F(JobStoreTest, StartSignalEndRecordsEverything) {
  JobId id = SubmitOrDie(MakeJob(), kT0);
  ASSERT_TRUE(store_->MarkStarted(id, TwoGpus(), kT0 + 5).ok());
  auto r = store_->Get(id);
  EXPECT_EQ(r->state, JobState::kRunning);
  EXPECT_EQ(r->start_time, kT0 + 5);
  EXPECT_EQ(r->placement, TwoGpus().placement);
  EXPECT_TRUE(r->preemptible);
  EXPECT_EQ(r->pid, 4242);
  EXPECT_EQ(r->pgid, 4242);
  EXPECT_EQ(r->cgroup, TwoGpus().cgroup);
  EXPECT_FALSE(r->signalled);

  ASSERT_TRUE(store_->MarkSignalled(id, kT0 + 400, /*preempted=*/true, kT0 + 100).ok());
  r = store_->Get(id);
  EXPECT_TRUE(r->signalled);
  EXPECT_TRUE(r->preempted);
  EXPECT_EQ(r->kill_at, kT0 + 400);
  RunningJob rj = r->ToRunningJob();
  EXPECT_EQ(rj.alloc.gpus, (std::vector<int>{0, 1}));
  EXPECT_EQ(rj.kill_at, kT0 + 400);
  EXPECT_EQ(rj.job.id, id);

  ASSERT_TRUE(store_->MarkEnded(id, JobState::kFailed, 3, "Failed(exit 3)", kT0 + 200).ok());
  r = store_->Get(id);
  EXPECT_EQ(r->state, JobState::kFailed);
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_EQ(r->end_reason, "Failed(exit 3)");
  EXPECT_EQ(r->end_time, kT0 + 200);
}

TEST_F(JobStoreTest, InvalidTransitionsAreRefusedAndChangeNothing) {
  JobId pending = SubmitOrDie(MakeJob(), kT0);
  JobId running = SubmitOrDie(MakeJob(), kT0);
  JobId done = SubmitOrDie(MakeJob(), kT0);
  ASSERT_TRUE(store_->MarkStarted(running, TwoGpus(), kT0 + 1).ok());
  ASSERT_TRUE(store_->MarkStarted(done, TwoGpus(), kT0 + 1).ok());
  ASSERT_TRUE(store_->MarkEnded(done, JobState::kCompleted, 0, "Completed", kT0 + 2).ok());

  auto code = [](const Status& s) { return s.code(); };
  constexpr auto kPre = StatusCode::kFailedPrecondition;
  // Pending jobs cannot be signalled, ended or requeued.
  EXPECT_EQ(code(store_->MarkSignalled(pending, kT0 + 9, false, kT0 + 3)), kPre);
  EXPECT_EQ(code(store_->MarkEnded(pending, JobState::kCompleted, 0, "Completed", kT0 + 3)), kPre);
  EXPECT_EQ(code(store_->Requeue(pending, "x", kT0 + 3)), kPre);
  // Running jobs cannot be started again or cancelled directly.
  EXPECT_EQ(code(store_->MarkStarted(running, TwoGpus(), kT0 + 3)), kPre);
  EXPECT_EQ(code(store_->Cancel(running, "alice", kT0 + 3)), kPre);
  // Final jobs accept nothing.
  EXPECT_EQ(code(store_->MarkStarted(done, TwoGpus(), kT0 + 3)), kPre);
  EXPECT_EQ(code(store_->MarkSignalled(done, kT0 + 9, false, kT0 + 3)), kPre);
  EXPECT_EQ(code(store_->MarkEnded(done, JobState::kFailed, 1, "Failed(exit 1)", kT0 + 3)), kPre);
  EXPECT_EQ(code(store_->Requeue(done, "x", kT0 + 3)), kPre);
  EXPECT_EQ(code(store_->Cancel(done, "alice", kT0 + 3)), kPre);
  Status msg = store_->Cancel(done, "alice", kT0 + 3);
  EXPECT_EQ(msg.message(), "job 3 is completed, not pending: cannot cancel it");
  // Ending into a non-final state is a caller bug.
  EXPECT_EQ(code(store_->MarkEnded(running, JobState::kPending, 0, "", kT0 + 3)),
            StatusCode::kInvalidArgument);
  // Allocation and UUID lists must agree.
  StartInfo bad = TwoGpus();
  bad.placement.gpu_uuids.pop_back();
  EXPECT_EQ(code(store_->MarkStarted(pending, bad, kT0 + 3)), StatusCode::kInvalidArgument);
  // Unknown ids.
  constexpr auto kNf = StatusCode::kNotFound;
  EXPECT_EQ(code(store_->MarkStarted(99, TwoGpus(), kT0)), kNf);
  EXPECT_EQ(code(store_->MarkSignalled(99, kT0, false, kT0)), kNf);
  EXPECT_EQ(code(store_->MarkEnded(99, JobState::kCompleted, 0, "", kT0)), kNf);
  EXPECT_EQ(code(store_->Requeue(99, "", kT0)), kNf);
  EXPECT_EQ(code(store_->Cancel(99, "alice", kT0)), kNf);
  EXPECT_EQ(store_->Get(99).status().code(), kNf);
  EXPECT_EQ(store_->Events(99).status().code(), kNf);

  // Nothing changed, and no event was written by the refused calls.
  EXPECT_EQ(StateOf(pending), JobState::kPending);
  EXPECT_EQ(StateOf(running), JobState::kRunning);
  EXPECT_EQ(StateOf(done), JobState::kCompleted);
  EXPECT_EQ(store_->Events(pending)->size(), 1u);
  EXPECT_EQ(store_->Events(running)->size(), 2u);
  EXPECT_EQ(store_->Events(done)->size(), 3u);
}

TEST_F(JobStoreTest, EveryFinalStateFromRunning) {
  for (JobState s : {JobState::kCompleted, JobState::kFailed, JobState::kCancelled, JobState::kTimeout,
                     JobState::kPreempted, JobState::kNodeFail}) {
    JobId id = SubmitOrDie(MakeJob(), kT0);
    ASSERT_TRUE(store_->MarkStarted(id, TwoGpus(), kT0 + 1).ok());
    ASSERT_TRUE(store_->MarkEnded(id, s, std::nullopt, JobStateName(s), kT0 + 2).ok()) << JobStateName(s);
    EXPECT_EQ(StateOf(id), s);
    EXPECT_TRUE(IsFinal(s));
    EXPECT_EQ(ParseJobState(JobStateName(s)), s);
  }
}

TEST_F(JobStoreTest, ASignalsHistorySaysWhenTheKillComesAsASpan) {
  JobId id = SubmitOrDie(MakeJob(), kT0);
  ASSERT_TRUE(store_->MarkStarted(id, TwoGpus(), kT0 + 10).ok());
  // A job without a grace: its signal and its kill are due at once.
  ASSERT_TRUE(store_->MarkSignalled(id, kT0 + 70, false, kT0 + 70).ok());
  auto events = store_->Events(id);
  ASSERT_TRUE(events.ok()) << events.status().ToString();
  EXPECT_EQ(events->back().reason, "Signalled for time limit, killed now if still running");
}

TEST_F(JobStoreTest, EventsInOrderWithReasons) {
  JobId id = SubmitOrDie(MakeJob(), kT0);
  ASSERT_TRUE(store_->MarkStarted(id, TwoGpus(), kT0 + 10).ok());
  ASSERT_TRUE(store_->MarkSignalled(id, kT0 + 320, true, kT0 + 20).ok());
  ASSERT_TRUE(store_->Requeue(id, "Preempted by job 42 (requeued)", kT0 + 30).ok());
  ASSERT_TRUE(store_->MarkStarted(id, TwoGpus(), kT0 + 40).ok());
  ASSERT_TRUE(
      store_->MarkEnded(id, JobState::kCancelled, std::nullopt, "Cancelled by bob", kT0 + 50, "bob").ok());
  JobId other = SubmitOrDie(MakeJob("carol"), kT0 + 60);
  ASSERT_TRUE(store_->Cancel(other, "carol", kT0 + 70).ok());

  using S = JobState;
  std::vector<JobEvent> want = {
      {id, kT0, std::nullopt, S::kPending, "Submitted", "alice"},
      {id, kT0 + 10, S::kPending, S::kRunning, "Started", "rotad"},
      {id, kT0 + 20, S::kRunning, S::kRunning, "Signalled for preemption, killed in 5m if still running",
       "rotad"},
      {id, kT0 + 30, S::kRunning, S::kPending, "Preempted by job 42 (requeued)", "rotad"},
      {id, kT0 + 40, S::kPending, S::kRunning, "Started", "rotad"},
      {id, kT0 + 50, S::kRunning, S::kCancelled, "Cancelled by bob", "bob"},
  };
  auto events = store_->Events(id);
  ASSERT_TRUE(events.ok()) << events.status().ToString();
  EXPECT_EQ(*events, want);
  auto other_events = store_->Events(other);
  ASSERT_EQ(other_events->size(), 2u);
  EXPECT_EQ((*other_events)[1],
            (JobEvent{other, kT0 + 70, S::kPending, S::kCancelled, "Cancelled by carol", "carol"}));
  EXPECT_EQ(store_->Get(other)->end_reason, "Cancelled by carol");
  EXPECT_EQ(store_->Get(other)->end_time, kT0 + 70);
}

TEST_F(JobStoreTest, WhereAClusterRunsAJobIsKeptWhileItRuns) {
  JobId id = SubmitOrDie(MakeJob(), kT0);
  EXPECT_EQ(store_->SetEngineJob(id, "Slurm job 7", kT0).code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(store_->MarkStarted(id, TwoGpus(), kT0 + 1).ok());
  ASSERT_TRUE(store_->SetEngineJob(id, "Slurm job 7", kT0 + 2).ok());
  EXPECT_EQ(store_->Get(id)->engine_job, "Slurm job 7");
  EXPECT_EQ(store_->Events(id)->back().reason, "Runs as Slurm job 7");
  // Requeued: the next run is another Slurm job.
  ASSERT_TRUE(store_->Requeue(id, "NodeFail: its node failed in Slurm (requeued)", kT0 + 3).ok());
  EXPECT_EQ(store_->Get(id)->engine_job, "");
  ASSERT_TRUE(store_->MarkStarted(id, TwoGpus(), kT0 + 4).ok());
  ASSERT_TRUE(store_->SetEngineJob(id, "Slurm job 9", kT0 + 5).ok());
  ASSERT_TRUE(store_->MarkEnded(id, JobState::kCompleted, 0, "Completed", kT0 + 6).ok());
  EXPECT_EQ(store_->Get(id)->engine_job, "Slurm job 9");  // an ended job keeps where it ran
}

TEST_F(JobStoreTest, AFirstForecastIsKeptSilentlyUntilARequeue) {
  JobId id = SubmitOrDie(MakeJob(), kT0);
  ASSERT_TRUE(store_->SetForecast(id, kT0 + 1, kT0 + 600).ok());
  EXPECT_EQ(store_->Get(id)->forecast_at, kT0 + 1);
  EXPECT_EQ(store_->Get(id)->forecast_start, kT0 + 600);
  EXPECT_EQ(store_->Events(id)->size(), 1u);  // "Submitted" only: a forecast is no event
  ASSERT_TRUE(store_->MarkStarted(id, TwoGpus(), kT0 + 500).ok());
  // Running: no new forecast is written over the one its start is measured against.
  ASSERT_TRUE(store_->SetForecast(id, kT0 + 2, kT0 + 9).ok());
  EXPECT_EQ(store_->Get(id)->forecast_start, kT0 + 600);
  // Requeued: the next wait is foreseen anew.
  ASSERT_TRUE(store_->Requeue(id, "Preempted by job 9 (requeued)", kT0 + 700).ok());
  EXPECT_EQ(store_->Get(id)->forecast_at, 0);
  EXPECT_EQ(store_->Get(id)->forecast_start, 0);
  ASSERT_TRUE(store_->MarkStarted(id, TwoGpus(), kT0 + 800).ok());
  ASSERT_TRUE(store_->MarkEnded(id, JobState::kCompleted, 0, "Completed", kT0 + 900).ok());
  EXPECT_EQ(store_->History(kT0)->at(0).forecast_at, 0);
}

TEST_F(JobStoreTest, APromiseIsKeptSilentlyAndAcrossARequeue) {
  JobId id = SubmitOrDie(MakeJob(), kT0);
  EXPECT_EQ(store_->Get(id)->job.promise, kNever);  // none yet
  ASSERT_TRUE(store_->SetPromise(id, kT0 + 3600).ok());
  EXPECT_EQ(store_->Get(id)->job.promise, kT0 + 3600);
  EXPECT_EQ(store_->Events(id)->size(), 1u);  // "Submitted" only: a promise is no event
  ASSERT_TRUE(store_->MarkStarted(id, TwoGpus(), kT0 + 500).ok());
  ASSERT_TRUE(store_->SetPromise(id, kT0 + 9).ok());  // running: left alone
  EXPECT_EQ(store_->Get(id)->job.promise, kT0 + 3600);
  // Requeued: the promise is the job's bound, and it stays.
  ASSERT_TRUE(store_->Requeue(id, "Preempted by job 9 (requeued)", kT0 + 700).ok());
  EXPECT_EQ(store_->Get(id)->job.promise, kT0 + 3600);
}

TEST_F(JobStoreTest, AContainerJobKeepsItsImage) {
  JobRecord r = MakeJob();
  r.image = "docker.io/pytorch/pytorch:2.1";
  JobId id = SubmitOrDie(r, kT0);
  JobId plain = SubmitOrDie(MakeJob(), kT0);
  EXPECT_EQ(store_->Get(id)->image, "docker.io/pytorch/pytorch:2.1");
  EXPECT_EQ(store_->Get(plain)->image, "");
  ASSERT_TRUE(store_->MarkStarted(id, TwoGpus(), kT0 + 1).ok());
  ASSERT_TRUE(store_->Requeue(id, "Preempted by job 9 (requeued)", kT0 + 2).ok());
  EXPECT_EQ(store_->Get(id)->image, "docker.io/pytorch/pytorch:2.1");  // the next run is in it too
}

TEST_F(JobStoreTest, RequeueKeepsSubmitTimeAndClearsRun) {
  JobId id = SubmitOrDie(MakeJob(), kT0);
  ASSERT_TRUE(store_->MarkStarted(id, TwoGpus(), kT0 + 100).ok());
  ASSERT_TRUE(store_->MarkSignalled(id, kT0 + 500, true, kT0 + 200).ok());
  ASSERT_TRUE(store_->Requeue(id, "Preempted by job 9 (requeued)", kT0 + 500).ok());
  auto r = store_->Get(id);
  EXPECT_EQ(r->state, JobState::kPending);
  EXPECT_EQ(r->job.submit_time, kT0);
  EXPECT_EQ(r->start_time, 0);
  EXPECT_EQ(r->placement, Placement{});
  EXPECT_FALSE(r->signalled);
  EXPECT_FALSE(r->preempted);
  EXPECT_FALSE(r->preemptible);
  EXPECT_EQ(r->kill_at, kNever);
  EXPECT_EQ(r->pid, 0);
  EXPECT_EQ(r->cgroup, "");
  // It can run again.
  ASSERT_TRUE(store_->MarkStarted(id, TwoGpus(), kT0 + 600).ok());
  EXPECT_EQ(store_->Get(id)->start_time, kT0 + 600);
}

TEST_F(JobStoreTest, LoadActiveAfterCrashAndHistory) {
  JobId p1 = SubmitOrDie(MakeJob(), kT0);
  JobId r1 = SubmitOrDie(MakeJob(), kT0 + 1);
  JobId done = SubmitOrDie(MakeJob(), kT0 + 2);
  JobId cancelled = SubmitOrDie(MakeJob(), kT0 + 3);
  JobId p2 = SubmitOrDie(MakeJob("bob"), kT0 + 4);
  ASSERT_TRUE(store_->MarkStarted(r1, TwoGpus(), kT0 + 10).ok());
  ASSERT_TRUE(store_->MarkStarted(done, TwoGpus(), kT0 + 10).ok());
  ASSERT_TRUE(store_->MarkEnded(done, JobState::kCompleted, 0, "Completed", kT0 + 100).ok());
  ASSERT_TRUE(store_->Cancel(cancelled, "alice", kT0 + 50).ok());

  // "Crash": a second connection reads the file while the first was never closed cleanly (the
  // WAL is not checkpointed); then the first one is dropped.
  auto reopened = OpenOrDie(path());
  ASSERT_NE(reopened, nullptr);
  auto active = reopened->LoadActive();
  ASSERT_TRUE(active.ok()) << active.status().ToString();
  ASSERT_EQ(active->size(), 3u);
  EXPECT_EQ((*active)[0].job.id, p1);
  EXPECT_EQ((*active)[1].job.id, r1);
  EXPECT_EQ((*active)[1].state, JobState::kRunning);
  EXPECT_EQ((*active)[1].placement.gpu_uuids, TwoGpus().placement.gpu_uuids);
  EXPECT_EQ((*active)[1].pid, 4242);
  EXPECT_EQ((*active)[2].job.id, p2);

  auto history = reopened->History(kT0);
  ASSERT_TRUE(history.ok());
  ASSERT_EQ(history->size(), 2u);
  // An ended job keeps no environment (it may hold secrets); an active one keeps its own.
  EXPECT_TRUE((*history)[0].env.empty());
  EXPECT_TRUE((*history)[1].env.empty());
  EXPECT_EQ((*active)[0].env, MakeJob().env);
  EXPECT_EQ((*history)[0].job.id, cancelled);  // ended first
  EXPECT_EQ((*history)[1].job.id, done);
  EXPECT_EQ(reopened->History(kT0 + 60)->size(), 1u);
  EXPECT_EQ(reopened->History(kT0 + 101)->size(), 0u);
}

TEST_F(JobStoreTest, HistoryInPagesByEndTimeThenId) {
  // Five ended jobs, two of them at the same second, one of bob's.
  std::vector<JobId> ids;
  for (int i = 0; i < 5; ++i) {
    JobRecord r = MakeJob(i == 2 ? "bob" : "alice");
    r.uid = i == 2 ? 1002 : 1001;
    ids.push_back(SubmitOrDie(r, kT0 + i));
  }
  const Time ends[] = {kT0 + 40, kT0 + 10, kT0 + 20, kT0 + 20, kT0 + 30};
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(store_->Cancel(ids[static_cast<size_t>(i)], "alice", ends[i]).ok());
  auto page = [&](std::optional<std::int64_t> uid, std::pair<Time, JobId> after, int limit) {
    auto p = store_->HistoryPage(kT0, uid, after, limit);
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    std::vector<JobId> got;
    for (const JobRecord& r : p->jobs) got.push_back(r.job.id);
    return std::make_pair(got, p->more);
  };
  // Everyone's, two at a time: (10,1) (20,2) | (20,3) (30,4) | (40,0).
  EXPECT_EQ(page(std::nullopt, {0, 0}, 2), std::make_pair(std::vector<JobId>{ids[1], ids[2]}, true));
  EXPECT_EQ(page(std::nullopt, {kT0 + 20, ids[2]}, 2), std::make_pair(std::vector<JobId>{ids[3], ids[4]}, true));
  EXPECT_EQ(page(std::nullopt, {kT0 + 30, ids[4]}, 2), std::make_pair(std::vector<JobId>{ids[0]}, false));
  // One user's: bob's job is not among alice's.
  EXPECT_EQ(page(1001, {0, 0}, 10), std::make_pair(std::vector<JobId>{ids[1], ids[3], ids[4], ids[0]}, false));
  EXPECT_EQ(page(1002, {0, 0}, 1), std::make_pair(std::vector<JobId>{ids[2]}, false));
  // Exactly a page: no more.
  EXPECT_EQ(page(std::nullopt, {0, 0}, 5).second, false);
}

TEST_F(JobStoreTest, QuotaNoticesRoundTripAndTheLastWeekWins) {
  ASSERT_TRUE(store_->SaveQuotaNotice("alice", kT0, 80).ok());
  ASSERT_TRUE(store_->SaveQuotaNotice("张伟", kT0, 100).ok());
  ASSERT_TRUE(store_->SaveQuotaNotice("alice", kT0 + 7 * 86400, 100).ok());  // a later week
  EXPECT_FALSE(store_->SaveQuotaNotice("bob", kT0, 50).ok());                 // not a level
  store_.reset();
  store_ = OpenOrDie(path());
  auto told = store_->LoadQuotaNotices();
  ASSERT_TRUE(told.ok()) << told.status().ToString();
  EXPECT_EQ(*told, (std::map<std::string, std::pair<Time, int>>{{"alice", {kT0 + 7 * 86400, 100}},
                                                                 {"张伟", {kT0, 100}}}));
}

// A run outside Rota is recorded once by its cluster job and start, whatever restarts: the same
// run seen end again is not new; another run of the same job (requeued: a new start) is.
TEST_F(JobStoreTest, OutsideRunsAreRecordedOnceAndReadBackByTheirEnd) {
  const OutsideRun a{"4711", "张伟", 2, kT0, kT0 + 3600};
  const OutsideRun again{"4711", "张伟", 3, kT0, kT0 + 7200};  // same job and start: already there
  const OutsideRun requeued{"4711", "张伟", 2, kT0 + 8000, kT0 + 9000};
  const OutsideRun old{"12", "bob", 1, kT0 - 86400, kT0 - 80000};
  for (const OutsideRun* r : {&a, &old}) {
    auto added = store_->AddOutsideRun(*r);
    ASSERT_TRUE(added.ok()) << added.status().ToString();
    EXPECT_TRUE(*added);
  }
  store_.reset();
  store_ = OpenOrDie(path());
  auto added = store_->AddOutsideRun(again);
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  EXPECT_FALSE(*added);
  added = store_->AddOutsideRun(requeued);
  ASSERT_TRUE(added.ok() && *added);
  auto since = store_->OutsideRunsSince(kT0);
  ASSERT_TRUE(since.ok()) << since.status().ToString();
  EXPECT_EQ(*since, (std::vector<OutsideRun>{a, requeued}));  // the first kept as it was; bob's ended before
  auto all = store_->OutsideRunsSince(0);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 3u);
}

// Up to when the ended runs outside Rota were charged: unsaid at first, then the last one said,
// across a reopen.
TEST_F(JobStoreTest, TheTimeOutsideRunsWereChargedUntilIsKept) {
  auto until = store_->OutsideSeenUntil();
  ASSERT_TRUE(until.ok()) << until.status().ToString();
  EXPECT_FALSE(until->has_value());
  ASSERT_TRUE(store_->SetOutsideSeenUntil(kT0).ok());
  ASSERT_TRUE(store_->SetOutsideSeenUntil(kT0 + 600).ok());
  store_.reset();
  store_ = OpenOrDie(path());
  until = store_->OutsideSeenUntil();
  ASSERT_TRUE(until.ok() && until->has_value());
  EXPECT_EQ(**until, kT0 + 600);
}

TEST_F(JobStoreTest, UsageRoundTrip) {
  Usage a{1234.5, kT0, 3600.25, 100, kT0 - 86400};
  Usage b{99, kT0 + 1, 0, 0, kT0 - 86400};
  ASSERT_TRUE(store_->SaveUsage(AccountKind::kUser, "alice", a).ok());
  ASSERT_TRUE(store_->SaveUsage(AccountKind::kProject, "alice", b).ok());  // same name, other kind
  UsageMaps all;
  all.users["张伟"] = b;
  all.projects["vision"] = a;
  ASSERT_TRUE(store_->SaveAllUsage(all).ok());
  const Usage original_a = a;
  a.decayed_gpu_seconds = 2000;  // overwrite
  ASSERT_TRUE(store_->SaveUsage(AccountKind::kUser, "alice", a).ok());

  store_.reset();
  store_ = OpenOrDie(path());
  auto u = store_->LoadUsage();
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  ASSERT_EQ(u->users.size(), 2u);
  ASSERT_EQ(u->projects.size(), 2u);
  auto same = [](const Usage& x, const Usage& y) {
    return x.decayed_gpu_seconds == y.decayed_gpu_seconds && x.as_of == y.as_of &&
           x.week_gpu_seconds == y.week_gpu_seconds && x.pool_gpu_seconds == y.pool_gpu_seconds &&
           x.week_start == y.week_start;
  };
  EXPECT_TRUE(same(u->users.at("alice"), a));
  EXPECT_TRUE(same(u->users.at("张伟"), b));
  EXPECT_TRUE(same(u->projects.at("alice"), b));
  EXPECT_TRUE(same(u->projects.at("vision"), original_a));
  // Shaped for ClusterState.
  ClusterState state;
  state.user_usage = u->users;
  state.project_usage = u->projects;
  EXPECT_EQ(state.user_usage.size(), 2u);
}

TEST_F(JobStoreTest, NewerSchemaIsRefusedOnOpen) {
  ASSERT_TRUE(store_->db().Exec("UPDATE meta SET value = '99' WHERE key = 'schema_version'").ok());
  store_.reset();
  auto s = JobStore::Open(path());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.status().message().find("schema version 99"), std::string::npos) << s.status().ToString();
}

TEST_F(JobStoreTest, DiskFullFailsCleanlyAndKeepsAcknowledgedJobs) {
  std::vector<JobId> acked;
  for (int i = 0; i < 5; ++i) acked.push_back(SubmitOrDie(MakeJob(), kT0 + i));
  // Cap the file at its current size: the next writes that need a new page fail with SQLITE_FULL.
  std::string pages = *store_->db().QueryText("PRAGMA page_count");
  ASSERT_TRUE(store_->db().Exec("PRAGMA max_page_count = " + pages).ok());
  JobRecord big = MakeJob();
  big.env["BLOB"] = std::string(8192, 'x');  // each submission needs fresh pages
  Status failure;
  for (int i = 0; i < 50 && failure.ok(); ++i) {
    auto id = store_->Submit(big, kT0 + 100 + i);
    if (id.ok()) {
      acked.push_back(*id);
    } else {
      failure = id.status();
    }
  }
  ASSERT_FALSE(failure.ok()) << "max_page_count never stopped a write";
  EXPECT_EQ(failure.code(), StatusCode::kResourceExhausted) << failure.ToString();
  EXPECT_NE(failure.message().find("full"), std::string::npos) << failure.ToString();
  // A transition that fits in existing pages still works; the store stays usable.
  EXPECT_TRUE(store_->Cancel(acked[0], "alice", kT0 + 200).ok());

  store_.reset();
  store_ = OpenOrDie(path());
  auto active = store_->LoadActive();
  ASSERT_TRUE(active.ok());
  std::vector<JobId> ids;
  for (const JobRecord& r : *active) ids.push_back(r.job.id);
  std::vector<JobId> want(acked.begin() + 1, acked.end());
  EXPECT_EQ(ids, want);
  for (JobId id : acked) EXPECT_FALSE(store_->Events(id)->empty());
  EXPECT_EQ(*store_->db().QueryText("PRAGMA integrity_check"), "ok");
  // Submissions work again once there is room (max_page_count is per connection).
  EXPECT_TRUE(store_->Submit(big, kT0 + 300).ok());
}

TEST_F(JobStoreTest, ReadOnlyDatabaseFailsCleanly) {
  JobId id = SubmitOrDie(MakeJob(), kT0);
  ASSERT_TRUE(store_->db().Exec("PRAGMA query_only = ON").ok());
  auto s = store_->Submit(MakeJob(), kT0 + 1);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kUnavailable) << s.status().ToString();
  EXPECT_NE(s.status().message().find("readonly"), std::string::npos) << s.status().ToString();
  EXPECT_EQ(store_->Cancel(id, "alice", kT0 + 2).code(), StatusCode::kUnavailable);
  ASSERT_TRUE(store_->db().Exec("PRAGMA query_only = OFF").ok());
  EXPECT_EQ(StateOf(id), JobState::kPending);
  EXPECT_EQ(store_->Events(id)->size(), 1u);
  EXPECT_EQ(SubmitOrDie(MakeJob(), kT0 + 3), id + 1);
}

// A child process submits jobs and writes each acknowledged id to a pipe; it is SIGKILLed
// mid-way. Every id it acknowledged must be in the database, exactly once.
TEST(StoreDurabilityTest, AcknowledgedSubmissionsSurviveKill9) {
  testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.File("rota.db");
  { ASSERT_NE(OpenOrDie(path), nullptr); }  // create and migrate before forking
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  constexpr int kJobs = 100000;  // far more than it can submit before the kill
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(fds[0]);
    auto store = JobStore::Open(path);
    if (!store.ok()) _exit(2);
    for (int i = 0; i < kJobs; ++i) {
      auto id = (*store)->Submit(MakeJob("user" + std::to_string(i)), kT0 + i);
      if (!id.ok()) _exit(3);
      std::string line = std::to_string(*id) + "\n";
      if (write(fds[1], line.data(), line.size()) != static_cast<ssize_t>(line.size())) _exit(4);
    }
    _exit(0);
  }
  close(fds[1]);
  FILE* in = fdopen(fds[0], "r");
  ASSERT_NE(in, nullptr);
  std::vector<JobId> acked;
  long long id = 0;
  while (acked.size() < 40 && fscanf(in, "%lld", &id) == 1) acked.push_back(id);
  kill(child, SIGKILL);
  while (fscanf(in, "%lld", &id) == 1) acked.push_back(id);  // what it acknowledged before dying
  fclose(in);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the child exited on its own with " << WEXITSTATUS(status);
  ASSERT_GE(acked.size(), 40u);

  auto store = OpenOrDie(path);
  ASSERT_NE(store, nullptr);
  auto active = store->LoadActive();
  ASSERT_TRUE(active.ok()) << active.status().ToString();
  std::set<JobId> stored;
  for (const JobRecord& r : *active) {
    EXPECT_TRUE(stored.insert(r.job.id).second) << "duplicate id " << r.job.id;
    EXPECT_EQ(r.job.user, "user" + std::to_string(r.job.id - 1));
  }
  for (JobId a : acked) EXPECT_TRUE(stored.count(a)) << "acknowledged job " << a << " lost";
  // At most the one submission in flight at the kill may be stored without an acknowledgement.
  EXPECT_LE(stored.size(), acked.size() + 1);
  EXPECT_EQ(*store->db().QueryText("PRAGMA integrity_check"), "ok");
}

}  // namespace
}  // namespace store_test
}  // namespace rota::store
