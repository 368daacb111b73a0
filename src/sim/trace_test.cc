#include "sim/trace.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace rota::sim {
namespace trace_test {
namespace {

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

TraceOptions Format(std::string format) {
  TraceOptions o;
  o.format = std::move(format);
  return o;
}

TraceOptions Columns(std::string_view flag) {
  auto o = ParseColumnsFlag(flag, TraceOptions{});
  EXPECT_TRUE(o.ok()) << o.status().ToString();
  return o.ok() ? *o : TraceOptions{};
}

// ---- Dates ----

TEST(DateTimeTest, KnownEpochValues) {
  EXPECT_EQ(ParseDateTimeUtc("1970-01-01 00:00:00"), 0);
  EXPECT_EQ(ParseDateTimeUtc("2017-10-09 07:01:55"), 1507532515);
  EXPECT_EQ(ParseDateTimeUtc("2017-10-09T07:01:55"), 1507532515);
  EXPECT_EQ(ParseDateTimeUtc("2017-10-09 07:01"), 1507532460);
  EXPECT_EQ(ParseDateTimeUtc("2000-03-01 00:00:00"), 951868800);
  EXPECT_EQ(ParseDateTimeUtc("2016-02-29 12:00:00"), 1456747200);
  EXPECT_EQ(ParseDateTimeUtc("2000-02-29 00:00:00"), 951782400);
  EXPECT_EQ(ParseDateTimeUtc("2038-01-19 03:14:07"), 2147483647);
  EXPECT_EQ(ParseDateTimeUtc("1969-12-31 23:59:59"), -1);
}

TEST(DateTimeTest, RejectsImpossibleDatesAndOtherShapes) {
  EXPECT_FALSE(ParseDateTimeUtc("2017-02-30 00:00:00"));
  EXPECT_FALSE(ParseDateTimeUtc("2017-02-29 00:00:00"));  // not a leap year
  EXPECT_FALSE(ParseDateTimeUtc("1900-02-29 00:00:00"));  // divisible by 100, not by 400
  EXPECT_FALSE(ParseDateTimeUtc("2017-13-01 00:00:00"));
  EXPECT_FALSE(ParseDateTimeUtc("2017-00-10 00:00:00"));
  EXPECT_FALSE(ParseDateTimeUtc("2017-04-31 00:00:00"));
  EXPECT_FALSE(ParseDateTimeUtc("2017-04-00 00:00:00"));
  EXPECT_FALSE(ParseDateTimeUtc("2017-04-01 24:00:00"));
  EXPECT_FALSE(ParseDateTimeUtc("2017-04-01 23:60:00"));
  EXPECT_FALSE(ParseDateTimeUtc("2017-04-01 23:59:60"));
  EXPECT_FALSE(ParseDateTimeUtc("2017-13-01"));
  EXPECT_FALSE(ParseDateTimeUtc("2017/04/01 00:00:00"));
  EXPECT_FALSE(ParseDateTimeUtc("2017-4-01 00:00:000"));
  EXPECT_FALSE(ParseDateTimeUtc("2017-04-01 00:00:0x"));
  EXPECT_FALSE(ParseDateTimeUtc(""));
}

// ---- Flags ----

TEST(TraceFlagsTest, ColumnsFlagMergesIntoBase) {
  TraceOptions base = Format("philly");
  base.columns["user"] = "owner";
  auto o = ParseColumnsFlag(" submit = ts , gpus=n,,project=", base);
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->format, "philly");
  EXPECT_EQ(o->columns.at("submit"), "ts");
  EXPECT_EQ(o->columns.at("gpus"), "n");
  EXPECT_EQ(o->columns.at("user"), "owner");
  EXPECT_EQ(o->columns.at("project"), "");  // unmaps the preset's project column
}

TEST(TraceFlagsTest, ColumnsFlagErrors) {
  auto unknown = ParseColumnsFlag("sumbit=ts", {});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(Contains(unknown.status().message(), "unknown field \"sumbit\""));
  EXPECT_TRUE(Contains(unknown.status().message(), "submit, duration, gpus, gpu_milli"));
  auto no_eq = ParseColumnsFlag("submit", {});
  ASSERT_FALSE(no_eq.ok());
  EXPECT_TRUE(Contains(no_eq.status().message(), "is not FIELD=COLUMN"));
}

TEST(TraceFlagsTest, FilterFlag) {
  auto f = ParseFilterFlag("cluster=ed69ec");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->first, "cluster");
  EXPECT_EQ(f->second, "ed69ec");
  auto with_eq = ParseFilterFlag("note=a=b");
  ASSERT_TRUE(with_eq.ok());
  EXPECT_EQ(with_eq->second, "a=b");
  auto empty_value = ParseFilterFlag("user=");
  ASSERT_TRUE(empty_value.ok());
  EXPECT_EQ(empty_value->second, "");
  EXPECT_FALSE(ParseFilterFlag("cluster").ok());
  EXPECT_FALSE(ParseFilterFlag("=x").ok());
}

// ---- Philly preset ----

constexpr char kPhilly[] =
    "timestamp,duration,num_gpus,gpu_time,cluster\n"
    "2017-10-09 07:01:55,66.0,1,66.0,11cb48\n"       // line 2
    "2017-10-09 06:13:03,2951.0,8,23608.0,ed69ec\n"  // line 3
    "2017-10-09 06:13:03,10.5,2,21.0,ed69ec\n"       // line 4: same submit as line 3
    "2017-10-09 08:00:00,100.0,0,0.0,ed69ec\n"       // line 5: no GPUs
    "2017-10-09 09:00:00,0.0,4,0.0,6214e9\n";        // line 6: zero run time

TEST(TraceTest, PhillyPreset) {
  auto t = ParseTrace(kPhilly, Format("philly"));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_TRUE(t->absolute_times);
  ASSERT_EQ(t->jobs.size(), 4u);
  EXPECT_EQ(t->skipped, 1);
  EXPECT_EQ(t->notes, (std::vector<std::string>{"1 row without GPUs skipped"}));
  // Sorted by submit, ties in file order.
  EXPECT_EQ(t->jobs[0].line, 3);
  EXPECT_EQ(t->jobs[0].submit, 1507529583);
  EXPECT_EQ(t->jobs[0].duration, 2951);
  EXPECT_EQ(t->jobs[0].gpus, 8);
  EXPECT_EQ(t->jobs[0].project, "ed69ec");
  EXPECT_EQ(t->jobs[1].line, 4);
  EXPECT_EQ(t->jobs[1].duration, 11);  // 10.5 rounds up
  EXPECT_EQ(t->jobs[2].line, 2);
  EXPECT_EQ(t->jobs[2].submit, 1507532515);
  EXPECT_EQ(t->jobs[2].duration, 66);
  EXPECT_EQ(t->jobs[2].gpus, 1);
  EXPECT_EQ(t->jobs[2].gpu_fraction, 0);
  EXPECT_EQ(t->jobs[2].user, "");
  EXPECT_EQ(t->jobs[2].tier, "");
  EXPECT_EQ(t->jobs[3].duration, 1);  // 0 clamps to 1
}

TEST(TraceTest, FilterKeepsMatchingRawValues) {
  TraceOptions o = Format("philly");
  o.filters.emplace_back("cluster", "ed69ec");
  auto t = ParseTrace(kPhilly, o);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->jobs.size(), 2u);  // lines 3 and 4; line 5 matches but has no GPUs
  EXPECT_EQ(t->skipped, 1);
  // Filters compare raw text, before parsing: "66.0" is not "66".
  TraceOptions exact = Format("philly");
  exact.filters.emplace_back("duration", "66");
  auto none = ParseTrace(kPhilly, exact);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->jobs.empty());
  // All filters must match.
  o.filters.emplace_back("num_gpus", "2");
  auto both = ParseTrace(kPhilly, o);
  ASSERT_TRUE(both.ok());
  ASSERT_EQ(both->jobs.size(), 1u);
  EXPECT_EQ(both->jobs[0].line, 4);
}

TEST(TraceTest, ColumnsOverridePreset) {
  auto o = ParseColumnsFlag("user=cluster,project=", Format("philly"));
  ASSERT_TRUE(o.ok());
  auto t = ParseTrace(kPhilly, *o);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->jobs[0].user, "ed69ec");
  EXPECT_EQ(t->jobs[0].project, "");
  // Overriding a required column with a missing one names the flag and lists the columns.
  auto bad = ParseColumnsFlag("gpus=gpus", Format("philly"));
  ASSERT_TRUE(bad.ok());
  auto err = ParseTrace(kPhilly, *bad);
  ASSERT_FALSE(err.ok());
  EXPECT_EQ(err.status().message(),
            "<trace>: no column \"gpus\" (--columns gpus=gpus); the file has columns: timestamp, "
            "duration, num_gpus, gpu_time, cluster");
}

TEST(TraceTest, BadDateNamesLineAndColumn) {
  const std::string text = std::string(kPhilly) + "2017-13-01,5.0,1,5.0,ed69ec\n";
  auto t = ParseTrace(text, Format("philly"));
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(t.status().message(),
            "<trace>:7: column \"timestamp\": \"2017-13-01\" is not a time (expected seconds or "
            "YYYY-MM-DD HH:MM:SS)");
  auto feb30 = ParseTrace("timestamp,duration,num_gpus,cluster\n2017-02-30 10:00:00,5,1,x\n",
                          Format("philly"));
  ASSERT_FALSE(feb30.ok());
  EXPECT_TRUE(Contains(feb30.status().message(),
                       "<trace>:2: column \"timestamp\": \"2017-02-30 10:00:00\""));
}

TEST(TraceTest, TimeKindMustStayConsistent) {
  auto seconds_then_date =
      ParseTrace("timestamp,duration,num_gpus,cluster\n100,5,1,x\n2017-10-09 07:01:55,5,1,x\n",
                 Format("philly"));
  ASSERT_FALSE(seconds_then_date.ok());
  EXPECT_EQ(seconds_then_date.status().message(),
            "<trace>:3: column \"timestamp\": \"2017-10-09 07:01:55\" is a date, but earlier rows "
            "held seconds");
  auto date_then_seconds =
      ParseTrace("timestamp,duration,num_gpus,cluster\n2017-10-09 07:01:55,5,1,x\n100,5,1,x\n",
                 Format("philly"));
  ASSERT_FALSE(date_then_seconds.ok());
  EXPECT_TRUE(Contains(date_then_seconds.status().message(), "<trace>:3: column \"timestamp\""));
  auto seconds =
      ParseTrace("timestamp,duration,num_gpus,cluster\n100.7,5,1,x\n50,5,1,x\n", Format("philly"));
  ASSERT_TRUE(seconds.ok());
  EXPECT_FALSE(seconds->absolute_times);
  EXPECT_EQ(seconds->jobs[0].submit, 50);
  EXPECT_EQ(seconds->jobs[1].submit, 100);  // fractions of a second round down
}

TEST(TraceTest, BadNumbersAreErrors) {
  auto dur = ParseTrace("timestamp,duration,num_gpus,cluster\n1,-5,1,x\n", Format("philly"));
  ASSERT_FALSE(dur.ok());
  EXPECT_TRUE(Contains(dur.status().message(), "<trace>:2: column \"duration\": \"-5\""));
  auto gpus = ParseTrace("timestamp,duration,num_gpus,cluster\n1,5,,x\n", Format("philly"));
  ASSERT_FALSE(gpus.ok());
  EXPECT_TRUE(Contains(gpus.status().message(), "<trace>:2: column \"num_gpus\""));
  auto half = ParseTrace("timestamp,duration,num_gpus,cluster\n1,5,1.5,x\n", Format("philly"));
  ASSERT_FALSE(half.ok());
  // A GPU count below 1 is a share of one GPU.
  auto share = ParseTrace("timestamp,duration,num_gpus,cluster\n1,5,0.25,x\n", Format("philly"));
  ASSERT_TRUE(share.ok());
  EXPECT_EQ(share->jobs[0].gpus, 0);
  EXPECT_DOUBLE_EQ(share->jobs[0].gpu_fraction, 0.25);
}

// ---- Alibaba preset ----

constexpr char kAlibaba[] =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
    "deletion_time,scheduled_time\n"
    "openb-pod-0000,12000,16384,1,1000,,LS,Running,0,12537496,0\n"          // 2: whole GPU
    "openb-pod-0001,6000,12288,1,460,,BE,Running,427061,12902960,427061\n"  // 3: share
    "openb-pod-0002,8000,30518,0,0,,LS,Running,400,900,400\n"               // 4: CPU only
    "openb-pod-0003,11908,47104,1,1000,,BE,Pending,10001278,10001403,\n"    // 5: never scheduled
    "openb-pod-0004,4000,15258,8,1000,V100M16|V100M32,Burstable,Succeeded,100,500,350\n"  // 6
    "openb-pod-0005,4000,15258,2,1000,,LS,Failed,200,300,300\n"  // 7: ends at start
    "openb-pod-0006,4000,15258,0,0,,BE,Pending,300,400,\n";      // 8: CPU only

TEST(TraceTest, AlibabaPreset) {
  auto t = ParseTrace(kAlibaba, Format("alibaba"));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_FALSE(t->absolute_times);
  ASSERT_EQ(t->jobs.size(), 3u);
  EXPECT_EQ(t->skipped, 4);
  EXPECT_EQ(t->notes,
            (std::vector<std::string>{"2 rows without GPUs skipped",
                                      "1 row never scheduled (empty scheduled_time) skipped",
                                      "1 row ending at or before their start skipped"}));
  // Sorted by creation time: lines 2 (0), 6 (100), 3 (427061).
  EXPECT_EQ(t->jobs[0].line, 2);
  EXPECT_EQ(t->jobs[0].submit, 0);
  EXPECT_EQ(t->jobs[0].duration, 12537496);
  EXPECT_EQ(t->jobs[0].gpus, 1);
  EXPECT_EQ(t->jobs[0].gpu_fraction, 0);
  EXPECT_EQ(t->jobs[0].tier, "regular");
  EXPECT_EQ(t->jobs[1].line, 6);
  EXPECT_EQ(t->jobs[1].submit, 100);
  EXPECT_EQ(t->jobs[1].duration, 150);  // deletion - scheduled, not deletion - creation
  EXPECT_EQ(t->jobs[1].gpus, 8);
  EXPECT_EQ(t->jobs[1].tier, "regular");
  EXPECT_EQ(t->jobs[2].line, 3);
  EXPECT_EQ(t->jobs[2].gpus, 0);
  EXPECT_DOUBLE_EQ(t->jobs[2].gpu_fraction, 0.46);
  EXPECT_EQ(t->jobs[2].duration, 12902960 - 427061);
  EXPECT_EQ(t->jobs[2].tier, "explore");
}

TEST(TraceTest, AlibabaFilterOnQos) {
  TraceOptions o = Format("alibaba");
  o.filters.emplace_back("qos", "BE");
  auto t = ParseTrace(kAlibaba, o);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->jobs.size(), 1u);
  EXPECT_EQ(t->jobs[0].line, 3);
  EXPECT_EQ(t->skipped, 2);  // line 5 never scheduled, line 8 CPU only
}

// ---- Custom columns ----

TEST(TraceTest, CustomColumnsWithUsersAndTiers) {
  const char* text =
      "ts,runtime,g,owner,group,class,job,asked\n"
      "10,100,2,alice,nlp,Thesis, bert-ft ,14400\n"
      "5,\"3600\",1,\"bob, jr\",vision,,,\n"
      "7,1,4,carol,,explore,sweep,60.5\n";
  auto t = ParseTrace(
      text, Columns("submit=ts,duration=runtime,gpus=g,user=owner,project=group,tier=class,name=job,limit=asked"));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->jobs.size(), 3u);
  EXPECT_EQ(t->jobs[0].user, "bob, jr");
  EXPECT_EQ(t->jobs[0].tier, "");
  EXPECT_EQ(t->jobs[0].duration, 3600);
  EXPECT_EQ(t->jobs[1].user, "carol");
  EXPECT_EQ(t->jobs[1].tier, "explore");
  EXPECT_EQ(t->jobs[1].project, "");
  EXPECT_EQ(t->jobs[2].tier, "thesis");
  EXPECT_EQ(t->jobs[2].project, "nlp");
  EXPECT_EQ(t->jobs[2].name, "bert-ft");
  EXPECT_EQ(t->jobs[0].name, "");
  EXPECT_EQ(t->jobs[2].limit, 14400);
  EXPECT_EQ(t->jobs[0].limit, 0);  // none recorded: --estimates recorded uses the run time
  EXPECT_EQ(t->jobs[1].limit, 61);
  auto bad_limit = ParseTrace("ts,runtime,g,asked\n1,1,1,1h\n", Columns("submit=ts,duration=runtime,gpus=g,limit=asked"));
  ASSERT_FALSE(bad_limit.ok());
  EXPECT_EQ(bad_limit.status().message(),
            "<trace>:2: column \"asked\": \"1h\" is not a time limit (expected seconds, or nothing)");

  auto bad_tier = ParseTrace("ts,runtime,g,class\n1,1,1,gold\n",
                             Columns("submit=ts,duration=runtime,gpus=g,tier=class"));
  ASSERT_FALSE(bad_tier.ok());
  EXPECT_EQ(
      bad_tier.status().message(),
      "<trace>:2: column \"class\": \"gold\" is not a tier (expected thesis, regular or explore)");
}

TEST(TraceTest, DurationFromEndAndStart) {
  const char* text =
      "submitted,started,ended,gpus\n"
      "2020-01-01 00:00:00,2020-01-01 00:10:00,2020-01-01 01:00:00,1\n";
  auto with_start = ParseTrace(text, Columns("submit=submitted,start=started,end=ended,gpus=gpus"));
  ASSERT_TRUE(with_start.ok()) << with_start.status().ToString();
  EXPECT_EQ(with_start->jobs[0].submit, 1577836800);
  EXPECT_EQ(with_start->jobs[0].duration, 3000);
  auto without_start = ParseTrace(text, Columns("submit=submitted,end=ended,gpus=gpus"));
  ASSERT_TRUE(without_start.ok());
  EXPECT_EQ(without_start->jobs[0].duration, 3600);
  // A duration column takes precedence over end.
  auto both = ParseTrace("s,e,d,g\n0,100,7,1\n", Columns("submit=s,end=e,duration=d,gpus=g"));
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(both->jobs[0].duration, 7);
  // end == start is a zero run, clamped to 1 s.
  auto zero = ParseTrace("s,e,g\n100,100,1\n", Columns("submit=s,end=e,gpus=g"));
  ASSERT_TRUE(zero.ok());
  EXPECT_EQ(zero->jobs[0].duration, 1);
}

TEST(TraceTest, CustomColumnsAreStrictAboutBadRows) {
  auto ends_early = ParseTrace("s,b,e,g\n0,50,40,1\n", Columns("submit=s,start=b,end=e,gpus=g"));
  ASSERT_FALSE(ends_early.ok());
  EXPECT_EQ(ends_early.status().message(),
            "<trace>:2: column \"e\": the job ends before its start (column \"b\")");
  auto never_started = ParseTrace("s,b,e,g\n0,,40,1\n", Columns("submit=s,start=b,end=e,gpus=g"));
  ASSERT_FALSE(never_started.ok());
  EXPECT_EQ(never_started.status().message(), "<trace>:2: column \"b\": empty (expected a time)");
}

TEST(TraceTest, GpuMilliOnlyAppliesToSingleGpuJobs) {
  const char* text = "s,d,g,m\n0,10,1,250\n1,10,2,500\n2,10,1,1000\n3,10,1,0\n";
  auto t = ParseTrace(text, Columns("submit=s,duration=d,gpus=g,gpu_milli=m"));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->jobs.size(), 3u);
  EXPECT_EQ(t->jobs[0].gpus, 0);
  EXPECT_DOUBLE_EQ(t->jobs[0].gpu_fraction, 0.25);
  EXPECT_EQ(t->jobs[1].gpus, 2);
  EXPECT_EQ(t->jobs[1].gpu_fraction, 0);
  EXPECT_EQ(t->jobs[2].gpus, 1);
  EXPECT_EQ(t->skipped, 1);  // a zero share holds no GPU
}

TEST(TraceTest, MappingErrors) {
  const char* text = "a,b,c\n1,2,3\n";
  auto no_submit = ParseTrace(text, Columns("duration=b,gpus=c"));
  ASSERT_FALSE(no_submit.ok());
  EXPECT_TRUE(Contains(no_submit.status().message(), "give --columns submit=COLUMN"));
  EXPECT_TRUE(Contains(no_submit.status().message(), "the file has columns: a, b, c"));
  auto no_duration = ParseTrace(text, Columns("submit=a,gpus=c"));
  ASSERT_FALSE(no_duration.ok());
  EXPECT_TRUE(
      Contains(no_duration.status().message(), "give --columns duration=COLUMN, or end=COLUMN"));
  auto no_gpus = ParseTrace(text, Columns("submit=a,duration=b"));
  ASSERT_FALSE(no_gpus.ok());
  EXPECT_TRUE(Contains(no_gpus.status().message(), "give --columns gpus=COLUMN"));
  auto unknown_column = ParseTrace(text, Columns("submit=a,duration=b,gpus=x"));
  ASSERT_FALSE(unknown_column.ok());
  EXPECT_EQ(unknown_column.status().message(),
            "<trace>: no column \"x\" (--columns gpus=x); the file has columns: a, b, c");
  TraceOptions filtered = Columns("submit=a,duration=b,gpus=c");
  filtered.filters.emplace_back("vc", "1");
  auto unknown_filter = ParseTrace(text, filtered);
  ASSERT_FALSE(unknown_filter.ok());
  EXPECT_EQ(unknown_filter.status().message(),
            "<trace>: no column \"vc\" (--filter vc=1); the file has columns: a, b, c");
  auto preset_mismatch = ParseTrace(text, Format("philly"));
  ASSERT_FALSE(preset_mismatch.ok());
  EXPECT_TRUE(Contains(preset_mismatch.status().message(), "(expected by --format philly)"));
  auto unknown_format = ParseTrace(text, Format("slurm"));
  ASSERT_FALSE(unknown_format.ok());
  EXPECT_TRUE(Contains(unknown_format.status().message(), "unknown trace format \"slurm\""));
  TraceOptions bad_field;
  bad_field.columns["sumbit"] = "a";
  auto bad = ParseTrace(text, bad_field);
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(Contains(bad.status().message(), "unknown trace field \"sumbit\""));
}

TEST(TraceTest, LoadTraceNamesTheFileInErrors) {
  const std::string path = ::testing::TempDir() + "rota_trace_test_bad.csv";
  {
    std::ofstream out(path);
    out << "timestamp,duration,num_gpus,cluster\r\n2017-10-09 07:01:55,5,1,x\r\n2017-02-30 "
           "00:00:00,5,1,x\r\n";
  }
  auto t = LoadTrace(path, Format("philly"));
  std::filesystem::remove(path);
  ASSERT_FALSE(t.ok());
  EXPECT_TRUE(Contains(t.status().message(), path + ":3: column \"timestamp\""))
      << t.status().message();
  auto missing = LoadTrace("/nonexistent/rota/trace.csv", Format("philly"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

// ---- Real traces ----

constexpr char kPhillyPath[] = "/work/shared/traces/philly/philly.csv";
constexpr char kAlibabaPath[] = "/work/shared/traces/alibaba-gpu-2023/openb_pod_list_default.csv";

TEST(RealTraceTest, BundledPhillySlice) {
  auto t =
      LoadTrace(std::string(ROTA_SOURCE_DIR) + "/data/traces/philly-ed69ec.csv", Format("philly"));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->jobs.size(), 1137u);
  EXPECT_EQ(t->skipped, 0);
  EXPECT_TRUE(t->absolute_times);
}

TEST(RealTraceTest, SharedPhillyTrace) {
  if (!std::filesystem::exists(kPhillyPath)) GTEST_SKIP() << kPhillyPath << " not present";
  auto t = LoadTrace(kPhillyPath, Format("philly"));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->jobs.size(), 82247u);
  EXPECT_TRUE(t->absolute_times);
  for (std::size_t i = 1; i < t->jobs.size(); ++i) {
    ASSERT_LE(t->jobs[i - 1].submit, t->jobs[i].submit);
  }
  TraceOptions vc = Format("philly");
  vc.filters.emplace_back("cluster", "ed69ec");
  auto slice = LoadTrace(kPhillyPath, vc);
  ASSERT_TRUE(slice.ok()) << slice.status().ToString();
  EXPECT_EQ(slice->jobs.size(), 1137u);
}

TEST(RealTraceTest, SharedAlibabaTrace) {
  if (!std::filesystem::exists(kAlibabaPath)) GTEST_SKIP() << kAlibabaPath << " not present";
  auto t = LoadTrace(kAlibabaPath, Format("alibaba"));
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(static_cast<std::int64_t>(t->jobs.size()) + t->skipped, 8152);
  EXPECT_GT(t->skipped, 0);
  EXPECT_FALSE(t->absolute_times);
  std::size_t shares = 0;
  for (const TraceJob& j : t->jobs) {
    if (j.gpu_fraction > 0) {
      ++shares;
      EXPECT_EQ(j.gpus, 0);
      EXPECT_LT(j.gpu_fraction, 1);
    }
    EXPECT_GE(j.duration, 1);
  }
  EXPECT_GT(shares, 0u);
}

}  // namespace
}  // namespace trace_test
}  // namespace rota::sim
