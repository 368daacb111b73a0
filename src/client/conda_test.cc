// Tests of --conda: environments are found the way the user's conda finds them (envs_dirs,
// installations, environments.txt, paths), a missing one is refused naming where it was looked
// for and what exists, activation sets what `conda activate` sets, and the job's command runs
// through the activation wrapper, which rota show reads back.
#include "client/conda.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "testing/temp_dir.h"

namespace rota::client {
namespace conda_test {
namespace {

namespace fs = std::filesystem;

class CondaTest : public ::testing::Test {
 protected:
  // An environment as conda makes it: conda-meta/ and bin/.
  std::string MakeEnv(const std::string& prefix, const std::string& state = "") {
    fs::create_directories(prefix + "/conda-meta");
    fs::create_directories(prefix + "/bin");
    if (!state.empty()) std::ofstream(prefix + "/conda-meta/state") << state;
    return prefix;
  }
  void Write(const std::string& path, const std::string& text) {
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream(path) << text;
  }
  std::map<std::string, std::string> Env() { return {{"HOME", home_.path()}, {"PATH", "/usr/bin:/bin"}}; }

  testing::TempDir home_{"rota-conda"};
};

TEST_F(CondaTest, FindsEnvironmentsWhereTheUsersCondaWould) {
  // In a usual installation under the home directory.
  const std::string exp1 = MakeEnv(home_ / "miniconda3/envs/exp1");
  auto found = FindCondaEnv("exp1", Env());
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ(found->prefix, exp1);
  EXPECT_EQ(found->name, "exp1");
  // The installation conda runs from ($CONDA_EXE) comes before the usual places.
  const std::string other = MakeEnv(home_ / "tools/conda/envs/exp1");
  auto env = Env();
  env["CONDA_EXE"] = home_ / "tools/conda/bin/conda";
  EXPECT_EQ(FindCondaEnv("exp1", env)->prefix, other);
  // envs_dirs of ~/.condarc come first of all.
  const std::string scratch = MakeEnv(home_ / "scratch/envs/exp1");
  Write(home_ / ".condarc", "channels:\n  - conda-forge\nenvs_dirs:\n  - ~/scratch/envs  # fast disk\nauto_activate_base: false\n");
  EXPECT_EQ(FindCondaEnv("exp1", env)->prefix, scratch);
  // micromamba's root, and environments made anywhere that conda lists in environments.txt.
  env["MAMBA_ROOT_PREFIX"] = home_ / "mamba";
  EXPECT_EQ(FindCondaEnv("torch", env).status().code(), StatusCode::kNotFound);
  const std::string torch = MakeEnv(home_ / "mamba/envs/torch");
  EXPECT_EQ(FindCondaEnv("torch", env)->prefix, torch);
  const std::string elsewhere = MakeEnv(home_ / "projects/nlp/.env/bert");
  Write(home_ / ".conda/environments.txt", home_.path() + "/miniconda3\n" + elsewhere + "\n");
  EXPECT_EQ(FindCondaEnv("bert", env)->prefix, elsewhere);
  // base is the installation itself; a path is taken as it is.
  MakeEnv(home_ / "tools/conda");
  EXPECT_EQ(FindCondaEnv("base", env)->prefix, home_ / "tools/conda");
  EXPECT_EQ(FindCondaEnv(elsewhere, env)->prefix, elsewhere);
  EXPECT_EQ(FindCondaEnv("~/projects/nlp/.env/bert", env)->prefix, elsewhere);
}

TEST_F(CondaTest, AMissingEnvironmentIsRefusedSayingWhereItLookedAndWhatExists) {
  MakeEnv(home_ / "miniconda3/envs/exp1");
  MakeEnv(home_ / "miniconda3/envs/torch");
  fs::create_directories(home_ / "miniconda3/envs/not-an-env");
  auto missing = FindCondaEnv("exp2", Env());
  ASSERT_EQ(missing.status().code(), StatusCode::kNotFound);
  const std::string m = missing.status().message();
  EXPECT_NE(m.find("conda environment \"exp2\" not found"), std::string::npos) << m;
  EXPECT_NE(m.find("looked in " + home_.path() + "/miniconda3/envs"), std::string::npos) << m;
  EXPECT_NE(m.find("environments there: exp1, torch)"), std::string::npos) << m;
  // No conda at all: say so, and how to point at one.
  testing::TempDir empty{"rota-conda-none"};
  auto none = FindCondaEnv("exp1", {{"HOME", empty.path()}});
  ASSERT_EQ(none.status().code(), StatusCode::kNotFound);
  EXPECT_NE(none.status().message().find("no conda installation found"), std::string::npos) << none.status().message();
  // Odd names and paths that are no environment.
  EXPECT_EQ(FindCondaEnv("", Env()).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(FindCondaEnv("a b", Env()).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(FindCondaEnv(home_ / "miniconda3/envs/not-an-env", Env()).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(FindCondaEnv("/nonexistent/env", Env()).status().code(), StatusCode::kNotFound);
}

TEST_F(CondaTest, ActivationSetsWhatCondaActivateSets) {
  const std::string prefix =
      MakeEnv(home_ / "miniconda3/envs/exp1", R"({"env_vars": {"HF_HOME": "/data/hf", "BAD=": "x", "N": 3}})");
  auto conda = FindCondaEnv("exp1", Env());
  ASSERT_TRUE(conda.ok());
  EXPECT_EQ(conda->vars, (std::map<std::string, std::string>{{"HF_HOME", "/data/hf"}}));
  auto env = Env();
  env["CONDA_PREFIX"] = "/opt/conda/envs/old";  // another environment is active in this shell
  env["PATH"] = "/opt/conda/envs/old/bin:/usr/bin:/bin";
  ActivateConda(*conda, env);
  EXPECT_EQ(env["PATH"], prefix + "/bin:/usr/bin:/bin");
  EXPECT_EQ(env["CONDA_PREFIX"], prefix);
  EXPECT_EQ(env["CONDA_DEFAULT_ENV"], "exp1");
  EXPECT_EQ(env["CONDA_PROMPT_MODIFIER"], "(exp1) ");
  EXPECT_EQ(env["HF_HOME"], "/data/hf");
}

TEST_F(CondaTest, NotWithAnImage) {
  MakeEnv(home_ / "miniconda3/envs/exp1");
  RequestFlags flags;
  flags.conda = "exp1";
  flags.image = "localhost/lab:1";
  JobContext context{{"python3"}, "/tmp", Env(), false};
  Status s = UseConda(flags, context);
  EXPECT_NE(s.message().find("--conda and --image: choose one"), std::string::npos) << s.message();
  EXPECT_EQ(context.command, std::vector<std::string>{"python3"});  // untouched
}

TEST_F(CondaTest, TheJobsCommandRunsThroughTheWrapperAndReadsBack) {
  MakeEnv(home_ / "miniconda3/envs/exp1");
  RequestFlags flags;
  flags.conda = "exp1";
  JobContext context{{"/usr/bin/python3", "train.py", "--lr", "0.1"}, "/tmp", Env(), false};
  ASSERT_TRUE(UseConda(flags, context).ok());
  EXPECT_EQ(flags.name, "python3");  // named after the user's command, not the shell
  ASSERT_GE(context.command.size(), 6u);
  EXPECT_EQ(context.command[0], "/bin/sh");
  std::string prefix;
  std::vector<std::string> command;
  ASSERT_TRUE(CondaCommand(context.command, &prefix, &command));
  EXPECT_EQ(prefix, home_ / "miniconda3/envs/exp1");
  EXPECT_EQ(command, (std::vector<std::string>{"/usr/bin/python3", "train.py", "--lr", "0.1"}));
  EXPECT_EQ(context.env["CONDA_DEFAULT_ENV"], "exp1");
  EXPECT_FALSE(CondaCommand({"/bin/sh", "-c", "echo", "x", "y", "z"}, &prefix, &command));
  // --name wins; without --conda nothing changes.
  RequestFlags named;
  named.conda = "exp1";
  named.name = "sweep";
  JobContext again{{"python3"}, "/tmp", Env(), false};
  ASSERT_TRUE(UseConda(named, again).ok());
  EXPECT_EQ(named.name, "sweep");
  RequestFlags plain;
  JobContext untouched{{"python3"}, "/tmp", Env(), false};
  ASSERT_TRUE(UseConda(plain, untouched).ok());
  EXPECT_EQ(untouched.command, (std::vector<std::string>{"python3"}));
  EXPECT_EQ(untouched.env, Env());
}

}  // namespace
}  // namespace conda_test
}  // namespace rota::client
