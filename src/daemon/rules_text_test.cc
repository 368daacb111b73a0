// Tests of the lab's rules in words: every figure comes from the configuration, people see their
// own standing (admins everyone's), both languages say the same things, and the admin's own texts
// are used.
#include "daemon/rules_text.h"

#include <gtest/gtest.h>

#include <string>

namespace rota::daemon {
namespace rules_text_test {
namespace {

using config::Config;
using config::ParseConfig;

Config Parse(const std::string& text) {
  auto c = ParseConfig(text, "rota.toml");
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c.ok() ? *c : Config{};
}

// Every sentence of the section `id`, one per line ("" when there is no such section).
std::string SectionText(const RulesDoc& doc, const std::string& id) {
  std::string out;
  for (const RulesSection& s : doc.sections) {
    if (s.id != id) continue;
    for (const RulesItem& i : s.items) out += i.text + (i.code.empty() ? "" : " $ " + i.code) + "\n";
  }
  return out;
}

bool Has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

constexpr const char* kLab =
    "admin_group = \"gpu-admins\"\n[policy]\ntimezone = \"Asia/Shanghai\"\n"
    "[quota]\nweek_start_day = \"sun\"\n[quota.roles]\nphd = 40\nmaster = 20\n"
    "[users.alice]\nrole = \"phd\"\n[users.bob]\nrole = \"master\"\n[users.carol]\nquota = 5\n"
    "[watch]\nidle_after = \"20m\"\nact_after = \"45m\"\naction = \"reclaim\"\n"
    "[bookings]\nslot = \"1h\"\nmax_ahead = \"7d\"\nno_show_grace = \"10m\"\n"
    "[containers]\nruntime = \"podman\"\n";

TEST(RulesText, FiguresComeFromTheConfiguration) {
  const Config c = Parse(kLab);
  const RulesDoc doc = DescribeRules(c, {"alice", false, {}}, "en");
  const std::string quota = SectionText(doc, "quota");
  EXPECT_TRUE(Has(quota, "Role phd: 40 GPU-hours a week.")) << quota;
  EXPECT_TRUE(Has(quota, "Role master: 20 GPU-hours a week.")) << quota;
  EXPECT_TRUE(Has(quota, "starts on Sunday at midnight (Asia/Shanghai)")) << quota;
  EXPECT_TRUE(Has(quota, "People without a role: unlimited")) << quota;
  const std::string idle = SectionText(doc, "idle");
  EXPECT_TRUE(Has(idle, "under 5% busy on average for 20 minutes")) << idle;
  EXPECT_TRUE(Has(idle, "Still idle after 45 minutes without a keep: the job is stopped")) << idle;
  const std::string bookings = SectionText(doc, "bookings");
  EXPECT_TRUE(Has(bookings, "a grid of 1 hour, at most 7 days ahead, and last at most 12 hours")) << bookings;
  EXPECT_TRUE(Has(bookings, "not used within 10 minutes of its start")) << bookings;
  EXPECT_TRUE(Has(bookings, "a member of the group gpu-admins")) << bookings;
  // The defaults say what the defaults do.
  const RulesDoc plain = DescribeRules(Config{}, {"alice", false, {}}, "en");
  EXPECT_TRUE(Has(SectionText(plain, "idle"), "the admins are told")) << SectionText(plain, "idle");
  EXPECT_TRUE(Has(SectionText(plain, "peak"), "Mon–Fri 14:00–18:00: ×0.5 (peak, lower priority)"))
      << SectionText(plain, "peak");
  EXPECT_TRUE(Has(SectionText(plain, "peak"), "every day 22:00–08:00: ×1.5 (off-peak")) << SectionText(plain, "peak");
  EXPECT_TRUE(Has(SectionText(plain, "tiers"), "an admin (root)")) << SectionText(plain, "tiers");
}

TEST(RulesText, PromisesAreSaidWhereTheLabKeepsThem) {
  const std::string plain = SectionText(DescribeRules(Config{}, {"alice", false, {}}, "en"), "tiers");
  EXPECT_FALSE(Has(plain, "promised")) << plain;
  const std::string at_once =
      SectionText(DescribeRules(Parse("[policy]\npromise_slack = \"0s\"\n"), {"alice", false, {}}, "en"), "tiers");
  EXPECT_TRUE(Has(at_once, "the start first come first served would give it; a job still waiting past its promise "
                           "is protected too."))
      << at_once;
  const std::string slack =
      SectionText(DescribeRules(Parse("[policy]\npromise_slack = \"6h\"\n"), {"alice", false, {}}, "zh"), "tiers");
  EXPECT_TRUE(Has(slack, "超过承诺 6 小时仍未开始")) << slack;
  // Nothing protected: nothing said.
  const std::string none = SectionText(
      DescribeRules(Parse("[policy]\npromise_slack = \"0s\"\nprotect_max = 0\n"), {"alice", false, {}}, "en"),
      "tiers");
  EXPECT_FALSE(Has(none, "promised")) << none;
  EXPECT_FALSE(Has(none, "protected at once")) << none;
}

TEST(RulesText, ProtectionForeseenIsSaidWhereItActs) {
  const std::string plain = SectionText(DescribeRules(Config{}, {"alice", false, {}}, "en"), "tiers");
  EXPECT_TRUE(
      Has(plain, "A job the plan shows still waiting when it is due for protection is protected at once"))
      << plain;
  const std::string zh = SectionText(DescribeRules(Config{}, {"alice", false, {}}, "zh"), "tiers");
  EXPECT_TRUE(Has(zh, "它会立即受到保护")) << zh;
  const std::string off = SectionText(
      DescribeRules(Parse("[policy]\nprotect_foreseen = false\n"), {"alice", false, {}}, "en"), "tiers");
  EXPECT_FALSE(Has(off, "protected at once")) << off;
  EXPECT_TRUE(Has(off, "is protected: it goes first in its tier")) << off;
}

TEST(RulesText, EachPersonSeesTheirOwnStandingAndAdminsEveryones) {
  const Config c = Parse(kLab);
  const std::map<std::string, double> used = {{"alice", 12.5}, {"bob", 25}, {"dave", 3}};
  const std::string own = SectionText(DescribeRules(c, {"alice", false, {{"alice", 12.5}}}, "en"), "quota");
  EXPECT_TRUE(Has(own, "You: alice (phd): 12.5 GPU-hours used this week of 40 GPU-hours, 27.5 GPU-hours left."))
      << own;
  EXPECT_FALSE(Has(own, "bob")) << own;
  const std::string all = SectionText(DescribeRules(c, {"root", true, used}, "en"), "quota");
  EXPECT_TRUE(Has(all, "bob (master): 25 GPU-hours used this week of 20 GPU-hours, 0 GPU-hours left.")) << all;
  EXPECT_TRUE(Has(all, "carol (no role): 0 GPU-hours used this week of 5 GPU-hours")) << all;  // configured, idle
  EXPECT_TRUE(Has(all, "dave (no role): 3 GPU-hours used this week, no quota.")) << all;  // not configured, used
  // Anonymous readers (a wall display) get the rules without anyone's standing.
  const std::string anonymous = SectionText(DescribeRules(c, {"", false, {}}, "en"), "quota");
  EXPECT_FALSE(Has(anonymous, "You:")) << anonymous;
  EXPECT_FALSE(Has(anonymous, "used this week")) << anonymous;
}

TEST(RulesText, ChineseAndEnglishSayTheSameThings) {
  Config c = Parse(std::string(kLab) + "[rules]\nnotes = [\"Clean /data/tmp on Fridays.\"]\n");
  for (const RulesReader& reader : {RulesReader{"alice", false, {{"alice", 1}}}, RulesReader{"root", true, {{"bob", 2}}}}) {
    const RulesDoc en = DescribeRules(c, reader, "en"), zh = DescribeRules(c, reader, "zh");
    ASSERT_EQ(en.sections.size(), zh.sections.size());
    for (size_t i = 0; i < en.sections.size(); ++i) {
      EXPECT_EQ(en.sections[i].id, zh.sections[i].id);
      EXPECT_NE(en.sections[i].heading, zh.sections[i].heading);
      ASSERT_EQ(en.sections[i].items.size(), zh.sections[i].items.size()) << en.sections[i].id;
      for (size_t k = 0; k < en.sections[i].items.size(); ++k) {
        EXPECT_EQ(en.sections[i].items[k].code, zh.sections[i].items[k].code);  // commands are not translated
      }
    }
  }
  const RulesDoc zh = DescribeRules(c, {"alice", false, {{"alice", 12.5}}}, "zh");
  EXPECT_EQ(zh.title, "实验室 GPU 使用规则");
  EXPECT_TRUE(Has(SectionText(zh, "quota"), "你：alice（phd）：本周已用 12.5 GPU 小时，配额 40 GPU 小时，剩余 27.5 GPU 小时。"))
      << SectionText(zh, "quota");
  EXPECT_TRUE(Has(SectionText(zh, "idle"), "20 分钟")) << SectionText(zh, "idle");
  EXPECT_TRUE(Has(SectionText(zh, "peak"), "周一至周五 14:00–18:00")) << SectionText(zh, "peak");
}

TEST(RulesText, ContainersOnlyWhereTheLabRunsThemAndWhatTheySee) {
  EXPECT_EQ(SectionText(DescribeRules(Config{}, {"alice", false, {}}, "en"), "containers"), "");
  Config c = Parse(
      "[containers]\nruntime = \"podman\"\nimages = [\"docker.io/pytorch/*\", \"localhost/lab:1\"]\n"
      "mounts = [\"/data/datasets:ro\", \"/scratch/{user}:/scratch\"]\ndata_dir = \"/data/{user}\"\n");
  const std::string en = SectionText(DescribeRules(c, {"alice", false, {}}, "en"), "containers");
  for (const char* says : {"started by podman", "Images allowed: docker.io/pytorch/*, localhost/lab:1",
                           "never root", "your data directory /data/{user}", "/data/datasets (read-only)",
                           "/scratch/{user} → /scratch", "It has no network.",
                           "$ rota submit --image IMAGE --gpus 1 -- python train.py",
                           "$ rota shell --image IMAGE --gpus 1"}) {
    EXPECT_TRUE(Has(en, says)) << says << "\n" << en;
  }
  const std::string zh = SectionText(DescribeRules(c, {"alice", false, {}}, "zh"), "containers");
  EXPECT_TRUE(Has(zh, "不是 root")) << zh;
  EXPECT_TRUE(Has(zh, "/data/datasets（只读）")) << zh;
  Config open = Parse("[containers]\nruntime = \"apptainer\"\nimages = [\"/opt/images/a.sif\"]\n"
                      "network = true\nallow_root = true\n");
  const std::string o = SectionText(DescribeRules(open, {"alice", false, {}}, "en"), "containers");
  EXPECT_TRUE(Has(o, "It has the network.")) << o;
  EXPECT_TRUE(Has(o, "the image's own user (which may be root)")) << o;
  EXPECT_TRUE(Has(o, "$ rota submit --image /opt/images/a.sif --gpus 1")) << o;
}

TEST(RulesText, TheAdminsTextsAndTheLabsChoices) {
  Config c = Parse(
      "[rules]\naccount = \"Mail lab-admin@example.edu with your student id.\"\n"
      "notes = [\"Clean /data/tmp on Fridays.\", \"Datasets are read-only.\"]\n"
      "[policy]\nalgorithm = \"backfill\"\n[preemption]\nenabled = false\n[watch]\nenabled = false\n");
  const RulesDoc doc = DescribeRules(c, {"alice", false, {}}, "en");
  EXPECT_EQ(SectionText(doc, "account"), "Mail lab-admin@example.edu with your student id.\n");
  EXPECT_EQ(SectionText(doc, "lab"), "Clean /data/tmp on Fridays.\nDatasets are read-only.\n");
  EXPECT_TRUE(Has(SectionText(doc, "tiers"), "in the order they were submitted (backfill)")) << SectionText(doc, "tiers");
  EXPECT_TRUE(Has(SectionText(doc, "tiers"), "No preemption")) << SectionText(doc, "tiers");
  // Sizing by the predicted run is said where the lab chose it (and size weighs something).
  EXPECT_FALSE(Has(SectionText(DescribeRules(Config{}, {"alice", false, {}}, "en"), "tiers"), "not the limit"));
  Config predicted = Parse("[policy]\nsize_by = \"prediction\"\n");
  EXPECT_TRUE(Has(SectionText(DescribeRules(predicted, {"alice", false, {}}, "en"), "tiers"),
                  "actually took, not the limit you ask for"));
  EXPECT_TRUE(Has(SectionText(DescribeRules(predicted, {"alice", false, {}}, "zh"), "tiers"), "不按申请的时限"));
  predicted.policy.weights.size = 0;
  EXPECT_FALSE(Has(SectionText(DescribeRules(predicted, {"alice", false, {}}, "en"), "tiers"), "not the limit"));
  EXPECT_TRUE(Has(SectionText(doc, "peak"), "do not change with the time of day")) << SectionText(doc, "peak");
  EXPECT_TRUE(Has(SectionText(doc, "idle"), "Idle GPUs are not watched.")) << SectionText(doc, "idle");
  EXPECT_TRUE(Has(SectionText(doc, "limits"), "submit with --signal USR1@120")) << SectionText(doc, "limits");
  Config signalled = Parse("[policy]\ndefault_signal = \"USR1@90\"\n");
  const std::string limits = SectionText(DescribeRules(signalled, {"alice", false, {}}, "en"), "limits");
  EXPECT_TRUE(Has(limits, "1 minute 30 seconds before that it gets SIGUSR1")) << limits;
  // Without notes there is no section for them; without an account text, ask an admin.
  const RulesDoc plain = DescribeRules(Config{}, {"alice", false, {}}, "en");
  EXPECT_EQ(SectionText(plain, "lab"), "");
  EXPECT_TRUE(Has(SectionText(plain, "account"), "Ask an admin (root)")) << SectionText(plain, "account");
  EXPECT_EQ(plain.sections.back().id, "commands");
  EXPECT_EQ(plain.sections.back().items.size(), 5u);
  EXPECT_EQ(plain.sections.back().items[0].code, "rota submit --gpus 1 --time 4h -- python train.py");
}

}  // namespace
}  // namespace rules_text_test
}  // namespace rota::daemon
