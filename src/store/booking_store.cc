// Bookings in the store (schema v4). Tested by booking_store_test.cc.
#include <nlohmann/json.hpp>

#include "json/bounded.h"
#include "store/db.h"
#include "store/job_store.h"

namespace rota::store {

namespace {

using nlohmann::json;

constexpr std::string_view kBookingColumns =
    "id, user, uid, project, note, tier, request_kind, request_gpus, request_memory, request_mig_profile, "
    "asked_cards, gpu_uuids, mig_uuid, share_memory, start_time, end_time, state, actual_end, reminded, "
    "used, created, decided_by, reason";

StatusOr<std::vector<std::string>> Strings(const std::string& text, std::int64_t id) {
  try {
    StatusOr<json> parsed = ParseBoundedJson(text);
    if (!parsed.ok()) return Internal("booking " + std::to_string(id) + " has a malformed card list: " + text);
    return parsed->get<std::vector<std::string>>();
  } catch (const std::exception&) {
    return Internal("booking " + std::to_string(id) + " has a malformed card list: " + text);
  }
}

StatusOr<BookingRecord> ReadBooking(const Statement& st) {
  BookingRecord r;
  BookingEntry& e = r.entry;
  e.id = st.Int(0);
  e.spec.user = st.Text(1);
  r.uid = st.Int(2);
  e.spec.project = st.Text(3);
  e.spec.note = st.Text(4);
  std::optional<Tier> tier = ParseTier(st.Text(5));
  std::optional<RequestKind> kind = ParseRequestKind(st.Text(6));
  std::optional<BookingState> state = ParseBookingState(st.Text(16));
  if (!tier || !kind || !state) {
    return Internal("booking " + std::to_string(e.id) + " has an unknown tier, request kind or state");
  }
  e.spec.tier = *tier;
  e.spec.request.kind = *kind;
  e.spec.request.gpus = static_cast<int>(st.Int(7));
  e.spec.request.memory = st.Int(8);
  e.spec.request.mig_profile = st.Text(9);
  StatusOr<std::vector<std::string>> asked = Strings(st.Text(10), e.id);
  StatusOr<std::vector<std::string>> held = Strings(st.Text(11), e.id);
  if (!asked.ok()) return asked.status();
  if (!held.ok()) return held.status();
  r.asked_cards = std::move(*asked);
  r.gpu_uuids = std::move(*held);
  r.mig_uuid = st.Text(12);
  e.alloc.memory = st.Int(13);
  e.spec.start = st.Int(14);
  e.spec.end = st.Int(15);
  e.state = *state;
  e.actual_end = st.Int(17);
  e.reminded = st.Int(18) != 0;
  e.used = st.Int(19) != 0;
  r.created = st.Int(20);
  r.decided_by = st.Text(21);
  r.reason = st.Text(22);
  return r;
}

StatusOr<std::vector<BookingRecord>> ReadBookings(Statement& st) {
  std::vector<BookingRecord> out;
  while (true) {
    StatusOr<bool> row = st.Step();
    if (!row.ok()) return row.status();
    if (!*row) return out;
    StatusOr<BookingRecord> r = ReadBooking(st);
    if (!r.ok()) return r.status();
    out.push_back(std::move(*r));
  }
}

Status InsertEvent(Db& db, std::int64_t id, Time now, std::optional<BookingState> from, BookingState to,
                   std::string_view reason, std::string_view actor) {
  StatusOr<Statement> st = db.Prepare(
      "INSERT INTO booking_events (booking_id, time, from_state, to_state, reason, actor) VALUES (?, ?, ?, ?, ?, ?)");
  if (!st.ok()) return st.status();
  st->Bind(1, id).Bind(2, now);
  if (from) {
    st->Bind(3, BookingStateName(*from));
  } else {
    st->BindNull(3);
  }
  return st->Bind(4, BookingStateName(to)).Bind(5, reason).Bind(6, actor).Run();
}

}  // namespace

StatusOr<std::int64_t> JobStore::AddBooking(const BookingRecord& r, std::string_view actor, Time now) {
  const BookingEntry& e = r.entry;
  if (e.spec.user.empty()) return InvalidArgument("a booking needs a user");
  if (e.spec.end <= e.spec.start) return InvalidArgument("a booking must end after it starts");
  if (Status s = Durability(true); !s.ok()) return s;
  Transaction tx(*db_);
  if (Status s = tx.Begin(); !s.ok()) return s;
  StatusOr<Statement> st = db_->Prepare(
      "INSERT INTO bookings (user, uid, project, note, tier, request_kind, request_gpus, request_memory, "
      "request_mig_profile, asked_cards, gpu_uuids, mig_uuid, share_memory, start_time, end_time, state, "
      "actual_end, reminded, used, created, decided_by, reason) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  if (!st.ok()) return st.status();
  st->Bind(1, e.spec.user).Bind(2, r.uid).Bind(3, e.spec.project).Bind(4, e.spec.note).Bind(5, TierName(e.spec.tier));
  st->Bind(6, RequestKindName(e.spec.request.kind)).Bind(7, e.spec.request.gpus).Bind(8, e.spec.request.memory);
  st->Bind(9, e.spec.request.mig_profile).Bind(10, json(r.asked_cards).dump()).Bind(11, json(r.gpu_uuids).dump());
  st->Bind(12, r.mig_uuid).Bind(13, e.alloc.memory).Bind(14, e.spec.start).Bind(15, e.spec.end);
  st->Bind(16, BookingStateName(e.state)).Bind(17, e.actual_end).Bind(18, e.reminded ? 1 : 0).Bind(19, e.used ? 1 : 0);
  st->Bind(20, r.created ? r.created : now).Bind(21, r.decided_by).Bind(22, r.reason);
  if (Status s = st->Run(); !s.ok()) return s;
  const std::int64_t id = db_->LastInsertRowId();
  const std::string why = r.reason.empty() ? "Booked" : "Booked: " + r.reason;
  if (Status s = InsertEvent(*db_, id, now, std::nullopt, e.state, why, actor); !s.ok()) return s;
  if (Status s = tx.Commit(); !s.ok()) return s;
  return id;
}

Status JobStore::UpdateBooking(const BookingRecord& r, std::optional<BookingState> from, std::string_view reason,
                               std::string_view actor, Time now, bool durable) {
  const BookingEntry& e = r.entry;
  if (Status s = Durability(durable); !s.ok()) return s;
  Transaction tx(*db_);
  if (Status s = tx.Begin(); !s.ok()) return s;
  StatusOr<Statement> st = db_->Prepare(
      "UPDATE bookings SET gpu_uuids = ?, mig_uuid = ?, share_memory = ?, start_time = ?, end_time = ?, state = ?, "
      "actual_end = ?, reminded = ?, used = ?, decided_by = ?, reason = ? WHERE id = ?");
  if (!st.ok()) return st.status();
  st->Bind(1, json(r.gpu_uuids).dump()).Bind(2, r.mig_uuid).Bind(3, e.alloc.memory).Bind(4, e.spec.start);
  st->Bind(5, e.spec.end).Bind(6, BookingStateName(e.state)).Bind(7, e.actual_end).Bind(8, e.reminded ? 1 : 0);
  st->Bind(9, e.used ? 1 : 0).Bind(10, r.decided_by).Bind(11, r.reason).Bind(12, e.id);
  if (Status s = st->Run(); !s.ok()) return s;
  if (sqlite3_changes(db_->handle()) == 0) return NotFound("no booking " + std::to_string(e.id));
  if (!reason.empty()) {
    if (Status s = InsertEvent(*db_, e.id, now, from, e.state, reason, actor); !s.ok()) return s;
  }
  return tx.Commit();
}

StatusOr<BookingRecord> JobStore::GetBooking(std::int64_t id) {
  StatusOr<Statement> st =
      db_->Prepare("SELECT " + std::string(kBookingColumns) + " FROM bookings WHERE id = ?");
  if (!st.ok()) return st.status();
  st->Bind(1, id);
  StatusOr<std::vector<BookingRecord>> rows = ReadBookings(*st);
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return NotFound("no booking " + std::to_string(id));
  return std::move(rows->front());
}

StatusOr<std::vector<BookingRecord>> JobStore::LoadBookings(Time since) {
  StatusOr<Statement> st = db_->Prepare("SELECT " + std::string(kBookingColumns) +
                                        " FROM bookings WHERE state IN ('requested', 'confirmed', 'active') "
                                        "OR end_time >= ? OR actual_end >= ? "
                                        "ORDER BY id");
  if (!st.ok()) return st.status();
  st->Bind(1, since).Bind(2, since);
  return ReadBookings(*st);
}

StatusOr<std::vector<BookingRecord>> JobStore::BookingsBetween(Time from, Time to) {
  StatusOr<Statement> st =
      db_->Prepare("SELECT " + std::string(kBookingColumns) +
                   " FROM bookings WHERE start_time < ? AND end_time > ? ORDER BY start_time, id");
  if (!st.ok()) return st.status();
  st->Bind(1, to).Bind(2, from);
  return ReadBookings(*st);
}

StatusOr<std::vector<BookingEvent>> JobStore::BookingEvents(std::int64_t id) {
  StatusOr<Statement> st = db_->Prepare(
      "SELECT time, from_state, to_state, reason, actor FROM booking_events WHERE booking_id = ? ORDER BY id");
  if (!st.ok()) return st.status();
  st->Bind(1, id);
  std::vector<BookingEvent> out;
  while (true) {
    StatusOr<bool> row = st->Step();
    if (!row.ok()) return row.status();
    if (!*row) return out;
    BookingEvent e;
    e.booking_id = id;
    e.time = st->Int(0);
    if (!st->IsNull(1)) e.from = ParseBookingState(st->Text(1));
    e.to = ParseBookingState(st->Text(2)).value_or(BookingState::kRequested);
    e.reason = st->Text(3);
    e.actor = st->Text(4);
    out.push_back(std::move(e));
  }
}

}  // namespace rota::store
