#include "slurm/job_gpus.h"

#include <gtest/gtest.h>

namespace rota::slurm {
namespace {

// `scontrol -d show job 2` of a plain `sbatch -N2 --gres=gpu:1` on two nodes of 2 GPUs, as
// 22.05.8 printed it (abridged): given alike, the nodes share a line; else a line each.
constexpr const char* kAlike = R"(JobId=1 JobName=wrap
   NumNodes=2 NumCPUs=2 NumTasks=2 CPUs/Task=1 ReqB:S:C:T=0:0:*:*
   JOB_GRES=gpu:2
     Nodes=rota-n[1-2] CPU_IDs=0 Mem=1024 GRES=gpu:1(IDX:0)
   MinCPUsNode=1 MinMemoryCPU=1G MinTmpDiskNode=0
)";
constexpr const char* kApart = R"(JobId=2 JobName=wrap
   JOB_GRES=gpu:2
     Nodes=rota-n1 CPU_IDs=1 Mem=1024 GRES=gpu:1(IDX:1)
     Nodes=rota-n2 CPU_IDs=0 Mem=1024 GRES=gpu:1(IDX:0)
   Power=
)";

TEST(GpusGivenTest, EachNodeOfAJobOverSeveralHasItsOwnIndices) {
  EXPECT_EQ(GpusGiven(kAlike, "rota-n[1-2]", 1).value(),
            (std::vector<NodeGpus>{{"rota-n1", {0}, {}}, {"rota-n2", {0}, {}}}));
  EXPECT_EQ(GpusGiven(kApart, "rota-n[1-2]", 1).value(),
            (std::vector<NodeGpus>{{"rota-n1", {1}, {}}, {"rota-n2", {0}, {}}}));
  // In the queue's order of the nodes, whatever the order of the lines.
  EXPECT_EQ(GpusGiven(kApart, "rota-n2,rota-n1", 1).value(),
            (std::vector<NodeGpus>{{"rota-n2", {0}, {}}, {"rota-n1", {1}, {}}}));
}

TEST(GpusGivenTest, OneNodesWholeGpusAndShards) {
  EXPECT_EQ(GpusGiven("     Nodes=vm CPU_IDs=0 Mem=1024 GRES=gpu:2(IDX:0-1)\n", "vm", 2).value(),
            (std::vector<NodeGpus>{{"vm", {0, 1}, {}}}));
  // Shards: the card whose shards it holds, once however many shards.
  EXPECT_EQ(GpusGiven("     Nodes=n1 CPU_IDs=2 Mem=1024 GRES=shard:c1:3(IDX:1)\n", "n1", 0, 1).value(),
            (std::vector<NodeGpus>{{"n1", {}, {1}}}));
  EXPECT_EQ(GpusGiven("     Nodes=n1 CPU_IDs=1 Mem=1024 GRES=gpu:c0:1(IDX:0),shard:c2:2(IDX:2)\n", "n1", 1, 1)
                .value(),
            (std::vector<NodeGpus>{{"n1", {0}, {2}}}));
  // A job without GPUs has no GRES part, or no line at all.
  EXPECT_EQ(GpusGiven("JobId=3 JobName=wrap\n", "vm", 0).value(), (std::vector<NodeGpus>{{"vm", {}, {}}}));
}

TEST(GpusGivenTest, ALineThatDoesNotAgreeWithTheQueueNamesNothing) {
  // A node not the job's (a made-up line in the job's name or command).
  EXPECT_FALSE(
      GpusGiven(std::string(kApart) + "     Nodes=other GRES=gpu:1(IDX:1)\n", "rota-n[1-2]", 1).ok());
  // A node of the job named twice: one of the lines is not Slurm's.
  EXPECT_FALSE(
      GpusGiven(std::string(kAlike) + "     Nodes=rota-n2 GRES=gpu:1(IDX:1)\n", "rota-n[1-2]", 1).ok());
  // Counts other than the queue's, on either node; a node without its line.
  EXPECT_FALSE(GpusGiven(kApart, "rota-n[1-2]", 2).ok());
  EXPECT_FALSE(GpusGiven("     Nodes=rota-n1 GRES=gpu:1(IDX:1)\n     Nodes=rota-n2 GRES=gpu:2(IDX:0-1)\n",
                         "rota-n[1-2]", 1)
                   .ok());
  EXPECT_FALSE(GpusGiven("     Nodes=rota-n1 GRES=gpu:1(IDX:1)\n", "rota-n[1-2]", 1).ok());
  EXPECT_FALSE(GpusGiven("     Nodes=n1 GRES=shard:c1:3(IDX:1)\n", "n1", 0, 2).ok());
  // A job not on a node yet; a node list or a line that is not one.
  EXPECT_FALSE(GpusGiven(kAlike, "", 1).ok());
  EXPECT_FALSE(GpusGiven(kAlike, "rota-n[1-", 1).ok());
  EXPECT_FALSE(GpusGiven("     Nodes=rota-n[2-1] GRES=gpu:1(IDX:0)\n", "rota-n[1-2]", 1).ok());
  EXPECT_FALSE(GpusGiven("     Nodes=vm GRES=gpu:2(IDX:0-\n", "vm", 2).ok());
  // A made-up line naming many hosts is refused before they are made (it could name millions).
  const StatusOr<std::vector<NodeGpus>> many = GpusGiven(
      std::string(kAlike) + "     Nodes=x[1-99999],y[1-99999] GRES=gpu:1(IDX:0)\n", "rota-n[1-2]", 1);
  ASSERT_FALSE(many.ok());
  EXPECT_NE(many.status().message().find("names more than 2 hosts"), std::string::npos)
      << many.status().message();
}

}  // namespace
}  // namespace rota::slurm
