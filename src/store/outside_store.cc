// Runs of a cluster's jobs outside Rota in the store (schema v15). Tested by store_test.cc.
#include <sqlite3.h>

#include "store/db.h"
#include "store/job_store.h"

namespace rota::store {

StatusOr<bool> JobStore::AddOutsideRun(const OutsideRun& run) {
  if (Status s = Durability(false); !s.ok()) return s;
  StatusOr<Statement> st = db_->Prepare(
      "INSERT INTO outside_runs (cluster_job, start_time, end_time, user, gpus) VALUES (?1, ?2, ?3, ?4, ?5) "
      "ON CONFLICT (cluster_job, start_time) DO NOTHING");
  if (!st.ok()) return st.status();
  if (Status s = st->Bind(1, run.cluster_job)
                     .Bind(2, static_cast<std::int64_t>(run.start))
                     .Bind(3, static_cast<std::int64_t>(run.end))
                     .Bind(4, run.user)
                     .Bind(5, run.gpus)
                     .Run();
      !s.ok()) {
    return s;
  }
  return sqlite3_changes(db_->handle()) > 0;
}

StatusOr<std::vector<OutsideRun>> JobStore::OutsideRunsSince(Time since) {
  StatusOr<Statement> st = db_->Prepare(
      "SELECT cluster_job, start_time, end_time, user, gpus FROM outside_runs WHERE end_time >= ?1 "
      "ORDER BY end_time, cluster_job");
  if (!st.ok()) return st.status();
  st->Bind(1, static_cast<std::int64_t>(since));
  std::vector<OutsideRun> out;
  while (true) {
    StatusOr<bool> row = st->Step();
    if (!row.ok()) return row.status();
    if (!*row) return out;
    out.push_back({st->Text(0), st->Text(3), st->Real(4), st->Int(1), st->Int(2)});
  }
}

StatusOr<std::optional<Time>> JobStore::OutsideSeenUntil() {
  StatusOr<Statement> st = db_->Prepare("SELECT value FROM meta WHERE key = 'outside_seen_until'");
  if (!st.ok()) return st.status();
  StatusOr<bool> row = st->Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<Time>();
  return std::optional<Time>(st->Int(0));
}

Status JobStore::SetOutsideSeenUntil(Time until) {
  if (Status s = Durability(false); !s.ok()) return s;
  StatusOr<Statement> st = db_->Prepare(
      "INSERT INTO meta (key, value) VALUES ('outside_seen_until', ?1) "
      "ON CONFLICT (key) DO UPDATE SET value = excluded.value");
  if (!st.ok()) return st.status();
  return st->Bind(1, std::to_string(until)).Run();
}

}  // namespace rota::store
