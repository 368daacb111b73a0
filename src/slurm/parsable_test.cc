// What Slurm's tools print, read back: the lines below were captured from Slurm 22.05.8 (Debian
// 12's slurm-wlm) on a one-node cluster with four GPUs (../shared/slurm-local), plus the typed and
// shard forms Slurm's documentation gives for other clusters.
#include "slurm/parsable.h"

#include <gtest/gtest.h>

namespace rota::slurm {
namespace {

TEST(SlurmVersionTest, UpstreamAndDebianSpellings) {
  StatusOr<Version> debian = ParseVersion("slurm-wlm 22.05.8\n");
  ASSERT_TRUE(debian.ok()) << debian.status().message();
  EXPECT_EQ(debian->major, 22);
  EXPECT_EQ(debian->minor, 5);
  EXPECT_EQ(debian->micro, 8);
  EXPECT_EQ(debian->ToString(), "22.05.8");
  EXPECT_TRUE(debian->AtLeast(22, 5));
  EXPECT_FALSE(debian->AtLeast(23, 11));
  StatusOr<Version> upstream = ParseVersion("slurm 24.05.1");
  ASSERT_TRUE(upstream.ok());
  EXPECT_TRUE(upstream->AtLeast(23, 11));
  EXPECT_EQ(ParseVersion("slurm 23.11").value().ToString(), "23.11.0");
  for (const char* bad : {"", "22.05.8", "torque 6.1.2", "slurm x.05.8", "slurm 22.05.8.1", "slurm -1.2"}) {
    EXPECT_FALSE(ParseVersion(bad).ok()) << bad;
  }
}

TEST(SlurmRecordsTest, EachValueEndsWithTheDelimiterAndCountsMustMatch) {
  // sinfo -h -N -O "NodeHost:0|,StateLong:0|,Gres:0|,GresUsed:0|,Reason:0|"
  StatusOr<std::vector<std::vector<std::string>>> nodes =
      SplitRecords("vm|mixed|gpu:4|gpu:3|none|\nnode2|down*|gpu:a100:2(S:0)||Not responding|\n\n", '|', 5);
  ASSERT_TRUE(nodes.ok()) << nodes.status().message();
  ASSERT_EQ(nodes->size(), 2u);
  EXPECT_EQ((*nodes)[0], (std::vector<std::string>{"vm", "mixed", "gpu:4", "gpu:3", "none"}));
  EXPECT_EQ((*nodes)[1][3], "");  // an empty value keeps its place
  EXPECT_EQ((*nodes)[1][4], "Not responding");
  // Without the final delimiter, the same.
  EXPECT_EQ(SplitRecords("1|root|R\r\n", '|', 3).value(),
            (std::vector<std::vector<std::string>>{{"1", "root", "R"}}));
  // A reason with the delimiter in it cannot be read: refused, saying what came.
  const Status wrong = SplitRecords("vm|drain|gpu:4|gpu:0|fan|noise|\n", '|', 5).status();
  EXPECT_FALSE(wrong.ok());
  EXPECT_NE(wrong.message().find("printed 6 values where 5"), std::string::npos) << wrong.message();
  EXPECT_TRUE(SplitRecords("", '|', 3).value().empty());
}

TEST(SlurmIndexTest, RangesAndLists) {
  EXPECT_EQ(ParseIndexRanges("0-1").value(), (std::vector<int>{0, 1}));
  EXPECT_EQ(ParseIndexRanges("0-1,3,5-6").value(), (std::vector<int>{0, 1, 3, 5, 6}));
  EXPECT_EQ(ParseIndexRanges("7").value(), std::vector<int>{7});
  EXPECT_TRUE(ParseIndexRanges("").value().empty());
  for (const char* bad : {"1-0", "a", "0-", "-1", "0,,1", "0-1-2", "0-99999"}) {
    EXPECT_FALSE(ParseIndexRanges(bad).ok()) << bad;
  }
}

TEST(SlurmGresTest, TheFormsTheToolsPrint) {
  EXPECT_EQ(ParseGresList("gpu:4").value(), (std::vector<Gres>{{"gpu", "", 4, {}}}));
  EXPECT_EQ(ParseGresList("gres:gpu:2").value(),
            (std::vector<Gres>{{"gpu", "", 2, {}}}));  // squeue tres-per-node
  EXPECT_EQ(ParseGresList("gpu:a100:2(IDX:0-1)").value(), (std::vector<Gres>{{"gpu", "a100", 2, {0, 1}}}));
  // A type none of whose GPUs is used, as 22.05.8's GresUsed writes it.
  EXPECT_EQ(ParseGresList("gpu:a100:0(IDX:N/A),gpu:t4:1(IDX:2)").value(),
            (std::vector<Gres>{{"gpu", "a100", 0, {}}, {"gpu", "t4", 1, {2}}}));
  EXPECT_EQ(ParseGresList("gpu:4(S:0-1)").value(),
            (std::vector<Gres>{{"gpu", "", 4, {}}}));  // sockets, not cards
  EXPECT_EQ(ParseGresList("gpu:a100").value(), (std::vector<Gres>{{"gpu", "a100", 1, {}}}));
  EXPECT_EQ(ParseGresList("gpu:a100:1(IDX:3),shard:a100:8(0/8,0/8)").value(),
            (std::vector<Gres>{{"gpu", "a100", 1, {3}}, {"shard", "a100", 8, {}}}));
  EXPECT_EQ(ParseGresList("gpu:1g.10gb:2(IDX:0,2)").value(),
            (std::vector<Gres>{{"gpu", "1g.10gb", 2, {0, 2}}}));
  for (const char* none : {"", "(null)", "N/A", "  "})
    EXPECT_TRUE(ParseGresList(none).value().empty()) << none;
  for (const char* bad : {"gpu:a100:x", "gpu:4(IDX:0-1", ":4", "gpu:a:b:4", "gpu:2(IDX:1-0)"}) {
    EXPECT_FALSE(ParseGresList(bad).ok()) << bad;
  }
}

TEST(SlurmJobDetailTest, TheGpusEachNodeGaveAJob) {
  // scontrol show job -d 1, as 22.05.8 printed it (abridged).
  const char* one = R"(JobId=1 JobName=rota-17
   JobState=RUNNING Reason=None Dependency=(null)
   Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0
   NumNodes=1 NumCPUs=1 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:*
   JOB_GRES=gpu:2
     Nodes=vm CPU_IDs=0 Mem=1024 GRES=gpu:2(IDX:0-1)
   Comment=rota:17 
)";
  EXPECT_EQ(ParseJobNodeGres(one).value(), (std::vector<NodeGres>{{"vm", {0, 1}, {}}}));
  const char* two = R"(JobId=9 JobName=x
   NumNodes=2 NumCPUs=2
     Nodes=n1 CPU_IDs=0 Mem=0 GRES=gpu:a100:1(IDX:3)
     Nodes=n2 CPU_IDs=0-1 Mem=0 GRES=
)";
  EXPECT_EQ(ParseJobNodeGres(two).value(), (std::vector<NodeGres>{{"n1", {3}, {}}, {"n2", {}, {}}}));
  // Cards of their own types (22.05.8's lines): whole ones, and one card's shards apart.
  EXPECT_EQ(ParseJobNodeGres("     Nodes=n1 CPU_IDs=1 Mem=1024 GRES=gpu:c0:1(IDX:0),gpu:c3:1(IDX:3)\n").value(),
            (std::vector<NodeGres>{{"n1", {0, 3}, {}}}));
  EXPECT_EQ(ParseJobNodeGres("     Nodes=n1 CPU_IDs=2 Mem=1024 GRES=shard:c1:3(IDX:1)\n").value(),
            (std::vector<NodeGres>{{"n1", {}, {1}}}));
  EXPECT_TRUE(
      ParseJobNodeGres("JobId=3 JobName=wrap\n   JobState=FAILED Reason=NonZeroExitCode\n").value().empty());
  EXPECT_FALSE(ParseJobNodeGres("     Nodes=vm GRES=gpu:2(IDX:0-\n").ok());
}

TEST(SlurmConfigTest, ASettingOfShowConfig) {
  const std::string config =
      "Configuration data as of 2026-12-03T23:41:02\n"
      "AccountingStorageType   = accounting_storage/none\n"
      "MinJobAgeX              = 9 sec\n"
      "MinJobAge               = 300 sec\n"
      "MaxJobCount             = 10000\n";
  EXPECT_EQ(ConfigValue(config, "MinJobAge"), "300 sec");  // not MinJobAgeX's
  EXPECT_EQ(ConfigValue(config, "AccountingStorageType"), "accounting_storage/none");
  EXPECT_EQ(ConfigValue(config, "Nothing"), "");
  EXPECT_EQ(*ConfigSeconds("300 sec"), 300);
  EXPECT_EQ(*ConfigSeconds("0 sec"), 0);
  EXPECT_EQ(*ConfigSeconds("2"), 2);
  for (const char* bad : {"", " sec", "-1 sec", "5 min", "1e3 sec", "300 secs"}) {
    EXPECT_FALSE(ConfigSeconds(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace rota::slurm
