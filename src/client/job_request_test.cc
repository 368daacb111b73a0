// Tests of what rota submit/run send: #ROTA script options (precedence, stop at the first
// command), --signal parsing, and the job object with its local refusals.
#include "client/job_request.h"

#include <gtest/gtest.h>

#include <csignal>

namespace rota::client {
namespace job_request_test {
namespace {

using nlohmann::json;

JobContext Context() {
  return JobContext{{"python", "train.py"}, "/home/alice/bert", {{"PATH", "/usr/bin"}}, false};
}

TEST(ScriptDirectivesTest, ReadsRotaLinesBeforeTheFirstCommand) {
  std::string script =
      "#!/bin/bash\n"
      "# a comment\n"
      "\n"
      "#ROTA --gpus 2 --time 4h\n"
      "  #ROTA --name 'my run' # trailing comment\n"
      "#SBATCH --ignored\n"
      "#ROTAX --not-ours\n"
      "python train.py\n"
      "#ROTA --tier thesis\n";
  EXPECT_EQ(ScriptDirectives(script),
            (std::vector<std::string>{"--gpus", "2", "--time", "4h", "--name", "my run"}));
}

TEST(ScriptDirectivesTest, NotAScriptHasNoDirectives) {
  EXPECT_TRUE(ScriptDirectives("#ROTA --gpus 2\n").empty());
  EXPECT_TRUE(ScriptDirectives("\x7f"
                               "ELF...")
                  .empty());
  EXPECT_TRUE(ScriptDirectives("").empty());
}

TEST(ScriptDirectivesTest, CrLfLinesWork) {
  EXPECT_EQ(ScriptDirectives("#!/bin/sh\r\n#ROTA --gpus 3\r\necho\r\n"),
            (std::vector<std::string>{"--gpus", "3"}));
}

TEST(ParseDirectiveWordsTest, ValuesFlagsAndEquals) {
  auto f = ParseDirectiveWords({"--gpus", "2", "--time=4h", "--requeue", "--after", "3,4", "--after-ok=5"}, "x.sh");
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->gpus, "2");
  EXPECT_EQ(f->time, "4h");
  EXPECT_TRUE(f->requeue);
  EXPECT_EQ(f->after, "3,4");
  EXPECT_EQ(f->after_ok, "5");
  f = ParseDirectiveWords({"--image", "localhost/lab:1", "--output=x.out"}, "x.sh");
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->image, "localhost/lab:1");
  EXPECT_EQ(MergeFlags(*f, RequestFlags{}).image, "localhost/lab:1");  // kept unless the command line says
}

TEST(ParseDirectiveWordsTest, RefusesUnknownAndMissing) {
  auto unknown = ParseDirectiveWords({"--gpu", "2"}, "x.sh");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("x.sh"), std::string::npos);
  EXPECT_NE(unknown.status().message().find("--gpu"), std::string::npos);
  EXPECT_FALSE(ParseDirectiveWords({"--time"}, "x.sh").ok());
  EXPECT_FALSE(ParseDirectiveWords({"stray"}, "x.sh").ok());
}

TEST(MergeFlagsTest, CommandLineWinsAndReplacesTheRequestKind) {
  RequestFlags script;
  script.gpus = "2";
  script.time = "4h";
  script.name = "from-script";
  script.requeue = true;
  RequestFlags cli;
  cli.gpu_mem = "20G";
  cli.name = "from-cli";
  RequestFlags m = MergeFlags(script, cli);
  EXPECT_EQ(m.gpus, "");  // --gpu-mem on the command line replaces the script's --gpus
  EXPECT_EQ(m.gpu_mem, "20G");
  EXPECT_EQ(m.time, "4h");  // not given on the command line: the script's
  EXPECT_EQ(m.name, "from-cli");
  EXPECT_TRUE(m.requeue);

  // Script and command line merged give a request the daemon gets in one piece.
  auto job = BuildJob(m, Context());
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ((*job)["request"], json({{"kind", "gpu_mem"}, {"memory", 20480}}));
  EXPECT_EQ((*job)["time_limit"], 4 * 3600);
}

TEST(ParseSignalTest, AcceptedForms) {
  auto a = ParseSignal("USR1@120");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->signal, SIGUSR1);
  EXPECT_EQ(a->grace, 120);
  auto b = ParseSignal("SIGUSR2@60");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->signal, SIGUSR2);
  EXPECT_EQ(b->grace, 60);
  auto c = ParseSignal("10@30");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->signal, 10);
  EXPECT_EQ(c->grace, 30);
  auto d = ParseSignal("TERM");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->signal, SIGTERM);
  EXPECT_EQ(d->grace, 120);
  auto e = ParseSignal("usr1@2m");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->grace, 120);
  auto slurm = ParseSignal("B:USR1@90");
  ASSERT_TRUE(slurm.ok());
  EXPECT_EQ(slurm->signal, SIGUSR1);
}

TEST(ParseSignalTest, Refusals) {
  for (const char* bad : {"", "FOO", "0", "65", "USR1@", "USR1@abc", "@30", "USR1@-5"}) {
    auto s = ParseSignal(bad);
    EXPECT_FALSE(s.ok()) << bad;
    if (!s.ok()) {
      EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
    }
  }
}

TEST(BuildJobTest, MinimalJobHasOnlyTheRequiredFields) {
  auto job = BuildJob(RequestFlags{}, Context());
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(*job, json({{"command", {"python", "train.py"}},
                        {"cwd", "/home/alice/bert"},
                        {"env", {{"PATH", "/usr/bin"}}}}));
}

TEST(BuildJobTest, EveryFlag) {
  RequestFlags f;
  f.gpus = "2";
  f.time = "1:30:00";
  f.tier = "thesis";
  f.project = "nlp";
  f.name = "bert";
  f.mem_per_gpu = "40G";
  f.signal = "USR2@60";
  f.after = "12,13";
  f.after_ok = "14";
  f.output = "out-%j.txt";
  f.requeue = true;
  f.image = "docker.io/pytorch/pytorch:2.1";
  auto job = BuildJob(f, Context());
  ASSERT_TRUE(job.ok()) << job.status().message();
  const json& j = *job;
  EXPECT_EQ(j["request"], json({{"kind", "gpus"}, {"gpus", 2}}));
  EXPECT_EQ(j["time_limit"], 5400);
  EXPECT_EQ(j["tier"], "thesis");
  EXPECT_EQ(j["project"], "nlp");
  EXPECT_EQ(j["name"], "bert");
  EXPECT_EQ(j["mem_per_gpu"], 40960);
  EXPECT_EQ(j["signal"], SIGUSR2);
  EXPECT_EQ(j["grace"], 60);
  EXPECT_EQ(j["after"], json({12, 13}));
  EXPECT_EQ(j["after_ok"], json({14}));
  EXPECT_EQ(j["output"], "out-%j.txt");
  EXPECT_EQ(j["requeue"], true);
  EXPECT_EQ(j["image"], "docker.io/pytorch/pytorch:2.1");

  JobContext interactive = Context();
  interactive.interactive = true;
  auto run = BuildJob(f, interactive);
  ASSERT_TRUE(run.ok());
  EXPECT_FALSE(run->contains("output"));
  EXPECT_FALSE(run->contains("requeue"));
  EXPECT_EQ(run->at("image"), "docker.io/pytorch/pytorch:2.1");  // rota run --image: attached
}

TEST(BuildJobTest, MigRequest) {
  RequestFlags f;
  f.mig = "3g.40gb";
  auto job = BuildJob(f, Context());
  ASSERT_TRUE(job.ok());
  EXPECT_EQ((*job)["request"], json({{"kind", "mig"}, {"profile", "3g.40gb"}}));
  f.mig = "1g.10gb+me";
  EXPECT_TRUE(BuildJob(f, Context()).ok());
}

TEST(BuildJobTest, LocalRefusalsSayWhatIsAccepted) {
  struct Case {
    RequestFlags flags;
    const char* mentions;
  };
  auto with = [](auto setter) {
    RequestFlags f;
    setter(f);
    return f;
  };
  std::vector<Case> cases = {
      {with([](RequestFlags& f) { f.time = "0"; }), "--time"},
      {with([](RequestFlags& f) { f.time = "abc"; }), "4h"},
      {with([](RequestFlags& f) { f.time = "367d"; }), "at most 366 days"},
      {with([](RequestFlags& f) { f.gpus = "0"; }), "--gpus"},
      {with([](RequestFlags& f) { f.gpus = "two"; }), "whole number"},
      {with([](RequestFlags& f) {
         f.gpus = "1";
         f.gpu_mem = "20G";
       }),
       "only one of"},
      {with([](RequestFlags& f) {
         f.gpu_mem = "20G";
         f.mig = "3g.40gb";
       }),
       "only one of"},
      {with([](RequestFlags& f) { f.gpu_mem = "0"; }), "20G"},
      {with([](RequestFlags& f) { f.mig = "big"; }), "3g.40gb"},
      {with([](RequestFlags& f) { f.tier = "urgent"; }), "thesis, regular or explore"},
      {with([](RequestFlags& f) { f.signal = "USR9"; }), "USR1@120"},
      {with([](RequestFlags& f) { f.after = "12,x"; }), "--after"},
      {with([](RequestFlags& f) { f.after_ok = "12,"; }), "--after-ok \"12,\""},
      {with([](RequestFlags& f) { f.mem_per_gpu = "lots"; }), "--mem-per-gpu"},
  };
  for (const Case& c : cases) {
    auto job = BuildJob(c.flags, Context());
    ASSERT_FALSE(job.ok()) << c.mentions;
    EXPECT_EQ(job.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(job.status().message().find(c.mentions), std::string::npos) << job.status().message();
    EXPECT_EQ(job.status().message().find('\n'), std::string::npos);  // one line
  }
}

TEST(BuildJobTest, TheLongestTimeLimitIsAccepted) {
  RequestFlags f;
  f.time = "366d";
  auto job = BuildJob(f, Context());
  ASSERT_TRUE(job.ok()) << job.status().message();
  EXPECT_EQ((*job)["time_limit"], 366 * 86400);
}

TEST(BuildJobTest, NeedsACommandAndAnAbsoluteDirectory) {
  JobContext c = Context();
  c.command.clear();
  EXPECT_FALSE(BuildJob(RequestFlags{}, c).ok());
  c = Context();
  c.cwd = "relative";
  EXPECT_FALSE(BuildJob(RequestFlags{}, c).ok());
}

TEST(EnvironmentMapTest, SplitsAtTheFirstEquals) {
  char a[] = "A=1", b[] = "B=x=y", c[] = "NOEQUALS", d[] = "A=2";
  char* env[] = {a, b, c, d, nullptr};
  auto m = EnvironmentMap(env);
  EXPECT_EQ(m.size(), 2u);
  EXPECT_EQ(m["A"], "1");
  EXPECT_EQ(m["B"], "x=y");
}

}  // namespace
}  // namespace job_request_test
}  // namespace rota::client
