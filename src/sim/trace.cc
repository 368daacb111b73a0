// Tested by trace_test.cc.
//
// Design: loading is one pass over the CSV records. Before the pass, the mapping (preset columns
// overridden by --columns) is resolved against the header into column indexes, so every unknown
// name is reported at once with the list of columns the file has. Each row then goes through
// filters (raw text), GPUs (rows without any are skipped and counted), times and duration. Time
// columns are read as seconds or as UTC dates: the first time value read fixes which, and later
// values must agree, because a file mixing the two is almost surely mis-mapped. Dates are
// converted with civil-date arithmetic (core/civil_date.h), never with the C library's
// time zone functions, so results do not depend on the machine. Only the alibaba preset is lenient
// (rows never scheduled, or ending before they start, are skipped and counted); with any other
// mapping such a row is an error naming its line, since silently dropping jobs skews a replay.
#include "sim/trace.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <system_error>

#include "core/civil_date.h"
#include "sim/csv.h"

namespace rota::sim {
namespace {

// Our fields, in the order of TraceFieldNames().
enum Field : int { kSubmit, kDuration, kGpus, kGpuMilli, kUser, kProject, kTier, kEnd, kStart, kName, kLimit };
constexpr int kFieldCount = 11;

// Largest magnitude accepted for a number of seconds (about 30 million years).
constexpr double kMaxSeconds = 1e15;
constexpr double kMaxGpus = 1e6;

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// A finite decimal number ("66", "66.0", "-3", "1e3"), or nullopt.
std::optional<double> ParseNumber(std::string_view text) {
  text = Trim(text);
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  if (text.empty()) return std::nullopt;
  double value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || !std::isfinite(value)) return std::nullopt;
  return value;
}

// Reads `count` decimal digits at text[pos...]; nullopt if any is not a digit.
std::optional<int> Digits(std::string_view text, std::size_t pos, std::size_t count) {
  int value = 0;
  for (std::size_t i = pos; i < pos + count; ++i) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

std::string Quote(std::string_view s) {
  std::string out = "\"";
  out += s;
  out += '"';
  return out;
}

std::string Rows(std::int64_t n) {
  return CountOf(n, "row", "rows");
}

std::string FieldList() {
  std::string out;
  for (const std::string& f : TraceFieldNames()) {
    if (!out.empty()) out += ", ";
    out += f;
  }
  return out;
}

// The preset's mapping of our fields to its columns, or nullopt for an unknown format.
std::optional<std::map<std::string, std::string>> PresetColumns(std::string_view format) {
  if (format.empty()) return std::map<std::string, std::string>{};
  if (format == "philly") {
    return std::map<std::string, std::string>{{"submit", "timestamp"},
                                              {"duration", "duration"},
                                              {"gpus", "num_gpus"},
                                              {"project", "cluster"}};
  }
  if (format == "alibaba") {
    return std::map<std::string, std::string>{
        {"submit", "creation_time"}, {"start", "scheduled_time"}, {"end", "deletion_time"},
        {"gpus", "num_gpu"},         {"gpu_milli", "gpu_milli"},  {"tier", "qos"}};
  }
  return std::nullopt;
}

enum class TimeKind { kUnknown, kSeconds, kDate };

// Parses rows of one trace; holds the resolved mapping and the running time kind.
class TraceParser {
 public:
  TraceParser(std::string_view text, std::string name, const TraceOptions& options)
      : reader_(text, std::move(name)), options_(options) {}

  rota::StatusOr<Trace> Run();

 private:
  rota::Status Resolve();
  // Parses one data row into *job. Returns true to keep it, false when it was skipped.
  rota::StatusOr<bool> ParseRow(TraceJob* job);
  // Parses a time value of field `f` on the current row, in seconds.
  rota::StatusOr<double> ParseTime(Field f);
  rota::Status RowError(Field f, std::string_view problem) const {
    return reader_.ErrorAt(reader_.line(),
                           "column " + Quote(column_[f]) + ": " + std::string(problem));
  }
  bool Mapped(Field f) const { return index_[f].has_value(); }
  std::string_view Value(Field f) const { return reader_.fields()[*index_[f]]; }

  CsvReader reader_;
  const TraceOptions& options_;
  bool lenient_ = false;    // alibaba preset: skip unscheduled and ended-early rows
  bool qos_tiers_ = false;  // tier column holds Kubernetes QoS classes (alibaba)
  std::array<std::string, kFieldCount> column_;
  std::array<std::optional<std::size_t>, kFieldCount> index_;
  std::vector<std::pair<std::size_t, std::string_view>> filters_;
  TimeKind time_kind_ = TimeKind::kUnknown;
  std::int64_t skipped_no_gpus_ = 0;
  std::int64_t skipped_unscheduled_ = 0;
  std::int64_t skipped_ended_early_ = 0;
};

rota::Status TraceParser::Resolve() {
  std::optional<std::map<std::string, std::string>> preset = PresetColumns(options_.format);
  if (!preset) {
    return rota::InvalidArgument("unknown trace format " + Quote(options_.format) +
                                 " (known: philly, alibaba; or give --columns)");
  }
  lenient_ = options_.format == "alibaba";
  std::map<std::string, std::string> mapping = *preset;
  for (const auto& [field, column] : options_.columns) mapping[field] = column;

  if (rota::Status s = reader_.ReadHeader(); !s.ok()) return s;
  const std::string columns_hint = "; the file has columns: " + reader_.ColumnList();
  const std::vector<std::string>& fields = TraceFieldNames();
  for (const auto& [field, column] : mapping) {
    auto it = std::find(fields.begin(), fields.end(), field);
    if (it == fields.end()) {
      return rota::InvalidArgument("unknown trace field " + Quote(field) +
                                   " in --columns (known: " + FieldList() + ")");
    }
    if (column.empty()) continue;  // unmapped on purpose
    const auto f = static_cast<std::size_t>(it - fields.begin());
    std::optional<std::size_t> index = reader_.ColumnIndex(column);
    if (!index) {
      const bool from_preset = !options_.columns.contains(field);
      return rota::InvalidArgument(reader_.name() + ": no column " + Quote(column) + " (" +
                                   (from_preset ? "expected by --format " + options_.format
                                                : "--columns " + field + "=" + column) +
                                   ")" + columns_hint);
    }
    column_[f] = column;
    index_[f] = index;
  }
  qos_tiers_ = options_.format == "alibaba" && column_[kTier] == "qos";

  if (!Mapped(kSubmit)) {
    return rota::InvalidArgument(reader_.name() +
                                 ": no submit time: give --columns submit=COLUMN (or --format)" +
                                 columns_hint);
  }
  if (!Mapped(kDuration) && !Mapped(kEnd)) {
    return rota::InvalidArgument(reader_.name() +
                                 ": no run time: give --columns duration=COLUMN, or end=COLUMN "
                                 "(with start=COLUMN if jobs did not start at submission)" +
                                 columns_hint);
  }
  if (!Mapped(kGpus)) {
    return rota::InvalidArgument(reader_.name() + ": no GPU count: give --columns gpus=COLUMN" +
                                 columns_hint);
  }
  for (const auto& [column, value] : options_.filters) {
    std::optional<std::size_t> index = reader_.ColumnIndex(column);
    if (!index) {
      return rota::InvalidArgument(reader_.name() + ": no column " + Quote(column) + " (--filter " +
                                   column + "=" + value + ")" + columns_hint);
    }
    filters_.emplace_back(*index, value);
  }
  return rota::Status::Ok();
}

rota::StatusOr<double> TraceParser::ParseTime(Field f) {
  const std::string_view text = Trim(Value(f));
  if (text.empty()) return RowError(f, "empty (expected a time)");
  if (std::optional<double> seconds = ParseNumber(text)) {
    if (time_kind_ == TimeKind::kDate) {
      return RowError(
          f, Quote(text) + " is a number, but earlier rows held dates (YYYY-MM-DD HH:MM:SS)");
    }
    if (std::abs(*seconds) > kMaxSeconds) return RowError(f, Quote(text) + " is out of range");
    time_kind_ = TimeKind::kSeconds;
    return *seconds;
  }
  if (std::optional<rota::Time> t = ParseDateTimeUtc(text)) {
    if (time_kind_ == TimeKind::kSeconds) {
      return RowError(f, Quote(text) + " is a date, but earlier rows held seconds");
    }
    time_kind_ = TimeKind::kDate;
    return static_cast<double>(*t);
  }
  return RowError(f, Quote(text) + " is not a time (expected seconds or YYYY-MM-DD HH:MM:SS)");
}

rota::StatusOr<bool> TraceParser::ParseRow(TraceJob* job) {
  // GPUs first: CPU-only rows are skipped whatever their other columns hold.
  const std::string_view gpus_text = Trim(Value(kGpus));
  std::optional<double> gpus = ParseNumber(gpus_text);
  if (!gpus || *gpus < 0 || *gpus > kMaxGpus || (*gpus > 1 && *gpus != std::floor(*gpus))) {
    return RowError(kGpus, Quote(gpus_text) +
                               " is not a GPU count (expected a whole number, or a share below 1)");
  }
  job->gpus = static_cast<int>(std::floor(*gpus));
  job->gpu_fraction = *gpus < 1 ? *gpus : 0;
  if (job->gpus == 1 && Mapped(kGpuMilli)) {
    const std::string_view milli_text = Trim(Value(kGpuMilli));
    std::optional<double> milli = ParseNumber(milli_text);
    if (!milli || *milli < 0) {
      return RowError(kGpuMilli, Quote(milli_text) + " is not a GPU share (expected 0 to 1000)");
    }
    if (*milli < 1000) {
      job->gpus = 0;
      job->gpu_fraction = *milli / 1000;
    }
  }
  if (job->gpus == 0 && job->gpu_fraction <= 0) {
    ++skipped_no_gpus_;
    return false;
  }

  if (lenient_ && Mapped(kStart) && Trim(Value(kStart)).empty()) {
    ++skipped_unscheduled_;
    return false;
  }
  rota::StatusOr<double> submit = ParseTime(kSubmit);
  if (!submit.ok()) return submit.status();
  job->submit = static_cast<rota::Time>(std::floor(*submit));

  double run = 0;
  if (Mapped(kDuration)) {
    const std::string_view text = Trim(Value(kDuration));
    std::optional<double> seconds = ParseNumber(text);
    if (!seconds || *seconds < 0 || *seconds > kMaxSeconds) {
      return RowError(kDuration, Quote(text) + " is not a run time (expected seconds, 0 or more)");
    }
    run = *seconds;
  } else {
    rota::StatusOr<double> end = ParseTime(kEnd);
    if (!end.ok()) return end.status();
    double begin = *submit;
    Field begin_field = kSubmit;
    if (Mapped(kStart)) {
      rota::StatusOr<double> start = ParseTime(kStart);
      if (!start.ok()) return start.status();
      begin = *start;
      begin_field = kStart;
    }
    run = *end - begin;
    if (lenient_ && run <= 0) {
      ++skipped_ended_early_;
      return false;
    }
    if (run < 0) {
      return RowError(kEnd,
                      "the job ends before its start (column " + Quote(column_[begin_field]) + ")");
    }
  }
  job->duration = std::max<rota::Duration>(1, static_cast<rota::Duration>(std::ceil(run)));
  if (Mapped(kLimit)) {  // empty: none recorded
    const std::string_view text = Trim(Value(kLimit));
    std::optional<double> seconds = text.empty() ? std::optional<double>(0) : ParseNumber(text);
    if (!seconds || *seconds < 0 || *seconds > kMaxSeconds) {
      return RowError(kLimit, Quote(text) + " is not a time limit (expected seconds, or nothing)");
    }
    job->limit = static_cast<rota::Duration>(std::ceil(*seconds));
  }

  if (Mapped(kUser)) job->user = Trim(Value(kUser));
  if (Mapped(kProject)) job->project = Trim(Value(kProject));
  if (Mapped(kName)) job->name = Trim(Value(kName));
  if (Mapped(kTier)) {
    const std::string_view text = Trim(Value(kTier));
    if (qos_tiers_) {
      if (!text.empty()) job->tier = text == "BE" ? "explore" : "regular";
    } else if (!text.empty()) {
      std::string lower(text);
      for (char& c : lower) {
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      }
      std::optional<rota::Tier> tier = rota::ParseTier(lower);
      if (!tier) {
        return RowError(kTier,
                        Quote(text) + " is not a tier (expected thesis, regular or explore)");
      }
      job->tier = rota::TierName(*tier);
    }
  }
  return true;
}

rota::StatusOr<Trace> TraceParser::Run() {
  if (rota::Status s = Resolve(); !s.ok()) return s;
  Trace trace;
  while (true) {
    rota::StatusOr<bool> more = reader_.Next();
    if (!more.ok()) return more.status();
    if (!*more) break;
    bool keep = true;
    for (const auto& [index, value] : filters_) {
      if (reader_.fields()[index] != value) {
        keep = false;
        break;
      }
    }
    if (!keep) continue;
    TraceJob job;
    job.line = reader_.line();
    rota::StatusOr<bool> parsed = ParseRow(&job);
    if (!parsed.ok()) return parsed.status();
    if (*parsed) trace.jobs.push_back(std::move(job));
  }
  std::stable_sort(trace.jobs.begin(), trace.jobs.end(),
                   [](const TraceJob& a, const TraceJob& b) { return a.submit < b.submit; });
  trace.absolute_times = time_kind_ == TimeKind::kDate;
  trace.skipped = skipped_no_gpus_ + skipped_unscheduled_ + skipped_ended_early_;
  if (skipped_no_gpus_ > 0) trace.notes.push_back(Rows(skipped_no_gpus_) + " without GPUs skipped");
  if (skipped_unscheduled_ > 0) {
    trace.notes.push_back(Rows(skipped_unscheduled_) + " never scheduled (empty " +
                          column_[kStart] + ") skipped");
  }
  if (skipped_ended_early_ > 0) {
    trace.notes.push_back(Rows(skipped_ended_early_) + " ending at or before their start skipped");
  }
  return trace;
}

}  // namespace

const std::vector<std::string>& TraceFieldNames() {
  static const std::vector<std::string> kNames = {
      "submit", "duration", "gpus", "gpu_milli", "user", "project", "tier", "end", "start", "name", "limit"};
  return kNames;
}

rota::StatusOr<TraceOptions> ParseColumnsFlag(std::string_view text, TraceOptions base) {
  const std::vector<std::string>& fields = TraceFieldNames();
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const std::string_view entry = Trim(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    if (entry.empty()) continue;  // tolerate "a=b,,c=d" and a trailing comma
    const std::size_t eq = entry.find('=');
    if (eq == std::string_view::npos) {
      return rota::InvalidArgument("--columns: " + Quote(entry) + " is not FIELD=COLUMN");
    }
    const std::string field(Trim(entry.substr(0, eq)));
    if (std::find(fields.begin(), fields.end(), field) == fields.end()) {
      return rota::InvalidArgument("--columns: unknown field " + Quote(field) +
                                   " (known: " + FieldList() + ")");
    }
    base.columns[field] = std::string(Trim(entry.substr(eq + 1)));
  }
  return base;
}

rota::StatusOr<std::pair<std::string, std::string>> ParseFilterFlag(std::string_view text) {
  const std::size_t eq = text.find('=');
  if (eq == std::string_view::npos) {
    return rota::InvalidArgument("--filter: " + Quote(text) + " is not COLUMN=VALUE");
  }
  const std::string_view column = Trim(text.substr(0, eq));
  if (column.empty()) {
    return rota::InvalidArgument("--filter: " + Quote(text) + " has no column name");
  }
  return std::pair<std::string, std::string>(std::string(column), std::string(text.substr(eq + 1)));
}

rota::StatusOr<Trace> ParseTrace(std::string_view csv_text, const TraceOptions& options) {
  return TraceParser(csv_text, "<trace>", options).Run();
}

rota::StatusOr<Trace> LoadTrace(const std::string& path, const TraceOptions& options) {
  rota::StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok()) return text.status();
  return TraceParser(*text, path, options).Run();
}

std::optional<rota::Time> ParseDateTimeUtc(std::string_view text) {
  // YYYY-MM-DD?HH:MM[:SS], ? being a space or 'T'.
  if (text.size() != 16 && text.size() != 19) return std::nullopt;
  if (text[4] != '-' || text[7] != '-' || (text[10] != ' ' && text[10] != 'T') || text[13] != ':') {
    return std::nullopt;
  }
  if (text.size() == 19 && text[16] != ':') return std::nullopt;
  const std::optional<int> year = Digits(text, 0, 4);
  const std::optional<int> month = Digits(text, 5, 2);
  const std::optional<int> day = Digits(text, 8, 2);
  const std::optional<int> hour = Digits(text, 11, 2);
  const std::optional<int> minute = Digits(text, 14, 2);
  const std::optional<int> second = text.size() == 19 ? Digits(text, 17, 2) : std::optional<int>(0);
  if (!year || !month || !day || !hour || !minute || !second) return std::nullopt;
  if (*month < 1 || *month > 12 || *day < 1 || *day > DaysInMonth(*year, *month)) {
    return std::nullopt;
  }
  if (*hour > 23 || *minute > 59 || *second > 59) return std::nullopt;
  return DaysFromCivil(*year, *month, *day) * rota::kDay + *hour * rota::kHour +
         *minute * rota::kMinute + *second;
}

}  // namespace rota::sim
