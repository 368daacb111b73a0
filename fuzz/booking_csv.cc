// Fuzz target: the booking spreadsheet import (api/booking_io.h ParseBookingCsv), with what an
// export of the rows read writes (FormatBookingCsv) read back. Properties: no crash; a refused
// file or row says why, with a line inside the file; a row's line is inside the file; and every
// booking made of the rows read comes back from FormatBookingCsv -> ParseBookingCsv with the same
// user, project, note and status (line breaks as "\n"), and no row refused.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "api/booking_io.h"
#include "fuzz/fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rota;
  using nlohmann::json;
  const std::string_view text = fuzz::Text(data, size);
  const int lines = 1 + static_cast<int>(std::count(text.begin(), text.end(), '\n') +
                                         std::count(text.begin(), text.end(), '\r'));
  std::vector<api::RowError> errors;
  const StatusOr<std::vector<api::BookingRow>> rows = api::ParseBookingCsv(text, &errors);
  if (!rows.ok()) {
    fuzz::Require(!rows.status().message().empty(), "a refused file says why");
    return 0;
  }
  for (const api::RowError& e : errors) {
    fuzz::Require(!e.message.empty(), "a refused row says why");
    fuzz::Require(e.line >= 1 && e.line <= lines, "a refused row's line is in the file");
  }
  // The rows as bookings (what an import would make of them, with made-up times), written out and
  // read back.
  json bookings = json::array();
  std::vector<const api::BookingRow*> kept;
  const Time start = 1796115600;  // 2026-12-01 09:00 UTC
  for (const api::BookingRow& row : *rows) {
    fuzz::Require(row.line >= 1 && row.line <= lines, "a row's line is in the file");
    fuzz::Require(!row.user.empty() && !row.gpu_id.empty() && !row.start_time.empty(),
                  "a row read has its required cells");
    if (row.user.empty()) continue;
    const Time begin = start + static_cast<Time>(kept.size()) * kHour;
    bookings.push_back({{"id", row.id}, {"user", row.user}, {"project", row.project}, {"note", row.note},
                        {"state", row.status}, {"start", begin}, {"end", begin + kHour}, {"gpus", {0}}});
    kept.push_back(&row);
  }
  const std::string csv = api::FormatBookingCsv(bookings, Zone());
  std::vector<api::RowError> again_errors;
  const StatusOr<std::vector<api::BookingRow>> again = api::ParseBookingCsv(csv, &again_errors);
  fuzz::Require(again.ok(), "an export reads back: " + (again.ok() ? "" : again.status().message()));
  fuzz::Require(again_errors.empty(), "an export's rows read back: " +
                                          (again_errors.empty() ? "" : again_errors.front().message));
  fuzz::Require(again->size() == kept.size(), "an export reads back as many rows as it wrote");
  for (std::size_t i = 0; i < kept.size(); ++i) {
    const api::BookingRow& a = *kept[i];
    const api::BookingRow& b = (*again)[i];
    fuzz::Require(b.user == fuzz::OneBreakStyle(a.user) && b.project == fuzz::OneBreakStyle(a.project) &&
                      b.note == fuzz::OneBreakStyle(a.note) && b.status == fuzz::OneBreakStyle(a.status),
                  "a row's cells come back as written (row " + std::to_string(i) + ")");
    fuzz::Require(b.id == (a.id > 0 ? a.id : 0), "a row's id comes back");
  }
  return 0;
}
