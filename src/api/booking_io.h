// The booking calendar as files people already use: the lab's spreadsheet (CSV, the seed's
// gpu_schedule.csv) in both directions, and an iCalendar feed (RFC 5545) for phone and desktop
// calendars. Pure text transformations: no I/O, no clock (the caller passes `now`); times in the
// spreadsheet are left as text here because reading them needs `now` and the zone (ParseWhen,
// api/when.h), which the importer has.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "core/types.h"
#include "core/zone.h"

namespace rota::api {

// One data row of a booking spreadsheet, its cells as written (unquoted; cells not in quotes are
// trimmed of spaces; line breaks inside a cell are "\n").
struct BookingRow {
  int line = 0;  // 1-based line of the file on which the row starts
  std::string task_name, user, project, gpu_id, start_time, end_time, status, note;
  std::optional<double> est_hours;  // empty cell (or no such column): nullopt
  std::int64_t id = 0;              // 0: no id column, or an empty cell
};

// A row that could not be read, for the import's reply ({"line": 3, "message": "..."}).
struct RowError {
  int line = 0;
  std::string message;
};

// Reads a booking spreadsheet saved as CSV (RFC 4180: quoted cells may hold commas, doubled
// quotes and line breaks; CRLF, LF or CR line ends; a UTF-8 byte order mark is skipped; blank
// lines and rows whose cells are all empty, as spreadsheets write below the data, are skipped).
// The first non-blank row is the header. Columns are matched by name in any order, ignoring case and
// treating spaces and hyphens as underscores ("Start Time" is start_time) and dropping a unit in
// parentheses ("est_hours (h)", "预计时长（小时）"), with these aliases:
//   task_name task 任务名 任务 任务名称   user username 用户 用户名 使用人   project 项目
//   gpu_id gpu gpus 显卡 gpu编号      start_time 开始时间        end_time 结束时间
//   est_hours hours 预计时长 预计小时 status 状态                note 备注 说明      id 编号
// Required: task_name, user, gpu_id, start_time, status, and end_time or est_hours (at least one).
// Other columns (priority, actual end, ...) are ignored.
// Returns InvalidArgument for the whole file (no header row, a required column missing, a column
// given twice, a broken header). Each bad row goes to *errors instead of the result, with the line
// it starts on: wrong number of cells, a quoted cell never closed or text after a closing quote,
// est_hours not a positive number, id not a whole number, user, gpu_id or start_time empty, and
// end_time and est_hours both empty. REQUIRES: errors != nullptr.
StatusOr<std::vector<BookingRow>> ParseBookingCsv(std::string_view text, std::vector<RowError>* errors);

// An array of Booking objects (docs/api.md) as CSV, header first:
//   id,task_name,user,project,gpu_id,start_time,end_time,est_hours,status,note
// task_name is the note when there is one, else the project (bookings have no name of their own;
// the note is what the spreadsheet's task column held). Times are FormatLocal ("2026-12-01
// 14:00", the server's zone). gpu_id: the card indices joined by "+" ("0+1"); a memory share
// adds "/" and its size ("2/20G"), a MIG slice "/" and its profile ("4/3g.40gb"); a booking not
// yet placed names "any" once per card ("any+any", "any/20G"). est_hours is (end - start) in
// hours with at most 2 decimals ("4", "1.5", "0.33"). status is the Booking's state. Cells are
// quoted when they hold a comma, quote, line break or leading/trailing space. Lines end in CRLF
// (RFC 4180). No byte order mark: prepend kUtf8Bom for Excel, which otherwise reads UTF-8 as
// the system's code page (GBK on Chinese Windows). ParseBookingCsv reads the text back to the
// same cells. Elements that are not objects are skipped; missing members are empty.
std::string FormatBookingCsv(const nlohmann::json& bookings, const Zone& zone);
inline constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";

// An array of Booking objects as an iCalendar (RFC 5545) VCALENDAR, "GPU bookings", one VEVENT
// per booking: UID booking-<id>@<host> (host "localhost" when empty), DTSTAMP `now`, DTSTART and
// DTEND in UTC (20261201T060000Z), SUMMARY "GPU 0+1: alice (nlp)" (gpu_id as in the CSV; no
// parentheses without a project), DESCRIPTION "State: ...\nTier: ...\nNote: ...", STATUS
// TENTATIVE (requested), CANCELLED (rejected, cancelled) or CONFIRMED (the rest: the time was
// held). Text is escaped (\\ \, \; \n), lines are folded at 75 octets without splitting a UTF-8
// character, and end in CRLF.
std::string FormatBookingIcs(const nlohmann::json& bookings, const std::string& host, Time now);

}  // namespace rota::api
