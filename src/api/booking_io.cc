// Tested by booking_io_test.cc.
//
// The CSV reader is a single pass over the text that cuts it into records (cells plus the line
// each starts on) and never gives up on the file because of one row: a broken row becomes a
// RowError and reading resumes at the next line, so an import reports every bad row at once.
// Only the header can fail the whole file. (src/sim/csv.h is the trace reader; it stops at the
// first bad record, which suits a trace but not a spreadsheet typed by hand.)
#include "api/booking_io.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <utility>

#include "api/when.h"

namespace rota::api {

using nlohmann::json;

namespace {

// ---- Reading ----

struct Record {
  int line = 0;
  std::vector<std::string> cells;
  std::string error;  // broken quoting; the cells are then not trusted
};

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsBlank(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsBlank(s.back())) s.remove_suffix(1);
  return s;
}

// Cuts `text` into records. Line breaks inside quotes become "\n" and count as lines, so each
// record knows the line it starts on. Blank lines and rows of empty cells are dropped.
std::vector<Record> SplitRecords(std::string_view text) {
  std::vector<Record> out;
  const std::size_t n = text.size();
  std::size_t i = 0;
  int line = 1;
  auto at_cell_end = [&] { return i >= n || text[i] == ',' || text[i] == '\r' || text[i] == '\n'; };
  auto skip_line_end = [&] {  // CRLF, LF or a lone CR (old Mac Excel)
    if (i < n && text[i] == '\r') {
      ++i;
      if (i < n && text[i] == '\n') ++i;
      ++line;
    } else if (i < n && text[i] == '\n') {
      ++i;
      ++line;
    }
  };
  while (i < n) {
    Record rec;
    rec.line = line;
    while (true) {
      std::string cell;
      std::size_t q = i;
      while (q < n && IsBlank(text[q])) ++q;
      if (q < n && text[q] == '"') {
        const int opened = line;
        i = q + 1;
        bool closed = false;
        while (i < n) {
          const char c = text[i];
          if (c == '"') {
            if (i + 1 < n && text[i + 1] == '"') {
              cell += '"';
              i += 2;
              continue;
            }
            ++i;
            closed = true;
            break;
          }
          if (c == '\r' || c == '\n') {
            skip_line_end();
            cell += '\n';
            continue;
          }
          cell += c;
          ++i;
        }
        if (!closed && rec.error.empty()) {
          rec.error = "the quoted cell opened on line " + std::to_string(opened) + " is never closed";
        }
        while (i < n && IsBlank(text[i])) ++i;
        if (!at_cell_end()) {
          if (rec.error.empty()) {
            rec.error = "cell " + std::to_string(rec.cells.size() + 1) +
                        " has text after its closing quote (a quote inside a quoted cell is written \"\")";
          }
          while (!at_cell_end()) ++i;
        }
      } else {
        const std::size_t start = i;
        while (!at_cell_end()) ++i;
        cell = std::string(Trim(text.substr(start, i - start)));
      }
      rec.cells.push_back(std::move(cell));
      if (i < n && text[i] == ',') {
        ++i;
        continue;
      }
      skip_line_end();
      break;
    }
    bool empty = rec.error.empty();
    for (const std::string& c : rec.cells) empty = empty && c.empty();
    if (!empty) out.push_back(std::move(rec));
  }
  return out;
}

enum Column : int {
  kId,
  kTaskName,
  kUser,
  kProject,
  kGpuId,
  kStartTime,
  kEndTime,
  kEstHours,
  kStatus,
  kNote,
  kColumns
};
constexpr std::array<std::string_view, kColumns> kColumnNames = {
    "id", "task_name", "user", "project", "gpu_id", "start_time", "end_time", "est_hours", "status", "note"};

struct Alias {
  std::string_view name;
  Column column;
};
constexpr std::array<Alias, 22> kAliases = {{
    {"任务名", kTaskName},  {"任务", kTaskName},     {"任务名称", kTaskName}, {"用户", kUser},
    {"用户名", kUser},      {"使用人", kUser},       {"项目", kProject},      {"gpu", kGpuId},
    {"gpus", kGpuId},       {"显卡", kGpuId},        {"gpu编号", kGpuId},     {"开始时间", kStartTime},
    {"结束时间", kEndTime}, {"预计时长", kEstHours}, {"预计小时", kEstHours}, {"状态", kStatus},
    {"备注", kNote},        {"说明", kNote},         {"编号", kId},           {"task", kTaskName},
    {"username", kUser},    {"hours", kEstHours},
}};

// The column a header cell names, or nullopt for columns we do not read.
std::optional<Column> ColumnOf(std::string_view header) {
  // A unit in parentheses is not part of the name: "est_hours (h)", "预计时长（小时）".
  for (std::string_view paren : {"(", "\xEF\xBC\x88"}) {
    if (std::size_t p = header.find(paren); p != std::string_view::npos) header = header.substr(0, p);
  }
  std::string name;
  for (char c : Trim(header)) {
    if (c == ' ' || c == '-') c = '_';
    name += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  }
  for (int c = 0; c < kColumns; ++c) {
    if (name == kColumnNames[static_cast<std::size_t>(c)]) return static_cast<Column>(c);
  }
  for (const Alias& a : kAliases) {
    if (name == a.name) return a.column;
  }
  return std::nullopt;
}

std::optional<double> ReadHours(const std::string& s) {
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v) || v <= 0) return std::nullopt;
  return v;
}

std::optional<std::int64_t> ReadId(const std::string& s) {
  std::int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

// ---- Writing ----

std::int64_t IntOf(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) return 0;
  if (it->is_number_integer()) return it->get<std::int64_t>();
  if (it->is_number_float()) return static_cast<std::int64_t>(it->get<double>());
  return 0;
}

std::string StringOf(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// "0+1", "2/20G", "4/3g.40gb", "any+any" (see FormatBookingCsv).
std::string GpuIdText(const json& b) {
  std::string out;
  if (auto it = b.find("gpus"); it != b.end() && it->is_array()) {
    for (const json& g : *it) {
      if (!g.is_number_integer()) continue;
      if (!out.empty()) out += '+';
      out += std::to_string(g.get<std::int64_t>());
    }
  }
  const json request = b.contains("request") && b["request"].is_object() ? b["request"] : json::object();
  const std::string kind = StringOf(request, "kind");
  if (out.empty()) {
    const std::int64_t cards = kind == "gpus" ? std::max<std::int64_t>(IntOf(request, "gpus"), 1) : 1;
    for (std::int64_t k = 0; k < cards; ++k) out += k == 0 ? "any" : "+any";
  }
  if (kind == "gpu_mem" && IntOf(request, "memory") > 0) out += "/" + FormatMemory(IntOf(request, "memory"));
  if (kind == "mig" && !StringOf(request, "profile").empty()) out += "/" + StringOf(request, "profile");
  return out;
}

// Line breaks as "\n" only: the reader turns any break inside quotes into "\n", so a CRLF in a
// note would not survive the round trip otherwise.
std::string OneBreakStyle(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\r') {
      out += '\n';
      if (i + 1 < s.size() && s[i + 1] == '\n') ++i;
    } else {
      out += s[i];
    }
  }
  return out;
}

void AppendCell(std::string& out, std::string_view raw) {
  const std::string v = OneBreakStyle(raw);
  const bool quote = v.find_first_of(",\"\n") != std::string::npos ||
                     (!v.empty() && (IsBlank(v.front()) || IsBlank(v.back())));
  if (!quote) {
    out += v;
    return;
  }
  out += '"';
  for (char c : v) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
}

std::string Hours(Duration d) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.2f", static_cast<double>(d) / kHour);
  std::string s = buf;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

// 20261201T060000Z
std::string UtcBasic(Time t) {
  const std::int64_t day = FloorDiv(t, kDay);
  const std::int64_t secs = t - day * kDay;
  const CivilDate c = CivilFromDays(day);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%04lld%02d%02dT%02lld%02lld%02lldZ", static_cast<long long>(c.year),
                c.month, c.day, static_cast<long long>(secs / kHour),
                static_cast<long long>(secs % kHour / kMinute), static_cast<long long>(secs % kMinute));
  return buf;
}

// RFC 5545 TEXT: backslash, comma and semicolon escaped, any line break as \n.
std::string IcsText(std::string_view s) {
  std::string out;
  for (char c : OneBreakStyle(s)) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case ',':
        out += "\\,";
        break;
      case ';':
        out += "\\;";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// Appends one content line folded at 75 octets (RFC 5545 3.1): each continuation line starts
// with a space, which counts toward its 75. Breaks never fall inside a UTF-8 sequence, so a
// client that unfolds byte-wise and one that decodes each physical line both see whole characters.
void AppendLine(std::string& out, std::string_view line) {
  constexpr std::size_t kMax = 75;
  bool first = true;
  while (true) {
    const std::size_t room = first ? kMax : kMax - 1;
    if (!first) out += ' ';
    if (line.size() <= room) {
      out += line;
      break;
    }
    std::size_t cut = room;
    while (cut > 0 && (static_cast<unsigned char>(line[cut]) & 0xC0) == 0x80) --cut;
    // Text that is not UTF-8 (a run of continuation bytes): cut where the room ends. Without this
    // the loop never ended (fuzz/booking_ics.cc found it; the API's JSON holds only UTF-8).
    if (cut == 0) cut = room;
    out += line.substr(0, cut);
    out += "\r\n";
    line.remove_prefix(cut);
    first = false;
  }
  out += "\r\n";
}

const char* IcsStatus(const std::string& state) {
  if (state == "requested") return "TENTATIVE";
  if (state == "rejected" || state == "cancelled") return "CANCELLED";
  return "CONFIRMED";
}

}  // namespace

StatusOr<std::vector<BookingRow>> ParseBookingCsv(std::string_view text, std::vector<RowError>* errors) {
  if (text.starts_with(kUtf8Bom)) text.remove_prefix(kUtf8Bom.size());
  const std::vector<Record> records = SplitRecords(text);
  const std::string required = "task_name, user, gpu_id, start_time, end_time or est_hours, status";
  if (records.empty()) return InvalidArgument("the CSV is empty: expected a header row naming " + required);
  const Record& header = records.front();
  if (!header.error.empty())
    return InvalidArgument("line " + std::to_string(header.line) + ": " + header.error);

  std::array<std::optional<std::size_t>, kColumns> col;
  std::array<std::string, kColumns> shown;  // the header cell as written, for messages
  for (std::size_t i = 0; i < header.cells.size(); ++i) {
    std::optional<Column> c = ColumnOf(header.cells[i]);
    if (!c) continue;
    if (col[*c]) {
      return InvalidArgument("line " + std::to_string(header.line) + ": columns \"" + shown[*c] +
                             "\" and \"" + header.cells[i] + "\" both name " + std::string(kColumnNames[*c]));
    }
    col[*c] = i;
    shown[*c] = header.cells[i];
  }
  std::string missing;
  for (Column c : {kTaskName, kUser, kGpuId, kStartTime, kStatus}) {
    if (!col[c]) missing += (missing.empty() ? "" : ", ") + std::string(kColumnNames[c]);
  }
  if (!col[kEndTime] && !col[kEstHours])
    missing += (missing.empty() ? "" : ", ") + std::string("end_time or est_hours");
  if (!missing.empty()) {
    std::string found;
    for (const std::string& h : header.cells) found += (found.empty() ? "" : ", ") + h;
    return InvalidArgument("line " + std::to_string(header.line) + ": the header lacks " + missing +
                           " (found: " + found + "); a booking CSV needs " + required);
  }
  auto name = [&](Column c) {  // "user", or "用户 (user)" when the file calls it something else
    const std::string canonical(kColumnNames[c]);
    return shown[c] == canonical ? canonical : shown[c] + " (" + canonical + ")";
  };

  std::vector<BookingRow> rows;
  for (std::size_t r = 1; r < records.size(); ++r) {
    const Record& rec = records[r];
    if (!rec.error.empty()) {
      errors->push_back({rec.line, rec.error});
      continue;
    }
    if (rec.cells.size() != header.cells.size()) {
      errors->push_back({rec.line, "has " + std::to_string(rec.cells.size()) + " cells, the header has " +
                                       std::to_string(header.cells.size()) +
                                       " (a cell holding a comma must be in double quotes)"});
      continue;
    }
    auto cell = [&](Column c) { return col[c] ? rec.cells[*col[c]] : std::string(); };
    BookingRow row;
    row.line = rec.line;
    row.task_name = cell(kTaskName);
    row.user = cell(kUser);
    row.project = cell(kProject);
    row.gpu_id = cell(kGpuId);
    row.start_time = cell(kStartTime);
    row.end_time = cell(kEndTime);
    row.status = cell(kStatus);
    row.note = cell(kNote);
    std::vector<std::string> problems;
    if (const std::string id = cell(kId); !id.empty()) {
      if (std::optional<std::int64_t> v = ReadId(id)) {
        row.id = *v;
      } else {
        problems.push_back(name(kId) + " \"" + id + "\" is not a booking number");
      }
    }
    if (row.user.empty()) problems.push_back(name(kUser) + " is empty");
    if (row.gpu_id.empty()) problems.push_back(name(kGpuId) + " is empty: name the cards, e.g. 0 or 0+1");
    if (row.start_time.empty()) problems.push_back(name(kStartTime) + " is empty");
    const std::string hours = cell(kEstHours);
    if (!hours.empty()) {
      row.est_hours = ReadHours(hours);
      if (!row.est_hours)
        problems.push_back(name(kEstHours) + " \"" + hours +
                           "\" is not a positive number of hours (e.g. 2.5)");
    } else if (row.end_time.empty()) {
      problems.push_back(col[kEstHours] && col[kEndTime]
                             ? name(kEndTime) + " and " + name(kEstHours) + " are both empty: give one"
                             : (col[kEndTime] ? name(kEndTime) : name(kEstHours)) + " is empty");
    }
    if (!problems.empty()) {
      std::string message;
      for (const std::string& p : problems) message += (message.empty() ? "" : "; ") + p;
      errors->push_back({rec.line, message});
      continue;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string FormatBookingCsv(const json& bookings, const Zone& zone) {
  std::string out = "id,task_name,user,project,gpu_id,start_time,end_time,est_hours,status,note\r\n";
  if (!bookings.is_array()) return out;
  for (const json& b : bookings) {
    if (!b.is_object()) continue;
    const std::string note = StringOf(b, "note");
    const std::string project = StringOf(b, "project");
    const Time start = IntOf(b, "start");
    const Time end = IntOf(b, "end");
    const std::int64_t id = IntOf(b, "id");
    AppendCell(out, id > 0 ? std::to_string(id) : "");
    out += ',';
    AppendCell(out, note.empty() ? project : note);
    out += ',';
    AppendCell(out, StringOf(b, "user"));
    out += ',';
    AppendCell(out, project);
    out += ',';
    AppendCell(out, GpuIdText(b));
    out += ',';
    AppendCell(out, start != 0 ? FormatLocal(start, zone) : "");
    out += ',';
    AppendCell(out, end != 0 ? FormatLocal(end, zone) : "");
    out += ',';
    AppendCell(out, start != 0 && end > start ? Hours(end - start) : "");
    out += ',';
    AppendCell(out, StringOf(b, "state"));
    out += ',';
    AppendCell(out, note);
    out += "\r\n";
  }
  return out;
}

std::string FormatBookingIcs(const json& bookings, const std::string& host, Time now) {
  const std::string at = host.empty() ? "localhost" : host;
  std::string out;
  for (std::string_view l : {"BEGIN:VCALENDAR", "PRODID:-//Rota//Bookings//EN", "VERSION:2.0",
                             "CALSCALE:GREGORIAN", "METHOD:PUBLISH", "X-WR-CALNAME:GPU bookings"}) {
    AppendLine(out, l);
  }
  const std::string stamp = UtcBasic(now);
  if (bookings.is_array()) {
    for (const json& b : bookings) {
      if (!b.is_object()) continue;
      const std::string project = StringOf(b, "project");
      const std::string note = StringOf(b, "note");
      const std::string state = StringOf(b, "state");
      std::string summary = "GPU " + GpuIdText(b) + ": " + StringOf(b, "user");
      if (!project.empty()) summary += " (" + project + ")";
      std::string description = "State: " + state + "\nTier: " + StringOf(b, "tier");
      if (!note.empty()) description += "\nNote: " + note;
      AppendLine(out, "BEGIN:VEVENT");
      AppendLine(out, "UID:" + IcsText("booking-" + std::to_string(IntOf(b, "id")) + "@" + at));
      AppendLine(out, "DTSTAMP:" + stamp);
      AppendLine(out, "DTSTART:" + UtcBasic(IntOf(b, "start")));
      AppendLine(out, "DTEND:" + UtcBasic(IntOf(b, "end")));
      AppendLine(out, "SUMMARY:" + IcsText(summary));
      AppendLine(out, "DESCRIPTION:" + IcsText(description));
      AppendLine(out, std::string("STATUS:") + IcsStatus(state));
      AppendLine(out, "END:VEVENT");
    }
  }
  AppendLine(out, "END:VCALENDAR");
  return out;
}

}  // namespace rota::api
