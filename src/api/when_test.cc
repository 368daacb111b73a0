// Tests of reading typed times (ParseWhen) and of times written by FormatLocal reading back. Expected
// instants are constants worked out outside this code (Python's datetime), so a shared mistake in the civil
// arithmetic cannot make a test agree with itself.
#include "api/when.h"

#include <gtest/gtest.h>

#include <string>

#include "core/civil_date.h"
#include "testing/zones.h"

namespace rota::api {
namespace when_test {
namespace {

constexpr int kCst = 8 * 3600;         // +08:00, the lab's zone
constexpr Time kDec1 = 1796083200;     // 2026-12-01 00:00 UTC, a Tuesday
constexpr Time kNov30 = kDec1 - kDay;  // a Monday
// "now" for most tests: Monday 2026-11-30 10:00 at +08:00.
constexpr Time kNow = 1796004000;
static_assert(kNow == kNov30 - kCst + 10 * kHour);

// 2026-12-01 plus `days`, at hh:mm local time in a zone `offset` east of UTC.
Time Dec(int days, int hh, int mm, int offset) {
  return kDec1 + days * kDay + hh * kHour + mm * kMinute - offset;
}

Time Parse(std::string_view text, Time now = kNow, int offset = kCst, Time base = 0) {
  StatusOr<Time> t = ParseWhen(text, now, offset, base);
  EXPECT_TRUE(t.ok()) << text << ": " << t.status().ToString();
  return t.ok() ? *t : -1;
}

std::string Error(std::string_view text, Time now = kNow, int offset = kCst) {
  StatusOr<Time> t = ParseWhen(text, now, offset);
  EXPECT_FALSE(t.ok()) << text << " was read as " << (t.ok() ? *t : 0);
  if (t.ok()) return "";
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
  return t.status().message();
}

TEST(WhenTest, FullDatesInEveryAcceptedSpelling) {
  const Time want = Dec(0, 14, 0, kCst);
  EXPECT_EQ(want, 1796104800);  // 2026-12-01 06:00 UTC
  for (const char* text :
       {"2026-12-01 14:00", "2026-12-01T14:00", "2026-12-01t14:00", "2026/12/01 14:00", "2026-12-01 14:00:00",
        "2026-12-1 14:00", "2026/12/1 14:00", "  2026-12-01   14:00 ", "2026年12月1日 14:00",
        "2026年12月1日14:00", "2026-12-01 14点", "2026-12-01 14：00"}) {
    EXPECT_EQ(Parse(text), want) << text;
  }
  // Seconds are kept, not rounded.
  EXPECT_EQ(Parse("2026-12-01 14:00:30"), want + 30);
  // The same text in UTC is eight hours later.
  EXPECT_EQ(Parse("2026-12-01 14:00", kNow, 0), Dec(0, 14, 0, 0));
  EXPECT_EQ(Parse("2026-12-01 14:00", kNow, 0), 1796133600);
  // A full date in the past is still read (refusing the past is the booking rules' job).
  EXPECT_EQ(Parse("2026-11-01 09:00"), Dec(-30, 9, 0, kCst));
}

TEST(WhenTest, LeapDays) {
  EXPECT_EQ(Parse("2028-02-29 00:00", kNow, 0), 1835395200);
  EXPECT_NE(Error("2026-02-29 10:00").find("2026-02 has 28 days"), std::string::npos);
  EXPECT_NE(Error("2028-02-30 10:00").find("2028-02 has 29 days"), std::string::npos);
  EXPECT_NE(Error("2100-02-29 10:00").find("2100-02 has 28 days"), std::string::npos);  // not a leap year
  EXPECT_EQ(Parse("2000-02-29 00:00", kNow, 0), 951868800 - kDay);                      // 400 years: leap
}

TEST(WhenTest, MonthAndDayIsTheNextOccurrenceNotBeforeToday) {
  EXPECT_EQ(Parse("12-01 14:00"), Dec(0, 14, 0, kCst));
  EXPECT_EQ(Parse("12/01 14:00"), Dec(0, 14, 0, kCst));
  EXPECT_EQ(Parse("12月1日 14:00"), Dec(0, 14, 0, kCst));
  EXPECT_EQ(Parse("12月1号14:00"), Dec(0, 14, 0, kCst));
  // Today stays this year even when the hour has passed (it is 10:00).
  EXPECT_EQ(Parse("11-30 09:00"), Dec(-1, 9, 0, kCst));
  // Yesterday means next year.
  EXPECT_EQ(Parse("11-29 00:00", kNow, kCst), 1827446400 - kCst);  // 2027-11-29
  // 02-29 waits for 2028.
  EXPECT_EQ(Parse("02-29 00:00", kNow, 0), 1835395200);
  EXPECT_NE(Error("02-30 10:00").find("month 02 has at most 29 days"), std::string::npos);
  EXPECT_NE(Error("04-31 10:00").find("month 04 has at most 30 days"), std::string::npos);
  EXPECT_NE(Error("13-01 10:00").find("there is no month 13"), std::string::npos);
}

TEST(WhenTest, RelativeDays) {
  EXPECT_EQ(Parse("today 14:00"), Dec(-1, 14, 0, kCst));
  EXPECT_EQ(Parse("Tomorrow 14:00"), Dec(0, 14, 0, kCst));
  EXPECT_EQ(Parse("TOMORROW 9:30"), Dec(0, 9, 30, kCst));
  EXPECT_EQ(Parse("今天 14:00"), Dec(-1, 14, 0, kCst));
  EXPECT_EQ(Parse("明天 14:00"), Dec(0, 14, 0, kCst));
  EXPECT_EQ(Parse("后天 14:00"), Dec(1, 14, 0, kCst));
  // What Chinese input methods type: no space, 点/半/分, a full-width colon and space.
  EXPECT_EQ(Parse("明天14点"), Dec(0, 14, 0, kCst));
  EXPECT_EQ(Parse("明天 14点30"), Dec(0, 14, 30, kCst));
  EXPECT_EQ(Parse("明天14点30分"), Dec(0, 14, 30, kCst));
  EXPECT_EQ(Parse("明天 9点半"), Dec(0, 9, 30, kCst));
  EXPECT_EQ(Parse("明天\xE3\x80\x80"
                  "14：00"),
            Dec(0, 14, 0, kCst));
}

TEST(WhenTest, TimeAloneIsTodayOrTheBaseDay) {
  EXPECT_EQ(Parse("14:00"), Dec(-1, 14, 0, kCst));
  EXPECT_EQ(Parse("9:05"), Dec(-1, 9, 5, kCst));  // in the past: returned as is
  EXPECT_EQ(Parse("09:05"), Dec(-1, 9, 5, kCst));
  EXPECT_EQ(Parse("14点"), Dec(-1, 14, 0, kCst));
  EXPECT_EQ(Parse("00:00"), Dec(-1, 0, 0, kCst));
  // An end given without a date is on the start's local day.
  const Time start = Parse("2026-12-07 14:00");
  EXPECT_EQ(Parse("18:00", kNow, kCst, start), Dec(6, 18, 0, kCst));
  EXPECT_EQ(Parse("18:00", kNow, kCst, start), 1796601600 + 10 * kHour);  // 2026-12-07 10:00 UTC
  // The base's local day, not its UTC day: 02:00 at +08:00 on 12-08 is still 12-07 in UTC.
  const Time early = Parse("2026-12-08 02:00");
  EXPECT_EQ(Parse("18:00", kNow, kCst, early), Dec(7, 18, 0, kCst));
  // A date given with the end wins over the base day.
  EXPECT_EQ(Parse("tomorrow 18:00", kNow, kCst, start), Dec(0, 18, 0, kCst));
}

TEST(WhenTest, TwentyFourHundredIsTheMidnightThatEndsTheDay) {
  EXPECT_EQ(Parse("24:00"), Dec(0, 0, 0, kCst));
  EXPECT_EQ(Parse("2026-12-01 24:00"), Dec(1, 0, 0, kCst));
  EXPECT_EQ(Parse("24:00", kNow, kCst, Parse("2026-12-07 22:00")), Dec(7, 0, 0, kCst));
  EXPECT_EQ(Parse("24:00:00"), Dec(0, 0, 0, kCst));
  EXPECT_NE(Error("24:30").find("24:30 is not a time of day (00:00 to 24:00"), std::string::npos);
  EXPECT_NE(Error("24:00:01").find("is not a time of day"), std::string::npos);
}

TEST(WhenTest, WeekdaysAreStrictlyAfterToday) {
  // Today is Monday 2026-11-30.
  EXPECT_EQ(Parse("mon 09:00"), Dec(6, 9, 0, kCst));  // next week's Monday, 2026-12-07
  EXPECT_EQ(Parse("monday 09:00"), 1796601600 + 9 * kHour - kCst);
  EXPECT_EQ(Parse("Tue 09:00"), Dec(0, 9, 0, kCst));
  EXPECT_EQ(Parse("tuesday 09:00"), Dec(0, 9, 0, kCst));
  EXPECT_EQ(Parse("wed 09:00"), Dec(1, 9, 0, kCst));
  EXPECT_EQ(Parse("thurs 09:00"), Dec(2, 9, 0, kCst));
  EXPECT_EQ(Parse("fri 09:00"), Dec(3, 9, 0, kCst));
  EXPECT_EQ(Parse("sat 09:00"), Dec(4, 9, 0, kCst));
  EXPECT_EQ(Parse("sunday 09:00"), Dec(5, 9, 0, kCst));  // 2026-12-06
  EXPECT_EQ(Parse("周一 09:00"), Dec(6, 9, 0, kCst));
  EXPECT_EQ(Parse("周三9:00"), Dec(1, 9, 0, kCst));
  EXPECT_EQ(Parse("星期天 09:00"), Dec(5, 9, 0, kCst));
  EXPECT_EQ(Parse("星期二 09:00"), Dec(0, 9, 0, kCst));
}

// 2026-11-30 20:00 UTC is already Tuesday 2026-12-01 04:00 at +08:00: "today" and the weekdays
// follow the zone's day, not UTC's.
TEST(WhenTest, NearMidnightTheLocalDayDecides) {
  const Time now = 1796068800;
  ASSERT_EQ(now, Dec(-1, 20, 0, 0));
  EXPECT_EQ(FormatLocal(now, kCst), "2026-12-01 04:00");
  EXPECT_EQ(FormatLocal(now, 0), "2026-11-30 20:00");
  EXPECT_EQ(Parse("today 14:00", now, kCst), Dec(0, 14, 0, kCst));
  EXPECT_EQ(Parse("today 14:00", now, 0), Dec(-1, 14, 0, 0));
  EXPECT_EQ(Parse("14:00", now, kCst), Dec(0, 14, 0, kCst));
  EXPECT_EQ(Parse("tomorrow 00:30", now, kCst), Dec(1, 0, 30, kCst));
  // At +08:00 it is Tuesday: "tue" is a week away; in UTC it is Monday: "tue" is tomorrow.
  EXPECT_EQ(Parse("tue 09:00", now, kCst), Dec(7, 9, 0, kCst));
  EXPECT_EQ(Parse("tue 09:00", now, 0), Dec(0, 9, 0, 0));
  // "11-30" at +08:00 is yesterday (next year); in UTC it is today.
  EXPECT_EQ(Parse("11-30 09:00", now, 0), Dec(-1, 9, 0, 0));
  EXPECT_EQ(Parse("11-30 09:00", now, kCst), Dec(364, 9, 0, kCst));
  // West of UTC: 2026-12-01 02:00 UTC is still Monday 2026-11-30 21:00 at -05:00.
  const Time late = Dec(0, 2, 0, 0);
  EXPECT_EQ(FormatLocal(late, -5 * 3600), "2026-11-30 21:00");
  EXPECT_EQ(Parse("today 23:00", late, -5 * 3600), Dec(-1, 23, 0, -5 * 3600));
}

TEST(WhenTest, UnixSeconds) {
  EXPECT_EQ(Parse("1764576000"), 1764576000);
  EXPECT_EQ(Parse(" 1000000000 "), 1000000000);
  EXPECT_NE(Error("999999999").find("cannot read \"999999999\" as a time; use"), std::string::npos);
  EXPECT_NE(Error("99999999999999999999999").find("cannot read"), std::string::npos);  // overflow
  EXPECT_NE(Error("14").find("cannot read \"14\" as a time; use"), std::string::npos);
}

TEST(WhenTest, UnreadableTextListsTheFormsAndTheZone) {
  EXPECT_EQ(
      Error("next week"),
      "cannot read \"next week\" as a time; use 2026-12-01 14:00, 12-01 14:00, tomorrow 14:00, 14:00 (today) "
      "or mon 09:00 (server time, +08:00)");
  EXPECT_EQ(
      Error("  Next Week ", kNow, 0),
      "cannot read \"Next Week\" as a time; use 2026-12-01 14:00, 12-01 14:00, tomorrow 14:00, 14:00 (today) "
      "or mon 09:00 (server time, UTC)");
  for (const char* text : {"", "   ", "tomorrow afternoon", "2026-12-01 14:00 extra", "12-01-2026 14:00",
                           "2026-12-01 9:5", "mon9:00", "2026-12/01 14:00", "14:00 tomorrow", "下午3点",
                           "2pm", "126-12-01 14:00", "2026-12-01 140:00", "12月 14:00", "明天后 14:00"}) {
    EXPECT_NE(Error(text).find("as a time; use"), std::string::npos) << text;
  }
}

TEST(WhenTest, ImpossibleDatesAndTimesSayWhatIsWrong) {
  EXPECT_EQ(Error("2026-02-30 14:00"), "cannot read \"2026-02-30 14:00\" as a time: 2026-02 has 28 days");
  EXPECT_EQ(Error("2026-13-01 10:00"), "cannot read \"2026-13-01 10:00\" as a time: there is no month 13");
  EXPECT_EQ(Error("2026-12-00 10:00"), "cannot read \"2026-12-00 10:00\" as a time: there is no day 0");
  EXPECT_EQ(Error("25:00"),
            "cannot read \"25:00\" as a time: 25:00 is not a time of day (00:00 to 24:00, where 24:00 ends "
            "the day)");
  EXPECT_EQ(Error("tomorrow 14:60"),
            "cannot read \"tomorrow 14:60\" as a time: 14:60 is not a time of day: minutes go from 00 to 59");
  EXPECT_NE(Error("14:00:75").find("seconds go from 00 to 59"), std::string::npos);
  EXPECT_NE(Error("明天 25点").find("25点 is not a time of day"), std::string::npos);
  // A date on its own: say that the time is missing rather than list every form.
  EXPECT_EQ(Error("tomorrow"),
            "cannot read \"tomorrow\" as a time: it has no time of day; add one, e.g. "
            "\"tomorrow 14:00\"");
  EXPECT_NE(Error("2026-12-01").find("it has no time of day"), std::string::npos);
  EXPECT_NE(Error("2026-02-30").find("2026-02 has 28 days"), std::string::npos);
}

TEST(WhenTest, FormatOffset) {
  EXPECT_EQ(FormatOffset(kCst), "+08:00");
  EXPECT_EQ(FormatOffset(0), "UTC");
  EXPECT_EQ(FormatOffset(-5 * 3600), "-05:00");
  EXPECT_EQ(FormatOffset(19800), "+05:30");
  EXPECT_EQ(FormatOffset(20700), "+05:45");
  EXPECT_EQ(FormatOffset(-9 * 3600 - 30 * 60), "-09:30");
}

StatusOr<Time> Since(std::string_view text, int offset = kCst) { return ParseSince(text, kNow, offset); }

TEST(WhenTest, SinceIsHowLongAgoOrAPastDayInServerTime) {
  EXPECT_EQ(*Since("7d"), kNow - 7 * kDay);
  EXPECT_EQ(*Since(" 12h "), kNow - 12 * kHour);
  EXPECT_EQ(*Since("90m"), kNow - 90 * kMinute);
  // A day alone is its 00:00 in the server's zone, whatever the client's TZ says.
  EXPECT_EQ(*Since("2026-11-01"), Dec(-30, 0, 0, kCst));
  EXPECT_EQ(*Since("2026-11-01", 0), Dec(-30, 0, 0, 0));
  EXPECT_EQ(*Since("2026-11-01 14:00"), Dec(-30, 14, 0, kCst));
  EXPECT_EQ(*Since("today"), Dec(-1, 0, 0, kCst));
  EXPECT_EQ(*Since("今天"), Dec(-1, 0, 0, kCst));
  // A time of day alone is today's (09:00 has passed at 10:00).
  EXPECT_EQ(*Since("09:00"), Dec(-1, 9, 0, kCst));
  EXPECT_EQ(*Since("1764576000"), 1764576000);
}

TEST(WhenTest, SinceRefusesTheFutureAndSaysWhatItRead) {
  // At 10:00 on Monday 2026-11-30 (+08:00), each of these is still to come.
  EXPECT_EQ(Since("11-01").status().message(),
            "\"11-01\" is 2027-11-01 00:00 (server time, +08:00), which has not come yet; give a past day "
            "with its year (2026-11-23) or how long ago (7d)");
  EXPECT_NE(Since("mon").status().message().find("is 2026-12-07 00:00"), std::string::npos);
  EXPECT_NE(Since("tomorrow").status().message().find("is 2026-12-01 00:00"), std::string::npos);
  EXPECT_NE(Since("14:00").status().message().find("is 2026-11-30 14:00"), std::string::npos);
  EXPECT_NE(Since("2026-12-05").status().message().find("which has not come yet"), std::string::npos);
  EXPECT_EQ(Since("11-01").status().code(), StatusCode::kInvalidArgument);
}

TEST(WhenTest, SinceNamesItsOwnFormsWhenUnreadable) {
  EXPECT_EQ(Since("last week").status().message(),
            "cannot read \"last week\" as a time; use how long ago (7d, 12h, 90m), a day (2026-11-23, "
            "today) or a day and time (2026-11-23 14:00) (server time, +08:00)");
  // Slurm's minutes and minutes:seconds are not how long ago here.
  EXPECT_NE(Since("90").status().message().find("cannot read \"90\" as a time; use how long ago"),
            std::string::npos);
  // What is wrong with an impossible date is still said.
  EXPECT_EQ(Since("2026-02-30").status().message(),
            "cannot read \"2026-02-30\" as a time: 2026-02 has 28 days");
  EXPECT_EQ(Since("").status().code(), StatusCode::kInvalidArgument);
}

// FormatLocal's own cases are in core/civil_date_test.cc; here, what it writes reads back.
TEST(WhenTest, ADeadlineWithoutATimeOfDayIsTheEndOfThatDay) {
  auto deadline = [](std::string_view text) {
    StatusOr<Time> t = ParseDeadline(text, kNow, kCst);
    EXPECT_TRUE(t.ok()) << text << ": " << t.status().message();
    return t.ok() ? *t : 0;
  };
  EXPECT_EQ(deadline("2026-12-10"), Dec(10, 0, 0, kCst));  // 12-10 24:00 is 12-11 00:00
  EXPECT_EQ(deadline("12-10"), Dec(10, 0, 0, kCst));
  EXPECT_EQ(deadline("2026年12月10日"), Dec(10, 0, 0, kCst));
  EXPECT_EQ(deadline("tomorrow"), Dec(1, 0, 0, kCst));      // now is Monday 11-30: Tuesday's end
  EXPECT_EQ(deadline("明天"), Dec(1, 0, 0, kCst));
  EXPECT_EQ(deadline("fri"), Dec(4, 0, 0, kCst));           // Friday 12-04's end
  // A time of day is taken as written, in every form ParseWhen reads.
  EXPECT_EQ(deadline("2026-12-10 18:00"), Dec(9, 18, 0, kCst));
  EXPECT_EQ(deadline("明天 14点"), Dec(0, 14, 0, kCst));
  EXPECT_EQ(deadline("14点"), Dec(-1, 14, 0, kCst));
  EXPECT_EQ(deadline("1796083200"), kDec1);
  StatusOr<Time> bad = ParseDeadline("next week", kNow, kCst);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("cannot read \"next week\""), std::string::npos) << bad.status().message();
  EXPECT_FALSE(ParseDeadline("2026-02-30", kNow, kCst).ok());
}

TEST(WhenTest, FormatLocalReadsBack) {
  for (int offset : {0, kCst, -5 * 3600, 19800}) {
    for (Time t = kDec1 - 400 * kDay; t < kDec1 + 800 * kDay; t += 7 * kHour + 13 * kMinute) {
      EXPECT_EQ(Parse(FormatLocal(t, offset), kNow, offset), t) << t << " at " << offset;
    }
  }
}

// Europe/Berlin (testing/zones.h; the instants are Python's datetime).
TEST(WhenTest, WallTimesAcrossDaylightSaving) {
  const Zone berlin = rota::testing::Berlin();
  const Time before_spring = 1774526400;  // 2026-03-26 12:00 UTC
  // 02:30 on 29 March is skipped: read past the gap, as 03:30 CEST (01:30 UTC).
  StatusOr<Time> t = ParseWhen("2026-03-29 02:30", before_spring, berlin);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(*t, 1774747800);
  EXPECT_EQ(FormatLocal(*t, berlin), "2026-03-29 03:30");
  // 02:30 on 25 October happens twice: its first instant (00:30 UTC, still CEST).
  t = ParseWhen("2026-10-25 02:30", before_spring, berlin);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(*t, 1792888200);
  // Away from the changes, what FormatLocal writes reads back.
  for (Time u = 1767225600; u < 1767225600 + 400 * kDay; u += 7 * kHour + 13 * kMinute) {
    if (berlin.NextChange(u - 2 * kHour) <= u + 2 * kHour) continue;
    StatusOr<Time> back = ParseWhen(FormatLocal(u, berlin), before_spring, berlin);
    ASSERT_TRUE(back.ok()) << FormatLocal(u, berlin);
    EXPECT_EQ(*back, u - u % 60) << FormatLocal(u, berlin);
  }
  // Messages name the zone and its offset at the time.
  EXPECT_NE(ParseWhen("next week", before_spring, berlin).status().message().find("Europe/Berlin, +01:00"),
            std::string::npos);
}

TEST(WhenTest, WeeksStartOnMondayAtLocalMidnight) {
  constexpr Time kMon = 1795968000;  // 2026-11-30 00:00 +08:00
  EXPECT_EQ(*ParseWeek("", kNow, kCst), kMon);
  EXPECT_EQ(*ParseWeek("this", kNow, kCst), kMon);
  EXPECT_EQ(*ParseWeek("next", kNow, kCst), 1796572800);
  EXPECT_EQ(*ParseWeek("last", kNow, kCst), 1795363200);
  EXPECT_EQ(*ParseWeek("2026-12-06", kNow, kCst), kMon);  // the Sunday ends it
  EXPECT_EQ(*ParseWeek("2026-12-07", kNow, kCst), 1796572800);
  EXPECT_EQ(*ParseWeek("12-03", kNow, kCst), kMon);
  EXPECT_EQ(*ParseWeek("12月3日", kNow, kCst), kMon);
  EXPECT_EQ(*ParseWeek(" Tomorrow ", kNow, kCst), kMon);
  EXPECT_EQ(ParseWeek("2026-02-30", kNow, kCst).status().message(),
            "cannot read \"2026-02-30\" as a week: 2026-02 has 28 days");
  EXPECT_EQ(ParseWeek("soon", kNow, kCst).status().message(),
            "cannot read \"soon\" as a week; give a day of it (2026-12-01, 12-01, today, mon) or this, next or last");
  EXPECT_FALSE(ParseWeek("2026-12-01 14:00", kNow, kCst).ok());
  // Berlin: the week holding 29 March starts at 00:00 CET and the next one at 00:00 CEST, 167
  // hours later.
  const Zone berlin = rota::testing::Berlin();
  StatusOr<Time> week = ParseWeek("2026-03-29", 1774526400, berlin);
  ASSERT_TRUE(week.ok());
  EXPECT_EQ(*week, 1774220400);
  EXPECT_EQ(berlin.FromLocal(berlin.ToLocal(*week) + kWeek), 1774821600);
  EXPECT_EQ(*ParseWeek("next", 1774526400, berlin), 1774821600);
}

}  // namespace
}  // namespace when_test
}  // namespace rota::api
