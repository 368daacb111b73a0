// Tests of `rota inventory`'s report: the markdown page for the wiki (GPU, storage and quota
// tables, the "not available" line), the storage error cell, the text form's alignment, human
// sizes, and reading repquota's CSV.
#include "cli/inventory_format.h"

#include <gtest/gtest.h>

#include "cli/utc_test.h"

#include <cstdlib>
#include <ctime>
#include <sstream>
#include <vector>

#include "cli/text.h"

namespace rota::cli {
namespace inventory_format_test {
namespace {

using nlohmann::json;

constexpr long long kNow = 1764403600;  // 2025-11-29 08:06:40 UTC
constexpr unsigned long long kGiB = 1ULL << 30;
constexpr unsigned long long kTiB = 1ULL << 40;

class InventoryFormatTest : public UtcTest {};

json Inventory() {
  json a100 = {{"index", 0},
               {"uuid", "GPU-a"},
               {"name", "NVIDIA A100-SXM4-80GB"},
               {"pci_bus_id", "00000000:3B:00.0"},
               {"memory_total", 81920},
               {"mig_capable", true},
               {"mig_enabled", true},
               {"mig",
                {{{"uuid", "MIG-1"}, {"profile", "3g.40gb"}, {"memory_total", 40960}},
                 {{"uuid", "MIG-2"}, {"profile", "3g.40gb"}, {"memory_total", 40960}}}},
               {"nvlink", {1}},
               {"health", "healthy"},
               {"drained", false},
               {"drain_reason", ""}};
  json second = a100;
  second["index"] = 1;
  second["mig_enabled"] = false;
  second["mig"] = json::array();
  second["nvlink"] = {0};
  second["drained"] = true;
  second["drain_reason"] = "fan noise | vendor";
  json old = {{"index", 2},         {"name", "Tesla V100"}, {"memory_total", 16384}, {"mig_capable", false},
              {"mig_enabled", false}, {"nvlink", json::array()}, {"health", "drained"}, {"drained", true},
              {"drain_reason", "GPU_IS_LOST"}};
  return {{"v", 1},
          {"ok", true},
          {"hostname", "gpu1"},
          {"source", "nvml (test)"},
          {"driver_version", "550.54.15"},
          {"time", kNow},
          {"gpus", {a100, second, old}},
          {"storage", {"/home", "/data"}}};
}

std::vector<StorageInfo> Storage() {
  StorageInfo home{"/home", "", "/home", 2 * kTiB, 1229 * kGiB, 819 * kGiB};
  StorageInfo data{"/data", "", "/data", 512 * kGiB, 0, 512 * kGiB};
  return {home, data};
}

QuotaReport NotInstalled() {
  QuotaReport q;
  q.unavailable = "repquota not installed";
  return q;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

bool HasLine(const std::string& text, const std::string& line) {
  for (const std::string& l : Lines(text)) {
    if (l == line) return true;
  }
  return false;
}

TEST_F(InventoryFormatTest, MarkdownHasTheTablesAndTheQuotaLine) {
  std::string md = FormatInventory(Inventory(), Storage(), NotInstalled(), true);
  auto lines = Lines(md);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0], "# GPU server gpu1 (2025-11-29)");
  EXPECT_TRUE(HasLine(md, "| GPU | Model | Memory | NVLink to | MIG capable | MIG mode | Status |")) << md;
  EXPECT_TRUE(HasLine(md, "|---:|---|---:|---|---|---|---|")) << md;
  EXPECT_TRUE(HasLine(md, "| 0 | NVIDIA A100-SXM4-80GB | 80G | 1 | yes | on: 3g.40gb x2 | healthy |")) << md;
  EXPECT_TRUE(HasLine(md, "| 1 | NVIDIA A100-SXM4-80GB | 80G | 0 | yes | off | drained: fan noise \\| vendor |"))
      << md;
  EXPECT_TRUE(HasLine(md, "| 2 | Tesla V100 | 16G | - | no | - | drained (health): GPU_IS_LOST |")) << md;
  EXPECT_TRUE(HasLine(md, "Driver version: 550.54.15. GPU source: nvml (test).")) << md;
  EXPECT_TRUE(HasLine(md, "| Path | Size | Used | Free | Use% |")) << md;
  EXPECT_TRUE(HasLine(md, "| /home | 2.0T | 1.2T | 819G | 61% |")) << md;
  EXPECT_TRUE(HasLine(md, "| /data | 512G | 0B | 512G | 0% |")) << md;
  EXPECT_TRUE(HasLine(md, "## Per-user usage")) << md;
  EXPECT_TRUE(HasLine(md, "per-user usage: not available (repquota not installed)")) << md;
}

TEST_F(InventoryFormatTest, StorageThatCannotBeMeasuredGetsAnErrorCell) {
  std::vector<StorageInfo> storage = Storage();
  storage.push_back({"/scratch", "No such file or directory", "", 0, 0, 0});
  std::string md = FormatInventory(Inventory(), storage, NotInstalled(), true);
  EXPECT_TRUE(HasLine(md, "| Path | Size | Used | Free | Use% | Error |")) << md;
  EXPECT_TRUE(HasLine(md, "| /scratch | - | - | - | - | error: No such file or directory |")) << md;
  EXPECT_TRUE(HasLine(md, "| /home | 2.0T | 1.2T | 819G | 61% | - |")) << md;
  std::string text = FormatInventory(Inventory(), storage, NotInstalled(), false);
  EXPECT_NE(text.find("error: No such file or directory"), std::string::npos) << text;
}

TEST_F(InventoryFormatTest, QuotaTableSortedByUsage) {
  QuotaReport q;
  q.filesystems.push_back({"/home", {"/home"}, "", {{"bob", 1024, 0, 0, "ok"},
                                                   {"alice", 600LL << 20, 500LL << 20, 1LL << 30, "soft"},
                                                   {"#1234", 5LL << 20, 0, 0, "ok"}}});
  q.filesystems.push_back({"/data", {"/data"}, "Mountpoint (or device) /data not found or has no quota enabled.", {}});
  std::string md = FormatInventory(Inventory(), Storage(), q, true);
  EXPECT_TRUE(HasLine(md, "| Storage | User | Used | Soft limit | Hard limit | Status |")) << md;
  auto alice = md.find("| /home | alice | 600G | 500G | 1.0T | over soft limit |");
  auto other = md.find("| /home | #1234 | 5.0G | none | none | ok |");
  auto bob = md.find("| /home | bob | 1.0M | none | none | ok |");
  ASSERT_NE(alice, std::string::npos) << md;
  ASSERT_NE(other, std::string::npos) << md;
  ASSERT_NE(bob, std::string::npos) << md;
  EXPECT_LT(alice, other);
  EXPECT_LT(other, bob);
  EXPECT_TRUE(HasLine(
      md, "per-user usage on /data: not available (Mountpoint (or device) /data not found or has no quota enabled.)"))
      << md;
}

TEST_F(InventoryFormatTest, OneReasonForEveryFileSystemIsSaidOnce) {
  QuotaReport q;
  q.filesystems.push_back({"/home", {"/home"}, "Cannot open quotafile: Permission denied", {}});
  q.filesystems.push_back({"/data", {"/data"}, "Cannot open quotafile: Permission denied", {}});
  std::string text = FormatInventory(Inventory(), Storage(), q, false);
  EXPECT_TRUE(HasLine(text, "per-user usage: not available (Cannot open quotafile: Permission denied)")) << text;
  EXPECT_EQ(text.find("per-user usage on"), std::string::npos) << text;
}

TEST_F(InventoryFormatTest, TextTablesAlignByDisplayWidth) {
  json inventory = Inventory();
  inventory["gpus"][0]["name"] = "模拟显卡";
  std::vector<StorageInfo> storage = Storage();
  storage[1].path = "/数据/共享";
  std::string text = FormatInventory(inventory, storage, NotInstalled(), false);
  auto lines = Lines(text);
  EXPECT_EQ(lines[0], "gpu1  2025-11-29 08:06  driver 550.54.15  nvml (test)");
  // Each column starts at the same display column on every row of its table.
  auto column = [](const std::string& line, const std::string& token) {
    size_t at = line.find(token);
    return at == std::string::npos ? -1 : DisplayWidth(line.substr(0, at));
  };
  int header = -1;
  std::vector<int> memory, size_end;
  for (const std::string& l : lines) {
    if (l.find("Model") != std::string::npos) header = column(l, "Memory");
    // " 80G " and not "80G": the model names hold "80GB".
    if (l.find(" 80G ") != std::string::npos) memory.push_back(column(l, " 80G ") + 1);
    if (l.find(" 16G ") != std::string::npos) memory.push_back(column(l, " 16G ") + 1);
    if (l.rfind("/home", 0) == 0) size_end.push_back(column(l, "2.0T") + 4);
    if (l.rfind("/数据/共享", 0) == 0) size_end.push_back(column(l, "512G") + 4);
  }
  ASSERT_EQ(memory.size(), 3u) << text;
  // "Memory" is right-aligned over its values: the values end where the title ends.
  for (int m : memory) EXPECT_EQ(m + 3, header + 6) << text;
  ASSERT_EQ(size_end.size(), 2u) << text;
  EXPECT_EQ(size_end[0], size_end[1]) << text;
}

TEST_F(InventoryFormatTest, NoStorageConfigured) {
  json inventory = Inventory();
  inventory["storage"] = json::array();
  QuotaReport q;
  q.unavailable = "no storage paths configured";
  std::string md = FormatInventory(inventory, {}, q, true);
  EXPECT_TRUE(HasLine(md, "no storage paths configured ([inventory] storage)")) << md;
  EXPECT_TRUE(HasLine(md, "per-user usage: not available (no storage paths configured)")) << md;
}

TEST_F(InventoryFormatTest, HumanBytesLikeDf) {
  EXPECT_EQ(HumanBytes(0), "0B");
  EXPECT_EQ(HumanBytes(1023), "1023B");
  EXPECT_EQ(HumanBytes(512 * 1024), "512K");
  EXPECT_EQ(HumanBytes(9 * kGiB + kGiB / 2), "9.5G");
  EXPECT_EQ(HumanBytes(512 * kGiB), "512G");
  EXPECT_EQ(HumanBytes(kTiB * 18 / 10), "1.8T");
  EXPECT_EQ(HumanBytes(1024 * kGiB - 1), "1.0T");
}

TEST_F(InventoryFormatTest, ParsesRepquotaCsv) {
  const std::string csv =
      "User,BlockStatus,FileStatus,BlockUsed,BlockSoftLimit,BlockHardLimit,BlockGrace,FileUsed,FileSoftLimit,"
      "FileHardLimit,FileGrace\n"
      "root,ok,ok,2048,0,0,,120,0,0,\n"
      "alice,soft,ok,614400,512000,1048576,6days,3000,0,0,\n"
      "odd,name,hard,ok,9,1,2,none,1,0,0,\n"
      "#1234,ok,ok,100,0,0,,1,0,0,\n";
  auto users = ParseRepquotaCsv(csv);
  ASSERT_TRUE(users.ok()) << users.status().message();
  ASSERT_EQ(users->size(), 4u);
  EXPECT_EQ((*users)[1].user, "alice");
  EXPECT_EQ((*users)[1].status, "soft");
  EXPECT_EQ((*users)[1].used_kib, 614400);
  EXPECT_EQ((*users)[1].soft_kib, 512000);
  EXPECT_EQ((*users)[1].hard_kib, 1048576);
  EXPECT_EQ((*users)[2].user, "odd,name");  // fields count from the right
  EXPECT_EQ((*users)[2].status, "hard");
  EXPECT_EQ((*users)[3].user, "#1234");
  // A header alone: quotas on, nobody uses space.
  auto empty = ParseRepquotaCsv(csv.substr(0, csv.find('\n') + 1));
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

TEST_F(InventoryFormatTest, RejectsWhatIsNotARepquotaReport) {
  EXPECT_FALSE(ParseRepquotaCsv("").ok());
  EXPECT_FALSE(ParseRepquotaCsv("*** Report for user quotas on device /dev/sda1\n").ok());
  EXPECT_FALSE(ParseRepquotaCsv("User,BlockStatus\nalice,ok,ok,12\n").ok());
  EXPECT_FALSE(ParseRepquotaCsv("User,BlockStatus\nalice,ok,ok,12k,0,0,,1,0,0,\n").ok());
}

TEST_F(InventoryFormatTest, JsonOfTheMeasurements) {
  std::vector<StorageInfo> storage = Storage();
  storage.push_back({"/gone", "No such file or directory", "", 0, 0, 0});
  json s = StorageUsageJson(storage);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0]["size_bytes"], 2 * kTiB);
  EXPECT_EQ(s[0]["free_bytes"], 819 * kGiB);
  EXPECT_EQ(s[2]["error"], "No such file or directory");
  EXPECT_FALSE(s[2].contains("size_bytes"));
  QuotaReport q;
  q.filesystems.push_back({"/home", {"/home"}, "", {{"alice", 1024, 0, 2048, "ok"}}});
  json j = QuotaJson(q);
  EXPECT_EQ(j["available"], true);
  EXPECT_EQ(j["filesystems"][0]["users"][0]["used_bytes"], 1024 * 1024);
  EXPECT_EQ(j["filesystems"][0]["users"][0]["hard_limit_bytes"], 2048 * 1024);
  EXPECT_EQ(QuotaJson(NotInstalled())["available"], false);
  EXPECT_EQ(QuotaJson(NotInstalled())["reason"], "repquota not installed");
}

}  // namespace
}  // namespace inventory_format_test
}  // namespace rota::cli
