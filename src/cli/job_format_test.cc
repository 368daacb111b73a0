// Tests of how rota prints jobs: elapsed times, request and placement cells, pending reasons,
// the queue table lining up with Chinese names, history and show.
#include "cli/job_format.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>
#include <sstream>

#include "cli/text.h"

namespace rota::cli {
namespace job_format_test {
namespace {

using nlohmann::json;

class JobFormatTest : public ::testing::Test {
 protected:
  void SetUp() override {
    UseUtf8Locale();
    const char* tz = std::getenv("TZ");
    saved_tz_ = tz ? tz : "";
    had_tz_ = tz != nullptr;
    ::setenv("TZ", "UTC", 1);
    ::tzset();
  }
  void TearDown() override {
    if (had_tz_)
      ::setenv("TZ", saved_tz_.c_str(), 1);
    else
      ::unsetenv("TZ");
    ::tzset();
  }

 private:
  std::string saved_tz_;
  bool had_tz_ = false;
};

constexpr Time kNow = 1764403600;  // 2025-11-29 08:06:40 UTC

json Running() {
  return {{"id", 17},
          {"user", "alice"},
          {"tier", "regular"},
          {"name", "bert"},
          {"state", "running"},
          {"request", {{"kind", "gpus"}, {"gpus", 2}}},
          {"gpus", {0, 1}},
          {"submit_time", kNow - 7200},
          {"start_time", kNow - 3723},
          {"kill_at", 0}};
}

json Pending(std::string name, std::string reason) {
  return {{"id", 18},
          {"user", "bob"},
          {"tier", "thesis"},
          {"name", name},
          {"state", "pending"},
          {"request", {{"kind", "gpu_mem"}, {"memory", 20480}}},
          {"submit_time", kNow - 65},
          {"pending", {{"reason", reason}, {"expected_start", 0}, {"estimated", false}}}};
}

TEST_F(JobFormatTest, ElapsedLikeSlurm) {
  EXPECT_EQ(FormatElapsed(0), "0:00");
  EXPECT_EQ(FormatElapsed(7), "0:07");
  EXPECT_EQ(FormatElapsed(725), "12:05");
  EXPECT_EQ(FormatElapsed(3723), "1:02:03");
  EXPECT_EQ(FormatElapsed(2 * 86400 + 3 * 3600 + 4 * 60 + 5), "2-03:04:05");
  EXPECT_EQ(FormatElapsed(-5), "0:00");
}

TEST_F(JobFormatTest, LocalTimes) {
  EXPECT_EQ(FormatLocalTime(1764403600), "2025-11-29 08:06");
  EXPECT_EQ(FormatLocalTime(0), "-");
  EXPECT_EQ(FormatShortTime(kNow + 600, kNow), "08:16");
  EXPECT_EQ(FormatShortTime(kNow + 86400, kNow), "2025-11-30 08:06");
}

TEST_F(JobFormatTest, DeadlinesSayWhetherTheTimeLimitCouldMissThem) {
  const Time deadline = kNow + 10 * 3600;  // 2025-11-29 18:06
  json p = Pending("bert", "resources");
  p["time_limit"] = 4 * 3600;
  EXPECT_EQ(DeadlineText(p, kNow), "");  // none asked
  p["deadline"] = deadline;
  EXPECT_EQ(DeadlineText(p, kNow), "2025-11-29 18:06 (at risk: no start can be foreseen yet)");
  p["pending"]["expected_start"] = kNow + 7 * 3600;  // 15:06, plus 4 h: 19:06
  EXPECT_EQ(DeadlineText(p, kNow),
            "2025-11-29 18:06 (at risk: if it starts when expected it may run until 2025-11-29 19:06, its time limit)");
  p["pending"]["expected_start"] = kNow + 6 * 3600;  // exactly at the deadline: on track
  EXPECT_EQ(DeadlineText(p, kNow), "2025-11-29 18:06 (on track: expected to end by 2025-11-29 18:06 at the latest)");
  // With a forecast: its p90 start plus its predicted run time.
  json f = p;
  f["pending"]["forecast"] = {{"p50", kNow + 600}, {"p90", kNow + 3600}, {"runtime", 3600}};
  EXPECT_EQ(DeadlineText(f, kNow),
            "2025-11-29 18:06 (on track: likely to end by 2025-11-29 09:16, by 2025-11-29 10:06 if it starts as "
            "late as its p90)");
  f["pending"]["forecast"]["p90"] = kNow + 10 * 3600;
  EXPECT_EQ(DeadlineText(f, kNow),
            "2025-11-29 18:06 (at risk: likely to end by 2025-11-29 09:16, but by 2025-11-29 19:06 if it starts as "
            "late as its p90)");
  json r = Running();
  r["time_limit"] = 12 * 3600;  // started 1:02:03 ago
  r["deadline"] = deadline;
  EXPECT_EQ(DeadlineText(r, kNow), "2025-11-29 18:06 (at risk: it may run until 2025-11-29 19:04, its time limit)");
  // Predicted to end well before: on track, the limit said; predicted past it: at risk.
  r["predicted_end"] = {{"time", kNow + 3600}, {"basis", "user"}, {"samples", 5}};
  EXPECT_EQ(DeadlineText(r, kNow),
            "2025-11-29 18:06 (on track: likely to end by 2025-11-29 09:06; its time limit would allow 2025-11-29 19:04)");
  r["predicted_end"]["time"] = deadline + 60;
  EXPECT_EQ(DeadlineText(r, kNow), "2025-11-29 18:06 (at risk: likely to end by 2025-11-29 18:07)");
  json done = Running();
  done["state"] = "completed";
  done["deadline"] = deadline;
  done["end_time"] = deadline + 60;
  EXPECT_EQ(DeadlineText(done, kNow), "2025-11-29 18:06 (missed: ended 2025-11-29 18:07)");
  done["end_time"] = deadline;
  EXPECT_EQ(DeadlineText(done, kNow), "2025-11-29 18:06 (met)");
  EXPECT_NE(RenderShow(r, json::array(), kNow).find("\nDeadline: 2025-11-29 18:06 (at risk"), std::string::npos)
      << RenderShow(r, json::array(), kNow);
}

TEST_F(JobFormatTest, StateCodes) {
  json j = Running();
  EXPECT_EQ(StateCode(j), "R");
  j["kill_at"] = kNow + 60;
  EXPECT_EQ(StateCode(j), "CG");
  EXPECT_EQ(StateCode(Pending("x", "resources")), "PD");
  EXPECT_EQ(StateCode(json{{"state", "node_fail"}}), "NODE_FAIL");
}

TEST_F(JobFormatTest, RequestAndWhereCells) {
  EXPECT_EQ(RequestCell({{"kind", "gpus"}, {"gpus", 2}}), "2");
  EXPECT_EQ(RequestCell({{"kind", "gpu_mem"}, {"memory", 20480}}), "20G");
  EXPECT_EQ(RequestCell({{"kind", "mig"}, {"profile", "3g.40gb"}}), "3g.40gb");
  EXPECT_EQ(WhereCell(Running()), "gpu0,1");
  json share = {{"state", "running"},
                {"request", {{"kind", "gpu_mem"}, {"memory", 20480}}},
                {"gpus", {3}},
                {"gpu_mem", 20480}};
  EXPECT_EQ(WhereCell(share), "gpu3:20G");
  json mig = {{"state", "running"},
              {"request", {{"kind", "mig"}, {"profile", "3g.40gb"}}},
              {"gpus", {2}},
              {"mig_index", 1}};
  EXPECT_EQ(WhereCell(mig), "gpu2/mig1");
  // On a cluster, the node after Rota's indices.
  json there = Running();
  there["node"] = "gpu-07";
  EXPECT_EQ(WhereCell(there), "gpu0,1@gpu-07");
  share["node"] = mig["node"] = "n2";
  EXPECT_EQ(WhereCell(share), "gpu3:20G@n2");
  EXPECT_EQ(WhereCell(mig), "gpu2/mig1@n2");
}

TEST_F(JobFormatTest, PendingReasons) {
  const std::pair<const char*, const char*> cases[] = {
      {"resources", "(Resources)"},   {"priority", "(Priority)"}, {"quota", "(Quota)"},
      {"dependency", "(Dependency)"}, {"booking", "(Booking)"},   {"peak_hours", "(PeakHours)"},
      {"impossible", "(Impossible)"}, {"start_retry", "(StartRetry)"},
  };
  for (const auto& [wire, shown] : cases) EXPECT_EQ(WhereCell(Pending("x", wire)), shown);
  json unscheduled = Pending("x", "");
  unscheduled.erase("pending");
  EXPECT_EQ(WhereCell(unscheduled), "(None)");
  json next = Pending("x", "resources");
  next["pending"]["protected"] = true;
  EXPECT_EQ(WhereCell(next), "(Resources,Protected)");
}

TEST_F(JobFormatTest, StartCell) {
  json p = Pending("x", "resources");
  EXPECT_EQ(StartCell(p), "-");
  p["pending"]["expected_start"] = kNow + 3600;
  EXPECT_EQ(StartCell(p), "2025-11-29 09:06");
  p["pending"]["estimated"] = true;
  EXPECT_EQ(StartCell(p), "~2025-11-29 09:06");
  EXPECT_EQ(P90Cell(p), "-");
  // A forecast: its p50 is the start shown, its p90 the next column.
  p["pending"]["estimated"] = false;
  p["pending"]["forecast"] = {{"p50", kNow + 600}, {"p90", kNow + 1800}, {"runtime", 900}};
  EXPECT_EQ(StartCell(p), "~2025-11-29 08:16");
  EXPECT_EQ(P90Cell(p), "2025-11-29 08:36");
}

TEST_F(JobFormatTest, ShowSaysTheForecastThenThePlanOnLimits) {
  json p = Pending("train", "resources");
  p["user"] = "ana";
  p["time_limit"] = 6 * 3600;
  p["pending"]["expected_start"] = kNow + 5 * 3600;
  p["pending"]["forecast"] = {{"start", kNow + 600},    {"p50", kNow + 600},      {"p90", kNow + 1800},
                              {"calibrated_on", 143}, {"runtime", 2 * 3600},     {"runtime_basis", "user and name"},
                              {"runtime_samples", 8}};
  std::string out = RenderShow(p, json::array(), kNow);
  EXPECT_NE(out.find("\nExpectedStart: 2025-11-29 08:16 (likely; 90% by 2025-11-29 08:36, from 143 past forecasts)\n"),
            std::string::npos)
      << out;
  // Arrivals foreseen (the rota policy): said with the forecast.
  json q = p;
  q["pending"]["forecast"]["arrivals"] = 12;
  const std::string with = RenderShow(q, json::array(), kNow);
  EXPECT_NE(
      with.find(
          "\nExpectedStart: 2025-11-29 08:16 (likely, foreseeing the last week's 12 jobs coming again; 90% "
          "by 2025-11-29 08:36, from 143 past forecasts)\n"),
      std::string::npos)
      << with;
  EXPECT_NE(out.find("\nPlannedStart: 2025-11-29 13:06 (reserved: if every job ahead runs to its limit)\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("\nPredictedRun: 2:00:00 of its 6:00:00 limit (from the last 8 jobs of ana named train)\n"),
            std::string::npos)
      << out;
  // Not calibrated yet: the p90 is the plan on limits, and said so.
  p["pending"]["forecast"]["calibrated_on"] = 0;
  p["pending"]["forecast"]["p90"] = kNow + 5 * 3600;
  p["pending"]["forecast"]["runtime_basis"] = "time limit";
  out = RenderShow(p, json::array(), kNow);
  EXPECT_NE(out.find("(likely; by 2025-11-29 13:06 if the jobs ahead run to their limits)"), std::string::npos) << out;
  EXPECT_NE(out.find("(no history yet: its time limit)"), std::string::npos) << out;
  // A running job: when it is likely to end.
  json r = Running();
  r["predicted_end"] = {{"time", kNow + 600}, {"basis", "lab"}, {"samples", 40}};
  out = RenderShow(r, json::array(), kNow);
  EXPECT_NE(out.find("\nLikelyEnd: 2025-11-29 08:16 (from the lab's last 40 jobs)\n"), std::string::npos) << out;
}

// The column where `token` starts on `line`, in display columns.
int ColumnOf(const std::string& line, const std::string& token) {
  size_t pos = line.find(token);
  EXPECT_NE(pos, std::string::npos) << line;
  return DisplayWidth(line.substr(0, pos));
}

TEST_F(JobFormatTest, QueueLinesUpWithChineseNames) {
  json chinese = Pending("训练中文大模型第二阶段实验很长的名字", "priority");
  chinese["id"] = 19;
  std::vector<json> jobs = {Running(), Pending("bert-base", "resources"), chinese};
  std::string out = RenderQueue(jobs, kNow, /*with_start=*/true);
  std::vector<std::string> lines;
  std::istringstream in(out);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 4u) << out;
  EXPECT_EQ(lines[0].substr(0, 5), "JOBID");
  // ST column starts at the same display column on every line.
  int st = ColumnOf(lines[0], " ST ") + 1;
  EXPECT_EQ(ColumnOf(lines[1], " R ") + 1, st) << out;
  EXPECT_EQ(ColumnOf(lines[2], " PD ") + 1, st) << out;
  EXPECT_EQ(ColumnOf(lines[3], " PD ") + 1, st) << out;
  // The long name is cut to 20 columns with an ellipsis.
  EXPECT_NE(lines[3].find("训练中文大模型第二\u2026"), std::string::npos) << out;
  EXPECT_NE(lines[1].find("1:02:03"), std::string::npos) << out;  // running: since start
  EXPECT_NE(lines[2].find("1:05"), std::string::npos) << out;     // pending: waited so far
  EXPECT_NE(lines[1].find("gpu0,1"), std::string::npos);
  EXPECT_NE(lines[2].find("(Resources)"), std::string::npos);
  EXPECT_NE(lines[3].find("(Priority)"), std::string::npos);
  EXPECT_NE(lines[1].find("2025-11-29 07:04"), std::string::npos) << out;  // START of a running job
}

TEST_F(JobFormatTest, QueueHeaderWithoutStart) {
  std::string out = RenderQueue({}, kNow, false);
  EXPECT_EQ(out, "JOBID  USER  TIER  NAME  ST  TIME  GPUS  WHERE(REASON)\n");
}

TEST_F(JobFormatTest, History) {
  json done = {{"id", 5},
               {"user", "alice"},
               {"name", "eval"},
               {"state", "completed"},
               {"request", {{"kind", "gpus"}, {"gpus", 2}}},
               {"submit_time", 1000},
               {"start_time", 1060},
               {"end_time", 1060 + 5400},
               {"end_reason", "Exited with code 0"}};
  std::string out = RenderHistory({done});
  EXPECT_NE(out.find("COMPLETED"), std::string::npos) << out;
  EXPECT_NE(out.find("1:00"), std::string::npos) << out;     // waited 60 s
  EXPECT_NE(out.find("1:30:00"), std::string::npos) << out;  // ran 1.5 h
  EXPECT_NE(out.find("3.00"), std::string::npos) << out;     // 2 GPUs x 1.5 h
  EXPECT_NE(out.find("Exited with code 0"), std::string::npos) << out;
}

TEST_F(JobFormatTest, ShowPendingJob) {
  json job = Pending("bert", "quota");
  job["pending"]["priority"] = 10234.5;
  job["pending"]["factors"] = {{"tier", 0.5},  {"fairshare", 0.9}, {"age", 0.01},
                               {"size", 0.97}, {"penalty", 0},     {"time_of_day", 1}};
  job["command"] = {"python", "train.py", "--note", "two words"};
  job["cwd"] = "/home/bob";
  json events = json::array({{{"time", kNow - 65},
                              {"from", nullptr},
                              {"to", "pending"},
                              {"reason", "Submitted"},
                              {"actor", "bob"}}});
  std::string out = RenderShow(job, events, kNow);
  EXPECT_NE(out.find("JobId: 18\n"), std::string::npos) << out;
  EXPECT_NE(out.find("State: pending\n"), std::string::npos) << out;
  EXPECT_NE(out.find("Request: 20G of GPU memory\n"), std::string::npos) << out;
  EXPECT_NE(out.find("Reason: Quota\n"), std::string::npos) << out;
  EXPECT_NE(out.find("Priority: 10234.5\n"), std::string::npos) << out;
  EXPECT_NE(out.find("fairshare=0.90"), std::string::npos) << out;
  EXPECT_NE(out.find("Command: python train.py --note 'two words'\n"), std::string::npos) << out;
  EXPECT_NE(out.find("History:\n  2025-11-29 08:05:35  - \u2192 pending  Submitted (by bob)\n"),
            std::string::npos)
      << out;
}

TEST_F(JobFormatTest, ShowSaysWhenAJobIsProtected) {
  json job = Pending("thesis", "resources");
  job["pending"]["priority"] = 10100;
  job["pending"]["factors"] = {{"tier", 0.5}, {"fairshare", 0.1}, {"age", 0.5}, {"size", 0}};
  EXPECT_EQ(RenderShow(job, json::array(), kNow).find("Protected:"), std::string::npos);
  job["pending"]["protected"] = true;
  const std::string out = RenderShow(job, json::array(), kNow);
  EXPECT_NE(
      out.find("Protected: yes: it waited past the lab's bound (or would have, by the plan, before it could "
               "start)"),
      std::string::npos)
      << out;
  EXPECT_EQ(out.find("Promised:"), std::string::npos) << out;  // promises not kept
  job["pending"]["promise"] = kNow + 3600;
  EXPECT_NE(RenderShow(job, json::array(), kNow).find("Promised: " + FormatLocalTime(kNow + 3600) + " (when first"),
            std::string::npos);
}

TEST_F(JobFormatTest, ShowDependencies) {
  json job = Pending("eval", "dependency");
  std::string out = RenderShow(job, json::array(), kNow);
  EXPECT_NE(out.find("After: -\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("AfterOk"), std::string::npos) << out;
  job["after"] = {3};
  job["after_ok"] = {12, 13};
  out = RenderShow(job, json::array(), kNow);
  EXPECT_NE(out.find("After: 3\n"), std::string::npos) << out;
  EXPECT_NE(out.find("AfterOk: 12,13 (cancelled if one fails)\n"), std::string::npos) << out;
}

TEST_F(JobFormatTest, ShowNamesTheImageAndKeepsControlCharactersOut) {
  json job = Pending("bert", "resources");
  EXPECT_EQ(RenderShow(job, json::array(), kNow).find("Image:"), std::string::npos);
  job["image"] = "docker.io/pytorch/pytorch:2.1";
  EXPECT_NE(RenderShow(job, json::array(), kNow).find("Image: docker.io/pytorch/pytorch:2.1\n"), std::string::npos);
  job["image"] = "evil\x1b[2Jimage";  // the daemon refuses such a name; an old or odd reply still prints safely
  EXPECT_EQ(RenderShow(job, json::array(), kNow).find('\x1b'), std::string::npos);
}

TEST_F(JobFormatTest, ShowCountsWholeGpusInWords) {
  json job = Pending("bert", "resources");
  job["request"] = {{"kind", "gpus"}, {"gpus", 1}};
  EXPECT_NE(RenderShow(job, json::array(), kNow).find("Request: 1 GPU\n"), std::string::npos);
  job["request"]["gpus"] = 4;
  EXPECT_NE(RenderShow(job, json::array(), kNow).find("Request: 4 GPUs\n"), std::string::npos);
}

}  // namespace
}  // namespace job_format_test
}  // namespace rota::cli
