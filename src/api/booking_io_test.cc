// Tests of the booking spreadsheet (CSV both ways) and the iCalendar feed. The ICS output is
// read back here with a minimal RFC 5545 reader (unfold, split properties, unescape), so the
// tests check what a calendar client would see, not the bytes we happened to write.
#include "api/booking_io.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "api/when.h"

namespace rota::api {
namespace booking_io_test {
namespace {

using nlohmann::json;

constexpr int kCst = 8 * 3600;
constexpr Time kDec1Utc = 1796083200;         // 2026-12-01 00:00 UTC
constexpr Time kNow = kDec1Utc - 22 * kHour;  // 2026-11-30 02:00 UTC

std::vector<BookingRow> ParseOk(std::string_view text, std::vector<RowError>* errors) {
  StatusOr<std::vector<BookingRow>> rows = ParseBookingCsv(text, errors);
  EXPECT_TRUE(rows.ok()) << rows.status().ToString();
  return rows.ok() ? *rows : std::vector<BookingRow>{};
}

std::string FileError(std::string_view text) {
  std::vector<RowError> errors;
  StatusOr<std::vector<BookingRow>> rows = ParseBookingCsv(text, &errors);
  EXPECT_FALSE(rows.ok());
  if (rows.ok()) return "";
  EXPECT_EQ(rows.status().code(), StatusCode::kInvalidArgument);
  return rows.status().message();
}

bool Has(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

TEST(BookingCsvTest, QuotesCommasLineBreaksBomCrlfAndBlankRows) {
  const std::string text =
      "\xEF\xBB\xBFtask_name,user,gpu_id,start_time,end_time,est_hours,status,note\r\n"                  // 1
      "\"bert, large\",alice,0+1,2026-12-01 14:00,2026-12-01 18:00,4,confirmed,\"says \"\"hi\"\"\"\r\n"  // 2
      "\"multi\n"                                                                                        // 3
      "line\", bob ,2,12-01 09:00,,2.5,pending,\"a\r\n"                                                  // 4
      "b\"\r\n"                                                                                          // 5
      "\r\n"                                                                                             // 6
      "gpt,carol,3,tomorrow 14:00,18:00,,confirmed,\r\n"                                                 // 7
      ",,,,,,,\r\n"                          // 8: a spreadsheet's empty row
      "late,dave,1,14:00,,,confirmed,\r\n";  // 9
  std::vector<RowError> errors;
  std::vector<BookingRow> rows = ParseOk(text, &errors);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].line, 2);
  EXPECT_EQ(rows[0].task_name, "bert, large");  // the BOM did not hide the first column
  EXPECT_EQ(rows[0].user, "alice");
  EXPECT_EQ(rows[0].gpu_id, "0+1");
  EXPECT_EQ(rows[0].start_time, "2026-12-01 14:00");
  EXPECT_EQ(rows[0].end_time, "2026-12-01 18:00");
  ASSERT_TRUE(rows[0].est_hours.has_value());
  EXPECT_DOUBLE_EQ(*rows[0].est_hours, 4.0);
  EXPECT_EQ(rows[0].status, "confirmed");
  EXPECT_EQ(rows[0].note, "says \"hi\"");
  EXPECT_EQ(rows[0].id, 0);
  EXPECT_EQ(rows[0].project, "");

  EXPECT_EQ(rows[1].line, 3);
  EXPECT_EQ(rows[1].task_name, "multi\nline");
  EXPECT_EQ(rows[1].user, "bob");  // unquoted cells are trimmed
  EXPECT_EQ(rows[1].end_time, "");
  ASSERT_TRUE(rows[1].est_hours.has_value());
  EXPECT_DOUBLE_EQ(*rows[1].est_hours, 2.5);
  EXPECT_EQ(rows[1].note, "a\nb");  // CRLF inside quotes reads as one "\n"

  EXPECT_EQ(rows[2].line, 7);
  EXPECT_EQ(rows[2].end_time, "18:00");
  EXPECT_FALSE(rows[2].est_hours.has_value());
  EXPECT_EQ(rows[2].note, "");

  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].line, 9);
  EXPECT_EQ(errors[0].message, "end_time and est_hours are both empty: give one");
}

TEST(BookingCsvTest, BadRowsAreReportedWithTheLineTheyStartOn) {
  const std::string text =
      "id,task_name,user,gpu_id,start_time,end_time,est_hours,status\n"  // 1
      "1,ok,alice,0,12-01 14:00,18:00,,confirmed\n"                      // 2
      "2,short,alice,0,12-01 14:00,18:00\n"                              // 3
      "3,\"spans\n"                                                      // 4
      "three\n"                                                          // 5
      "lines\",bob,1,12-01 14:00,,3,confirmed\n"                         // 6
      "4,hours,bob,1,12-01 14:00,,abc,confirmed\n"                       // 7
      "5,negative,bob,1,12-01 14:00,,-1,confirmed\n"                     // 8
      "x1,badid,bob,1,12-01 14:00,,2,confirmed\n"                        // 9
      "10,\"quoted\"junk,bob,1,12-01 14:00,,2,confirmed\n"               // 10
      "11,empty,,,,18:00,,confirmed\n"                                   // 11
      "12,a,b, c,d,e,f,g,h\n"                                            // 12: an unquoted comma
      "13,inf,bob,1,12-01 14:00,,inf,confirmed\n"                        // 13
      "14,last,carol,2,12-01 14:00,,1,confirmed\n"                       // 14
      "15,\"never closed,carol,2\n"                                      // 15
      "16,x,carol,2,12-01 14:00,,1,confirmed\n";                         // 16: swallowed by the open quote
  std::vector<RowError> errors;
  std::vector<BookingRow> rows = ParseOk(text, &errors);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].line, 2);
  EXPECT_EQ(rows[0].id, 1);
  EXPECT_EQ(rows[1].line, 4);
  EXPECT_EQ(rows[1].task_name, "spans\nthree\nlines");
  EXPECT_EQ(rows[1].id, 3);
  EXPECT_EQ(rows[2].line, 14);
  EXPECT_EQ(rows[2].id, 14);

  std::map<int, std::string> by_line;
  for (const RowError& e : errors) by_line[e.line] = e.message;
  ASSERT_EQ(errors.size(), by_line.size()) << "one error per row";
  std::vector<int> lines;
  for (const auto& [line, message] : by_line) lines.push_back(line);
  EXPECT_EQ(lines, (std::vector<int>{3, 7, 8, 9, 10, 11, 12, 13, 15}));
  EXPECT_EQ(by_line[3], "has 6 cells, the header has 8 (a cell holding a comma must be in double quotes)");
  EXPECT_EQ(by_line[7], "est_hours \"abc\" is not a positive number of hours (e.g. 2.5)");
  EXPECT_TRUE(Has(by_line[8], "est_hours \"-1\" is not a positive number")) << by_line[8];
  EXPECT_EQ(by_line[9], "id \"x1\" is not a booking number");
  EXPECT_TRUE(Has(by_line[10], "cell 2 has text after its closing quote")) << by_line[10];
  // Every problem of a row at once, not just the first.
  EXPECT_EQ(by_line[11],
            "user is empty; gpu_id is empty: name the cards, e.g. 0 or 0+1; start_time is empty");
  EXPECT_TRUE(Has(by_line[12], "has 9 cells")) << by_line[12];
  EXPECT_TRUE(Has(by_line[13], "est_hours \"inf\"")) << by_line[13];
  EXPECT_EQ(by_line[15], "the quoted cell opened on line 15 is never closed");
}

TEST(BookingCsvTest, ColumnsByNameInAnyOrderAndCase) {
  const std::string text =
      "Status,GPU ID,User,Start-Time,Est Hours (h),Task Name,Priority,Project\n"
      "confirmed,0+1,alice,2026-12-01 14:00,4,bert,high,nlp\n";
  std::vector<RowError> errors;
  std::vector<BookingRow> rows = ParseOk(text, &errors);
  EXPECT_TRUE(errors.empty());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].status, "confirmed");
  EXPECT_EQ(rows[0].gpu_id, "0+1");
  EXPECT_EQ(rows[0].user, "alice");
  EXPECT_EQ(rows[0].start_time, "2026-12-01 14:00");
  EXPECT_DOUBLE_EQ(rows[0].est_hours.value_or(0), 4.0);
  EXPECT_EQ(rows[0].task_name, "bert");
  EXPECT_EQ(rows[0].project, "nlp");
  EXPECT_EQ(rows[0].end_time, "");  // no such column
  EXPECT_EQ(rows[0].note, "");

  // With only est_hours, an empty est_hours is the row's problem.
  errors.clear();
  ParseOk("task_name,user,gpu_id,start_time,est_hours,status\nx,alice,0,14:00,,confirmed\n", &errors);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].line, 2);
  EXPECT_EQ(errors[0].message, "est_hours is empty");
}

TEST(BookingCsvTest, ChineseHeadersAndValues) {
  const std::string text =
      "任务名,用户,GPU,开始时间,结束时间,预计时长（小时）,状态,备注,项目\n"
      "微调BERT,张三,0+1,明天 14:00,18:00,4,已确认,\"需要两张卡，仅推理\",nlp\n"
      "预训练,,1,明天 14:00,,2,待确认,,cv\n";
  std::vector<RowError> errors;
  std::vector<BookingRow> rows = ParseOk(text, &errors);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].task_name, "微调BERT");
  EXPECT_EQ(rows[0].user, "张三");
  EXPECT_EQ(rows[0].gpu_id, "0+1");
  EXPECT_EQ(rows[0].start_time, "明天 14:00");
  EXPECT_EQ(rows[0].end_time, "18:00");
  EXPECT_DOUBLE_EQ(rows[0].est_hours.value_or(0), 4.0);
  EXPECT_EQ(rows[0].status, "已确认");
  EXPECT_EQ(rows[0].note, "需要两张卡，仅推理");
  EXPECT_EQ(rows[0].project, "nlp");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].line, 3);
  // Named as the file names it, with the canonical name for the documentation.
  EXPECT_EQ(errors[0].message, "用户 (user) is empty");
}

TEST(BookingCsvTest, WholeFileProblems) {
  EXPECT_TRUE(Has(FileError(""), "the CSV is empty"));
  EXPECT_TRUE(Has(FileError("\xEF\xBB\xBF\r\n\r\n"), "the CSV is empty"));
  const std::string lacks = FileError("task_name,gpu_id,start_time,end_time\nx,0,14:00,18:00\n");
  EXPECT_EQ(
      lacks,
      "line 1: the header lacks user, status (found: task_name, gpu_id, start_time, end_time); a booking CSV "
      "needs task_name, user, gpu_id, start_time, end_time or est_hours, status");
  EXPECT_TRUE(
      Has(FileError("task_name,user,gpu_id,start_time,status\n"), "the header lacks end_time or est_hours"));
  // A title row above the header is not a header.
  EXPECT_TRUE(
      Has(FileError("GPU预约表\ntask_name,user,gpu_id,start_time,end_time,status\n"), "the header lacks"));
  EXPECT_EQ(FileError("task_name,user,用户,gpu_id,start_time,end_time,status\n"),
            "line 1: columns \"user\" and \"用户\" both name user");
  EXPECT_TRUE(
      Has(FileError("\"task_name,user\n"), "line 1: the quoted cell opened on line 1 is never closed"));
  // The header is the first non-blank row, and its line is counted.
  EXPECT_TRUE(Has(FileError("\n\ntask_name\n"), "line 3: the header lacks"));
}

json SampleBookings() {
  return json::parse(R"([
    {"id": 12, "user": "alice", "project": "nlp", "note": "needs 2 GPUs", "tier": "regular",
     "request": {"kind": "gpus", "gpus": 2}, "gpus": [0, 1], "start": 1796104800, "end": 1796119200,
     "state": "confirmed"},
    {"id": 13, "user": "张三", "project": "cv", "note": "", "tier": "thesis",
     "request": {"kind": "gpus", "gpus": 2}, "gpus": [], "start": 1796104800, "end": 1796106000,
     "state": "requested"},
    {"id": 14, "user": "bob", "project": "", "note": " lead, \"quoted\"; back\\slash\r\nsecond line 中文 ",
     "tier": "explore", "request": {"kind": "gpu_mem", "memory": 20480}, "gpus": [2],
     "start": 1796104800, "end": 1796109000, "state": "cancelled"},
    {"id": 15, "user": "carol", "project": "asr", "tier": "regular",
     "request": {"kind": "mig", "profile": "3g.40gb"}, "gpus": [4], "start": 1796176800, "end": 1796180400,
     "state": "ended"}
  ])");
}

TEST(BookingCsvTest, FormatWritesTheDocumentedColumns) {
  const std::string csv = FormatBookingCsv(SampleBookings(), kCst);
  const std::string expected =
      "id,task_name,user,project,gpu_id,start_time,end_time,est_hours,status,note\r\n"
      "12,needs 2 GPUs,alice,nlp,0+1,2026-12-01 14:00,2026-12-01 18:00,4,confirmed,needs 2 GPUs\r\n"
      "13,cv,张三,cv,any+any,2026-12-01 14:00,2026-12-01 14:20,0.33,requested,\r\n"
      "14,\" lead, \"\"quoted\"\"; back\\slash\nsecond line 中文 \",bob,,2/20G,2026-12-01 14:00,"
      "2026-12-01 15:10,1.17,cancelled,\" lead, \"\"quoted\"\"; back\\slash\nsecond line 中文 \"\r\n"
      "15,asr,carol,asr,4/3g.40gb,2026-12-02 10:00,2026-12-02 11:00,1,ended,\r\n";
  EXPECT_EQ(csv, expected);
  // Another zone moves the times, nothing else.
  EXPECT_TRUE(Has(FormatBookingCsv(SampleBookings(), 0), "12,needs 2 GPUs,alice,nlp,0+1,2026-12-01 06:00,"));
  // Not an array: only the header.
  EXPECT_EQ(FormatBookingCsv(json::object(), kCst),
            "id,task_name,user,project,gpu_id,start_time,end_time,est_hours,status,note\r\n");
}

// Unquoted cells are trimmed when read, so a cell with outer spaces must be quoted to survive;
// plain cells, Chinese included, are left bare.
TEST(BookingCsvTest, QuotesOnlyWhenNeeded) {
  json b = SampleBookings()[0];
  b["note"] = " spaced ";
  b["project"] = "纯文本 plain";
  const std::string csv = FormatBookingCsv(json::array({b}), kCst);
  EXPECT_TRUE(Has(csv, "\r\n12,\" spaced \",alice,纯文本 plain,0+1,")) << csv;
  EXPECT_TRUE(csv.ends_with(",confirmed,\" spaced \"\r\n")) << csv;
  std::vector<RowError> errors;
  std::vector<BookingRow> rows = ParseOk(csv, &errors);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].note, " spaced ");
  EXPECT_EQ(rows[0].task_name, " spaced ");
  EXPECT_EQ(rows[0].project, "纯文本 plain");
}

TEST(BookingCsvTest, RoundTrip) {
  const json bookings = SampleBookings();
  const std::string csv = FormatBookingCsv(bookings, kCst);
  std::vector<RowError> errors;
  std::vector<BookingRow> rows = ParseOk(csv, &errors);
  EXPECT_TRUE(errors.empty()) << errors[0].line << ": " << errors[0].message;
  ASSERT_EQ(rows.size(), bookings.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const json& b = bookings[i];
    const std::string note = b.value("note", "");
    std::string note_lf = note;  // the one line break style: "\r\n" -> "\n"
    for (std::size_t p; (p = note_lf.find("\r\n")) != std::string::npos;) note_lf.replace(p, 2, "\n");
    const std::string project = b.value("project", "");
    EXPECT_EQ(rows[i].id, b["id"].get<std::int64_t>());
    EXPECT_EQ(rows[i].user, b["user"].get<std::string>());
    EXPECT_EQ(rows[i].project, project);
    EXPECT_EQ(rows[i].note, note_lf);
    EXPECT_EQ(rows[i].task_name, note.empty() ? project : note_lf);
    EXPECT_EQ(rows[i].status, b["state"].get<std::string>());
    EXPECT_EQ(rows[i].start_time, FormatLocal(b["start"].get<Time>(), kCst));
    EXPECT_EQ(rows[i].end_time, FormatLocal(b["end"].get<Time>(), kCst));
    ASSERT_TRUE(rows[i].est_hours.has_value());
    const double hours = static_cast<double>(b["end"].get<Time>() - b["start"].get<Time>()) / kHour;
    EXPECT_NEAR(*rows[i].est_hours, hours, 0.005);
  }
  EXPECT_EQ(rows[0].gpu_id, "0+1");
  EXPECT_EQ(rows[1].gpu_id, "any+any");
  EXPECT_EQ(rows[2].gpu_id, "2/20G");
  EXPECT_EQ(rows[3].gpu_id, "4/3g.40gb");
}

// ---- iCalendar ----

struct Ics {
  std::vector<std::string> physical;                          // lines as written, without CRLF
  std::vector<std::pair<std::string, std::string>> calendar;  // properties outside events
  std::vector<std::map<std::string, std::string>> events;     // raw (escaped) values
};

bool ValidUtf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const std::size_t len = c < 0x80           ? 1
                            : (c >> 5) == 0x6  ? 2
                            : (c >> 4) == 0xE  ? 3
                            : (c >> 3) == 0x1E ? 4
                                               : 0;
    if (len == 0 || i + len > s.size()) return false;
    for (std::size_t k = 1; k < len; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    }
    i += len;
  }
  return true;
}

// Checks the physical form (CRLF only, at most 75 octets, whole UTF-8 characters on every line)
// and reads the content lines.
Ics ReadIcs(const std::string& text) {
  Ics ics;
  EXPECT_TRUE(text.ends_with("\r\n"));
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find("\r\n", start);
    if (end == std::string::npos) {
      ADD_FAILURE() << "no CRLF after " << text.substr(start);
      break;
    }
    std::string line = text.substr(start, end - start);
    EXPECT_EQ(line.find('\n'), std::string::npos) << "bare LF in " << line;
    EXPECT_EQ(line.find('\r'), std::string::npos) << "bare CR in " << line;
    EXPECT_LE(line.size(), 75u) << line;
    EXPECT_TRUE(ValidUtf8(line)) << "a character split across lines: " << line;
    ics.physical.push_back(line);
    start = end + 2;
  }
  std::vector<std::string> logical;
  for (const std::string& line : ics.physical) {
    if (!line.empty() && line[0] == ' ') {
      EXPECT_FALSE(logical.empty());
      if (!logical.empty()) logical.back() += line.substr(1);
    } else {
      logical.push_back(line);
    }
  }
  std::map<std::string, std::string>* event = nullptr;
  for (const std::string& line : logical) {
    const std::size_t colon = line.find(':');
    EXPECT_NE(colon, std::string::npos) << line;
    if (colon == std::string::npos) continue;
    const std::string name = line.substr(0, colon), value = line.substr(colon + 1);
    if (name == "BEGIN" && value == "VEVENT") {
      ics.events.emplace_back();
      event = &ics.events.back();
    } else if (name == "END" && value == "VEVENT") {
      event = nullptr;
    } else if (event != nullptr) {
      EXPECT_EQ(event->count(name), 0u) << name << " twice";
      (*event)[name] = value;
    } else {
      ics.calendar.emplace_back(name, value);
    }
  }
  return ics;
}

std::string Unescape(std::string_view v) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i] != '\\' || i + 1 == v.size()) {
      out += v[i];
      continue;
    }
    const char n = v[++i];
    out += (n == 'n' || n == 'N') ? '\n' : n;
  }
  return out;
}

TEST(BookingIcsTest, OneEventPerBookingWithUtcTimes) {
  const Ics ics = ReadIcs(FormatBookingIcs(SampleBookings(), "gpu-server", kNow));
  EXPECT_EQ(ics.calendar,
            (std::vector<std::pair<std::string, std::string>>{{"BEGIN", "VCALENDAR"},
                                                              {"PRODID", "-//Rota//Bookings//EN"},
                                                              {"VERSION", "2.0"},
                                                              {"CALSCALE", "GREGORIAN"},
                                                              {"METHOD", "PUBLISH"},
                                                              {"X-WR-CALNAME", "GPU bookings"},
                                                              {"END", "VCALENDAR"}}));
  ASSERT_EQ(ics.events.size(), 4u);
  auto e = ics.events[0];
  EXPECT_EQ(e["UID"], "booking-12@gpu-server");
  EXPECT_EQ(e["DTSTAMP"], "20261130T020000Z");
  EXPECT_EQ(e["DTSTART"], "20261201T060000Z");  // 14:00 at +08:00
  EXPECT_EQ(e["DTEND"], "20261201T100000Z");
  EXPECT_EQ(Unescape(e["SUMMARY"]), "GPU 0+1: alice (nlp)");
  EXPECT_EQ(Unescape(e["DESCRIPTION"]), "State: confirmed\nTier: regular\nNote: needs 2 GPUs");
  EXPECT_EQ(e["STATUS"], "CONFIRMED");

  e = ics.events[1];
  EXPECT_EQ(e["UID"], "booking-13@gpu-server");
  EXPECT_EQ(e["DTEND"], "20261201T062000Z");
  EXPECT_EQ(Unescape(e["SUMMARY"]), "GPU any+any: 张三 (cv)");
  EXPECT_EQ(Unescape(e["DESCRIPTION"]), "State: requested\nTier: thesis");  // no note, no Note line
  EXPECT_EQ(e["STATUS"], "TENTATIVE");

  e = ics.events[2];
  EXPECT_EQ(Unescape(e["SUMMARY"]), "GPU 2/20G: bob");  // no project, no parentheses
  EXPECT_EQ(e["STATUS"], "CANCELLED");
  // Escaped as RFC 5545 TEXT: the raw value has \, \; \\ and \n, and no bare separators.
  EXPECT_TRUE(Has(e["DESCRIPTION"], "lead\\, \"quoted\"\\; back\\\\slash\\nsecond line 中文 "))
      << e["DESCRIPTION"];
  EXPECT_EQ(Unescape(e["DESCRIPTION"]),
            "State: cancelled\nTier: explore\nNote:  lead, \"quoted\"; back\\slash\nsecond line 中文 ");

  e = ics.events[3];
  EXPECT_EQ(e["DTSTART"], "20261202T020000Z");
  EXPECT_EQ(Unescape(e["SUMMARY"]), "GPU 4/3g.40gb: carol (asr)");
  EXPECT_EQ(e["STATUS"], "CONFIRMED");  // ended: the time was held
}

TEST(BookingIcsTest, LongLinesFoldAt75OctetsWithoutSplittingCharacters) {
  // Shift the note by 0..5 ASCII bytes so that some 75-octet boundary falls inside a 3-byte
  // character for each alignment; ReadIcs fails on any physical line that splits one.
  for (int shift = 0; shift < 6; ++shift) {
    std::string note(static_cast<std::size_t>(shift), 'x');
    for (int k = 0; k < 60; ++k) note += "需要两张卡";
    json b = SampleBookings()[0];
    b["note"] = note;
    const std::string text = FormatBookingIcs(json::array({b}), "gpu-server", kNow);
    const Ics ics = ReadIcs(text);
    ASSERT_EQ(ics.events.size(), 1u);
    auto e = ics.events[0];
    EXPECT_EQ(Unescape(e["DESCRIPTION"]), "State: confirmed\nTier: regular\nNote: " + note);
    // Folded: many physical lines, each as full as a whole character allows.
    std::size_t continuation = 0;
    for (const std::string& line : ics.physical) {
      if (line[0] != ' ') continue;
      ++continuation;
    }
    EXPECT_GE(continuation, 900u / 74 - 1);  // 300 characters of 3 octets
    for (std::size_t i = 0; i + 1 < ics.physical.size(); ++i) {
      if (ics.physical[i + 1][0] == ' ' && ics.physical[i].starts_with(" ")) {
        EXPECT_GE(ics.physical[i].size(), 73u) << "folded too early: " << ics.physical[i];
      }
    }
  }
  // ASCII folds at exactly 75 octets, continuation lines at 74 plus the space.
  json b = SampleBookings()[0];
  b["note"] = std::string(200, 'a');
  const Ics ics = ReadIcs(FormatBookingIcs(json::array({b}), "h", kNow));
  bool saw_first = false;
  for (std::size_t i = 0; i + 1 < ics.physical.size(); ++i) {
    if (ics.physical[i].starts_with("DESCRIPTION:")) {
      EXPECT_EQ(ics.physical[i].size(), 75u);
      EXPECT_EQ(ics.physical[i + 1].size(), 75u);
      EXPECT_EQ(ics.physical[i + 1][0], ' ');
      saw_first = true;
    }
  }
  EXPECT_TRUE(saw_first);
  ASSERT_EQ(ics.events.size(), 1u);
  EXPECT_EQ(Unescape(ics.events[0].at("DESCRIPTION")),
            "State: confirmed\nTier: regular\nNote: " + std::string(200, 'a'));
}

TEST(BookingIcsTest, TextThatIsNotUtf8StillFolds) {
  // A run of continuation bytes longer than a line has no character start to fold before: the
  // feed was never finished (fuzz/corpus/booking_ics/regress-continuation-run).
  json b = SampleBookings()[0];
  b["note"] = std::string(300, '\x8d');
  const std::string text = FormatBookingIcs(json::array({b}), "h", kNow);
  std::size_t lines = 0;
  for (std::size_t at = 0, end; (end = text.find("\r\n", at)) != std::string::npos; at = end + 2) {
    EXPECT_LE(end - at, 75u);
    ++lines;
  }
  EXPECT_GT(lines, 300u / 75);
  EXPECT_NE(text.find("END:VCALENDAR\r\n"), std::string::npos);
}

TEST(BookingIcsTest, EmptyHostAndNoBookings) {
  const Ics ics = ReadIcs(FormatBookingIcs(SampleBookings(), "", kNow));
  ASSERT_FALSE(ics.events.empty());
  EXPECT_EQ(ics.events[0].at("UID"), "booking-12@localhost");
  const Ics none = ReadIcs(FormatBookingIcs(json::array(), "h", kNow));
  EXPECT_TRUE(none.events.empty());
  EXPECT_EQ(none.calendar.front().second, "VCALENDAR");
  EXPECT_EQ(none.calendar.back(), (std::pair<std::string, std::string>{"END", "VCALENDAR"}));
}

}  // namespace
}  // namespace booking_io_test
}  // namespace rota::api
