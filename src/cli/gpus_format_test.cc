// Tests of how `rota gpus` prints the daemon's reply: holders with memory, tier and time left,
// shares, MIG slices under their card, processes outside Rota or off their allocation, drained
// and suspect cards, the sample-failure warning, alignment with Chinese names, and colour.
#include "cli/gpus_format.h"

#include <gtest/gtest.h>

#include "cli/utc_test.h"

#include <cstdlib>
#include <ctime>
#include <sstream>
#include <vector>

#include "cli/text.h"

namespace rota::cli {
namespace gpus_format_test {
namespace {

using nlohmann::json;

constexpr Time kNow = 1764403600;  // 2025-11-29 08:06:40 UTC

class GpusFormatTest : public UtcTest {};

json Card(int index, std::string name = "NVIDIA A100-SXM4-80GB") {
  return {{"index", index},
          {"uuid", "GPU-" + std::to_string(index)},
          {"name", name},
          {"memory_total", 81920},
          {"memory_used", 0},
          {"util", 0},
          {"util_memory", 0},
          {"temperature", 40},
          {"health", "healthy"},
          {"health_error", ""},
          {"drained", false},
          {"drain_reason", ""},
          {"drained_by", ""},
          {"drained_since", 0},
          {"mig", json::array()},
          {"processes", json::array()},
          {"jobs", json::array()}};
}

json Holder(long long id, std::string user, std::string name, std::string tier, long long memory_used,
            long long gpu_mem = 0, long long time_left = 3540) {
  return {{"job_id", id},      {"user", user},      {"name", name},           {"tier", tier},
          {"interactive", false}, {"gpu_mem", gpu_mem}, {"mig_uuid", ""},      {"time_left", time_left},
          {"mine", false},     {"memory_used", memory_used}};
}

json Process(long long pid, std::string user, long long memory, long long job_id, bool allocated = true) {
  return {{"pid", pid},   {"memory", memory},        {"sm_util", 10},      {"uid", user.empty() ? -1 : 1000},
          {"user", user}, {"job_id", job_id},        {"outside", job_id == 0}, {"allocated", allocated}};
}

// The cards as a vector: a braced list of one json value is an array of it for g++ and a copy of
// it for clang, which made these tests pass under one compiler only.
json Reply(std::vector<json> gpus) {
  return {{"v", 1},          {"ok", true},     {"time", kNow}, {"sampled_at", kNow - 1}, {"source", "nvml (test)"},
          {"driver_version", "550.54.15"}, {"sample_error", ""}, {"gpus", gpus}};
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The line whose first word is the card's index.
std::string CardLine(const std::string& text, int index) {
  for (const std::string& line : Lines(text)) {
    std::istringstream words(line);
    std::string first;
    words >> first;
    if (first == std::to_string(index)) return line;
  }
  return "";
}

std::string Plain(const json& reply) { return FormatGpus(reply, {false}); }

std::string StripAnsi(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\x1b' && i + 1 < s.size() && s[i + 1] == '[') {
      i += 2;
      while (i < s.size() && !(s[i] >= '@' && s[i] <= '~')) ++i;
      continue;
    }
    out += s[i];
  }
  return out;
}

TEST_F(GpusFormatTest, HolderShowsItsMemoryTierAndTimeLeft) {
  json card = Card(0);
  card["memory_used"] = 20582;
  card["util"] = 80;
  card["temperature"] = 70;
  card["jobs"] = json::array({Holder(17, "alice", "bert", "thesis", 20582)});
  card["processes"] = json::array({Process(4242, "alice", 20582, 17)});  // covered by the holder: not listed again
  std::string line = CardLine(Plain(Reply({card})), 0);
  EXPECT_NE(line.find("NVIDIA A100-SXM4-80GB"), std::string::npos) << line;
  EXPECT_NE(line.find("70C"), std::string::npos) << line;
  EXPECT_NE(line.find("80%"), std::string::npos) << line;
  EXPECT_NE(line.find("20.1/80.0G"), std::string::npos) << line;
  EXPECT_NE(line.find("alice/17:bert(20.1G thesis 0:59 left)"), std::string::npos) << line;
  EXPECT_EQ(line.find("outside"), std::string::npos) << line;
  EXPECT_EQ(line.find("free"), std::string::npos) << line;
}

TEST_F(GpusFormatTest, TitleAndHeader) {
  auto lines = Lines(Plain(Reply({Card(0)})));
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines[0], "2025-11-29 08:06:40  driver 550.54.15  nvml (test)");
  EXPECT_NE(lines[1].find("GPU"), std::string::npos);
  EXPECT_NE(lines[1].find("HOLDERS"), std::string::npos);
}

TEST_F(GpusFormatTest, ACardOfAClusterSaysItsNode) {
  json card = Card(5);
  card["node"] = "gpu-07";
  auto lines = Lines(Plain(Reply({Card(0), card})));
  ASSERT_GE(lines.size(), 4u);
  EXPECT_NE(lines[3].find("gpu-07 NVIDIA A100"), std::string::npos) << lines[3];
  EXPECT_EQ(lines[2].find("gpu-07"), std::string::npos) << lines[2];  // this machine's card: no node
}

TEST_F(GpusFormatTest, UnknownMemoryAndSessions) {
  json card = Card(1);
  json whole = Holder(20, "dave", "", "regular", -1);
  whole["interactive"] = true;
  card["jobs"] = json::array({whole});
  std::string line = CardLine(Plain(Reply({card})), 1);
  EXPECT_NE(line.find("dave/20(? regular session 0:59 left)"), std::string::npos) << line;
}

TEST_F(GpusFormatTest, SharedCardListsEachShare) {
  json card = Card(2);
  card["jobs"] = {Holder(17, "alice", "a", "regular", 9728, 20480, 3600),
                  Holder(18, "bob", "b", "explore", -1, 10240, 1800)};
  std::string line = CardLine(Plain(Reply({card})), 2);
  EXPECT_NE(line.find("alice/17:a(9.5/20.0G regular 1:00 left) bob/18:b(?/10.0G explore 0:30 left)"),
            std::string::npos)
      << line;
}

TEST_F(GpusFormatTest, MigSlicesAreNestedUnderTheirCard) {
  json card = Card(3);
  card["memory_used"] = 10240;
  card["mig"] = {{{"uuid", "MIG-a"}, {"profile", "3g.40gb"}, {"memory_total", 40960}, {"memory_used", 10240},
                  {"processes", json::array()}},
                 {{"uuid", "MIG-b"}, {"profile", "3g.40gb"}, {"memory_total", 40960}, {"memory_used", 3276},
                  {"processes", json::array({Process(999, "bob", 3276, 0)})}},
                 {{"uuid", "MIG-c"}, {"profile", "1g.10gb"}, {"memory_total", 10240}, {"memory_used", 0},
                  {"processes", json::array()}},
                 {{"uuid", "MIG-d"}, {"profile", "1g.10gb"}, {"memory_total", 10240}, {"memory_used", 0},
                  {"held_outside", true}, {"processes", json::array()}}};
  json on_slice = Holder(21, "alice", "lm", "thesis", 10240);
  on_slice["mig_uuid"] = "MIG-a";
  card["jobs"] = json::array({on_slice});
  auto lines = Lines(Plain(Reply({card, Card(4)})));
  // title, header, card 3, its four slices, card 4
  ASSERT_EQ(lines.size(), 8u) << Plain(Reply({card, Card(4)}));
  EXPECT_EQ(lines[2].find("alice"), std::string::npos) << "the slice's holder is not on the card line";
  EXPECT_EQ(lines[2].find("free"), std::string::npos) << lines[2];
  EXPECT_NE(lines[3].find("\u2514 3g.40gb"), std::string::npos) << lines[3];
  EXPECT_NE(lines[3].find("10.0/40.0G"), std::string::npos) << lines[3];
  EXPECT_NE(lines[3].find("alice/21:lm(10.0G thesis 0:59 left)"), std::string::npos) << lines[3];
  EXPECT_NE(lines[4].find("bob/outside(3.2G)"), std::string::npos) << lines[4];
  EXPECT_NE(lines[5].find("\u2514 1g.10gb"), std::string::npos) << lines[5];
  EXPECT_NE(lines[5].find("free"), std::string::npos) << lines[5];
  EXPECT_NE(lines[6].find("held outside Rota"), std::string::npos) << lines[6];  // a cluster's job's
  EXPECT_EQ(lines[6].find("free"), std::string::npos) << lines[6];
  EXPECT_EQ(lines[7].find("4 "), lines[7].find_first_not_of(' ')) << "card 4 follows the slices: " << lines[7];
  // The slice lines have no index of their own: they start with blanks under the GPU column.
  EXPECT_EQ(lines[3].front(), ' ');
}

TEST_F(GpusFormatTest, ProcessesOutsideRota) {
  json card = Card(5);
  card["processes"] = {Process(100, "bob", 3276, 0), Process(101, "bob", 2048, 0), Process(4242, "", 1024, 0),
                       Process(7, "erin", -1, 0)};
  std::string line = CardLine(Plain(Reply({card})), 5);
  EXPECT_NE(line.find("bob/outside(5.2G 2 procs)"), std::string::npos) << line;
  EXPECT_NE(line.find("pid 4242/outside(1.0G)"), std::string::npos) << line;
  EXPECT_NE(line.find("erin/outside(?)"), std::string::npos) << line;
  EXPECT_EQ(line.find("free"), std::string::npos) << "a card with outside processes is not free: " << line;
}

// A cluster node's card: a plain sbatch job's processes are Slurm's, shown by their Slurm job and
// not as an alarm; one started by hand on the node is outside, as on one server.
TEST_F(GpusFormatTest, ProcessesOfSlurmJobsOutsideRotaOnANode) {
  json card = Card(7);
  json sbatch = Process(100, "bob", 2048, 0), sbatch2 = Process(101, "bob", 1024, 0), hand = Process(102, "eve", 512, 0);
  for (json* p : {&sbatch, &sbatch2}) {
    (*p)["slurm_job"] = "4711";
    (*p)["in_slurm"] = true;
  }
  hand["slurm_job"] = "";
  hand["in_slurm"] = false;
  card["processes"] = {sbatch, sbatch2, hand};
  std::string line = CardLine(Plain(Reply({card})), 7);
  EXPECT_NE(line.find("bob/slurm:4711(3.0G 2 procs)"), std::string::npos) << line;
  EXPECT_NE(line.find("eve/outside(0.5G)"), std::string::npos) << line;
  EXPECT_EQ(line.find("bob/outside"), std::string::npos) << line;
}

// A cluster's card that a plain sbatch job holds (Slurm says so; no agent on the node): whose, not
// "free"; one that is only counted held (which of the node's cards is not known) says so.
TEST_F(GpusFormatTest, CardsHeldBySlurmJobsOutsideRota) {
  json held = Card(2), counted = Card(3), both = Card(4);
  held["held_outside"] = true;
  // Two entries of one job: two slices of a card in MIG mode, listed once.
  held["held_by"] = {{{"user", "bob"}, {"uid", 1002}, {"slurm_job", "4711"}, {"mine", false}},
                     {{"user", "bob"}, {"uid", 1002}, {"slurm_job", "4711"}, {"mine", false}}};
  counted["held_outside"] = true;
  both["held_outside"] = true;
  both["held_by"] = held["held_by"];
  json p = Process(100, "bob", 2048, 0);
  p["slurm_job"] = "4711";
  p["in_slurm"] = true;
  both["processes"] = json::array({p});
  const std::string out = Plain(Reply({held, counted, both}));
  std::string line = CardLine(out, 2);
  EXPECT_NE(line.find("bob/slurm:4711(outside Rota)"), std::string::npos) << line;
  EXPECT_EQ(line.find("slurm:4711"), line.rfind("slurm:4711")) << line;  // once
  EXPECT_EQ(line.find("free"), std::string::npos) << line;
  line = CardLine(out, 3);
  EXPECT_NE(line.find("held outside Rota"), std::string::npos) << line;
  EXPECT_EQ(line.find("free"), std::string::npos) << line;
  line = CardLine(out, 4);  // the agent's processes say it already, with their memory
  EXPECT_NE(line.find("bob/slurm:4711(2.0G)"), std::string::npos) << line;
  EXPECT_EQ(line.find("outside Rota"), std::string::npos) << line;
}

TEST_F(GpusFormatTest, JobProcessOnACardItDoesNotHold) {
  json card = Card(6);
  card["jobs"] = json::array({Holder(17, "alice", "bert", "regular", 1024)});
  card["processes"] = {Process(50, "alice", 1024, 17), Process(60, "carol", 2048, 18, false)};
  std::string line = CardLine(Plain(Reply({card})), 6);
  EXPECT_NE(line.find("carol/18!(2.0G not allocated here)"), std::string::npos) << line;
  EXPECT_EQ(line.find("alice/17!"), std::string::npos) << line;
}

TEST_F(GpusFormatTest, DrainedByAnAdmin) {
  json card = Card(7);
  card["drained"] = true;
  card["drained_by"] = "alice";
  card["drain_reason"] = "fan noise";
  card["jobs"] = json::array({Holder(30, "bob", "x", "regular", 1024)});
  std::string line = CardLine(Plain(Reply({card})), 7);
  EXPECT_NE(line.find("DRAINED by alice: fan noise; on it: bob/30:x(1.0G regular 0:59 left)"), std::string::npos)
      << line;
}

TEST_F(GpusFormatTest, DrainedByHealthAndSuspect) {
  json lost = Card(0);
  lost["health"] = "drained";
  lost["drained"] = true;
  lost["drained_by"] = "health";
  lost["drain_reason"] = "failed 3 samples";
  lost["health_error"] = "nvmlDeviceGetMemoryInfo: GPU_IS_LOST";
  lost["temperature"] = -1;
  lost["util"] = -1;
  lost["memory_used"] = -1;
  json suspect = Card(1);
  suspect["health"] = "suspect";
  suspect["health_error"] = "NVML did not answer within 2s";
  std::string text = Plain(Reply({lost, suspect}));
  std::string line0 = CardLine(text, 0);
  EXPECT_NE(line0.find("DRAINED (health): nvmlDeviceGetMemoryInfo: GPU_IS_LOST"), std::string::npos) << line0;
  EXPECT_NE(line0.find("?/80.0G"), std::string::npos) << line0;
  EXPECT_EQ(line0.find("free"), std::string::npos) << "a drained card is not offered as free: " << line0;
  std::string line1 = CardLine(text, 1);
  EXPECT_NE(line1.find("SUSPECT: NVML did not answer within 2s"), std::string::npos) << line1;
  EXPECT_EQ(line1.find("free"), std::string::npos) << line1;
}

TEST_F(GpusFormatTest, SampleErrorWarningComesFirst) {
  json reply = Reply({Card(0)});
  reply["sample_error"] = "NVML did not answer within 2s";
  reply["sampled_at"] = kNow - 61;
  auto lines = Lines(Plain(reply));
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0], "GPU sample failed: NVML did not answer within 2s; values from 08:05:39");
  EXPECT_EQ(Lines(Plain(Reply({Card(0)})))[0].find("sample failed"), std::string::npos);
}

TEST_F(GpusFormatTest, FreeCardSaysSo) {
  std::string line = CardLine(Plain(Reply({Card(0)})), 0);
  ASSERT_GE(line.size(), 4u);
  EXPECT_EQ(line.substr(line.size() - 4), "free") << line;
  EXPECT_EQ(Lines(Plain(Reply({}))).back(), "no GPUs");
}

// The display column where `token` starts on `line`, or -1.
int ColumnOf(const std::string& line, const std::string& token) {
  size_t at = line.find(token);
  return at == std::string::npos ? -1 : DisplayWidth(line.substr(0, at));
}

TEST_F(GpusFormatTest, ChineseNamesKeepColumnsAligned) {
  json a = Card(0, "模拟显卡 A100 训练专用型号超长名字");  // wider than the NAME column: cut by display width
  a["memory_used"] = 2048;
  a["jobs"] = json::array({Holder(17, "张三", "训练语言模型第二版本", "thesis", 2048)});
  json b = Card(1, "GPU");
  b["jobs"] = json::array({Holder(18, "bob", "bert", "regular", 1024)});
  json c = Card(12, "显卡");
  c["mig"] = {{{"uuid", "MIG-x"}, {"profile", "3g.40gb"}, {"memory_total", 40960}, {"memory_used", 512}}};
  json on_slice = Holder(19, "李四", "小模型", "explore", 512);
  on_slice["mig_uuid"] = "MIG-x";
  c["jobs"] = json::array({on_slice});
  std::string text = Plain(Reply({a, b, c}));
  auto lines = Lines(text);
  ASSERT_EQ(lines.size(), 6u) << text;
  const int holders = ColumnOf(lines[1], "HOLDERS");
  ASSERT_GT(holders, 0);
  EXPECT_EQ(ColumnOf(lines[2], "张三/17"), holders) << text;
  EXPECT_EQ(ColumnOf(lines[3], "bob/18"), holders) << text;
  EXPECT_EQ(ColumnOf(lines[5], "李四/19"), holders) << text;
  // The right edge of MEMORY (right-aligned) is the same on every line.
  const int memory_end = ColumnOf(lines[1], "MEMORY") + DisplayWidth("MEMORY");
  EXPECT_EQ(ColumnOf(lines[2], "2.0/80.0G") + DisplayWidth("2.0/80.0G"), memory_end) << text;
  EXPECT_EQ(ColumnOf(lines[5], "0.5/40.0G") + DisplayWidth("0.5/40.0G"), memory_end) << text;
  // Long names are cut by display width, never in the middle of a character.
  EXPECT_NE(lines[2].find("模拟显卡 A100 训练专用\u2026"), std::string::npos) << lines[2];
  EXPECT_NE(lines[2].find("张三/17:训练语言模\u2026("), std::string::npos) << lines[2];
}

TEST_F(GpusFormatTest, ColourOnlyWhenEnabled) {
  json hot = Card(0, "显卡");
  hot["temperature"] = 85;
  hot["util"] = 95;
  json mine = Holder(18, "me", "x", "regular", 0, 10240);
  mine["mine"] = true;  // the caller's own jobs stand out
  hot["jobs"] = {Holder(17, "alice", "bert", "thesis", 2048), mine};
  hot["processes"] = json::array({Process(1, "bob", 1024, 0)});
  json drained = Card(1);
  drained["drained"] = true;
  drained["drained_by"] = "root";
  drained["drain_reason"] = "vendor";
  json suspect = Card(2);
  suspect["health"] = "suspect";
  json reply = Reply({hot, drained, suspect});
  reply["sample_error"] = "timeout";
  std::string plain = FormatGpus(reply, {false});
  std::string colored = FormatGpus(reply, {true});
  EXPECT_EQ(plain.find('\x1b'), std::string::npos);
  EXPECT_NE(colored.find("\x1b[31m85C\x1b[0m"), std::string::npos) << colored;
  EXPECT_NE(colored.find("\x1b[33m95%\x1b[0m"), std::string::npos) << colored;
  EXPECT_NE(colored.find("\x1b[36malice\x1b[0m/17"), std::string::npos) << colored;
  EXPECT_NE(colored.find("\x1b[1;36mme\x1b[0m/18"), std::string::npos) << colored;
  EXPECT_NE(colored.find("\x1b[31mbob/outside(1.0G)\x1b[0m"), std::string::npos) << colored;
  EXPECT_NE(colored.find("\x1b[31mDRAINED by root: vendor\x1b[0m"), std::string::npos) << colored;
  EXPECT_NE(colored.find("\x1b[33mSUSPECT\x1b[0m"), std::string::npos) << colored;
  EXPECT_EQ(colored.rfind("\x1b[33mGPU sample failed", 0), 0u) << colored;
  // Colour is added after padding: without its codes the screen is the plain one, column for column.
  EXPECT_EQ(StripAnsi(colored), plain);
}

TEST_F(GpusFormatTest, ControlCharactersInNamesAreNeutralised) {
  json card = Card(0);
  card["drained"] = true;
  card["drained_by"] = "mallory";
  card["drain_reason"] = "x\x1b[2Jy\nz";
  card["jobs"] = json::array({Holder(1, "eve\x1b]0;pwned\x07", "n\xc2\x9bm", "regular", 0)});
  std::string text = Plain(Reply({card}));
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_EQ(text.find("\xc2\x9b"), std::string::npos) << text;
  EXPECT_NE(text.find("x?[2Jy?z"), std::string::npos) << text;
  EXPECT_EQ(TerminalSafe("弟子\tok"), "弟子?ok");
}

TEST_F(GpusFormatTest, MissingOrMistypedFieldsShowQuestionMarks) {
  json card = {{"index", 0}, {"name", nullptr}, {"temperature", "hot"}, {"jobs", {{{"user", 5}}}},
               {"processes", "none"}};
  json reply = {{"gpus", {card, "not a card"}}, {"time", kNow}};
  std::string text;
  ASSERT_NO_THROW(text = Plain(reply));
  std::string line = CardLine(text, 0);
  EXPECT_NE(line.find("?/?G"), std::string::npos) << line;
  EXPECT_NE(line.find("?/0(? ?)"), std::string::npos) << line;
}

TEST_F(GpusFormatTest, TimeLeftRoundsUpToTheMinute) {
  EXPECT_EQ(FormatTimeLeft(0), "0:00");
  EXPECT_EQ(FormatTimeLeft(-5), "0:00");
  EXPECT_EQ(FormatTimeLeft(1), "0:01");
  EXPECT_EQ(FormatTimeLeft(3540), "0:59");
  EXPECT_EQ(FormatTimeLeft(3541), "1:00");
  EXPECT_EQ(FormatTimeLeft(12 * 3600), "12:00");
  EXPECT_EQ(FormatTimeLeft(2 * 86400 + 3 * 3600 + 4 * 60), "2d03:04");
}

}  // namespace
}  // namespace gpus_format_test
}  // namespace rota::cli
