// Tested by csv_test.cc.
//
// Design: the reader keeps a cursor into the whole text and parses one record per call, field by
// field. An unquoted field runs to the next comma or line feed (a CR right before the LF is
// dropped); a quoted field runs to the closing quote, counting the line feeds it spans so that
// line numbers stay right, and is copied only when it contains "" escapes. Copies live in a
// deque, whose elements never move, so the string_views in fields() stay valid until the next
// record. A quote inside an unquoted field is kept literally (as Python's csv module does) rather
// than rejected; text after a closing quote other than a comma or line end is an error.
#include "sim/csv.h"

#include <algorithm>
#include <fstream>
#include <ios>
#include <utility>

namespace rota::sim {

rota::StatusOr<std::string> ReadFileToString(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return rota::NotFound("cannot open file " + path);
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < 0) return rota::Internal("cannot read file " + path);
  in.seekg(0, std::ios::beg);
  std::string text(static_cast<std::size_t>(size), '\0');
  if (size > 0 && !in.read(text.data(), size)) return rota::Internal("cannot read file " + path);
  return text;
}

CsvReader::CsvReader(std::string_view text, std::string name)
    : text_(text), name_(std::move(name)) {
  static constexpr std::string_view kBom = "\xEF\xBB\xBF";
  if (text_.substr(0, kBom.size()) == kBom) pos_ = kBom.size();
}

rota::Status CsvReader::ErrorAt(std::int64_t line, std::string_view message) const {
  std::string m = name_;
  m += ':';
  m += std::to_string(line);
  m += ": ";
  m += message;
  return rota::InvalidArgument(std::move(m));
}

rota::Status CsvReader::ReadHeader() {
  rota::StatusOr<bool> got = ReadRecord();
  if (!got.ok()) return got.status();
  if (!*got) return rota::InvalidArgument(name_ + ": empty file (expected a header row)");
  header_.assign(fields_.begin(), fields_.end());
  for (std::size_t i = 0; i < header_.size(); ++i) {
    if (header_[i].empty()) continue;  // e.g. an unnamed index column written by pandas
    for (std::size_t j = 0; j < i; ++j) {
      if (header_[j] == header_[i]) {
        return ErrorAt(record_line_, "column \"" + header_[i] + "\" appears twice in the header");
      }
    }
  }
  return rota::Status::Ok();
}

std::optional<std::size_t> CsvReader::ColumnIndex(std::string_view name) const {
  for (std::size_t i = 0; i < header_.size(); ++i) {
    if (header_[i] == name) return i;
  }
  return std::nullopt;
}

std::string CsvReader::ColumnList() const {
  std::string out;
  for (const std::string& h : header_) {
    if (h.empty()) continue;
    if (!out.empty()) out += ", ";
    out += h;
  }
  return out;
}

rota::StatusOr<bool> CsvReader::Next() {
  rota::StatusOr<bool> got = ReadRecord();
  if (!got.ok() || !*got) return got;
  if (fields_.size() != header_.size()) {
    return ErrorAt(record_line_, "expected " + std::to_string(header_.size()) +
                                     " fields as in the header, found " +
                                     std::to_string(fields_.size()));
  }
  return true;
}

rota::StatusOr<bool> CsvReader::ReadRecord() {
  fields_.clear();
  unescaped_.clear();
  const std::size_t n = text_.size();
  const char* s = text_.data();
  // Skip blank lines (LF or CRLF alone).
  while (pos_ < n) {
    if (s[pos_] == '\n') {
      ++pos_;
      ++next_line_;
    } else if (s[pos_] == '\r' && pos_ + 1 < n && s[pos_ + 1] == '\n') {
      pos_ += 2;
      ++next_line_;
    } else {
      break;
    }
  }
  if (pos_ >= n) return false;
  record_line_ = next_line_;

  while (true) {
    if (pos_ < n && s[pos_] == '"') {
      const std::int64_t open_line = next_line_;
      const std::size_t start = ++pos_;
      bool escaped = false;
      std::size_t end = 0;
      while (true) {
        const std::size_t q = text_.find('"', pos_);
        if (q == std::string_view::npos) return ErrorAt(open_line, "quoted field never closed");
        next_line_ += std::count(s + pos_, s + q, '\n');
        if (q + 1 < n && s[q + 1] == '"') {
          escaped = true;
          pos_ = q + 2;
          continue;
        }
        end = q;
        pos_ = q + 1;
        break;
      }
      const std::string_view raw = text_.substr(start, end - start);
      if (escaped) {
        std::string& out = unescaped_.emplace_back();
        out.reserve(raw.size());
        for (std::size_t i = 0; i < raw.size(); ++i) {
          out += raw[i];
          if (raw[i] == '"') ++i;  // the second quote of ""
        }
        fields_.emplace_back(out);
      } else {
        fields_.push_back(raw);
      }
      if (pos_ >= n) return true;
      if (s[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (s[pos_] == '\n') {
        ++pos_;
        ++next_line_;
        return true;
      }
      if (s[pos_] == '\r' && pos_ + 1 < n && s[pos_ + 1] == '\n') {
        pos_ += 2;
        ++next_line_;
        return true;
      }
      return ErrorAt(next_line_,
                     "unexpected text after a closing quote (a field that starts "
                     "with \" must end with \" followed by a comma or line end)");
    }
    const std::size_t start = pos_;
    while (pos_ < n && s[pos_] != ',' && s[pos_] != '\n') ++pos_;
    std::size_t end = pos_;
    const bool at_comma = pos_ < n && s[pos_] == ',';
    if (!at_comma && end > start && s[end - 1] == '\r') --end;
    fields_.push_back(text_.substr(start, end - start));
    if (pos_ >= n) return true;
    ++pos_;
    if (!at_comma) {
      ++next_line_;
      return true;
    }
  }
}

rota::StatusOr<CsvTable> ParseCsv(std::string_view text, std::string name) {
  CsvReader reader(text, std::move(name));
  if (rota::Status s = reader.ReadHeader(); !s.ok()) return s;
  CsvTable table;
  table.header = reader.header();
  while (true) {
    rota::StatusOr<bool> more = reader.Next();
    if (!more.ok()) return more.status();
    if (!*more) break;
    table.rows.emplace_back(reader.fields().begin(), reader.fields().end());
    table.lines.push_back(reader.line());
  }
  return table;
}

}  // namespace rota::sim
