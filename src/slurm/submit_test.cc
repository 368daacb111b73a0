#include "slurm/submit.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>

namespace rota::slurm {
namespace {

BatchJob Job() {
  BatchJob j;
  j.id = 42;
  j.argv = {"python3", "train.py", "--lr", "0.1"};
  j.cwd = "/home/alice/exp";
  j.env = {{"PATH", "/usr/bin:/bin"}, {"HOME", "/home/alice"}};
  j.output = "/home/alice/exp/rota-42.out";
  return j;
}

bool Has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::string Wrap(const Submission& s) {
  for (const std::string& a : s.argv) {
    if (a.rfind("--wrap=", 0) == 0) return a.substr(7);
  }
  return "";
}

TEST(SubmitTest, AsksSlurmForWhatTheCoreChose) {
  BatchJob j = Job();
  j.node = "gpu2";
  j.gpus = 2;
  j.memory_bytes = 3 * 1024 * 1024 + 1;  // rounded up to whole MiB
  j.time_limit = 3600;
  j.signal = SIGUSR1;
  j.grace = 120;
  SubmitConfig c;
  c.sbatch = "/usr/bin/sbatch";
  c.partition = "gpu";
  c.account = "lab";
  Submission s = BuildSubmission(j, c);
  EXPECT_EQ(s.argv[0], "/usr/bin/sbatch");
  EXPECT_EQ(s.argv[1], "--parsable");
  for (const char* want : {"--job-name=rota-42", "--partition=gpu", "--account=lab", "--nodelist=gpu2",
                           "--nodes=1", "--ntasks=1", "--gres=gpu:2", "--mem=4M", "--time=62",
                           "--signal=B:USR1@120", "--no-requeue", "--output=/home/alice/exp/rota-42.out",
                           "--open-mode=append", "--chdir=/home/alice/exp", "--export=ALL"}) {
    EXPECT_TRUE(Has(s.argv, want)) << want;
  }
  EXPECT_EQ(Wrap(s), "exec 'python3' 'train.py' '--lr' '0.1'");
}

TEST(SubmitTest, TheOutputIsNamedAsRotaNamesItNotAsSlurmsPattern) {
  // Slurm reads --output as a pattern: "%u" would be the user, "%%" is one '%'.
  BatchJob j = Job();
  j.output = "/home/alice/run-%u-50%.log";
  EXPECT_TRUE(Has(BuildSubmission(j, SubmitConfig{}).argv, "--output=/home/alice/run-%%u-50%%.log"));
  // A backslash makes Slurm drop every backslash and read no pattern: no name says it.
  EXPECT_EQ(SlurmCannotName("/home/alice/run.log"), "");
  EXPECT_NE(SlurmCannotName("/home/alice/a\\b.log").find("drops every backslash"), std::string::npos);
}

TEST(SubmitTest, LeavesOutWhatWasNotAskedFor) {
  Submission s = BuildSubmission(Job(), SubmitConfig{});
  for (const std::string& a : s.argv) {
    for (const char* absent :
         {"--partition", "--account", "--nodelist", "--gres", "--mem", "--time", "--signal"}) {
      EXPECT_NE(a.rfind(absent, 0), 0u) << a;
    }
  }
  BatchJob typed = Job();
  typed.gpus = 1;
  typed.gpu_type = "a100";
  typed.time_limit = 60;
  typed.signal = SIGUSR2;
  typed.grace = 100000;  // beyond what Slurm takes
  Submission t = BuildSubmission(typed, SubmitConfig{});
  EXPECT_TRUE(Has(t.argv, "--gres=gpu:a100:1"));
  EXPECT_TRUE(Has(t.argv, "--time=3"));
  EXPECT_TRUE(Has(t.argv, "--signal=B:USR2@65535"));
}

// Where each card is its own gres type, Slurm is asked for the cards the core chose, and a share
// for that card's shards; the other --gres forms are not added beside them.
TEST(SubmitTest, CardsOfTheirOwnTypesAreAskedForByName) {
  BatchJob j = Job();
  j.node = "gpu1";
  j.gpus = 2;
  j.cards = {"card2", "card0"};
  Submission s = BuildSubmission(j, SubmitConfig{});
  EXPECT_EQ(std::count_if(s.argv.begin(), s.argv.end(), [](const std::string& a) { return a.rfind("--gres", 0) == 0; }),
            1);
  EXPECT_TRUE(Has(s.argv, "--gres=gpu:card2:1,gpu:card0:1"));
  BatchJob share = Job();
  share.gpus = 1;
  share.cards = {"card1"};
  share.shares = 3;
  EXPECT_TRUE(Has(BuildSubmission(share, SubmitConfig{}).argv, "--gres=shard:card1:3"));
  SessionJob session;
  session.id = 9;
  session.gpus = 1;
  session.cards = {"card3"};
  session.shares = 1;
  EXPECT_TRUE(Has(BuildSessionCommand(session, "srun", SubmitConfig{}).argv, "--gres=shard:card3:1"));
  session.shares = 0;
  EXPECT_TRUE(Has(BuildSessionCommand(session, "srun", SubmitConfig{}).argv, "--gres=gpu:card3:1"));
  // Cards of a shared type, and a MIG slice's type: counted by type.
  BatchJob typed = Job();
  typed.gpus = 3;
  typed.cards = {"a100", "t4", "a100"};
  EXPECT_TRUE(Has(BuildSubmission(typed, SubmitConfig{}).argv, "--gres=gpu:a100:2,gpu:t4:1"));
  BatchJob slice = Job();
  slice.gpus = 1;
  slice.cards = {"a100_1g.10gb"};
  EXPECT_TRUE(Has(BuildSubmission(slice, SubmitConfig{}).argv, "--gres=gpu:a100_1g.10gb:1"));
}

TEST(SubmitTest, TheEnvironmentLosesWhatWouldSteerSbatch) {
  BatchJob j = Job();
  j.env["SLURM_JOB_ID"] = "7";
  j.env["SBATCH_PARTITION"] = "other";
  j.env["SALLOC_ACCOUNT"] = "x";
  j.env["SRUN_CPUS_PER_TASK"] = "4";
  j.env["CUDA_VISIBLE_DEVICES"] = "GPU-1";
  j.env["ROTA_GPUS"] = "0";
  j.env["ROTA_JOB_ID"] = "42";
  j.env["MY_SLURM_NOTE"] = "kept";
  SubmitConfig c;
  c.slurm_conf = "/tmp/cluster/slurm.conf";
  Submission s = BuildSubmission(j, c);
  EXPECT_EQ(s.env, (std::vector<std::string>{"HOME=/home/alice", "MY_SLURM_NOTE=kept", "PATH=/usr/bin:/bin",
                                             "ROTA_JOB_ID=42", "SLURM_CONF=/tmp/cluster/slurm.conf"}));
}

// The --wrap command, run by the same /bin/sh that Slurm's batch script uses, gives the program
// exactly the arguments it was submitted with, however odd.
TEST(SubmitTest, TheWrappedCommandKeepsEveryArgument) {
  BatchJob j = Job();
  j.argv = {"printf", "[%s]", "it's", "a b", "$HOME", "`id`", "\"q\"", "back\\slash", "two\nlines", "", "*"};
  const std::string wrap = Wrap(BuildSubmission(j, SubmitConfig{}));
  FILE* p = ::popen(("/bin/sh -c " + ShellQuote(wrap)).c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[256];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int status = ::pclose(p);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(out, "[it's][a b][$HOME][`id`][\"q\"][back\\slash][two\nlines][][*]");
}

TEST(SubmitTest, SlurmsLimitStopsWhereAReservationOnTheNodeBegins) {
  EXPECT_EQ(SlurmMinutes(3600, 0), 62);       // Rota's hour + the backstop's slack, rounded up
  EXPECT_EQ(SlurmMinutes(3600, 3689), 60);    // a reservation in 3689 s: 30 s earlier, rounded down
  EXPECT_EQ(SlurmMinutes(3600, 3660), 60);
  EXPECT_EQ(SlurmMinutes(3600, 3600), 59);    // never ends exactly where it begins
  EXPECT_EQ(SlurmMinutes(3600, 30), 1);       // at least a minute
  EXPECT_EQ(SlurmMinutes(0, 7230), 120);      // no limit of Rota's: the reservation's start bounds it
  EXPECT_EQ(SlurmMinutes(0, 0), 0);
  BatchJob j = Job();
  j.reservation = "rota-b3";
  j.limit_cap = 630;
  Submission s = BuildSubmission(j, SubmitConfig{});
  EXPECT_TRUE(Has(s.argv, "--reservation=rota-b3"));
  EXPECT_TRUE(Has(s.argv, "--time=10"));
  EXPECT_FALSE(Has(BuildSubmission(Job(), SubmitConfig{}).argv, "--reservation=rota-b3"));
}

TEST(SubmitTest, ASessionAsksForTheSameResourcesWithoutBatchOptions) {
  SessionJob j;
  j.id = 7;
  j.node = "gpu1";
  j.gpus = 1;
  j.gpu_type = "a100";
  j.memory_bytes = 1 << 30;
  j.time_limit = 600;
  SubmitConfig c;
  c.partition = "gpu";
  SessionCommand s = BuildSessionCommand(j, "/usr/bin/srun", c);
  EXPECT_EQ(s.argv[0], "/usr/bin/srun");
  for (const char* want : {"--job-name=rota-7", "--partition=gpu", "--nodelist=gpu1", "--nodes=1", "--ntasks=1",
                           "--gres=gpu:a100:1", "--mem=1024M", "--time=12", "--unbuffered"}) {
    EXPECT_TRUE(Has(s.argv, want)) << want;
  }
  // The terminal is the session's output; Rota's warning reaches it through its client.
  for (const std::string& a : s.argv) {
    EXPECT_NE(a.rfind("--output", 0), 0u) << a;
    EXPECT_NE(a.rfind("--signal", 0), 0u) << a;
    EXPECT_NE(a, "--pty");
  }
  EXPECT_EQ(s.tty_argv, std::vector<std::string>{"--pty"});
  SessionJob any;
  any.id = 8;
  SessionCommand plain = BuildSessionCommand(any, "srun", SubmitConfig{});
  for (const std::string& a : plain.argv) {
    EXPECT_NE(a.rfind("--nodelist", 0), 0u) << a;
    EXPECT_NE(a.rfind("--gres", 0), 0u) << a;
    EXPECT_NE(a.rfind("--time", 0), 0u) << a;
  }
}

}  // namespace
}  // namespace rota::slurm
