// The GPUs' drains and audit trail in the store (schema v3). Tested by gpu_state_test.cc.
#include "store/db.h"
#include "store/job_store.h"

namespace rota::store {

namespace {

const char* KindName(GpuDrain::Kind kind) { return kind == GpuDrain::Kind::kAdmin ? "admin" : "health"; }

Status InsertEvent(Db& db, const GpuEvent& e) {
  StatusOr<Statement> st =
      db.Prepare("INSERT INTO gpu_events (time, uuid, gpu_index, event, reason, actor) VALUES (?, ?, ?, ?, ?, ?)");
  if (!st.ok()) return st.status();
  return st->Bind(1, e.time).Bind(2, e.uuid).Bind(3, e.gpu_index).Bind(4, e.event).Bind(5, e.reason).Bind(6, e.actor).Run();
}

}  // namespace

Status JobStore::SaveDrain(const GpuDrain& d, int gpu_index) {
  if (Status s = Durability(d.kind == GpuDrain::Kind::kAdmin); !s.ok()) return s;
  Transaction tx(*db_);
  if (Status s = tx.Begin(); !s.ok()) return s;
  StatusOr<Statement> st = db_->Prepare(
      "INSERT OR REPLACE INTO gpu_drains (uuid, kind, actor, reason, since) VALUES (?, ?, ?, ?, ?)");
  if (!st.ok()) return st.status();
  if (Status s = st->Bind(1, d.uuid).Bind(2, KindName(d.kind)).Bind(3, d.actor).Bind(4, d.reason).Bind(5, d.since).Run();
      !s.ok()) {
    return s;
  }
  const char* event = d.kind == GpuDrain::Kind::kAdmin ? "drain" : "drained";
  if (Status s = InsertEvent(*db_, {d.since, d.uuid, gpu_index, event, d.reason, d.actor}); !s.ok()) return s;
  return tx.Commit();
}

Status JobStore::RemoveDrain(std::string_view uuid, GpuDrain::Kind kind, int gpu_index, std::string_view actor,
                             std::string_view reason, Time now) {
  if (Status s = Durability(kind == GpuDrain::Kind::kAdmin); !s.ok()) return s;
  Transaction tx(*db_);
  if (Status s = tx.Begin(); !s.ok()) return s;
  StatusOr<Statement> st = db_->Prepare("DELETE FROM gpu_drains WHERE uuid = ? AND kind = ?");
  if (!st.ok()) return st.status();
  if (Status s = st->Bind(1, uuid).Bind(2, KindName(kind)).Run(); !s.ok()) return s;
  const char* event = kind == GpuDrain::Kind::kAdmin ? "resume" : "healthy";
  GpuEvent e{now, std::string(uuid), gpu_index, event, std::string(reason), std::string(actor)};
  if (Status s = InsertEvent(*db_, e); !s.ok()) return s;
  return tx.Commit();
}

StatusOr<std::vector<GpuDrain>> JobStore::LoadDrains() {
  StatusOr<Statement> st = db_->Prepare("SELECT uuid, kind, actor, reason, since FROM gpu_drains ORDER BY since, uuid");
  if (!st.ok()) return st.status();
  std::vector<GpuDrain> out;
  while (true) {
    StatusOr<bool> row = st->Step();
    if (!row.ok()) return row.status();
    if (!*row) return out;
    GpuDrain d;
    d.uuid = st->Text(0);
    d.kind = st->Text(1) == "admin" ? GpuDrain::Kind::kAdmin : GpuDrain::Kind::kHealth;
    d.actor = st->Text(2);
    d.reason = st->Text(3);
    d.since = st->Int(4);
    out.push_back(std::move(d));
  }
}

Status JobStore::AddGpuEvent(const GpuEvent& event) {
  if (Status s = Durability(false); !s.ok()) return s;
  return InsertEvent(*db_, event);
}

StatusOr<std::vector<GpuEvent>> JobStore::GpuEvents(std::string_view uuid) {
  StatusOr<Statement> st = db_->Prepare(
      "SELECT time, uuid, gpu_index, event, reason, actor FROM gpu_events WHERE ? = '' OR uuid = ? ORDER BY id");
  if (!st.ok()) return st.status();
  st->Bind(1, uuid).Bind(2, uuid);
  std::vector<GpuEvent> out;
  while (true) {
    StatusOr<bool> row = st->Step();
    if (!row.ok()) return row.status();
    if (!*row) return out;
    out.push_back({st->Int(0), st->Text(1), static_cast<int>(st->Int(2)), st->Text(3), st->Text(4), st->Text(5)});
  }
}

StatusOr<std::vector<AuditEvent>> JobStore::AuditEvents(Time since, std::int64_t job, int limit) {
  // The newest `limit` rows, returned oldest first.
  StatusOr<Statement> st = db_->Prepare(
      "SELECT * FROM ("
      " SELECT e.time AS time, 'job' AS kind, e.job_id AS id, j.user AS owner, e.from_state AS from_state,"
      "        e.to_state AS to_state, e.reason AS reason, e.actor AS actor, e.id AS seq"
      " FROM job_events e JOIN jobs j ON j.id = e.job_id WHERE e.time >= ?1 AND (?2 = 0 OR e.job_id = ?2)"
      " UNION ALL"
      " SELECT e.time, 'booking', e.booking_id, b.user, e.from_state, e.to_state, e.reason, e.actor, e.id"
      " FROM booking_events e JOIN bookings b ON b.id = e.booking_id WHERE e.time >= ?1 AND ?2 = 0"
      " UNION ALL"
      " SELECT time, 'gpu', gpu_index, '', NULL, event, reason, actor, id FROM gpu_events WHERE time >= ?1 AND ?2 = 0"
      " ORDER BY time DESC, seq DESC LIMIT ?3) ORDER BY time, kind, seq");
  if (!st.ok()) return st.status();
  st->Bind(1, since).Bind(2, job).Bind(3, limit);
  std::vector<AuditEvent> out;
  while (true) {
    StatusOr<bool> row = st->Step();
    if (!row.ok()) return row.status();
    if (!*row) return out;
    out.push_back({st->Int(0), st->Text(1), st->Int(2), st->Text(3), st->Text(4), st->Text(5), st->Text(6),
                   st->Text(7)});
  }
}

}  // namespace rota::store
