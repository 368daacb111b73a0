// Lines as Slurm 22.05.8 (Debian 12's) printed them for `sacct -P -n -X -a --delimiter=<d> -o
// <fields>` on a test cluster with slurmdbd and MariaDB: "exit 3", a job cancelled by root, one
// killed by SIGKILL, one that never started.
#include "slurm/accounting.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>

#include "core/job_end.h"
#include "testing/scoped_tz.h"

namespace rota::slurm {
namespace {

// sacct -P: values joined by the delimiter, none after the last.
std::string Line(std::initializer_list<std::string_view> values) {
  std::string out;
  for (std::string_view v : values) {
    if (!out.empty()) out += kAccountingDelimiter;
    out += v;
  }
  return out + "\n";
}

TEST(AccountingTest, AsksForTheJobsRunsSinceItsLaunchInTheLocalZone) {
  testing::ScopedTz tz("Asia/Shanghai");
  const std::vector<JobId> ids = {42};
  const std::vector<std::string> args = AccountingArgs("lab", ids, 1'796'256'000);  // 2026-12-03T00:00:00Z
  auto has = [&](const std::string& a) { return std::find(args.begin(), args.end(), a) != args.end(); };
  EXPECT_TRUE(has("--name=lab-42"));
  EXPECT_TRUE(has("-X"));   // allocations, not steps
  EXPECT_TRUE(has("-a"));   // every user's: rotad asks for its users' jobs
  EXPECT_TRUE(has("-P"));   // parsable, no trailing delimiter
  EXPECT_TRUE(has(std::string("--delimiter=") + kAccountingDelimiter));
  const auto s = std::find(args.begin(), args.end(), "-S");
  ASSERT_NE(s, args.end());
  ASSERT_NE(s + 1, args.end());
  EXPECT_EQ(*(s + 1), "2026-12-03T08:00:00");
  const auto o = std::find(args.begin(), args.end(), "-o");
  ASSERT_NE(o + 1, args.end());
  EXPECT_EQ((o + 1)->substr((o + 1)->size() - 6), ",JobID");
}

TEST(AccountingTest, AsksForManyJobsInOneCallUpToABatch) {
  std::vector<JobId> ids;
  for (JobId id = 1; id <= static_cast<JobId>(kAccountingBatch) + 10; ++id) ids.push_back(id);
  const std::vector<std::string> args = AccountingArgs("rota", std::span(ids).first(3), 0);
  EXPECT_NE(std::find(args.begin(), args.end(), "--name=rota-1,rota-2,rota-3"), args.end());
  const std::vector<std::string> all = AccountingArgs("rota", ids, 0);
  const auto names = std::find_if(all.begin(), all.end(), [](const std::string& a) { return a.rfind("--name=", 0) == 0; });
  ASSERT_NE(names, all.end());
  EXPECT_EQ(std::count(names->begin(), names->end(), ','), static_cast<long>(kAccountingBatch) - 1);
  EXPECT_LT(names->size(), 128u * 1024);  // one argument's limit
}

TEST(AccountingTest, ReadsEndsAsTheQueueDoes) {
  testing::ScopedTz utc("UTC");
  const std::string text =
      Line({"rota-1", "1014", "FAILED", "NonZeroExitCode", "3:0", "rota-n1", "2026-12-03T13:52:00",
            "2026-12-03T13:52:05", "7"}) +
      Line({"rota-2", "0", "CANCELLED by 0", "None", "0:0", "rota-n1", "2026-12-03T13:52:00",
            "2026-12-03T13:52:09", "8"}) +
      Line({"rota-3", "1014", "FAILED", "JobLaunchFailure", "0:9", "rota-n1", "2026-12-03T13:52:00",
            "2026-12-03T13:52:01", "9"}) +
      Line({"rota-4", "1014", "CANCELLED by 1014", "None", "0:0", "None assigned", "None",
            "2026-12-03T13:53:00", "10"});
  StatusOr<std::vector<QueuedJob>> q = ParseAccounting(text);
  ASSERT_TRUE(q.ok()) << q.status().message();
  ASSERT_EQ(q->size(), 4u);
  const QueuedJob& a = (*q)[0];
  EXPECT_EQ(a.id, "7");
  EXPECT_EQ(a.name, "rota-1");
  EXPECT_EQ(a.uid, 1014u);
  EXPECT_EQ(a.nodes, "rota-n1");
  EXPECT_EQ(a.start, 1'796'305'920);
  EXPECT_EQ(a.end, 1'796'305'925);
  JobExit three = *ExitOf(a);
  EXPECT_EQ(three.kind, JobExit::Kind::kExited);
  EXPECT_EQ(three.exit_code, 3);
  EXPECT_EQ(three.end_time, a.end);
  EXPECT_EQ(DecideJobEnd({}, three).reason, "Failed(exit 3)");

  EXPECT_EQ((*q)[1].state, "CANCELLED");
  EXPECT_EQ(DecideJobEnd({}, *ExitOf((*q)[1])).reason,
            "Failed(signal 15: cancelled in Slurm by uid 0, not through Rota)");

  JobExit nine = *ExitOf((*q)[2]);
  EXPECT_EQ(nine.kind, JobExit::Kind::kSignalled);
  EXPECT_EQ(nine.signal, SIGKILL);

  EXPECT_EQ((*q)[3].nodes, "");  // never started
  EXPECT_EQ((*q)[3].start, 0);
}

TEST(AccountingTest, ALineThatCannotBeReadFailsItAll) {
  const std::string good = Line({"rota-1", "0", "COMPLETED", "None", "0:0", "vm", "None", "None", "1"});
  for (const std::string& bad :
       {Line({"rota-1", "x", "COMPLETED", "None", "0:0", "vm", "None", "None", "1"}),
        Line({"rota-1", "0", "COMPLETED", "None", "768", "vm", "None", "None", "1"}),   // a wait status
        Line({"rota-1", "0", "COMPLETED", "None", "0:300", "vm", "None", "None", "1"}),  // no such signal
        Line({"rota-1", "0", "COMPLETED", "None", "-1:0", "vm", "None", "None", "1"}),
        Line({"rota-1", "0", "", "None", "0:0", "vm", "None", "None", "1"}),
        Line({"rota-1", "0", "COMPLETED", "None", "0:0", "vm", "yesterday", "None", "1"}),
        Line({"rota-1", "0", "COMPLETED", "None", "0:0", "vm", "None", "None"})}) {
    EXPECT_FALSE(ParseAccounting(good + bad).ok()) << bad;
  }
  EXPECT_TRUE(ParseAccounting(good).ok());
  EXPECT_TRUE(ParseAccounting("").ok());  // nothing recorded: no entries, not an error
}

// Everyone's jobs of a window, as 22.05.8 printed them with AccountingStorageTRES=gres/gpu,gres/shard
// (the first line captured; the typed and shard ones as Slurm writes typed TRES).
TEST(AccountingTest, ReadsEveryonesJobsOfAWindowWithTheirGpusAndShards) {
  testing::ScopedTz tz("UTC");
  const std::vector<std::string> args = WindowArgs(1'796'256'000, 1'796'259'600);
  auto at = [&](const std::string& flag) {
    auto it = std::find(args.begin(), args.end(), flag);
    return it == args.end() || it + 1 == args.end() ? std::string() : *(it + 1);
  };
  EXPECT_EQ(at("-S"), "2026-12-03T00:00:00");
  EXPECT_EQ(at("-E"), "2026-12-03T01:00:00");
  EXPECT_NE(std::find(args.begin(), args.end(), "--duplicates"), args.end());  // each run of a requeued job
  EXPECT_EQ(at("-o").find("JobName"), std::string::npos);  // no names: any bytes may be in one
  EXPECT_NE(std::find(args.begin(), args.end(), "-a"), args.end());
  const std::string text =
      Line({"1002", "COMPLETED", "rota-n1", "2026-12-07T07:42:24", "2026-12-07T07:42:25",
            "billing=1,cpu=1,gres/gpu=2,mem=1G,node=1", "1"}) +
      Line({"1003", "CANCELLED by 0", "n[1-2]", "2026-12-07T07:00:00", "2026-12-07T08:00:00",
            "billing=4,cpu=4,gres/gpu=4,gres/gpu:card0=2,gres/gpu:1g.10gb=2,node=2", "7"}) +
      Line({"1004", "FAILED", "rota-n1", "2026-12-07T07:00:00", "2026-12-07T07:30:00",
            "billing=1,cpu=1,gres/shard=3,gres/shard:card1=3,node=1", "8"}) +
      Line({"1005", "RUNNING", "rota-n1", "2026-12-07T07:00:00", "Unknown", "billing=1,cpu=1,gres/shard=2,node=1",
            "9"}) +
      Line({"1006", "CANCELLED by 1006", "None assigned", "None", "2026-12-07T07:10:00", "billing=1,cpu=1,node=1",
            "10"}) +
      Line({"1007", "COMPLETED", "rota-n1", "2026-12-07T07:00:00", "2026-12-07T07:20:00",
            "billing=1,cpu=1,gres/gpu=1,gres/gpu:a100_1g.10gb=1,node=1", "12"}) +
      // A job Slurm requeued: its first run, then its latest (one job id, two lines).
      Line({"1002", "REQUEUED", "rota-n1", "2026-12-07T08:00:00", "2026-12-07T08:00:04",
            "billing=1,cpu=1,gres/gpu=1,node=1", "13"}) +
      Line({"1002", "COMPLETED", "rota-n1", "2026-12-07T08:00:06", "2026-12-07T08:00:09",
            "billing=1,cpu=1,gres/gpu=1,node=1", "13"});
  StatusOr<std::vector<AccountedUse>> uses = ParseWindow(text);
  ASSERT_TRUE(uses.ok()) << uses.status().message();
  ASSERT_EQ(uses->size(), 8u);
  const AccountedUse& a = (*uses)[0];
  EXPECT_EQ(a.id, "1");
  EXPECT_EQ(a.uid, 1002u);
  EXPECT_EQ(a.state, "COMPLETED");
  EXPECT_EQ(a.nodes, "rota-n1");
  EXPECT_EQ(a.end - a.start, 1);
  EXPECT_EQ(a.gpus, 2);
  EXPECT_TRUE(a.shards.empty());
  EXPECT_EQ((*uses)[1].state, "CANCELLED");
  EXPECT_EQ((*uses)[1].gpus, 2);  // typed counts, the slices apart
  EXPECT_EQ((*uses)[1].slices, (std::vector<std::pair<std::string, int>>{{"1g.10gb", 2}}));
  EXPECT_TRUE(a.slices.empty());
  EXPECT_EQ((*uses)[5].gpus, 0);  // a slice alone: no whole GPU
  EXPECT_EQ((*uses)[5].slices, (std::vector<std::pair<std::string, int>>{{"a100_1g.10gb", 1}}));
  EXPECT_EQ((*uses)[6].state, "REQUEUED");
  EXPECT_EQ((*uses)[6].id, (*uses)[7].id);
  EXPECT_EQ((*uses)[6].end - (*uses)[6].start, 4);
  EXPECT_EQ((*uses)[7].end - (*uses)[7].start, 3);
  EXPECT_EQ((*uses)[2].gpus, 0);
  EXPECT_EQ((*uses)[2].shards, (std::vector<std::pair<std::string, int>>{{"card1", 3}}));
  EXPECT_EQ((*uses)[3].shards, (std::vector<std::pair<std::string, int>>{{"", 2}}));  // untyped only
  EXPECT_EQ((*uses)[3].end, 0);  // still running
  EXPECT_EQ((*uses)[4].nodes, "");  // never ran
  EXPECT_EQ((*uses)[4].start, 0);
  // A line that cannot be read fails it all.
  EXPECT_FALSE(ParseWindow(text + Line({"x", "COMPLETED", "n1", "None", "None", "node=1", "11"})).ok());
  EXPECT_FALSE(ParseWindow(text + Line({"1", "COMPLETED", "n1", "None", "None", "gres/gpu=two", "11"})).ok());
  EXPECT_FALSE(ParseWindow(text + Line({"1", "COMPLETED", "n1", "None", "None", "node=1"})).ok());
  EXPECT_TRUE(ParseWindow("").ok());
}

TEST(AccountingTest, NoSlurmdbdIsToldFromAFailureToReachIt) {
  EXPECT_TRUE(AccountingDisabled("Slurm accounting storage is disabled\n"));
  EXPECT_FALSE(AccountingDisabled(
      "sacct: error: slurm_persist_conn_open_without_init: failed to open persistent connection to "
      "host:localhost:6819: Connection refused"));
}

TEST(AccountingTest, EveryRunOfRequeuedJobsIsAskedByTheirIds) {
  const std::vector<std::string> ids = {"17", "23"};
  std::vector<std::string> args = RunsArgs(ids);
  auto at = std::find(args.begin(), args.end(), "-j");
  ASSERT_NE(at, args.end());
  ASSERT_NE(at + 1, args.end());
  EXPECT_EQ(*(at + 1), "17,23");
  EXPECT_NE(std::find(args.begin(), args.end(), "--duplicates"), args.end());
  EXPECT_EQ(std::find(args.begin(), args.end(), "-S"), args.end());  // no window: by id alone
  std::vector<std::string> many;
  for (size_t i = 0; i < kAccountingBatch + 5; ++i) many.push_back(std::to_string(i + 1));
  args = RunsArgs(many);
  at = std::find(args.begin(), args.end(), "-j");
  ASSERT_NE(at + 1, args.end());
  EXPECT_EQ(static_cast<size_t>(std::count(at[1].begin(), at[1].end(), ',')), kAccountingBatch - 1);
}

// `scontrol show config` as 22.05.8 prints it (the lines around cut away): Slurm adds the base
// TRES to what AccountingStorageTRES sets.
TEST(AccountingTest, SettingsThatKeepRunsOutsideRotaFromBeingChargedAreSaid) {
  auto config = [](const std::string& type, const std::string& tres) {
    return "AccountingStorageHost   = localhost\nAccountingStorageTRES   = " + tres +
           "\nAccountingStorageType   = " + type + "\nAccountingStorageUser   = N/A\n";
  };
  const std::string base = "cpu,mem,energy,node,billing,fs/disk,vmem,pages";
  EXPECT_EQ(AccountingGap(config("accounting_storage/slurmdbd", base + ",gres/gpu,gres/shard")), "");
  EXPECT_EQ(AccountingGap(config("accounting_storage/slurmdbd", base + ",gres/gpu:a100")), "");
  const std::string no_gpus = AccountingGap(config("accounting_storage/slurmdbd", base));
  EXPECT_NE(no_gpus.find("AccountingStorageTRES has no gres/gpu"), std::string::npos) << no_gpus;
  // A TRES whose name only starts like it is not it.
  EXPECT_NE(AccountingGap(config("accounting_storage/slurmdbd", base + ",gres/gpumem")), "");
  const std::string none = AccountingGap(config("accounting_storage/none", base));
  EXPECT_NE(none.find("Slurm keeps no accounting"), std::string::npos) << none;
  EXPECT_EQ(AccountingGap(""), "");  // not read: nothing said
}

}  // namespace
}  // namespace rota::slurm
