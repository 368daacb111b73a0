// Tests of how rota prints bookings: the list (alignment with Chinese names and notes by display
// width, cut notes, states, cards, the admin's to-do view), the week calendar (a booking across
// midnight, two bookings on one card, MIG slice rows, the legend, today's mark, a booking partly
// outside the week), week dates, and the lines of book, release and extend. Times are in the
// api.md shape (Unix seconds) and shown in a zone the test gives, so no test depends on $TZ.
#include "cli/bookings_format.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "api/zone_json.h"
#include "cli/text.h"
#include "testing/zones.h"

namespace rota::cli {
namespace bookings_format_test {
namespace {

using nlohmann::json;

constexpr Time kMonday = 1795996800;  // 2026-11-30 00:00 UTC, a Monday
constexpr Time kH = kHour;

json Booking(long long id, std::string user, Time start, Time end, std::vector<int> gpus = {0},
             std::string state = "confirmed") {
  return {{"id", id},
          {"user", user},
          {"project", "nlp"},
          {"note", ""},
          {"tier", "regular"},
          {"request", {{"kind", "gpus"}, {"gpus", gpus.empty() ? 1 : gpus.size()}}},
          {"gpus", gpus},
          {"gpu_uuids", json::array()},
          {"mig_uuid", ""},
          {"start", start},
          {"end", end},
          {"state", state},
          {"actual_end", 0},
          {"created", kMonday - kDay},
          {"decided_by", "rotad"},
          {"reason", "within the rules"},
          {"gpu_hours", static_cast<double>(gpus.size()) * static_cast<double>(end - start) / 3600.0},
          {"mine", false}};
}

json Cards(int n) {
  json gpus = json::array();
  for (int i = 0; i < n; ++i) {
    gpus.push_back({{"index", i},
                    {"uuid", "GPU-" + std::to_string(i)},
                    {"model", "A100"},
                    {"memory", 81920},
                    {"mig", json::array()},
                    {"drained", false}});
  }
  return gpus;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The line that starts with `prefix`; "" when none does.
std::string LineStarting(const std::string& text, const std::string& prefix) {
  for (const std::string& line : Lines(text)) {
    if (line.rfind(prefix, 0) == 0) return line;
  }
  return "";
}

// The display column at which `needle` starts in `line`; -1 when it is not there.
int ColumnOf(const std::string& line, const std::string& needle) {
  size_t at = line.find(needle);
  if (at == std::string::npos) return -1;
  return DisplayWidth(line.substr(0, at));
}

// The 12 cells of day `d` (0 = Monday) in a calendar row: the text between the d+1-th and
// d+2-th "│".
std::string DayCells(const std::string& row, int d) {
  const std::string bar = "\u2502";
  size_t at = 0;
  for (int i = 0; i <= d; ++i) {
    at = row.find(bar, at);
    if (at == std::string::npos) return "?";
    at += bar.size();
  }
  size_t end = row.find(bar, at);
  return row.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

class BookingsFormatTest : public ::testing::Test {
 protected:
  void SetUp() override { UseUtf8Locale(); }
  BookingsFormat format_;
};

// ---- The list ----

TEST_F(BookingsFormatTest, BookingsListAlignsChineseNamesAndNotesByDisplayWidth) {
  json a = Booking(12, "alice", kMonday + 14 * kH, kMonday + 18 * kH, {0, 1});
  a["note"] = "needs 2 GPUs";
  json b = Booking(13, "张伟", kMonday + 15 * kH, kMonday + 17 * kH, {2});
  b["project"] = "视觉";
  b["note"] = "论文实验";
  std::string out = FormatBookingsList(json::array({b, a}), format_);
  std::vector<std::string> lines = Lines(out);
  ASSERT_EQ(lines.size(), 3u) << out;
  EXPECT_EQ(lines[0].rfind("ID", 0), 0u) << out;
  // Earliest start first, whatever the reply's order.
  EXPECT_NE(lines[1].find("alice"), std::string::npos) << out;
  EXPECT_NE(lines[2].find("张伟"), std::string::npos) << out;
  // Every column starts at the same display column in the header and in both rows, although
  // "张伟" and "视觉" are 2 characters of 6 bytes that take 4 columns.
  for (const char* header : {"PROJECT", "GPUS", "START", "STATE", "NOTE"}) {
    SCOPED_TRACE(header);
    const int col = ColumnOf(lines[0], header);
    ASSERT_GT(col, 0);
    const std::string a_cell = std::string(header) == "PROJECT" ? "nlp"
                               : std::string(header) == "GPUS"  ? "0,1"
                               : std::string(header) == "START" ? "2026-11-30 14:00"
                               : std::string(header) == "STATE" ? "confirmed"
                                                                : "needs 2 GPUs";
    const std::string b_cell = std::string(header) == "PROJECT" ? "视觉"
                               : std::string(header) == "GPUS"  ? "2 "
                               : std::string(header) == "START" ? "2026-11-30 15:00"
                               : std::string(header) == "STATE" ? "confirmed"
                                                                : "论文实验";
    EXPECT_EQ(ColumnOf(lines[1], a_cell), col) << out;
    EXPECT_EQ(ColumnOf(lines[2], b_cell), col) << out;
  }
  // Columns are as wide as their widest cell in columns, not bytes ("张伟" is 6 bytes, 4 columns).
  EXPECT_EQ(lines[1].rfind("12  alice  nlp      0,1", 0), 0u) << out;
  EXPECT_EQ(lines[2].rfind("13  张伟   视觉     2  ", 0), 0u) << out;
  // END is only the time on the start's day; HOURS has one decimal, aligned right.
  EXPECT_NE(lines[1].find("2026-11-30 14:00  18:00"), std::string::npos) << out;
  EXPECT_EQ(ColumnOf(lines[1], "8.0"), ColumnOf(lines[2], "2.0")) << out;
}

TEST_F(BookingsFormatTest, BookingsListCutsNotesByDisplayWidth) {
  json b = Booking(12, "alice", kMonday + 14 * kH, kMonday + 18 * kH);
  const std::string note =
      "毕业论文最后一轮实验需要两张卡跑完所有消融实验和对比实验";  // 27 characters, 54 columns
  b["note"] = note;
  std::string out = FormatBookingsList(json::array({b}), format_);
  std::string row = Lines(out).at(1);
  size_t at = row.find("毕业");
  ASSERT_NE(at, std::string::npos) << out;
  std::string cell = row.substr(at);
  EXPECT_LE(DisplayWidth(cell), 30) << cell;
  EXPECT_GE(DisplayWidth(cell), 29) << cell;  // as much as fits, not a byte cut
  ASSERT_GE(cell.size(), 3u);
  EXPECT_EQ(cell.substr(cell.size() - 3), "\u2026") << cell;
  // Cut between characters: what is left is a prefix of the note.
  EXPECT_EQ(note.rfind(cell.substr(0, cell.size() - 3), 0), 0u) << cell;

  format_.note_width = 10;
  row = Lines(FormatBookingsList(json::array({b}), format_)).at(1);
  EXPECT_EQ(row.substr(row.find("毕业")), "毕业论文\u2026") << row;
}

TEST_F(BookingsFormatTest, BookingsListShowsStatesAndCards) {
  json released = Booking(20, "alice", kMonday + 9 * kH, kMonday + 13 * kH, {0}, "released");
  released["actual_end"] = kMonday + 10 * kH + 30 * 60;
  json share = Booking(21, "bob", kMonday + 10 * kH, kMonday + 12 * kH, {3});
  share["request"] = {{"kind", "gpu_mem"}, {"memory", 20480}};
  json slice = Booking(22, "carol", kMonday + 11 * kH, kMonday + 12 * kH, {2}, "active");
  slice["request"] = {{"kind", "mig"}, {"profile", "3g.40gb"}};
  slice["mig_uuid"] = "MIG-a";
  json unplaced = Booking(23, "dave", kMonday + 22 * kH, kMonday + kDay + 2 * kH, {}, "requested");
  unplaced["request"] = {{"kind", "gpus"}, {"gpus", 2}};
  json cancelled = Booking(24, "erin", kMonday + 23 * kH, kMonday + kDay, {1}, "cancelled");
  std::string out = FormatBookingsList(json::array({cancelled, unplaced, slice, share, released}), format_);

  std::string r20 = LineStarting(out, "20 ");
  EXPECT_NE(r20.find("released 10:30"), std::string::npos) << out;  // when it was released
  EXPECT_NE(LineStarting(out, "21 ").find(" 3:20G "), std::string::npos) << out;
  EXPECT_NE(LineStarting(out, "22 ").find(" 2:3g.40gb "), std::string::npos) << out;
  EXPECT_NE(LineStarting(out, "22 ").find(" active"), std::string::npos) << out;
  std::string r23 = LineStarting(out, "23 ");
  EXPECT_NE(r23.find(" any 2 "), std::string::npos) << out;
  // Ends on the next day: the END column gives the date.
  EXPECT_NE(r23.find("2026-11-30 22:00  2026-12-01 02:00"), std::string::npos) << out;
  EXPECT_NE(r23.find(" requested"), std::string::npos) << out;
  EXPECT_NE(LineStarting(out, "24 ").find(" cancelled"), std::string::npos) << out;
  // Ordered by start: 20 (09:00) before 21, 22, 23, 24.
  std::vector<std::string> lines = Lines(out);
  ASSERT_EQ(lines.size(), 6u) << out;
  EXPECT_EQ(lines[1].rfind("20 ", 0), 0u) << out;
  EXPECT_EQ(lines[5].rfind("24 ", 0), 0u) << out;
}

TEST_F(BookingsFormatTest, BookingsListPendingShowsWhyAndTier) {
  json b = Booking(30, "alice", kMonday + 14 * kH, kMonday + 18 * kH, {0}, "requested");
  b["tier"] = "thesis";
  b["reason"] = "starts today: same-day bookings need an admin (book the day before)";
  format_.pending = true;
  std::string out = FormatBookingsList(json::array({b}), format_);
  std::vector<std::string> lines = Lines(out);
  ASSERT_EQ(lines.size(), 2u) << out;
  EXPECT_NE(lines[0].find("TIER"), std::string::npos) << out;
  EXPECT_NE(lines[0].find("WHY"), std::string::npos) << out;
  EXPECT_EQ(lines[0].find("STATE"), std::string::npos) << out;
  EXPECT_NE(lines[1].find(" thesis "), std::string::npos) << out;
  EXPECT_EQ(ColumnOf(lines[1], "starts today: same-day bookings need an admin (book the day…"),
            ColumnOf(lines[0], "WHY"))
      << out;  // cut at 60 columns
}

TEST_F(BookingsFormatTest, BookingsListEmptyAndOffset) {
  EXPECT_EQ(FormatBookingsList(json::array(), format_), "No bookings.\n");
  format_.pending = true;
  EXPECT_EQ(FormatBookingsList(json{{"bookings", json::array()}}, format_),
            "No bookings wait for an admin.\n");
  format_.pending = false;
  format_.zone = 8 * kH;  // Beijing: 06:00 UTC is 14:00
  json b = Booking(12, "alice", kMonday + 6 * kH, kMonday + 10 * kH);
  std::string out = FormatBookingsList(json{{"bookings", json::array({b})}}, format_);
  EXPECT_NE(out.find("2026-11-30 14:00  18:00"), std::string::npos) << out;
}

// ---- The week ----

TEST_F(BookingsFormatTest, BookingsWeekBookingAcrossMidnight) {
  // Monday 22:00 to Tuesday 03:00 on card 1: the last cell of Monday, the first two of Tuesday.
  json b = Booking(12, "alice", kMonday + 22 * kH, kMonday + kDay + 3 * kH, {1});
  std::string out = FormatBookingsWeek(json::array({b}), Cards(2), kMonday, format_);
  std::string gpu0 = LineStarting(out, "GPU 0");
  std::string gpu1 = LineStarting(out, "GPU 1");
  ASSERT_FALSE(gpu1.empty()) << out;
  EXPECT_EQ(DayCells(gpu1, 0), "...........A") << out;
  EXPECT_EQ(DayCells(gpu1, 1), "AA..........") << out;
  EXPECT_EQ(DayCells(gpu1, 2), "............") << out;
  EXPECT_EQ(DayCells(gpu0, 0), "............") << out;
  EXPECT_EQ(DayCells(gpu0, 1), "............") << out;
  // Every grid line is the same width, and readable in well under 160 columns.
  EXPECT_EQ(DisplayWidth(gpu0), DisplayWidth(gpu1));
  EXPECT_LE(DisplayWidth(gpu0), 120);
  EXPECT_EQ(DisplayWidth(LineStarting(out, " ")), DisplayWidth(gpu0)) << out;  // the day header
  // The legend gives both days.
  EXPECT_NE(out.find("A  12  alice  nlp  1  Mon 11-30 22:00 - Tue 12-01 03:00  confirmed"), std::string::npos)
      << out;
}

TEST_F(BookingsFormatTest, BookingsWeekTwoBookingsOnOneCard) {
  json a = Booking(12, "alice", kMonday + 14 * kH, kMonday + 18 * kH, {0});
  json b = Booking(13, "bob", kMonday + 19 * kH, kMonday + 20 * kH, {0});
  // A share on card 0 on Wednesday, at the same time as a requested one: both in the cell.
  json c = Booking(14, "carol", kMonday + 2 * kDay + 8 * kH, kMonday + 2 * kDay + 10 * kH, {0});
  c["request"] = {{"kind", "gpu_mem"}, {"memory", 20480}};
  json d = Booking(15, "dave", kMonday + 2 * kDay + 9 * kH, kMonday + 2 * kDay + 12 * kH, {0}, "requested");
  d["request"] = {{"kind", "gpu_mem"}, {"memory", 40960}};
  std::string out = FormatBookingsWeek(json::array({d, b, a, c}), Cards(1), kMonday, format_);
  std::string gpu0 = LineStarting(out, "GPU 0");
  // 14:00-18:00 holds cells 14-16 and 16-18; 19:00-20:00 half of cell 18-20.
  EXPECT_EQ(DayCells(gpu0, 0), ".......AAB..") << out;
  // Wednesday: C 08-10 (cell 4), D 09-12 (cells 4 and 5): cell 4 holds both.
  EXPECT_EQ(DayCells(gpu0, 2), "....+D......") << out;
  // Markers go by start: A 12, B 13, C 14, D 15.
  EXPECT_FALSE(LineStarting(out, "A  12").empty()) << out;
  EXPECT_FALSE(LineStarting(out, "B  13").empty()) << out;
  EXPECT_FALSE(LineStarting(out, "C  14").empty()) << out;
  EXPECT_FALSE(LineStarting(out, "D  15").empty()) << out;
  EXPECT_NE(LineStarting(out, "C  14").find("0:20G"), std::string::npos) << out;
  EXPECT_NE(LineStarting(out, "D  15").find("requested"), std::string::npos) << out;
  EXPECT_NE(out.find("+ several bookings in one cell"), std::string::npos) << out;
}

TEST_F(BookingsFormatTest, BookingsWeekShowsTheJobsAheadBesideTheBookings) {
  json reply = {{"bookings", json::array({Booking(12, "alice", kMonday + 14 * kH, kMonday + 18 * kH, {1})})},
                {"ahead", json::array()}};
  // Running on cards 0 and 1 from Monday 06:00 to its limit at 16:00: "=" over both cards, "+"
  // where alice's booking shares card 1 (the booking starts as the job's limit is near).
  reply["ahead"].push_back({{"job_id", 7}, {"user", "bob"}, {"name", "train"}, {"state", "running"},
                            {"request", {{"kind", "gpus"}, {"gpus", 2}}}, {"gpus", {0, 1}}, {"mig_uuid", ""},
                            {"start", kMonday + 6 * kH}, {"end", kMonday + 16 * kH}});
  // Waiting, expected Tuesday 02:00 for 3 h (an estimate): on the row "expected".
  reply["ahead"].push_back({{"job_id", 9}, {"user", "carol"}, {"name", "eval"}, {"state", "pending"},
                            {"request", {{"kind", "gpus"}, {"gpus", 1}}}, {"estimated", true},
                            {"start", kMonday + kDay + 2 * kH}, {"end", kMonday + kDay + 5 * kH}});
  // Outside the week: not shown.
  reply["ahead"].push_back({{"job_id", 10}, {"user", "dan"}, {"name", "x"}, {"state", "pending"},
                            {"request", {{"kind", "gpus"}, {"gpus", 1}}}, {"start", kMonday + 8 * kDay},
                            {"end", kMonday + 9 * kDay}});
  const std::string out = FormatBookingsWeek(reply, Cards(2), kMonday, format_);
  EXPECT_EQ(DayCells(LineStarting(out, "GPU 0"), 0), "...=====....") << out;
  EXPECT_EQ(DayCells(LineStarting(out, "GPU 1"), 0), "...====+A...") << out;
  EXPECT_EQ(DayCells(LineStarting(out, "expected"), 1), ".~~.........") << out;
  EXPECT_EQ(DayCells(LineStarting(out, "expected"), 0), "............") << out;
  EXPECT_NE(LineStarting(out, "=  job 7").find("bob"), std::string::npos) << out;
  EXPECT_NE(LineStarting(out, "=  job 7").find("0,1"), std::string::npos) << out;
  EXPECT_NE(LineStarting(out, "~  job 9").find("expected (estimate)"), std::string::npos) << out;
  EXPECT_NE(LineStarting(out, "~  job 9").find("any 1"), std::string::npos) << out;
  EXPECT_EQ(out.find("job 10"), std::string::npos) << out;
  EXPECT_NE(out.find("= a running job  ~ a job expected to start"), std::string::npos) << out;
  // Without "ahead" (an older server, or the list): the calendar as before.
  const std::string plain = FormatBookingsWeek(reply["bookings"], Cards(2), kMonday, format_);
  EXPECT_EQ(DayCells(LineStarting(plain, "GPU 1"), 0), ".......AA...") << plain;
  EXPECT_EQ(plain.find("expected"), std::string::npos) << plain;
}

TEST_F(BookingsFormatTest, BookingsWeekMigSliceRows) {
  json gpus = Cards(2);
  gpus[1]["mig"] = json::array({{{"uuid", "MIG-1a"}, {"profile", "3g.40gb"}},
                                {{"uuid", "MIG-1b"}, {"profile", "3g.40gb"}},
                                {{"uuid", "MIG-1c"}, {"profile", "1g.10gb"}}});
  json s = Booking(40, "alice", kMonday + kDay + 8 * kH, kMonday + kDay + 12 * kH, {1});
  s["request"] = {{"kind", "mig"}, {"profile", "3g.40gb"}};
  s["mig_uuid"] = "MIG-1b";
  std::string out = FormatBookingsWeek(json::array({s}), gpus, kMonday, format_);
  std::vector<std::string> lines = Lines(out);
  // Card 1's row, then the booked slice (position 1) under it; the unbooked slices get no row.
  size_t card = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind("GPU 1", 0) == 0) card = i;
  }
  ASSERT_GT(card, 0u) << out;
  ASSERT_LT(card + 1, lines.size());
  EXPECT_EQ(lines[card + 1].rfind(" \u2514 mig1 3g.40gb", 0), 0u) << out;
  EXPECT_EQ(out.find("mig0"), std::string::npos) << out;
  EXPECT_EQ(out.find("1g.10gb"), std::string::npos) << out;
  // The slice holds its cells; the card's own row stays free.
  EXPECT_EQ(DayCells(lines[card + 1], 1), "....AA......") << out;
  EXPECT_EQ(DayCells(lines[card], 1), "............") << out;
  EXPECT_NE(out.find("1:3g.40gb"), std::string::npos) << out;  // in the legend
}

TEST_F(BookingsFormatTest, BookingsWeekLegendAndTodayMark) {
  json a = Booking(12, "张伟", kMonday + 14 * kH, kMonday + 18 * kH, {0});
  a["note"] = "thesis runs";
  json b = Booking(13, "alice", kMonday + 3 * kDay + 9 * kH, kMonday + 3 * kDay + 11 * kH, {1}, "active");
  format_.now = kMonday + 2 * kDay + 10 * kH;  // Wednesday
  std::string out = FormatBookingsWeek(json::array({a, b}), Cards(2), kMonday, format_);
  EXPECT_EQ(Lines(out).at(0).rfind("Bookings, week of 2026-11-30 to 2026-12-06 (UTC+00:00", 0), 0u) << out;
  EXPECT_NE(out.find("[Wed 12-02]"), std::string::npos) << out;
  EXPECT_EQ(out.find("[Tue 12-01]"), std::string::npos) << out;
  EXPECT_NE(out.find("Tue 12-01"), std::string::npos) << out;
  EXPECT_NE(out.find("[ ] today"), std::string::npos) << out;
  // Legend columns aligned by display width despite the Chinese name.
  std::string la = LineStarting(out, "A  12");
  std::string lb = LineStarting(out, "B  13");
  ASSERT_FALSE(la.empty());
  ASSERT_FALSE(lb.empty());
  EXPECT_EQ(ColumnOf(la, "Mon 11-30 14:00-18:00"), ColumnOf(lb, "Thu 12-03 09:00-11:00")) << out;
  EXPECT_EQ(ColumnOf(la, "confirmed"), ColumnOf(lb, "active")) << out;
  EXPECT_EQ(la.rfind("A  12  张伟   nlp  0  Mon", 0), 0u) << out;
  EXPECT_EQ(lb.rfind("B  13  alice  nlp  1  Thu", 0), 0u) << out;
  EXPECT_NE(la.find("thesis runs"), std::string::npos) << out;

  // Another week: nothing marked as today.
  format_.now = kMonday + 9 * kDay;
  out = FormatBookingsWeek(json::array({a, b}), Cards(2), kMonday, format_);
  EXPECT_EQ(out.find('['), std::string::npos) << out;
}

TEST_F(BookingsFormatTest, BookingsWeekBookingPartlyOutsideTheWeek) {
  // Sunday before 20:00 to Monday 03:00; Sunday 22:00 of this week to the next Monday 04:00;
  // one entirely next week (left out); a cancelled one this week (counted, not drawn).
  json before = Booking(50, "alice", kMonday - 4 * kH, kMonday + 3 * kH, {0});
  json after = Booking(51, "bob", kMonday + 6 * kDay + 22 * kH, kMonday + kWeek + 4 * kH, {0});
  json later = Booking(52, "carol", kMonday + kWeek + 8 * kH, kMonday + kWeek + 9 * kH, {0});
  json gone = Booking(53, "dave", kMonday + 3 * kDay, kMonday + 3 * kDay + 2 * kH, {0}, "cancelled");
  std::string out = FormatBookingsWeek(json::array({before, after, later, gone}), Cards(1), kMonday, format_);
  std::string gpu0 = LineStarting(out, "GPU 0");
  EXPECT_EQ(DayCells(gpu0, 0), "AA..........") << out;
  EXPECT_EQ(DayCells(gpu0, 3), "............") << out;  // the cancelled one
  EXPECT_EQ(DayCells(gpu0, 6), "...........B") << out;
  EXPECT_NE(LineStarting(out, "A  50").find("Sun 11-29 20:00 - Mon 11-30 03:00"), std::string::npos) << out;
  EXPECT_NE(LineStarting(out, "B  51").find("Sun 12-06 22:00 - Mon 12-07 04:00"), std::string::npos) << out;
  EXPECT_EQ(out.find("52"), std::string::npos) << out;
  EXPECT_EQ(out.find("dave"), std::string::npos) << out;
  EXPECT_NE(out.find("1 cancelled or rejected booking not shown"), std::string::npos) << out;
}

TEST_F(BookingsFormatTest, BookingsWeekReleasedEndsAtRelease) {
  json r = Booking(60, "alice", kMonday + 8 * kH, kMonday + 16 * kH, {0}, "released");
  r["actual_end"] = kMonday + 10 * kH;  // held 08:00-10:00 only
  json o = Booking(61, "bob", kMonday + 16 * kH, kMonday + 18 * kH, {1}, "overrun");
  o["actual_end"] = kMonday + 21 * kH;  // ran on to 21:00
  std::string out = FormatBookingsWeek(json::array({r, o}), Cards(2), kMonday, format_);
  EXPECT_EQ(DayCells(LineStarting(out, "GPU 0"), 0), "....A.......") << out;
  EXPECT_EQ(DayCells(LineStarting(out, "GPU 1"), 0), "........BBB.") << out;
}

TEST_F(BookingsFormatTest, BookingsWeekUnplacedAndUnknownCards) {
  json unplaced = Booking(70, "alice", kMonday + 8 * kH, kMonday + 10 * kH, {}, "requested");
  json unknown = Booking(71, "bob", kMonday + 8 * kH, kMonday + 10 * kH, {5});
  std::string out = FormatBookingsWeek(json::array({unplaced, unknown}), Cards(1), kMonday, format_);
  std::vector<std::string> lines = Lines(out);
  EXPECT_EQ(DayCells(LineStarting(out, "GPU 5"), 0), "....B.......") << out;
  EXPECT_EQ(DayCells(LineStarting(out, "no card"), 0), "....A.......") << out;
  EXPECT_EQ(DayCells(LineStarting(out, "GPU 0"), 0), "............") << out;
  // Rows by card, "no card" last.
  EXPECT_LT(out.find("GPU 0"), out.find("GPU 5"));
  EXPECT_LT(out.find("GPU 5"), out.find("no card"));
}

// ---- Dates and lines ----

// Europe/Berlin, the week of Monday 23 March 2026: clocks go forward on Sunday the 29th at
// 02:00 CET (01:00 UTC). Cells are two hours of the wall clock on every day. Instants are
// Python's datetime.
TEST_F(BookingsFormatTest, BookingsWeekAcrossDaylightSaving) {
  constexpr Time kWeekStart = 1774220400;  // 2026-03-23 00:00 CET = 03-22 23:00 UTC
  format_.zone = rota::testing::Berlin();
  // Thursday 14:00-18:00 CET; Saturday 22:00 CET to Sunday 06:00 CEST; Sunday 14:00-18:00 CEST.
  json thu = Booking(1, "alice", 1774530000, 1774544400, {0});
  json night = Booking(2, "bob", 1774731600, 1774756800, {1});
  json sun = Booking(3, "carol", 1774785600, 1774800000, {0});
  const std::string out = FormatBookingsWeek(json::array({thu, night, sun}), Cards(2), kWeekStart, format_);
  EXPECT_EQ(Lines(out).at(0),
            "Bookings, week of 2026-03-23 to 2026-03-29 (Europe/Berlin, UTC+01:00, UTC+02:00 from Sun 03-29 "
            "03:00; a cell is two hours)")
      << out;
  const std::string gpu0 = LineStarting(out, "GPU 0"), gpu1 = LineStarting(out, "GPU 1");
  EXPECT_EQ(DayCells(gpu0, 3), ".......AA...") << out;
  EXPECT_EQ(DayCells(gpu0, 6), ".......CC...") << out;  // 14:00 on the wall clock, after the change
  EXPECT_EQ(DayCells(gpu1, 5), "...........B") << out;
  EXPECT_EQ(DayCells(gpu1, 6), "BBB.........") << out;  // 00-02, 02-04 (an hour long), 04-06
  EXPECT_NE(out.find("Sat 03-28 22:00 - Sun 03-29 06:00"), std::string::npos) << out;
  EXPECT_NE(out.find("Sun 03-29 14:00-18:00"), std::string::npos) << out;
  // The list says the same times.
  const std::string list = FormatBookingsList(json::array({sun}), format_);
  EXPECT_NE(list.find("2026-03-29 14:00  18:00"), std::string::npos) << list;
  EXPECT_EQ(FormatBookingSpan(1774731600, 1774756800, format_.zone), "2026-03-28 22:00 - 2026-03-29 06:00");
}

TEST_F(BookingsFormatTest, TheZoneComesFromTheReply) {
  const Zone berlin = rota::testing::Berlin();
  const json reply = {{"zone", api::ZoneJson(berlin, 1774220400, 1774220400 + kWeek)}};
  const Zone z = ZoneOfReply(reply, Zone(8 * kH));
  EXPECT_EQ(z.name(), "Europe/Berlin");
  EXPECT_EQ(z.OffsetAt(1774785600), 2 * kH);
  // No zone, or one that is not: the fallback.
  EXPECT_EQ(ZoneOfReply(json::object(), Zone(8 * kH)).OffsetAt(0), 8 * kH);
  EXPECT_EQ(ZoneOfReply({{"zone", "Europe/Berlin"}}, Zone(8 * kH)).OffsetAt(0), 8 * kH);
  EXPECT_EQ(ZoneOfReply(json::array(), Zone(8 * kH)).OffsetAt(0), 8 * kH);
}

TEST_F(BookingsFormatTest, BookingsBookedLine) {
  json b = Booking(12, "alice", kMonday + kDay + 14 * kH, kMonday + kDay + 18 * kH, {0, 1});
  json reply = {{"booking", b},
                {"check",
                 {{"errors", json::array()},
                  {"needs_admin", json::array()},
                  {"conflicts", json::array()},
                  {"alternatives", json::array()},
                  {"gpu_hours", 8.0}}}};
  EXPECT_EQ(FormatBooked(reply, format_),
            "Booked 12: GPU 0,1 2026-12-01 14:00-18:00 (4h, 8.0 GPU-hours), confirmed\n");
  reply["booking"]["state"] = "requested";
  reply["booking"]["id"] = 13;
  reply["check"]["needs_admin"] = {"starts today: same-day bookings need an admin (book the day before)",
                                   "over 3 bookings this week"};
  EXPECT_EQ(
      FormatBooked(reply, format_),
      "Booked 13: GPU 0,1 2026-12-01 14:00-18:00 (4h, 8.0 GPU-hours), requested: needs an admin: starts "
      "today: same-day bookings need an admin (book the day before); over 3 bookings this week\n");
  json share = Booking(14, "bob", kMonday + 22 * kH + 30 * 60, kMonday + kDay + kH, {3});
  share["request"] = {{"kind", "gpu_mem"}, {"memory", 40960}};
  share["gpu_hours"] = 1.25;
  EXPECT_EQ(
      FormatBooked(json{{"booking", share}}, format_),
      "Booked 14: GPU 3 (40G share) 2026-11-30 22:30 - 2026-12-01 01:00 (2h30m, 1.2 GPU-hours), confirmed\n");
}

TEST_F(BookingsFormatTest, BookingsDryRunSaysWhatWouldHappen) {
  json b = Booking(0, "alice", kMonday + 14 * kH, kMonday + 18 * kH, {0, 1});
  json reply = {{"booking", b},
                {"check",
                 {{"errors", json::array()},
                  {"needs_admin", json::array()},
                  {"conflicts", {12, 15}},
                  {"alternatives", {kMonday + 18 * kH, kMonday + 10 * kH}},
                  {"gpu_hours", 8.0}}}};
  bool refused = false;
  std::string out = FormatBookCheck(reply, format_, &refused);
  EXPECT_TRUE(refused);
  EXPECT_EQ(out,
            "Dry run, nothing booked: GPU 0,1 2026-11-30 14:00-18:00 (4h, 8.0 GPU-hours)\n"
            "Would be refused: in the way: bookings 12, 15\n"
            "Nearest free starts: 2026-11-30 18:00, 2026-11-30 10:00\n");

  reply["check"]["conflicts"] = json::array();
  reply["check"]["alternatives"] = json::array();
  reply["check"]["needs_admin"] = {"thesis tier over an existing booking"};
  out = FormatBookCheck(reply, format_, &refused);
  EXPECT_FALSE(refused);
  EXPECT_NE(out.find("Would be requested: needs an admin: thesis tier over an existing booking\n"),
            std::string::npos)
      << out;

  reply["check"]["needs_admin"] = json::array();
  out = FormatBookCheck(reply, format_, &refused);
  EXPECT_FALSE(refused);
  EXPECT_NE(out.find("Would be confirmed\n"), std::string::npos) << out;

  // A refusal's details: the Check alone, errors one a line.
  json details = {{"errors", {"start is in the past", "longer than 12h"}}, {"conflicts", json::array()}};
  out = FormatBookCheck(details, format_, &refused);
  EXPECT_TRUE(refused);
  EXPECT_EQ(out, "Would be refused:\n  - start is in the past\n  - longer than 12h\n");
}

TEST_F(BookingsFormatTest, BookingsReleasedAndExtendedLines) {
  json b = Booking(12, "alice", kMonday + 14 * kH, kMonday + 18 * kH, {0}, "released");
  b["actual_end"] = kMonday + 15 * kH + 30 * 60;
  b["gpu_hours"] = 1.5;
  EXPECT_EQ(FormatReleased(b), "Released booking 12 (held 1.5 of 4 GPU-hours)\n");
  b["gpus"] = {0, 1};
  b["gpu_hours"] = 3.0;
  EXPECT_EQ(FormatReleased(b), "Released booking 12 (held 3 of 8 GPU-hours)\n");

  json e = Booking(12, "alice", kMonday + 14 * kH, kMonday + 19 * kH);
  EXPECT_EQ(FormatExtended(e, format_), "Extended booking 12 to 19:00\n");
  e["end"] = kMonday + kDay + kH;
  EXPECT_EQ(FormatExtended(e, format_), "Extended booking 12 to 2026-12-01 01:00\n");
}

}  // namespace
}  // namespace bookings_format_test
}  // namespace rota::cli
