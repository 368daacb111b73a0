// The lab's spreadsheet in and out: bookings exported as CSV or iCalendar, and a CSV imported
// row by row through the same rules as `rota book` (every bad row reported with its line; nothing
// imported when one is bad, unless asked to skip them). Tested by tests/daemon/test_bookings.py.
#include <spdlog/spdlog.h>

#include <cmath>

#include "api/booking_io.h"
#include "api/protocol.h"
#include "api/request_fields.h"
#include "api/when.h"
#include "daemon/clock.h"
#include "daemon/booking_desk.h"

namespace rota::daemon {

using nlohmann::json;

namespace {

// The spreadsheet's status column: whether the row is a booking to import, and whether it says
// an admin already confirmed it.
std::optional<bool> StatusConfirmed(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (s == "confirmed" || s == "approved" || s == "ok" || s == "已确认" || s == "确认" || s == "已批准") return true;
  if (s.empty() || s == "requested" || s == "pending" || s == "待确认" || s == "申请" || s == "待审批") return false;
  return std::nullopt;
}

std::vector<std::string> SplitCards(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text) {
    if (c == '+' || c == ',' || c == ';' || c == ' ') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

}  // namespace

json BookingDesk::ExportBookings(const Caller& caller, const json& request) {
  StatusOr<std::string> format = api::fields::Text(request, "format", "csv");
  if (!format.ok()) return api::ErrorReply(format.status());
  if (*format != "csv" && *format != "ics") return api::ErrorReply(InvalidArgument("format must be csv or ics"));
  StatusOr<bool> all = api::fields::Bool(request, "all", true);
  if (!all.ok()) return api::ErrorReply(all.status());
  json list_request = request;
  list_request["all"] = *all;
  if (!request.contains("from")) list_request["from"] = Time{0};
  if (!request.contains("to")) list_request["to"] = Now() + 366 * kDay;
  json listed = ListBookings(caller, list_request);
  if (!listed.value("ok", false)) return listed;
  const std::string host = HostName();
  json out = api::OkReply();
  out["text"] = *format == "csv" ? api::FormatBookingCsv(listed["bookings"], config_.policy.zone)
                                : api::FormatBookingIcs(listed["bookings"], host.empty() ? "rota" : host, Now());
  return out;
}

json BookingDesk::ImportBookings(const Caller& caller, const json& request) {
  if (!request.contains("csv") || !request["csv"].is_string()) {
    return api::ErrorReply(InvalidArgument("\"csv\" must hold the file's text"));
  }
  StatusOr<bool> skip_bad_field = api::fields::Bool(request, "skip_bad");
  if (!skip_bad_field.ok()) return api::ErrorReply(skip_bad_field.status());
  const bool skip_bad = *skip_bad_field;
  std::vector<api::RowError> errors;
  StatusOr<std::vector<api::BookingRow>> rows = api::ParseBookingCsv(request["csv"].get<std::string>(), &errors);
  if (!rows.ok()) return api::ErrorReply(rows.status());
  const Time now = Now();
  const Zone& zone = config_.policy.zone;
  std::vector<BookingEntry> entries = book_->Entries();
  std::vector<store::BookingRecord> accepted;
  for (const api::BookingRow& row : *rows) {
    auto bad = [&](const std::string& message) { errors.push_back({row.line, message}); };
    std::optional<bool> confirmed = StatusConfirmed(row.status);
    if (!confirmed) {
      bad("status \"" + row.status + "\" is not a booking to import (use confirmed or requested)");
      continue;
    }
    const std::optional<uid_t> owner_uid = UserId(row.user);
    if (!owner_uid) {
      bad("unknown user \"" + row.user + "\" (no such account on this server)");
      continue;
    }
    if (!caller.admin && row.user != caller.name) {
      bad("only admins may import bookings of others (this row is " + row.user + "'s)");
      continue;
    }
    json b = {{"user", row.user}, {"project", row.project}, {"note", row.note.empty() ? row.task_name : row.note}};
    // "0+1" (these cards), "any+any" (any two), "2/3g.40gb" (a slice on card 2), "0/20G" (a share).
    std::vector<std::string> cards = SplitCards(row.gpu_id);
    if (cards.empty()) {
      bad("gpu_id is empty (use a card index such as 0, or 0+1)");
      continue;
    }
    std::vector<std::string> named;
    std::string suffix;
    int any = 0;
    for (const std::string& c : cards) {
      const size_t slash = c.find('/');
      if (slash != std::string::npos) suffix = c.substr(slash + 1);
      const std::string card = c.substr(0, slash);
      if (card == "any") {
        ++any;
      } else {
        named.push_back(card);
      }
    }
    if (!named.empty()) b["gpu_ids"] = named;
    if (any > 0 && named.empty()) b["gpus"] = any;
    if (!suffix.empty()) {
      if (std::optional<MiB> mem = ParseMemory(suffix); mem && suffix.find('.') == std::string::npos) {
        b["gpu_mem"] = *mem;
      } else {
        b["mig"] = suffix;
      }
      b.erase("gpus");
    }
    StatusOr<Time> start = api::ParseWhen(row.start_time, now, zone);
    if (!start.ok()) {
      bad("start_time: " + start.status().message());
      continue;
    }
    b["start"] = *start;
    if (!row.end_time.empty()) {
      StatusOr<Time> end = api::ParseWhen(row.end_time, now, zone, *start);
      if (!end.ok()) {
        bad("end_time: " + end.status().message());
        continue;
      }
      b["end"] = *end;
    } else {
      b["for"] = static_cast<Duration>(std::llround(row.est_hours.value_or(0) * 3600.0));
    }
    // Imported rows are booked as the row's user, checked as that user would be (an admin's import
    // keeps the rows it says were confirmed).
    Caller as = caller;
    as.name = row.user;
    StatusOr<BookingSpec> spec = BookingSpecFrom(as, b, now);
    if (!spec.ok()) {
      bad(spec.status().message());
      continue;
    }
    BookingCheck check = CheckBooking(*spec, entries, cards_.gpus(), config_.bookings, config_.policy, now, false);
    if (!check.errors.empty()) {
      std::string all;
      for (const std::string& e : check.errors) all += (all.empty() ? "" : "; ") + e;
      bad(all);
      continue;
    }
    if (!check.alloc) {
      std::string in_way;
      for (std::int64_t id : check.conflicts) in_way += (in_way.empty() ? "" : ", ") + std::to_string(id);
      bad("overlaps " + (in_way.empty() ? std::string("another row of this file") : "booking " + in_way) +
          " on the same GPU");
      continue;
    }
    store::BookingRecord rec;
    rec.entry.spec = *spec;
    for (int c : spec->cards) rec.asked_cards.push_back(cards_.gpus()[static_cast<size_t>(c)].uuid);
    BookingBook::Place(rec, *check.alloc, cards_.gpus());
    const bool admin_says = caller.admin && *confirmed;
    rec.entry.state = check.needs_admin.empty() || admin_says ? BookingState::kConfirmed : BookingState::kRequested;
    rec.decided_by = admin_says ? (caller.name.empty() ? "root" : caller.name) : "rotad";
    rec.reason = "imported from line " + std::to_string(row.line);
    if (rec.entry.state == BookingState::kRequested) {
      for (const std::string& n : check.needs_admin) rec.reason += "; needs an admin: " + n;
    }
    rec.uid = *owner_uid;
    rec.created = now;
    BookingEntry placed = rec.entry;
    placed.id = -static_cast<std::int64_t>(accepted.size() + 1);  // later rows must not overlap it
    entries.push_back(placed);
    accepted.push_back(std::move(rec));
  }
  std::sort(errors.begin(), errors.end(), [](const api::RowError& a, const api::RowError& b) { return a.line < b.line; });
  json errs = json::array();
  for (const api::RowError& e : errors) errs.push_back({{"line", e.line}, {"message", e.message}});
  json imported = json::array();
  if (errors.empty() || skip_bad) {
    const std::string actor = caller.Who();
    for (store::BookingRecord& rec : accepted) {
      StatusOr<std::int64_t> id = book_->Add(rec, actor, now);
      if (!id.ok()) return api::ErrorReply(Unavailable("cannot record the bookings: " + id.status().message()));
      rec.entry.id = *id;
      imported.push_back(*id);
    }
    changed_();
    if (!imported.empty()) spdlog::info("imported {} bookings from a CSV by {}", imported.size(), actor);
  }
  json out = api::OkReply();
  out["imported"] = std::move(imported);
  out["errors"] = std::move(errs);
  return out;
}

}  // namespace rota::daemon
