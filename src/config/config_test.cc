#include "config/config.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

namespace rota::config {
namespace config_test {
namespace {

// The error lines of a config that must not parse.
std::vector<std::string> Errors(const std::string& text) {
  auto c = ParseConfig(text, "rota.toml");
  EXPECT_FALSE(c.ok()) << text;
  std::vector<std::string> lines;
  if (c.ok()) return lines;
  EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
  std::string m = c.status().message();
  for (std::size_t at = 0; at <= m.size();) {
    std::size_t nl = m.find('\n', at);
    if (nl == std::string::npos) nl = m.size();
    lines.push_back(m.substr(at, nl - at));
    at = nl + 1;
  }
  return lines;
}

// The single error of `text`, which must start with "rota.toml:LINE:".
std::string OneError(const std::string& text, int line) {
  auto lines = Errors(text);
  if (lines.size() != 1) {
    ADD_FAILURE() << "expected one error, got " << lines.size() << " for:\n" << text;
    return "";
  }
  EXPECT_EQ(lines[0].rfind("rota.toml:" + std::to_string(line) + ":", 0), 0u) << lines[0];
  return lines[0];
}

bool Has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(Config, EmptyFileIsTheDefaults) {
  auto c = ParseConfig("", "rota.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  Policy d;
  const Policy& p = c->policy;
  EXPECT_EQ(p.algorithm, d.algorithm);
  EXPECT_EQ(p.mode, d.mode);
  EXPECT_EQ(p.weights.tier, d.weights.tier);
  EXPECT_EQ(p.weights.age, d.weights.age);
  EXPECT_EQ(p.age_max, d.age_max);
  EXPECT_EQ(p.fairshare_half_life, d.fairshare_half_life);
  EXPECT_EQ(p.time_of_day.size(), d.time_of_day.size());
  EXPECT_EQ(p.zone.OffsetAt(0), 0);
  // The one difference from the core's defaults: a rotad's jobs never span nodes, read from a
  // file or not (the simulator's Policy{} lets a 64-GPU trace job span servers of 8).
  EXPECT_FALSE(p.span_nodes);
  EXPECT_TRUE(d.span_nodes);
  EXPECT_FALSE(Config{}.policy.span_nodes);
  EXPECT_FALSE(ParseConfig("[policy]\nalgorithm = \"fifo\"\n", "rota.toml")->policy.span_nodes);
  EXPECT_EQ(p.quota.default_hours, d.quota.default_hours);
  EXPECT_EQ(p.quota.week_start_day, 0);
  EXPECT_TRUE(p.quota.role_hours.empty());
  EXPECT_EQ(p.preemption, d.preemption);
  EXPECT_EQ(p.preemptible_tiers, d.preemptible_tiers);
  EXPECT_EQ(p.plan_depth, d.plan_depth);
  EXPECT_EQ(c->gpu_source, GpuSource::kNvml);
  EXPECT_TRUE(c->simulated_gpus.empty());
  EXPECT_TRUE(c->users.empty());
  EXPECT_EQ(c->log, "stderr");
  EXPECT_EQ(c->default_mem_per_gpu, 0);
  EXPECT_TRUE(c->state_dir.empty() && c->socket.empty() && c->admin_group.empty());
  EXPECT_FALSE(c->allow_root_jobs);
  EXPECT_EQ(c->sample_interval, 1);
  EXPECT_EQ(c->nvml_timeout, 2);
  EXPECT_EQ(c->drain_after, 3);
  EXPECT_TRUE(c->storage_paths.empty());
}

TEST(Config, BookingRules) {
  auto c = ParseConfig(
      "[bookings]\nslot = \"15m\"\nmax_ahead = \"7d\"\nsame_day_needs_admin = false\nmax_length = \"8h\"\n"
      "max_per_week = 3\nmax_gpu_hours_per_week = 40\nauto_confirm = false\nno_show_grace = \"10m\"\n"
      "reminder = \"5m\"\npenalty_step = 0.5\npenalty_half_life = \"3d\"\npenalty_alert = 2\n"
      "penalty_window = \"14d\"\n",
      "rota.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  const BookingRules& r = c->bookings;
  EXPECT_EQ(r.slot, 15 * kMinute);
  EXPECT_EQ(r.max_ahead, 7 * kDay);
  EXPECT_FALSE(r.same_day_needs_admin);
  EXPECT_EQ(r.max_length, 8 * kHour);
  EXPECT_EQ(r.max_per_week, 3);
  EXPECT_EQ(r.max_gpu_hours_per_week, 40);
  EXPECT_FALSE(r.auto_confirm);
  EXPECT_EQ(r.no_show_grace, 10 * kMinute);
  EXPECT_EQ(r.reminder, 5 * kMinute);
  EXPECT_EQ(r.penalty_step, 0.5);
  EXPECT_EQ(r.penalty_half_life, 3 * kDay);
  EXPECT_EQ(r.penalty_alert, 2);
  EXPECT_EQ(r.penalty_window, 14 * kDay);
  auto unlimited = ParseConfig("[bookings]\nmax_gpu_hours_per_week = \"unlimited\"\n", "rota.toml");
  ASSERT_TRUE(unlimited.ok());
  EXPECT_TRUE(std::isinf(unlimited->bookings.max_gpu_hours_per_week));
  auto quota = ParseConfig("[bookings]\nmax_gpu_hours_per_week = \"quota\"\n", "rota.toml");
  ASSERT_TRUE(quota.ok());
  EXPECT_LT(quota->bookings.max_gpu_hours_per_week, 0);
  auto bad = ParseConfig("[bookings]\nslot = \"7m\"\n", "rota.toml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("does not divide a day"), std::string::npos) << bad.status().message();
}

TEST(Config, WatchRules) {
  auto c = ParseConfig(
      "[watch]\nidle_util = 10\nidle_after = \"20m\"\nact_after = \"1h\"\naction = \"reclaim\"\n"
      "stuck_memory = 0.8\nkeeps_per_day = 1\nover_memory = 1.2\noutside_action = \"stop\"\n"
      "outside_grace = \"5m\"\nover_memory_after = \"1m\"\nover_memory_action = \"stop\"\n",
      "rota.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->watch.idle_util, 10);
  EXPECT_EQ(c->watch.idle_after, 20 * kMinute);
  EXPECT_EQ(c->watch.act_after, kHour);
  EXPECT_TRUE(c->watch.reclaim);
  EXPECT_EQ(c->watch.stuck_memory, 0.8);
  EXPECT_EQ(c->watch.keeps_per_day, 1);
  EXPECT_EQ(c->watch.over_memory, 1.2);
  EXPECT_TRUE(c->watch.outside_stop);
  EXPECT_EQ(c->watch.outside_grace, 5 * kMinute);
  EXPECT_EQ(c->watch.over_memory_after, kMinute);
  EXPECT_TRUE(c->watch.over_memory_stop);
  EXPECT_FALSE(ParseConfig("", "rota.toml")->watch.reclaim);  // notify by default: nothing stopped by surprise
  EXPECT_FALSE(ParseConfig("", "rota.toml")->watch.outside_stop);
  auto bad = ParseConfig(
      "[watch]\nidle_after = \"30m\"\nact_after = \"15m\"\naction = \"kill\"\noutside_action = \"shoot\"\n", "rota.toml");
  ASSERT_FALSE(bad.ok());
  const std::string m = bad.status().message();
  EXPECT_NE(m.find("act_after must not be shorter"), std::string::npos) << m;
  EXPECT_NE(m.find("is not one of notify, reclaim"), std::string::npos) << m;
  EXPECT_NE(m.find("is not one of notify, stop"), std::string::npos) << m;
}

TEST(Config, RulesInTheAdminsWords) {
  auto c = ParseConfig(
      "[rules]\naccount = \"Write to 王老师 with your student id.\\nThen run rota rules.\"\n"
      "notes = [\"Clean /data/tmp every Friday.\", \"数据集只读。\"]\n",
      "rota.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->rules.account, "Write to 王老师 with your student id.\nThen run rota rules.");
  EXPECT_EQ(c->rules.notes, (std::vector<std::string>{"Clean /data/tmp every Friday.", "数据集只读。"}));
  EXPECT_TRUE(ParseConfig("", "rota.toml")->rules.notes.empty());

  const std::vector<std::string> bad = Errors("[rules]\nnotes = [\"ok\", \"  \", 3]\naccount = \"" +
                                              std::string(4001, 'x') + "\"\nextra = 1\n");
  ASSERT_EQ(bad.size(), 4u);
  EXPECT_TRUE(Has(bad[0], "rota.toml:2:") && Has(bad[0], "not a sentence")) << bad[0];
  EXPECT_TRUE(Has(bad[1], "rota.toml:2:") && Has(bad[1], "not a sentence")) << bad[1];
  EXPECT_TRUE(Has(bad[2], "rota.toml:3:") && Has(bad[2], "longer than 4000 bytes")) << bad[2];
  EXPECT_TRUE(Has(bad[3], "extra")) << bad[3];

  auto advice = ParseConfig("[advice]\nprices = \"/srv/prices.csv\"\nwait_threshold = \"12h\"\n", "rota.toml");
  ASSERT_TRUE(advice.ok()) << advice.status().message();
  EXPECT_EQ(advice->advice.prices, "/srv/prices.csv");
  EXPECT_EQ(advice->advice.wait_threshold, 12 * kHour);
  EXPECT_EQ(ParseConfig("", "rota.toml")->advice.wait_threshold, kDay);
  EXPECT_TRUE(Has(OneError("[advice]\nprices = \"prices.csv\"\n", 2), "not an absolute path"));
}

TEST(Config, SamplingHealthAndInventory) {
  auto c = ParseConfig(
      "[gpus]\nsample_interval = \"5s\"\nnvml_timeout = \"3s\"\ndrain_after = 5\n"
      "[inventory]\nstorage = [\"/home\", \"/data\"]\n",
      "rota.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->sample_interval, 5);
  EXPECT_EQ(c->nvml_timeout, 3);
  EXPECT_EQ(c->drain_after, 5);
  EXPECT_EQ(c->storage_paths, (std::vector<std::string>{"/home", "/data"}));

  auto bad = ParseConfig(
      "[gpus]\nsample_interval = \"0s\"\ndrain_after = 0\n[inventory]\nstorage = [\"home\"]\nsize = 1\n",
      "rota.toml");
  ASSERT_FALSE(bad.ok());
  const std::string m = bad.status().message();
  EXPECT_NE(m.find("rota.toml:2:"), std::string::npos) << m;
  EXPECT_NE(m.find("sample_interval"), std::string::npos) << m;
  EXPECT_NE(m.find("drain_after"), std::string::npos) << m;
  EXPECT_NE(m.find("is not an absolute path"), std::string::npos) << m;
  EXPECT_NE(m.find("size"), std::string::npos) << m;  // unknown key in [inventory]
}

TEST(Config, WarnsOfAContainerRuntimeThatIsNotThere) {
  auto c = ParseConfig("[containers]\nruntime = \"podman\"\nprogram = \"/no/such/podman\"\n", "rota.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  std::vector<std::string> w = Warnings(*c, 0);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0], "[containers] runtime = \"podman\", but /no/such/podman is not an executable here: jobs with "
                  "--image will fail to start (install it, or set program)");
  auto there = ParseConfig("[containers]\nruntime = \"podman\"\nprogram = \"/bin/sh\"\n", "rota.toml");
  ASSERT_TRUE(there.ok());
  EXPECT_TRUE(Warnings(*there, 0).empty());
}

TEST(Config, WarnsOfAMemoryDefaultAboveTheServersMemory) {
  auto c = ParseConfig("default_mem_per_gpu = \"32G\"\n", "rota.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  std::vector<std::string> w = Warnings(*c, 16 * 1024);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0], "default_mem_per_gpu = 32G is more than this server's memory (16G): jobs that ask for no "
                  "--mem-per-gpu have no effective host-memory limit");
  EXPECT_TRUE(Warnings(*c, 32 * 1024).empty());  // exactly the memory: fine
  EXPECT_TRUE(Warnings(*c, 0).empty());          // the memory unknown: nothing to say
  auto none = ParseConfig("", "rota.toml");      // no default: no limit, nothing to say
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(Warnings(*none, 1024).empty());
  EXPECT_GT(ServerMemory(), 0);
}

TEST(Config, BundledExampleLoadsWithEveryValue) {
  auto c = LoadConfig(std::string(ROTA_SOURCE_DIR) + "/packaging/rota.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  const Policy& p = c->policy;
  EXPECT_EQ(c->admin_group, "rota-admin");
  EXPECT_FALSE(c->allow_root_jobs);
  EXPECT_EQ(c->engine.kind, EngineKind::kLocal);
  EXPECT_EQ(c->engine.command_timeout, 10);
  EXPECT_EQ(c->default_mem_per_gpu, 32 * 1024);
  EXPECT_EQ(p.algorithm, Algorithm::kRota);
  EXPECT_EQ(p.age_max, 14 * kDay);
  EXPECT_EQ(p.protect_after, 7 * kDay);
  EXPECT_EQ(p.protect_max, 1);
  EXPECT_FALSE(p.size_by_prediction);
  EXPECT_EQ(p.heavy_time, 4 * kHour);
  EXPECT_EQ(p.zone.name(), "Asia/Shanghai");
  EXPECT_EQ(p.zone.OffsetAt(1796083200), 8 * 3600);  // 2026-12-01
  EXPECT_EQ(c->timezone, "Asia/Shanghai");
  ASSERT_EQ(p.time_of_day.size(), 2u);
  EXPECT_EQ(p.time_of_day[0].weekdays, 0x1f);
  EXPECT_EQ(p.time_of_day[0].start_minute, 14 * 60);
  EXPECT_EQ(p.time_of_day[0].end_minute, 18 * 60);
  EXPECT_EQ(p.time_of_day[0].factor, 0.5);
  EXPECT_EQ(p.time_of_day[1].weekdays, 0x7f);
  EXPECT_EQ(p.quota.role_hours.at("phd"), 300);
  EXPECT_EQ(p.quota.role_hours.at("staff"), -1);  // unlimited
  EXPECT_EQ(p.quota.default_hours, -1);
  EXPECT_EQ(p.quota.user_role.at("bob"), "master");
  EXPECT_EQ(p.quota.user_hours.at("bob"), 200);
  EXPECT_EQ(p.quota.project_hours.at("llm"), 500);
  EXPECT_EQ(p.quota.project_hours.at("vision"), -1);
  EXPECT_TRUE(p.preemption);
  EXPECT_TRUE(p.IsPreemptible(Tier::kExplore));
  EXPECT_FALSE(p.IsPreemptible(Tier::kRegular));
  EXPECT_NE(c->rules.account.find("\nAccounts are made"), std::string::npos);
  EXPECT_EQ(c->rules.notes.size(), 2u);
  EXPECT_EQ(c->advice.prices, "/etc/rota/gpu-prices.csv");
  EXPECT_EQ(c->advice.wait_threshold, kDay);

  // A service installed from this file schedules the real cards.
  EXPECT_EQ(c->gpu_source, GpuSource::kNvml);
  EXPECT_TRUE(c->simulated_gpus.empty());

  ASSERT_EQ(c->users.size(), 4u);
  EXPECT_EQ(c->users.at("alice").email, "alice@lab.example.edu");
  EXPECT_EQ(c->users.at("alice").slack, "U012AB3CD");
  EXPECT_EQ(c->users.at("bob").quota_hours, 200);
  EXPECT_EQ(c->users.at("bob").wecom, "bob");
  EXPECT_EQ(c->users.at("张三").role, "phd");
  EXPECT_EQ(c->users.at("张三").dingtalk, "13800000000");
  EXPECT_FALSE(c->users.at("张三").feishu.empty());
  EXPECT_EQ(c->users.at("alice").language, "en");
  EXPECT_EQ(c->users.at("alice").channels, (std::vector<std::string>{"mail", "terminals"}));
  EXPECT_EQ(c->users.at("alice").events->size(), 4u);
  EXPECT_FALSE(c->users.at("bob").channels.has_value());
  const NotifyConfig& n = c->notify;
  EXPECT_EQ(n.language, "zh");
  ASSERT_EQ(n.channels.size(), 4u);
  EXPECT_EQ(n.channels.at("admin-mail").email.to, std::vector<std::string>{"gpu-admins@lab.example.edu"});
  EXPECT_EQ(n.channels.at("mail").type, "email");
  EXPECT_EQ(n.channels.at("mail").email.url, "smtp://localhost:25");
  EXPECT_EQ(n.channels.at("lab-feishu").type, "feishu");
  EXPECT_EQ(n.per_minute.at("lab-feishu"), 100);
  EXPECT_EQ(n.per_minute.at("terminals"), 0);
  EXPECT_EQ(n.admin_channels, (std::vector<std::string>{"lab-feishu", "admin-mail"}));
  EXPECT_EQ(n.time_limit_warning, 600);
  EXPECT_EQ(n.keep_messages, 30 * kDay);
  EXPECT_EQ(n.retry.first_backoff, 30);
  EXPECT_EQ(n.retry.max_age, kDay);
  EXPECT_EQ(n.fail_after, 3);
  EXPECT_EQ(c->projects.size(), 2u);
  EXPECT_TRUE(Has(Summary(*c), "GPUs from NVML"));
  EXPECT_TRUE(Has(Summary(*c), "4 users"));
  EXPECT_EQ(c->web.listen, "127.0.0.1:8080");
  EXPECT_EQ(c->web.static_dir, "/usr/share/rota/web");
  EXPECT_EQ(c->web.login_ttl, 5 * kMinute);
  EXPECT_EQ(c->web.session_ttl, 7 * kDay);
  EXPECT_EQ(c->web.threads, 64);
  EXPECT_EQ(c->web.connections_per_address, 24);
  EXPECT_EQ(c->web.pam_service, "rota");
  EXPECT_FALSE(c->web.insecure_http);
  EXPECT_FALSE(c->default_signal.has_value());
  EXPECT_EQ(c->limits.connections_per_user, 64);
  EXPECT_EQ(c->limits.history_limit, 1000);
}

// The bundled example's commented [[gpus.card]] groups, uncommented with source = "simulated",
// are a valid configuration: the example an admin copies from stays true.
TEST(Config, BundledExamplesSimulatedCardsParse) {
  std::ifstream in(std::string(ROTA_SOURCE_DIR) + "/packaging/rota.toml");
  std::string text, line;
  bool in_cards = false;
  int uncommented = 0;
  while (std::getline(in, line)) {
    if (line.rfind("source = \"nvml\"", 0) == 0) line = "source = \"simulated\"";
    if (line == "# [[gpus.card]]") in_cards = true;
    if (in_cards && line.empty()) in_cards = false;
    if (in_cards) {
      line = line == "#" ? "" : line.substr(2);
      ++uncommented;
    }
    text += line + "\n";
  }
  ASSERT_GT(uncommented, 8);
  auto c = ParseConfig(text, "rota.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->gpu_source, GpuSource::kSimulated);
  EXPECT_TRUE(Has(Summary(*c), "5 simulated GPUs (1 in MIG mode)"));
  ASSERT_EQ(c->simulated_gpus.size(), 5u);
  const Gpu& g0 = c->simulated_gpus[0];
  EXPECT_EQ(g0.memory, 80 * 1024);
  EXPECT_EQ(g0.model, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(g0.nvlink, std::vector<int>{1});
  EXPECT_EQ(c->simulated_gpus[3].nvlink, std::vector<int>{2});
  const Gpu& g4 = c->simulated_gpus[4];
  EXPECT_EQ(g4.index, 4);
  ASSERT_EQ(g4.mig.size(), 4u);
  EXPECT_EQ(g4.mig[0].profile, "3g.40gb");
  EXPECT_EQ(g4.mig[0].memory, 40 * 1024);
  EXPECT_EQ(g4.mig[3].memory, 10 * 1024);
  EXPECT_NE(g4.mig[0].uuid, g4.mig[1].uuid);
}

TEST(Config, Web) {
  auto c = ParseConfig(
      "[web]\nlisten = \"[::1]:0\"\npublic_read = true\nmetrics_public = true\npassword_login = false\n"
      "allowed_hosts = [\"gpu1.lab\"]\nlogin_ttl = \"2m\"\nsession_ttl = \"1d\"\nmax_body = 4096\n"
      "rate = 0\nburst = 10\nthreads = 4\nstatic_dir = \"/srv/web\"\n",
      "rota.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->web.listen, "[::1]:0");
  EXPECT_TRUE(c->web.public_read);
  EXPECT_TRUE(c->web.metrics_public);
  EXPECT_FALSE(c->web.password_login);
  EXPECT_EQ(c->web.allowed_hosts, std::vector<std::string>{"gpu1.lab"});
  EXPECT_EQ(c->web.login_ttl, 2 * kMinute);
  EXPECT_EQ(c->web.session_ttl, kDay);
  EXPECT_EQ(c->web.max_body, 4096);
  EXPECT_EQ(c->web.rate, 0);
  EXPECT_EQ(c->web.threads, 4);
  EXPECT_EQ(c->web.static_dir, "/srv/web");
  EXPECT_TRUE(ParseConfig("[web]\nlisten = \"\"\n", "rota.toml")->web.listen.empty());  // off
  EXPECT_FALSE(ParseConfig("", "rota.toml")->web.public_read);  // sign-in needed by default
  auto bad = ParseConfig("[web]\nlisten = \"8080\"\nstatic_dir = \"web\"\nallowed_hosts = [1]\n", "rota.toml");
  ASSERT_FALSE(bad.ok());
  const std::string m = bad.status().message();
  EXPECT_TRUE(Has(m, "is not \"host:port\"")) << m;
  EXPECT_TRUE(Has(m, "is not an absolute path")) << m;
  EXPECT_TRUE(Has(m, "is not a host name")) << m;
}

TEST(Config, DefaultSignal) {
  EXPECT_FALSE(ParseConfig("", "rota.toml")->default_signal.has_value());  // none unless set
  EXPECT_FALSE(ParseConfig("[policy]\ndefault_signal = \"\"\n", "rota.toml")->default_signal.has_value());
  auto c = ParseConfig("[policy]\ndefault_signal = \"USR2@5m\"\n", "rota.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->default_signal->signal, 12);
  EXPECT_EQ(c->default_signal->grace, 300);
  auto e = OneError("[policy]\ndefault_signal = \"USR9\"\n", 2);
  EXPECT_TRUE(Has(e, "default_signal \"USR9\" is not a warning signal: expected SIGNAL[@SECONDS]")) << e;
}

TEST(Config, Limits) {
  auto c = ParseConfig(
      "[limits]\nconnections_per_user = 8\nconnections = 100\nidle_timeout = \"2m\"\nrequest_timeout = \"3s\"\n"
      "pending_per_user = 0\nsubmit_rate = 2.5\nsubmit_burst = 10\nids_per_request = 150\nhistory_limit = 20\n",
      "rota.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  const LimitsConfig& l = c->limits;
  EXPECT_EQ(l.connections_per_user, 8);
  EXPECT_EQ(l.connections, 100);
  EXPECT_EQ(l.idle_timeout, 2 * kMinute);
  EXPECT_EQ(l.request_timeout, 3);
  EXPECT_EQ(l.pending_per_user, 0);
  EXPECT_EQ(l.submit_rate, 2.5);
  EXPECT_EQ(l.submit_burst, 10);
  EXPECT_EQ(l.ids_per_request, 150);
  EXPECT_EQ(l.history_limit, 20);
  EXPECT_EQ(l.job_processes, 4096);  // a default kept
  EXPECT_EQ(ParseConfig("[limits]\njob_processes = 0\ncpu_weight_per_gpu = 150\n", "rota.toml")->limits.cpu_weight_per_gpu,
            150);
  // Defaults: a limit on everything, none that a lab's ordinary use reaches.
  const LimitsConfig d = ParseConfig("", "rota.toml")->limits;
  EXPECT_EQ(d.connections_per_user, 64);
  EXPECT_GT(d.pending_per_user, 0);
  EXPECT_GT(d.submit_rate, 0);
  auto bad = ParseConfig("[limits]\nconnections_per_user = 0\nconnections = 4\nidle_timeout = \"0s\"\nsurprise = 1\n",
                         "rota.toml");
  ASSERT_FALSE(bad.ok());
  const std::string m = bad.status().message();
  EXPECT_TRUE(Has(m, "connections_per_user")) << m;
  EXPECT_TRUE(Has(m, "rota.toml:3:")) << m;
  EXPECT_TRUE(Has(m, "idle_timeout")) << m;
  EXPECT_TRUE(Has(m, "surprise")) << m;
}

TEST(Config, Engine) {
  // The default stays the local engine.
  EXPECT_EQ(ParseConfig("", "rota.toml")->engine.kind, EngineKind::kLocal);
  auto c = ParseConfig(
      "[engine]\nkind = \"slurm\"\nbin_dir = \"/opt/slurm/bin\"\nslurm_conf = \"/etc/slurm-lab/slurm.conf\"\n"
      "partition = \"gpu\"\naccount = \"lab\"\nnode = \"gpu1\"\ncommand_timeout = \"30s\"\npoll_interval = 0.5\n"
      "agent_tokens = \"/etc/rota/agents\"\nagent_stale_after = \"1m\"\ntag = \"lab_2\"\n",
      "rota.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  const EngineConfig& e = c->engine;
  EXPECT_EQ(e.tag, "lab_2");
  EXPECT_EQ(ParseConfig("", "rota.toml")->engine.tag, "rota");
  EXPECT_EQ(e.kind, EngineKind::kSlurm);
  EXPECT_EQ(e.bin_dir, "/opt/slurm/bin");
  EXPECT_EQ(e.slurm_conf, "/etc/slurm-lab/slurm.conf");
  EXPECT_EQ(e.partition, "gpu");
  EXPECT_EQ(e.account, "lab");
  EXPECT_EQ(e.node, "gpu1");
  EXPECT_EQ(e.command_timeout, 30);
  EXPECT_EQ(e.poll_interval, 0.5);
  EXPECT_EQ(e.agent_tokens, "/etc/rota/agents");
  EXPECT_EQ(e.agent_stale_after, 60);
  EXPECT_FALSE(ParseConfig("[engine]\nagent_tokens = \"agents\"\n", "rota.toml").ok());
  auto bad = ParseConfig(
      "[engine]\nkind = \"kubernetes\"\nbin_dir = \"bin\"\npoll_interval = 0.01\ncommand_timeout = \"0s\"\nnodes = 2\n"
      "tag = \"rota-2\"\n",
      "rota.toml");
  ASSERT_FALSE(bad.ok());
  const std::string m = bad.status().message();
  for (const char* want : {"rota.toml:2:", "local, slurm", "rota.toml:3:", "absolute path", "poll_interval",
                           "command_timeout", "nodes", "rota.toml:7:", "letter"}) {
    EXPECT_TRUE(Has(m, want)) << want << " in " << m;
  }
  // The GPUs of the Slurm partition's nodes: only with the Slurm engine.
  auto cards = ParseConfig(
      "[gpus]\nsource = \"slurm\"\n[engine]\nkind = \"slurm\"\ngpu_model = \"NVIDIA A100\"\ngpu_memory = \"80G\"\n",
      "rota.toml");
  ASSERT_TRUE(cards.ok()) << cards.status().message();
  EXPECT_EQ(cards->gpu_source, GpuSource::kSlurm);
  EXPECT_EQ(cards->engine.gpu_model, "NVIDIA A100");
  EXPECT_EQ(cards->engine.gpu_memory, 80 * 1024);
  for (const char* text : {"[gpus]\nsource = \"slurm\"\n", "[gpus]\nsource = \"slurm\"\n[engine]\nkind = \"local\"\n"}) {
    auto alone = ParseConfig(text, "rota.toml");
    ASSERT_FALSE(alone.ok()) << text;
    EXPECT_TRUE(Has(alone.status().message(), "needs [engine] kind = \"slurm\"")) << alone.status().message();
  }
}

TEST(Config, ChineseUserNames) {
  auto c = ParseConfig("[quota.roles]\n\"博士\" = 100\n[users.\"张三\"]\nrole = \"博士\"\nquota = 50\n", "rota.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->policy.quota.user_role.at("张三"), "博士");
  EXPECT_EQ(c->policy.quota.user_hours.at("张三"), 50);
  // TOML allows only ASCII bare keys: an unquoted Chinese key is a syntax error with its position.
  EXPECT_TRUE(Has(OneError("[users.张三]\n", 1), "not valid TOML"));
  auto e = OneError("[users.\"李四\"]\nrole = \"硕士\"\n", 2);
  EXPECT_TRUE(Has(e, "[users.\"李四\"] role \"硕士\" is not defined")) << e;
}

// Zone names are read from the machine's tz database (tzdata, which make deps installs).
TEST(Config, TimezoneNamesOffsetsAndLabels) {
  constexpr Time kJan = 1767225600;  // 2026-01-01 00:00 UTC
  constexpr Time kJul = 1782864000;  // 2026-07-01 00:00 UTC
  auto c = ParseConfig("[policy]\ntimezone = \"Europe/Berlin\"\n", "rota.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->policy.zone.name(), "Europe/Berlin");
  EXPECT_EQ(c->policy.zone.OffsetAt(kJan), 3600);
  EXPECT_EQ(c->policy.zone.OffsetAt(kJul), 7200);
  EXPECT_EQ(c->timezone, "Europe/Berlin");

  c = ParseConfig("[policy]\ntimezone = \"Asia/Shanghai\"\nutc_offset = \"+08:00\"\n", "rota.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->policy.zone.OffsetAt(kJul), 8 * 3600);
  EXPECT_EQ(c->policy.zone.name(), "Asia/Shanghai");
  auto e = OneError("[policy]\ntimezone = \"Europe/Berlin\"\nutc_offset = \"+08:00\"\n", 3);
  EXPECT_TRUE(Has(e, "disagrees with timezone")) << e;

  // A name the database does not hold: an error, unless utc_offset makes it a label.
  e = OneError("[policy]\ntimezone = \"Mars/Olympus\"\n", 2);
  EXPECT_TRUE(Has(e, "is not a zone of the tz database")) << e;
  c = ParseConfig("[policy]\ntimezone = \"Lab time\"\nutc_offset = \"+08:00\"\n", "rota.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_TRUE(c->policy.zone.fixed());
  EXPECT_EQ(c->policy.zone.OffsetAt(kJul), 8 * 3600);
  EXPECT_EQ(c->timezone, "Lab time");
  e = OneError("[policy]\ntimezone = \"../../etc/passwd\"\n", 2);
  EXPECT_TRUE(Has(e, "is not a zone name of the tz database")) << e;

  OneError("[policy]\ntimezone = \"+08:00\"\nutc_offset = \"+09:00\"\n", 3);
  c = ParseConfig("[policy]\ntimezone = \"UTC\"\n", "rota.toml");
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->policy.zone.fixed());
  EXPECT_EQ(c->policy.zone.OffsetAt(0), 0);
}

TEST(Config, TheBoundOnOvertakingIsSetOrTurnedOff) {
  auto c = ParseConfig("[policy]\nprotect_after = \"3d\"\nprotect_max = 4\n", "rota.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->policy.protect_after, 3 * kDay);
  EXPECT_EQ(c->policy.protect_max, 4);
  c = ParseConfig("[policy]\nprotect_max = 0\n", "rota.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->policy.protect_max, 0);
  EXPECT_TRUE(Has(OneError("[policy]\nprotect_after = 7\n", 2), "is not a duration"));
  EXPECT_TRUE(Has(OneError("[policy]\nprotect_max = -1\n", 2), "protect_max"));
  // Promises: off unless set.
  EXPECT_EQ(ParseConfig("", "rota.toml")->policy.promise_slack, -1);
  c = ParseConfig("[policy]\npromise_slack = \"0s\"\n", "rota.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->policy.promise_slack, 0);
  c = ParseConfig("[policy]\npromise_slack = \"6h\"\n", "rota.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->policy.promise_slack, 6 * kHour);
  EXPECT_TRUE(Has(OneError("[policy]\npromise_slack = \"soon\"\n", 2), "promise_slack"));
  // Protection foreseen: on unless turned off.
  EXPECT_TRUE(ParseConfig("", "rota.toml")->policy.protect_foreseen);
  c = ParseConfig("[policy]\nprotect_foreseen = false\n", "rota.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_FALSE(c->policy.protect_foreseen);
  EXPECT_TRUE(Has(OneError("[policy]\nprotect_foreseen = \"yes\"\n", 2), "protect_foreseen"));
}

TEST(Config, SizeByTheLimitOrThePrediction) {
  auto c = ParseConfig("", "rota.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_FALSE(c->policy.size_by_prediction);
  c = ParseConfig("[policy]\nsize_by = \"prediction\"\n", "rota.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_TRUE(c->policy.size_by_prediction);
  c = ParseConfig("[policy]\nsize_by = \"limit\"\n", "rota.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_FALSE(c->policy.size_by_prediction);
  const std::string e = OneError("[policy]\nsize_by = \"runtime\"\n", 2);
  EXPECT_TRUE(Has(e, "size_by")) << e;
  EXPECT_TRUE(Has(e, "limit, prediction")) << e;
}

TEST(Config, TimeOfDayCanBeTurnedOff) {
  auto c = ParseConfig("[policy]\ntime_of_day = []\n", "rota.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_TRUE(c->policy.time_of_day.empty());
}

TEST(Config, EachErrorKindNamesItsLineAndWhatIsAccepted) {
  EXPECT_TRUE(Has(OneError("[policy]\nalgoritm = \"rota\"\n", 2), "unknown key \"algoritm\" (known: algorithm, mode"));
  EXPECT_TRUE(Has(OneError("admin = \"x\"\n", 1), "known: admin_group"));
  EXPECT_TRUE(Has(OneError("[gpus]\nsource = \"simulated\"\n[[gpus.card]]\nmemory = \"80 GB\"\n", 4),
                  "rota.toml:4:10: [[gpus.card]] memory \"80 GB\" is not a size (use 80G, 81920M)"));
  EXPECT_TRUE(Has(OneError("[policy]\nplan_depth = \"many\"\n", 2), "whole number"));
  EXPECT_TRUE(Has(OneError("[policy]\nage_max = 14\n", 2), "is not a duration"));
  EXPECT_TRUE(Has(OneError("[policy]\nalgorithm = \"slurm\"\n", 2), "fifo, backfill, rota"));
  EXPECT_TRUE(Has(OneError("[policy.weights]\nage = -1\n", 2), "number >= 0"));
  EXPECT_TRUE(Has(OneError("[quota.roles]\nphd = -5\n", 2), "is not a quota"));
  EXPECT_TRUE(Has(OneError("[quota]\nweek_start_day = \"someday\"\n", 2), "is not a weekday"));
  EXPECT_TRUE(Has(OneError("[projects.x]\nhours = -1\n", 2), "is not a quota"));
  EXPECT_TRUE(Has(OneError("[users.a]\nquota = -1\n", 2), "is not a quota"));
  EXPECT_TRUE(Has(OneError("[[policy.time_of_day]]\nfrom = \"25:00\"\nto = \"8:00\"\nfactor = 1\n", 2),
                  "from \"25:00\" is not a time of day (use HH:MM"));
  EXPECT_TRUE(Has(OneError("[[policy.time_of_day]]\ndays = \"mon-fry\"\nfrom = \"1:00\"\nto = \"8:00\"\nfactor = 1\n", 2),
                  "is not a set of weekdays"));
  EXPECT_TRUE(Has(OneError("[[policy.time_of_day]]\nfrom = \"1:00\"\nfactor = 1\n", 1), "needs to"));
  EXPECT_TRUE(Has(OneError("[preemption]\ntiers = [\"explore\", \"explor\"]\n", 2), "\"explor\" is not a tier"));
  EXPECT_TRUE(Has(OneError("[preemption]\nenabled = \"yes\"\n", 2), "true or false"));
  EXPECT_TRUE(Has(OneError("[quota.roles]\nphd = 1\n[users.a]\nrole = \"ph\"\n", 4), "(defined: phd)"));
  EXPECT_TRUE(Has(OneError("[users.a]\nemail = \"nobody\"\n", 2), "is not an email address"));
  EXPECT_TRUE(Has(OneError("log = \"rota.log\"\n", 1), "absolute"));
  EXPECT_TRUE(Has(OneError("socket = \"rota.sock\"\n", 1), "absolute path"));
  EXPECT_TRUE(Has(OneError("policy = 3\n", 1), "is not a table"));
  EXPECT_TRUE(Has(OneError("a = \n", 1), "not valid TOML"));
  EXPECT_TRUE(Has(OneError("[gpus]\nsource = \"simulated\"\n", 1), "needs at least one [[gpus.card]]"));
  EXPECT_TRUE(Has(OneError("[gpus]\n[[gpus.card]]\nmemory = \"8G\"\n", 2), "only used with source = \"simulated\""));
}

TEST(Config, GpuErrors) {
  const std::string head = "[gpus]\nsource = \"simulated\"\n";
  EXPECT_TRUE(Has(OneError(head + "[[gpus.card]]\nmemory = \"80G\"\ncount = 2\n[[gpus.card]]\nmemory = \"80G\"\nindex = 1\n", 8),
                  "card index 1 is already taken by the group at line 3"));
  EXPECT_TRUE(Has(OneError(head + "[[gpus.card]]\nmemory = \"40G\"\nmig = [\"3g.40\"]\n", 5), "is not a MIG profile"));
  EXPECT_TRUE(Has(OneError(head + "[[gpus.card]]\nmemory = \"40G\"\nmig = [\"7g.80gb\"]\n", 5), "need 80G but the card has 40G"));
  EXPECT_TRUE(Has(OneError(head + "[[gpus.card]]\nmemory = \"80G\"\nmig = [\"4g.40gb\", \"4g.40gb\"]\n", 5),
                  "8 compute slices"));
  EXPECT_TRUE(Has(OneError(head + "[[gpus.card]]\nmemory = \"80G\"\ncount = 2\nnvlink = [[0, 2]]\n", 6),
                  "nvlink entry [0, 2] does not join"));
  EXPECT_TRUE(Has(OneError(head + "[[gpus.card]]\nmodel = \"x\"\n", 3), "needs memory"));
  EXPECT_TRUE(Has(OneError(head + "[[gpus.card]]\nmemory = \"8G\"\ncount = 0\n", 5), "count 0 is not a whole number"));
}

TEST(Config, AllErrorsAreReportedTogetherInFileOrder) {
  auto lines = Errors(
      "[users.zed]\n"             // 1
      "emial = \"z@x\"\n"         // 2: unknown key
      "[policy]\n"                // 3
      "age_max = \"soon\"\n"      // 4: bad duration
      "[gpus]\n"                  // 5
      "source = \"gpu\"\n"        // 6: bad choice
      "[quota.roles]\n"           // 7
      "phd = \"lots\"\n");        // 8: bad quota
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0].rfind("rota.toml:2:1: [users.zed] unknown key \"emial\"", 0), 0u) << lines[0];
  EXPECT_EQ(lines[1].rfind("rota.toml:4:", 0), 0u) << lines[1];
  EXPECT_EQ(lines[2].rfind("rota.toml:6:", 0), 0u) << lines[2];
  EXPECT_EQ(lines[3].rfind("rota.toml:8:", 0), 0u) << lines[3];
}

TEST(Config, NotifyDefaultsAndErrors) {
  auto c = ParseConfig("[notify.channels.hook]\ntype = \"dingtalk\"\nurl = \"https://oapi.dingtalk.com/robot/send?access_token=x\"\n",
                       "rota.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->notify.per_minute.at("hook"), 20);  // DingTalk's own limit
  EXPECT_EQ(c->notify.user_channels, std::vector<std::string>{"hook"});
  // By default users get every channel but the admins' mail (fixed recipients).
  c = ParseConfig("[notify.channels.hook]\ntype = \"slack\"\nurl = \"https://hooks.slack.com/services/x\"\n"
                  "[notify.channels.admins]\ntype = \"email\"\nurl = \"smtp://localhost\"\nfrom = \"r@localhost\"\n"
                  "to = [\"admin@lab.example.edu\"]\n[notify.channels.mail]\ntype = \"email\"\n"
                  "url = \"smtp://localhost\"\nfrom = \"r@localhost\"\n",
                  "rota.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->notify.user_channels, (std::vector<std::string>{"hook", "mail"}));
  EXPECT_EQ(c->notify.language, "zh");
  auto has = [](const std::vector<std::string>& v, const char* s) { return std::find(v.begin(), v.end(), s) != v.end(); };
  EXPECT_TRUE(has(c->notify.user_events, "idle_warning"));
  EXPECT_TRUE(has(c->notify.user_events, "job_ended"));
  EXPECT_FALSE(has(c->notify.user_events, "gpu_drained"));
  EXPECT_TRUE(has(c->notify.admin_events, "gpu_drained"));
  EXPECT_EQ(c->notify.keep_messages, 30 * kDay);
  c = ParseConfig("[notify]\nkeep_messages = \"0\"\n", "rota.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->notify.keep_messages, 0);  // kept forever
  c = ParseConfig("[notify]\nkeep_messages = \"90d\"\n", "rota.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->notify.keep_messages, 90 * kDay);
  EXPECT_TRUE(Has(OneError("[notify]\nkeep_messages = \"soon\"\n", 2), "keep_messages"));

  EXPECT_TRUE(Has(OneError("[notify]\nadmin_channels = [\"nope\"]\n", 2),
                  "is not a channel defined under [notify.channels]"));
  EXPECT_TRUE(Has(OneError("[notify]\nuser_events = [\"job_finished\"]\n", 2), "is not an event name"));
  EXPECT_TRUE(Has(OneError("[users.bob]\nnotify = [\"mail\"]\n", 2), "is not a channel defined"));
  EXPECT_TRUE(Has(OneError("[notify]\nadmin_channels = [\"m\"]\n[notify.channels.m]\ntype = \"email\"\n"
                           "url = \"smtp://localhost\"\nfrom = \"rota@localhost\"\n", 2),
                  "has no `to` for the admins' addresses"));
  EXPECT_TRUE(Has(OneError("[users.bob]\nlanguage = \"fr\"\n", 2), "is not one of zh, en"));
  std::string e = OneError("[notify.channels.x]\ntype = \"pigeon\"\n", 1);
  EXPECT_TRUE(Has(e, "[notify.channels.x]")) << e;
  EXPECT_TRUE(Has(e, "is not a channel type")) << e;
  e = OneError("[notify.channels.x]\ntype = \"feishu\"\nurl = \"ftp://x\"\n", 1);
  EXPECT_TRUE(Has(e, "[notify.channels.x]")) << e;
  EXPECT_TRUE(Has(OneError("[notify.channels.x]\ntype = \"tty\"\ncolour = 1\n", 3), "colour"));
  EXPECT_TRUE(Has(OneError("[notify.channels.x]\ntype = \"webhook\"\nurl_file = \"/nonexistent/rota\"\n", 3),
                  "cannot be read"));
}

TEST(Config, UnreadableFile) {
  auto c = LoadConfig("/nonexistent/rota.toml");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Has(c.status().message(), "/nonexistent/rota.toml"));
}

TEST(Config, ContainersOffByDefault) {
  auto c = ParseConfig("", "rota.toml");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->containers.runtime, exec::ContainerRuntime::kNone);
  EXPECT_EQ(Summary(*c).find("containers"), std::string::npos);
  EXPECT_EQ(c->containers.images, std::vector<std::string>{"*"});
  EXPECT_FALSE(c->containers.network);
  EXPECT_FALSE(c->containers.allow_root);
}

TEST(Config, Containers) {
  auto c = ParseConfig(
      "[containers]\nruntime = \"podman\"\nruntime_args = [\"--runtime\", \"runc\"]\n"
      "images = [\"docker.io/pytorch/*\", \"localhost/*\"]\nmounts = [\"/data/datasets:ro\", \"/scratch/{user}:/scratch\"]\n"
      "data_dir = \"/data/{user}\"\nnetwork = true\nallow_root = true\nenv = [\"WANDB_API_KEY\"]\ngpus = \"cdi\"\n",
      "rota.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  const ContainersConfig& k = c->containers;
  EXPECT_EQ(k.runtime, exec::ContainerRuntime::kPodman);
  EXPECT_EQ(k.Program(), "/usr/bin/podman");
  EXPECT_EQ(k.runtime_args, (std::vector<std::string>{"--runtime", "runc"}));
  EXPECT_EQ(k.images, (std::vector<std::string>{"docker.io/pytorch/*", "localhost/*"}));
  ASSERT_EQ(k.mounts.size(), 2u);
  EXPECT_TRUE(k.mounts[0].read_only);
  EXPECT_FALSE(k.mounts[0].users);
  EXPECT_EQ(k.mounts[1].target, "/scratch");
  EXPECT_TRUE(k.mounts[1].users);
  EXPECT_EQ(k.data_dir, "/data/{user}");
  EXPECT_TRUE(k.network);
  EXPECT_TRUE(k.allow_root);
  EXPECT_EQ(k.env, std::vector<std::string>{"WANDB_API_KEY"});
  EXPECT_EQ(k.gpus, exec::ContainerGpus::kCdi);
  EXPECT_NE(Summary(*c).find("; containers: podman"), std::string::npos) << Summary(*c);
  auto plain = ParseConfig("[containers]\nruntime = \"docker\"\nprogram = \"\"\n", "rota.toml");
  ASSERT_TRUE(plain.ok()) << plain.status().message();  // "" is the default, as the example file says
  EXPECT_EQ(plain->containers.Program(), "/usr/bin/docker");

  auto bad = ParseConfig(
      "[containers]\nruntime = \"lxc\"\nprogram = \"podman\"\nmounts = [\"data:ro\", \"/a:/\"]\n"
      "data_dir = \"data/{user}\"\nenv = [\"A-B\"]\nimages = [\"\"]\nnetwrok = true\n",
      "rota.toml");
  ASSERT_FALSE(bad.ok());
  const std::string m = bad.status().message();
  for (const char* says : {"rota.toml:2:", "podman, docker, apptainer", "rota.toml:3:", "rota.toml:4:",
                           "cover the container's root", "rota.toml:5:", "is not a variable name", "rota.toml:7:",
                           "netwrok"}) {
    EXPECT_NE(m.find(says), std::string::npos) << says << "\n" << m;
  }
}

}  // namespace
}  // namespace config_test
}  // namespace rota::config
