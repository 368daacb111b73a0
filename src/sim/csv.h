// A small RFC 4180 CSV reader for job traces.
//
// Handles quoted fields (with "" as an escaped quote, and commas or line breaks inside quotes),
// LF and CRLF line ends, empty fields, a UTF-8 byte order mark, and blank lines (skipped). Every
// record knows the 1-based line it starts on, so callers can point at the offending line.
// The reader works on text already in memory and makes one pass over it: unquoted fields and
// quoted fields without escapes are views into the text, only fields with "" are copied.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace rota::sim {

// Reads the whole file at `path` into a string. NotFound when it cannot be opened.
rota::StatusOr<std::string> ReadFileToString(const std::string& path);

// Streams the records of a CSV text whose first non-blank record is a header.
//
// Usage:
//   CsvReader reader(text, "trace.csv");
//   if (Status s = reader.ReadHeader(); !s.ok()) return s;
//   while (true) {
//     StatusOr<bool> more = reader.Next();
//     if (!more.ok()) return more.status();
//     if (!*more) break;
//     ... reader.fields(), reader.line() ...
//   }
//
// Errors (InvalidArgument) name the input and line: "trace.csv:17: ...".
class CsvReader {
 public:
  // `text` must outlive the reader and every view it hands out. `name` prefixes error messages.
  explicit CsvReader(std::string_view text, std::string name = "<csv>");

  // Reads the header record. Must be called once, before Next(). Fails on empty input, on
  // malformed quoting, and on a column name given twice (empty names are allowed and ignored).
  rota::Status ReadHeader();
  const std::vector<std::string>& header() const { return header_; }
  // Index of the column called `name`, or nullopt.
  std::optional<std::size_t> ColumnIndex(std::string_view name) const;
  // "a, b, c": the non-empty column names, for error messages.
  std::string ColumnList() const;

  // Reads the next data record. Returns true when one was read, false at the end of the input.
  // Fails on malformed quoting and on a record whose field count differs from the header's.
  rota::StatusOr<bool> Next();
  // The fields of the record last read by Next() (or ReadHeader()); valid until the next call.
  const std::vector<std::string_view>& fields() const { return fields_; }
  // 1-based line on which the record last read starts.
  std::int64_t line() const { return record_line_; }
  const std::string& name() const { return name_; }

  // "name:line: message" as an InvalidArgument status.
  rota::Status ErrorAt(std::int64_t line, std::string_view message) const;

 private:
  // Reads one record into fields_, skipping blank lines. Returns false at end of input.
  rota::StatusOr<bool> ReadRecord();

  std::string_view text_;
  std::string name_;
  std::size_t pos_ = 0;
  std::int64_t next_line_ = 1;    // line number at pos_
  std::int64_t record_line_ = 0;  // line on which the current record starts
  std::vector<std::string> header_;
  std::vector<std::string_view> fields_;
  std::deque<std::string> unescaped_;  // storage for fields that contained "" (stable addresses)
};

// A whole CSV text as strings, for callers that do not need streaming.
struct CsvTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::int64_t> lines;  // lines[i]: the line on which rows[i] starts
};

// Parses a whole CSV text (header plus rows). Errors as in CsvReader.
rota::StatusOr<CsvTable> ParseCsv(std::string_view text, std::string name = "<csv>");

}  // namespace rota::sim
