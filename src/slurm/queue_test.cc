// Lines as Slurm 22.05.8 (Debian 12's) printed them for `squeue -h -a -t all -O QueueFormat()`
// on the test cluster of ../shared/slurm-local: "exit 3", "sleep 100" cancelled by its user, a
// script killed by SIGKILL.
#include "slurm/queue.h"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <map>

#include "core/job_end.h"
#include "testing/scoped_tz.h"
#include "testing/slurm_lines.h"

namespace rota::slurm {
namespace {

std::string QueueLine(std::initializer_list<std::string_view> values) {
  return testing::SlurmLine(values, kQueueDelimiter);
}

TEST(QueueTest, FormatAsksForEachFieldWithTheDelimiter) {
  const std::string f = QueueFormat();
  EXPECT_EQ(f.substr(0, 8), std::string("JobID:0") + kQueueDelimiter);
  EXPECT_NE(f.find(std::string("exit_code:0") + kQueueDelimiter + ",NodeList:0"), std::string::npos);
  EXPECT_EQ(f.back(), kQueueDelimiter);
}

TEST(QueueTest, ReadsEveryField) {
  testing::ScopedTz utc("UTC");
  const std::string text = QueueLine({"1", "1014", "FAILED", "NonZeroExitCode", "768", "vm", "2026-12-03T13:52:00",
                                      "2026-12-03T13:52:05", "gres:gpu:2"}) +
                           QueueLine({"2", "1015", "PENDING", "Resources", "0", "", "N/A", "Unknown", "N/A"});
  StatusOr<std::vector<QueuedJob>> q = ParseQueue(text);
  ASSERT_TRUE(q.ok()) << q.status().message();
  ASSERT_EQ(q->size(), 2u);
  const QueuedJob& a = (*q)[0];
  EXPECT_EQ(a.id, "1");
  EXPECT_EQ(a.name, "");  // names are read apart (NamesFilter)
  EXPECT_EQ(a.uid, 1014u);
  EXPECT_EQ(a.state, "FAILED");
  EXPECT_EQ(a.reason, "NonZeroExitCode");
  EXPECT_EQ(a.wait_status, 768);
  EXPECT_EQ(a.nodes, "vm");
  EXPECT_EQ(a.start, 1796305920);  // 2026-12-03T13:52:00Z
  EXPECT_EQ(a.end, 1796305925);
  ASSERT_EQ(a.per_node.size(), 1u);
  EXPECT_EQ(a.per_node[0].name, "gpu");
  EXPECT_EQ(a.per_node[0].count, 2);
  const QueuedJob& b = (*q)[1];
  EXPECT_EQ(b.start, 0);
  EXPECT_EQ(b.end, 0);
  EXPECT_TRUE(b.per_node.empty());
}

// sbatch takes a name with the delimiter, or a newline, in it (seen on 22.05.8: `sbatch -J
// $'evil\x1fname'`): the queue never asks for names, and the names are asked only of Slurm's
// jobs whose name is exactly one of Rota's tags.
TEST(QueueTest, NamesAreReadApartAndOnlyRotasTags) {
  const std::string format = QueueFormat();
  EXPECT_EQ(format.find("Name"), std::string::npos) << format;
  EXPECT_EQ(format.find("Comment"), std::string::npos) << format;
  EXPECT_EQ(NamesFilter("lab", {3, 41}), "--name=lab-3,lab-41");
  // Rota's own jobs: the queue's fields, then the name.
  EXPECT_EQ(OursFormat(), format + ",Name:0" + kQueueDelimiter);
  StatusOr<std::vector<QueuedJob>> ours =
      ParseOurs(QueueLine({"7", "1014", "RUNNING", "None", "0", "vm", "N/A", "N/A", "N/A", "rota-3"}) +
                QueueLine({"5", "1014", "COMPLETED", "None", "768", "vm", "N/A", "N/A", "N/A", "rota-2"}));
  ASSERT_TRUE(ours.ok()) << ours.status().message();
  StatusOr<std::vector<QueuedJob>> q =
      ParseQueue(QueueLine({"7", "1014", "RUNNING", "None", "0", "vm", "N/A", "N/A", "N/A"}) +
                 QueueLine({"8", "1015", "RUNNING", "None", "0", "vm", "N/A", "N/A", "N/A"}));
  ASSERT_TRUE(q.ok());
  MergeOurs(*q, std::move(*ours));
  ASSERT_EQ(q->size(), 3u);
  EXPECT_EQ((*q)[0].name, "rota-3");
  EXPECT_EQ((*q)[1].name, "");  // not Rota's
  // Rota's job that is over: not among the active ones, added with its fields.
  EXPECT_EQ((*q)[2].id, "5");
  EXPECT_EQ((*q)[2].name, "rota-2");
  EXPECT_EQ((*q)[2].state, "COMPLETED");
  EXPECT_EQ((*q)[2].wait_status, 768);
  EXPECT_FALSE(ParseOurs(QueueLine({"7", "1014", "RUNNING", "None", "0", "vm", "N/A", "N/A", "N/A", ""})).ok());
  EXPECT_FALSE(ParseOurs(QueueLine({"7", "1014", "RUNNING", "None", "0", "vm", "N/A", "N/A", "N/A"})).ok());
  EXPECT_TRUE(ParseOurs("").ok());
}

// Everyone's jobs are read in the states of jobs not over only; every such state is one squeue
// knows, none of an ended job.
TEST(QueueTest, EveryonesJobsAreReadInActiveStatesOnly) {
  const std::string states = ActiveStates();
  for (const char* s : {"PENDING", "RUNNING", "SUSPENDED", "COMPLETING", "CONFIGURING", "REQUEUED"})
    EXPECT_NE(("," + states + ",").find(std::string(",") + s + ","), std::string::npos) << s;
  for (const char* s : {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "OUT_OF_MEMORY",
                        "BOOT_FAIL", "DEADLINE"})
    EXPECT_EQ(("," + states + ",").find(std::string(",") + s + ","), std::string::npos) << s;
}

TEST(QueueTest, ReadsTimesInTheLocalZone) {
  {
    testing::ScopedTz shanghai("Asia/Shanghai");
    EXPECT_EQ(*ParseSlurmTime("2026-12-03T21:52:00"), 1796305920);
  }
  testing::ScopedTz berlin("Europe/Berlin");
  EXPECT_EQ(*ParseSlurmTime("2026-12-03T14:52:00"), 1796305920);
  EXPECT_EQ(*ParseSlurmTime("2026-07-03T15:52:00"), 1783086720);  // summer time: UTC+2
  EXPECT_FALSE(ParseSlurmTime("2026-12-03 14:52:00").ok());
  EXPECT_FALSE(ParseSlurmTime("yesterday").ok());
}

TEST(QueueTest, RefusesWhatItCannotRead) {
  // A line that cannot be read fails the whole queue: a job read wrong could be a running job lost.
  EXPECT_FALSE(ParseQueue(QueueLine({"1", "nobody", "RUNNING", "None", "0", "vm", "N/A", "N/A", "N/A"})).ok());
  EXPECT_FALSE(ParseQueue(QueueLine({"1", "0", "RUNNING", "None", "zero", "vm", "N/A", "N/A", "N/A"})).ok());
  EXPECT_FALSE(ParseQueue(QueueLine({"", "0", "RUNNING", "None", "0", "vm", "N/A", "N/A", "N/A"})).ok());
  EXPECT_FALSE(ParseQueue(QueueLine({"1", "0", "RUNNING", "None", "0", "vm", "soon", "N/A", "N/A"})).ok());
  EXPECT_FALSE(ParseQueue(QueueLine({"1", "0", "RUNNING", "None", "0", "vm", "N/A", "N/A", "gpu:a:b:c:d"})).ok());
  EXPECT_FALSE(ParseQueue(QueueLine({"1", "0", "RUNNING", "None", "0"})).ok());
  EXPECT_TRUE(ParseQueue("").ok());
}

TEST(QueueTest, TagsNameRotaJobsOnly) {
  EXPECT_EQ(TagOf(kDefaultTag, 42), "rota-42");
  EXPECT_EQ(RotaJobOf(kDefaultTag, "rota-42"), 42);
  EXPECT_EQ(RotaJobOf(kDefaultTag, TagOf(kDefaultTag, 9007199254740993)), 9007199254740993);
  for (const char* other : {"rota-", "rota-0", "rota-042", "rota-4x", "rota--4", "train", "Rota-4", "xrota-4",
                            "rota-99999999999999999999999", "rota", "rotalab-4", "rota-lab-4"}) {
    EXPECT_EQ(RotaJobOf(kDefaultTag, other), 0) << other;
  }
}

// Two Rotas in front of one Slurm, each with its own tag: neither takes the other's jobs.
TEST(QueueTest, EachInstallationsTagNamesItsJobsOnly) {
  EXPECT_EQ(TagOf("lab2", 7), "lab2-7");
  EXPECT_EQ(RotaJobOf("lab2", "lab2-7"), 7);
  EXPECT_EQ(RotaJobOf("lab2", "rota-7"), 0);
  EXPECT_EQ(RotaJobOf(kDefaultTag, "lab2-7"), 0);
  EXPECT_EQ(RotaJobOf("lab", "lab2-7"), 0);
}

QueuedJob Ended(std::string state, int wait_status, std::string reason = "None") {
  QueuedJob j;
  j.id = "7";
  j.state = std::move(state);
  j.wait_status = wait_status;
  j.reason = std::move(reason);
  j.nodes = "vm";
  j.end = 1796305925;
  return j;
}

TEST(QueueTest, ActiveJobsHaveNoExitYet) {
  for (const char* s : {"PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "SUSPENDED", "REQUEUED"}) {
    EXPECT_TRUE(Active(s)) << s;
    EXPECT_FALSE(ExitOf(Ended(s, 0)).has_value()) << s;
  }
  EXPECT_FALSE(Active("COMPLETED"));
  EXPECT_FALSE(Active("running"));
}

TEST(QueueTest, ExitsAsTheLocalEngineReportsThem) {
  using K = JobExit::Kind;
  JobExit done = *ExitOf(Ended("COMPLETED", 0));
  EXPECT_EQ(done.kind, K::kExited);
  EXPECT_EQ(done.exit_code, 0);
  EXPECT_EQ(done.end_time, 1796305925);
  EXPECT_EQ(DecideJobEnd({}, done).state, JobState::kCompleted);

  JobExit three = *ExitOf(Ended("FAILED", 768, "NonZeroExitCode"));  // `exit 3`
  EXPECT_EQ(three.kind, K::kExited);
  EXPECT_EQ(three.exit_code, 3);
  EXPECT_EQ(DecideJobEnd({}, three).reason, "Failed(exit 3)");

  JobExit nine = *ExitOf(Ended("FAILED", 9, "JobLaunchFailure"));  // `kill -9 $$` in the script
  EXPECT_EQ(nine.kind, K::kSignalled);
  EXPECT_EQ(nine.signal, SIGKILL);

  JobExit never = *ExitOf(Ended("FAILED", 0, "JobLaunchFailure"));  // no script status at all
  EXPECT_EQ(never.kind, K::kStartFailed);
  EXPECT_EQ(never.reason, "Slurm could not start it on vm (JobLaunchFailure)");
  EXPECT_FALSE(never.machine_fault);
}

TEST(QueueTest, SlurmsOwnEndsSayWhy) {
  using K = JobExit::Kind;
  JobExit cancelled = *ExitOf(Ended("CANCELLED", 15));
  EXPECT_EQ(cancelled.kind, K::kSignalled);
  EXPECT_EQ(cancelled.signal, SIGTERM);
  EXPECT_EQ(DecideJobEnd({}, cancelled).reason, "Failed(signal 15: cancelled in Slurm, not through Rota)");
  // Rota's own cancel is known to rotad: the ladder says who, whatever Slurm printed.
  StopContext by_alice;
  by_alice.cancelled_by = "alice";
  EXPECT_EQ(DecideJobEnd(by_alice, cancelled).reason, "Cancelled by alice");

  JobExit oom = *ExitOf(Ended("OUT_OF_MEMORY", 0, "OutOfMemory"));
  EXPECT_EQ(oom.signal, SIGKILL);
  EXPECT_EQ(DecideJobEnd({}, oom).reason, "Failed(signal 9: out of memory (Slurm OUT_OF_MEMORY))");

  EXPECT_EQ(ExitOf(Ended("TIMEOUT", 0))->reason, "killed by Slurm at its time limit (TIMEOUT)");
  EXPECT_EQ(ExitOf(Ended("PREEMPTED", 0))->signal, SIGTERM);

  JobExit node = *ExitOf(Ended("NODE_FAIL", 0, "NodeDown"));
  EXPECT_EQ(node.kind, K::kVanished);
  EXPECT_EQ(node.reason, "its node failed in Slurm on vm (NODE_FAIL)");
  StopContext wants_requeue;
  wants_requeue.requeue = true;
  JobEnd requeued = DecideJobEnd(wants_requeue, node);
  EXPECT_EQ(requeued.state, JobState::kNodeFail);
  EXPECT_TRUE(requeued.requeue);

  JobExit odd = *ExitOf(Ended("SPECIAL_EXIT", 0, "None"));
  EXPECT_EQ(odd.kind, K::kVanished);
  EXPECT_EQ(odd.reason, "Slurm ended it as SPECIAL_EXIT on vm (None)");
}

}  // namespace
}  // namespace rota::slurm
