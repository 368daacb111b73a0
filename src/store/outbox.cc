// Tested by outbox_test.cc.
//
// Design: the updates name `state = 'pending'` in their WHERE clause, so a row that another path
// already settled is never changed twice (a late answer for a row given up on stays failed).
// Mentions are a JSON array, like the job table's lists.
#include "store/outbox.h"

#include <functional>
#include <nlohmann/json.hpp>

#include "json/bounded.h"

namespace rota::store {

namespace {

constexpr std::string_view kOutboxColumns =
    "id, channel, recipient, mentions, event, language, subject, body, created, attempts, next_attempt, "
    "last_error, state, delivered";

OutboxRow ReadOutboxRow(const Statement& st) {
  OutboxRow r;
  r.id = st.Int(0);
  r.channel = st.Text(1);
  r.recipient = st.Text(2);
  StatusOr<nlohmann::json> m = ParseBoundedJson(st.Text(3));
  if (m.ok() && m->is_array()) {
    for (const auto& v : *m) {
      if (v.is_string()) r.mentions.push_back(v.get<std::string>());
    }
  }
  r.event = st.Text(4);
  r.language = st.Text(5);
  r.subject = st.Text(6);
  r.body = st.Text(7);
  r.created = st.Int(8);
  r.attempts = static_cast<int>(st.Int(9));
  r.next_attempt = st.Int(10);
  r.last_error = st.Text(11);
  r.state = OutboxStateFromName(st.Text(12)).value_or(OutboxState::kPending);
  r.delivered = st.OptionalInt(13);
  return r;
}

}  // namespace

const char* OutboxStateName(OutboxState s) {
  switch (s) {
    case OutboxState::kPending:
      return "pending";
    case OutboxState::kSent:
      return "sent";
    case OutboxState::kFailed:
      return "failed";
  }
  return "pending";
}

std::optional<OutboxState> OutboxStateFromName(std::string_view name) {
  for (OutboxState s : {OutboxState::kPending, OutboxState::kSent, OutboxState::kFailed}) {
    if (name == OutboxStateName(s)) return s;
  }
  return std::nullopt;
}

StatusOr<std::vector<std::int64_t>> Outbox::Enqueue(const std::vector<OutboxRow>& rows) {
  std::vector<std::int64_t> ids;
  if (rows.empty()) return ids;
  Transaction tx(db_);
  if (Status s = tx.Begin(); !s.ok()) return s;
  StatusOr<Statement> st = db_.Prepare(
      "INSERT INTO outbox (channel, recipient, mentions, event, language, subject, body, created, "
      "next_attempt) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
  if (!st.ok()) return st.status();
  for (const OutboxRow& r : rows) {
    st->Reset();
    st->Bind(1, r.channel)
        .Bind(2, r.recipient)
        .Bind(3, nlohmann::json(r.mentions).dump())
        .Bind(4, r.event)
        .Bind(5, r.language)
        .Bind(6, r.subject)
        .Bind(7, r.body)
        .Bind(8, static_cast<std::int64_t>(r.created))
        .Bind(9, static_cast<std::int64_t>(r.next_attempt));
    if (Status s = st->Run(); !s.ok()) return s;
    ids.push_back(db_.LastInsertRowId());
  }
  if (Status s = tx.Commit(); !s.ok()) return s;
  return ids;
}

StatusOr<std::vector<OutboxRow>> Outbox::Select(std::string_view where,
                                                const std::function<void(Statement&)>& bind) {
  StatusOr<Statement> st =
      db_.Prepare("SELECT " + std::string(kOutboxColumns) + " FROM outbox " + std::string(where));
  if (!st.ok()) return st.status();
  bind(*st);
  std::vector<OutboxRow> rows;
  while (true) {
    StatusOr<bool> row = st->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    rows.push_back(ReadOutboxRow(*st));
  }
  return rows;
}

StatusOr<std::vector<OutboxRow>> Outbox::Due(Time now, int limit) {
  return Select("WHERE state = 'pending' AND next_attempt <= ?1 ORDER BY next_attempt, id LIMIT ?2",
                [&](Statement& st) { st.Bind(1, static_cast<std::int64_t>(now)).Bind(2, limit); });
}

StatusOr<std::optional<Time>> Outbox::NextDue() {
  StatusOr<Statement> st = db_.Prepare("SELECT MIN(next_attempt) FROM outbox WHERE state = 'pending'");
  if (!st.ok()) return st.status();
  StatusOr<bool> row = st->Step();
  if (!row.ok()) return row.status();
  if (!*row || st->IsNull(0)) return std::optional<Time>();
  return std::optional<Time>(st->Int(0));
}

Status Outbox::UpdatePending(std::string_view sql, std::int64_t id, std::string_view what,
                             const std::function<void(Statement&)>& bind) {
  StatusOr<Statement> st = db_.Prepare(sql);
  if (!st.ok()) return st.status();
  bind(*st);
  st->Bind(1, id);
  if (Status s = st->Run(); !s.ok()) return s;
  if (sqlite3_changes(db_.handle()) == 0) {
    return NotFound("outbox row " + std::to_string(id) + " is not pending (" + std::string(what) + ")");
  }
  return Status();
}

Status Outbox::MarkSent(std::int64_t id, int attempts, Time now) {
  return UpdatePending(
      "UPDATE outbox SET state = 'sent', attempts = ?2, delivered = ?3, last_error = '' "
      "WHERE id = ?1 AND state = 'pending'",
      id, "marking it sent",
      [&](Statement& st) { st.Bind(2, attempts).Bind(3, static_cast<std::int64_t>(now)); });
}

Status Outbox::Retry(std::int64_t id, int attempts, Time next_attempt, const std::string& error) {
  return UpdatePending(
      "UPDATE outbox SET attempts = ?2, next_attempt = ?3, last_error = ?4 WHERE id = ?1 AND state = "
      "'pending'",
      id, "retrying it", [&](Statement& st) {
        st.Bind(2, attempts).Bind(3, static_cast<std::int64_t>(next_attempt)).Bind(4, error);
      });
}

Status Outbox::Defer(std::int64_t id, Time next_attempt) {
  return UpdatePending("UPDATE outbox SET next_attempt = ?2 WHERE id = ?1 AND state = 'pending'", id,
                       "deferring it",
                       [&](Statement& st) { st.Bind(2, static_cast<std::int64_t>(next_attempt)); });
}

Status Outbox::MarkFailed(std::int64_t id, int attempts, const std::string& error) {
  return UpdatePending(
      "UPDATE outbox SET state = 'failed', attempts = ?2, last_error = ?3 WHERE id = ?1 AND state = "
      "'pending'",
      id, "giving up on it", [&](Statement& st) { st.Bind(2, attempts).Bind(3, error); });
}

StatusOr<OutboxRow> Outbox::Get(std::int64_t id) {
  StatusOr<std::vector<OutboxRow>> rows = Select("WHERE id = ?1", [&](Statement& st) { st.Bind(1, id); });
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return NotFound("no outbox row " + std::to_string(id));
  return std::move(rows->front());
}

StatusOr<std::vector<OutboxRow>> Outbox::List(std::optional<OutboxState> state) {
  if (!state) return Select("ORDER BY id", [](Statement&) {});
  return Select("WHERE state = ?1 ORDER BY id", [&](Statement& st) { st.Bind(1, OutboxStateName(*state)); });
}

StatusOr<std::vector<OutboxRow>> Outbox::Recent(Time since, std::optional<OutboxState> state, int limit) {
  return Select("WHERE created >= ?1 AND (?2 IS NULL OR state = ?2) ORDER BY id DESC LIMIT ?3", [&](Statement& st) {
    st.Bind(1, static_cast<std::int64_t>(since)).Bind(3, limit);
    if (state) {
      st.Bind(2, OutboxStateName(*state));
    } else {
      st.BindNull(2);
    }
  });
}

StatusOr<std::map<std::string, std::int64_t>> Outbox::Counts(std::string_view sql) {
  StatusOr<Statement> st = db_.Prepare(sql);
  if (!st.ok()) return st.status();
  std::map<std::string, std::int64_t> out;
  while (true) {
    StatusOr<bool> row = st->Step();
    if (!row.ok()) return row.status();
    if (!*row) return out;
    out[st->Text(0)] += st->Int(1);
  }
}

StatusOr<std::map<std::string, std::int64_t>> Outbox::CountByState() {
  return Counts("SELECT state, count(*) FROM outbox GROUP BY state");
}

// The pruned totals are meta rows "outbox_pruned_sent" and "outbox_pruned_failed".
StatusOr<std::int64_t> Outbox::Prune(Time before) {
  Transaction tx(db_);
  if (Status s = tx.Begin(); !s.ok()) return s;
  StatusOr<Statement> add = db_.Prepare(
      "INSERT INTO meta (key, value) "
      "SELECT 'outbox_pruned_' || state, count(*) FROM outbox WHERE state <> 'pending' AND created < ?1 "
      "GROUP BY state "
      "ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + CAST(excluded.value AS INTEGER)");
  if (!add.ok()) return add.status();
  add->Bind(1, static_cast<std::int64_t>(before));
  if (Status s = add->Run(); !s.ok()) return s;
  StatusOr<Statement> del = db_.Prepare("DELETE FROM outbox WHERE state <> 'pending' AND created < ?1");
  if (!del.ok()) return del.status();
  del->Bind(1, static_cast<std::int64_t>(before));
  if (Status s = del->Run(); !s.ok()) return s;
  const std::int64_t deleted = sqlite3_changes(db_.handle());
  if (Status s = tx.Commit(); !s.ok()) return s;
  return deleted;
}

StatusOr<std::map<std::string, std::int64_t>> Outbox::SettledTotals() {
  return Counts(
      "SELECT state, count(*) FROM outbox WHERE state <> 'pending' GROUP BY state "
      "UNION ALL SELECT substr(key, 15), CAST(value AS INTEGER) FROM meta "
      "WHERE key IN ('outbox_pruned_sent', 'outbox_pruned_failed')");
}

}  // namespace rota::store
