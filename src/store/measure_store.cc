// The jobs' measured GPU use in the store (schema v5). Tested by measure_store_test.cc.
#include "store/db.h"
#include "store/job_store.h"

namespace rota::store {

Status JobStore::AddJobMeasures(JobId id, const JobMeasures& m) {
  if (Status s = Durability(false); !s.ok()) return s;
  StatusOr<Statement> st = db_->Prepare(
      "INSERT INTO job_measures (job_id, measured_gpu_seconds, busy_gpu_seconds, idle_gpu_seconds) "
      "VALUES (?1, ?2, ?3, ?4) ON CONFLICT (job_id) DO UPDATE SET "
      "measured_gpu_seconds = measured_gpu_seconds + excluded.measured_gpu_seconds, "
      "busy_gpu_seconds = busy_gpu_seconds + excluded.busy_gpu_seconds, "
      "idle_gpu_seconds = idle_gpu_seconds + excluded.idle_gpu_seconds");
  if (!st.ok()) return st.status();
  return st->Bind(1, static_cast<std::int64_t>(id))
      .Bind(2, m.measured_gpu_seconds)
      .Bind(3, m.busy_gpu_seconds)
      .Bind(4, m.idle_gpu_seconds)
      .Run();
}

StatusOr<std::map<JobId, JobMeasures>> JobStore::LoadJobMeasures(Time since) {
  StatusOr<Statement> st = db_->Prepare(
      "SELECT m.job_id, m.measured_gpu_seconds, m.busy_gpu_seconds, m.idle_gpu_seconds "
      "FROM job_measures m JOIN jobs j ON j.id = m.job_id "
      "WHERE j.end_time IS NULL OR j.end_time >= ?1");
  if (!st.ok()) return st.status();
  st->Bind(1, static_cast<std::int64_t>(since));
  std::map<JobId, JobMeasures> out;
  while (true) {
    StatusOr<bool> row = st->Step();
    if (!row.ok()) return row.status();
    if (!*row) return out;
    out[static_cast<JobId>(st->Int(0))] = JobMeasures{st->Real(1), st->Real(2), st->Real(3)};
  }
}

}  // namespace rota::store
