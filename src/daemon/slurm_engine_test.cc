// The Slurm engine's own parts that need no Slurm: its launch files and finding Slurm's commands.
// The engine itself is tested on a real Slurm through rotad (tests/daemon/test_slurm.py).
#include "daemon/slurm_engine.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "testing/temp_dir.h"

namespace rota::daemon {
namespace {

TEST(SlurmEngineTest, LaunchFilesRoundTrip) {
  SlurmEngine::LaunchFile f;
  f.uid = 1014;
  f.note = R"({"start":{"gpus":[0,1]},"time":1796305920})";
  f.written = 1796305920;
  StatusOr<SlurmEngine::LaunchFile> back = SlurmEngine::ParseLaunchFile(SlurmEngine::LaunchFileText(f));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->uid, 1014u);
  EXPECT_EQ(back->note, f.note);
  EXPECT_EQ(back->written, 1796305920);
  EXPECT_FALSE(back->submitted);  // only that a launch began
  EXPECT_EQ(back->slurm_id, "");

  f.submitted = true;  // sbatch said so
  back = SlurmEngine::ParseLaunchFile(SlurmEngine::LaunchFileText(f));
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(back->submitted);
  EXPECT_EQ(back->slurm_id, "");
  f.slurm_id = "123_4";  // the queue listed it
  back = SlurmEngine::ParseLaunchFile(SlurmEngine::LaunchFileText(f));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->slurm_id, "123_4");
  // A file of an older rotad, without them: not yet known.
  back = SlurmEngine::ParseLaunchFile("{\"uid\":1,\"note\":\"\",\"written\":0}");
  ASSERT_TRUE(back.ok());
  EXPECT_FALSE(back->submitted);
}

TEST(SlurmEngineTest, DamagedLaunchFilesAreRefused) {
  for (const char* text :
       {"", "{", "[]", "{\"uid\":-1,\"note\":\"\",\"written\":0}", "{\"uid\":1,\"written\":0}",
        "{\"uid\":1,\"note\":3,\"written\":0}", "{\"uid\":\"1\",\"note\":\"\",\"written\":0}",
        "{\"uid\":1,\"note\":\"\",\"written\":1.5}"}) {
    EXPECT_FALSE(SlurmEngine::ParseLaunchFile(text).ok()) << text;
  }
  EXPECT_FALSE(SlurmEngine::ParseLaunchFile("{\"uid\":4294967296,\"note\":\"\",\"written\":0}").ok());
  // A Slurm id goes into scancel's and sacct's arguments: digits (and an array's "_") only.
  for (const char* id : {"", "-1", "12 34", "--full", "_1", "1_", "1;2", "123456789012345678901234567890123"}) {
    const std::string text = std::string("{\"uid\":1,\"note\":\"\",\"written\":0,\"slurm_id\":\"") + id + "\"}";
    EXPECT_FALSE(SlurmEngine::ParseLaunchFile(text).ok()) << text;
  }
  EXPECT_FALSE(SlurmEngine::ParseLaunchFile("{\"uid\":1,\"note\":\"\",\"written\":0,\"slurm_id\":12}").ok());
  EXPECT_FALSE(SlurmEngine::ParseLaunchFile("{\"uid\":1,\"note\":\"\",\"written\":0,\"submitted\":1}").ok());
  // Deeply nested: refused before anything walks it (a crash in a restart would be the cost).
  EXPECT_FALSE(SlurmEngine::ParseLaunchFile(std::string(100000, '[') + std::string(100000, ']')).ok());
}

TEST(SlurmEngineTest, FindsSlurmsCommandsOrSaysWhichAreMissing) {
  testing::TempDir dir;
  for (const char* name : {"sbatch", "squeue"}) {
    const std::string path = dir.path() + "/" + name;
    std::ofstream(path) << "#!/bin/sh\n";
    ::chmod(path.c_str(), 0755);
  }
  SlurmEngineOptions o;
  Status s = FindSlurmCommands(dir.path(), o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find(dir.path() + "/scancel, " + dir.path() + "/sinfo"), std::string::npos)
      << s.message();
  EXPECT_EQ(s.message().find("/sbatch"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("bin_dir"), std::string::npos);
  for (const char* name : {"scancel", "sinfo", "scontrol", "srun"}) {
    const std::string path = dir.path() + "/" + name;
    std::ofstream(path) << "#!/bin/sh\n";
    ::chmod(path.c_str(), 0755);
  }
  EXPECT_TRUE(FindSlurmCommands(dir.path(), o).ok());
  EXPECT_EQ(o.submit.sbatch, dir.path() + "/sbatch");
  EXPECT_EQ(o.sinfo, dir.path() + "/sinfo");
  EXPECT_EQ(o.srun, dir.path() + "/srun");
  EXPECT_EQ(o.sacct, "");  // optional: without it, ends Slurm forgot are unknown
  const std::string sacct = dir.path() + "/sacct";
  std::ofstream(sacct) << "#!/bin/sh\n";
  ::chmod(sacct.c_str(), 0755);
  EXPECT_TRUE(FindSlurmCommands(dir.path(), o).ok());
  EXPECT_EQ(o.sacct, sacct);
}

}  // namespace
}  // namespace rota::daemon
