// Tested by store_test.cc.
//
// Design: each mutating call is "BEGIN IMMEDIATE; read the state; check the transition; update
// the row; append the event; COMMIT", so the row and its audit trail can never disagree and a
// failure at any point (disk full, read-only file) leaves both as they were. Reading the state
// inside the write transaction makes check-then-write atomic even with a second writer.
// Lists (after, after_ok, command, GPU indices and UUIDs) and the environment are JSON text in their
// columns: they are always read and written whole, never queried by element. kill_at = kNever,
// start and end times that did not happen, and unknown pids are stored as NULL.
#include "store/job_store.h"

#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>
#include <utility>

#include "json/bounded.h"
#include "store/schema.h"

namespace rota::store {

namespace {

using nlohmann::json;

constexpr std::string_view kJobColumns =
    "id, user, uid, project, name, tier, request_kind, request_gpus, request_memory, request_mig_profile, "
    "time_limit, submit_time, after_jobs, signal, grace, requeue, host_mem_per_gpu, command, cwd, env, "
    "output, state, start_time, end_time, alloc_gpus, alloc_gpu_uuids, alloc_mig, alloc_mig_uuid, "
    "alloc_memory, exit_code, end_reason, preemptible, from_pool, signalled, kill_at, preempted, pid, "
    "pgid, cgroup, interactive, after_ok_jobs, engine_job, image, deadline, forecast_at, forecast_start, promise";

const char* AccountKindName(AccountKind kind) { return kind == AccountKind::kUser ? "user" : "project"; }

template <typename T>
std::string ToJson(const T& value) {
  return json(value).dump();
}

// Parses a JSON array of integers or strings (T) from a column; `what` names it for errors.
template <typename T>
StatusOr<std::vector<T>> ParseList(const std::string& text, JobId id, const char* what) {
  StatusOr<json> parsed = ParseBoundedJson(text);
  const json j = parsed.ok() ? std::move(*parsed) : json();
  std::vector<T> out;
  bool ok = j.is_array();
  for (size_t i = 0; ok && i < j.size(); ++i) {
    if constexpr (std::is_same_v<T, std::string>) {
      ok = j[i].is_string();
      if (ok) out.push_back(j[i].template get<std::string>());
    } else {
      ok = j[i].is_number_integer();
      if (ok) out.push_back(j[i].template get<T>());
    }
  }
  if (!ok) return Internal("job " + std::to_string(id) + " has a malformed " + what + " column: " + text);
  return out;
}

StatusOr<std::map<std::string, std::string>> ParseEnv(const std::string& text, JobId id) {
  StatusOr<json> parsed = ParseBoundedJson(text);
  const json j = parsed.ok() ? std::move(*parsed) : json();
  std::map<std::string, std::string> out;
  bool ok = j.is_object();
  if (ok) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (!it.value().is_string()) {
        ok = false;
        break;
      }
      out[it.key()] = it.value().get<std::string>();
    }
  }
  if (!ok) return Internal("job " + std::to_string(id) + " has a malformed env column: " + text);
  return out;
}

// Decodes the current row of a SELECT of kJobColumns.
StatusOr<JobRecord> ReadJob(const Statement& st) {
  JobRecord r;
  Job& j = r.job;
  j.id = st.Int(0);
  j.user = st.Text(1);
  r.uid = st.Int(2);
  j.project = st.Text(3);
  j.name = st.Text(4);
  std::optional<Tier> tier = ParseTier(st.Text(5));
  std::optional<RequestKind> kind = ParseRequestKind(st.Text(6));
  std::optional<JobState> state = ParseJobState(st.Text(21));
  if (!tier || !kind || !state) {
    return Internal("job " + std::to_string(j.id) + " has an unknown tier, request kind or state");
  }
  j.tier = *tier;
  j.request.kind = *kind;
  j.request.gpus = static_cast<int>(st.Int(7));
  j.request.memory = st.Int(8);
  j.request.mig_profile = st.Text(9);
  j.time_limit = st.Int(10);
  j.submit_time = st.Int(11);
  StatusOr<std::vector<JobId>> after = ParseList<JobId>(st.Text(12), j.id, "after_jobs");
  if (!after.ok()) return after.status();
  j.after = std::move(*after);
  j.signal = static_cast<int>(st.Int(13));
  j.grace = st.Int(14);
  j.requeue = st.Int(15) != 0;
  j.host_mem_per_gpu = st.Int(16);
  StatusOr<std::vector<std::string>> command = ParseList<std::string>(st.Text(17), j.id, "command");
  if (!command.ok()) return command.status();
  r.command = std::move(*command);
  r.cwd = st.Text(18);
  StatusOr<std::map<std::string, std::string>> env = ParseEnv(st.Text(19), j.id);
  if (!env.ok()) return env.status();
  r.env = std::move(*env);
  r.output = st.Text(20);
  r.state = *state;
  r.start_time = st.OptionalInt(22).value_or(0);
  r.end_time = st.OptionalInt(23).value_or(0);
  StatusOr<std::vector<int>> gpus = ParseList<int>(st.Text(24), j.id, "alloc_gpus");
  if (!gpus.ok()) return gpus.status();
  r.placement.alloc.gpus = std::move(*gpus);
  StatusOr<std::vector<std::string>> uuids = ParseList<std::string>(st.Text(25), j.id, "alloc_gpu_uuids");
  if (!uuids.ok()) return uuids.status();
  r.placement.gpu_uuids = std::move(*uuids);
  r.placement.alloc.mig = static_cast<int>(st.Int(26));
  r.placement.mig_uuid = st.Text(27);
  r.placement.alloc.memory = st.Int(28);
  if (std::optional<std::int64_t> code = st.OptionalInt(29)) r.exit_code = static_cast<int>(*code);
  r.end_reason = st.Text(30);
  r.preemptible = st.Int(31) != 0;
  r.from_pool = st.Int(32) != 0;
  r.signalled = st.Int(33) != 0;
  r.kill_at = st.OptionalInt(34).value_or(kNever);
  r.preempted = st.Int(35) != 0;
  r.pid = st.OptionalInt(36).value_or(0);
  r.pgid = st.OptionalInt(37).value_or(0);
  r.cgroup = st.Text(38);
  r.interactive = st.Int(39) != 0;
  StatusOr<std::vector<JobId>> after_ok = ParseList<JobId>(st.Text(40), j.id, "after_ok_jobs");
  if (!after_ok.ok()) return after_ok.status();
  j.after_ok = std::move(*after_ok);
  r.engine_job = st.Text(41);
  r.image = st.Text(42);
  r.deadline = st.Int(43);
  r.forecast_at = st.Int(44);
  r.forecast_start = st.Int(45);
  j.promise = st.Int(46) == 0 ? kNever : st.Int(46);
  return r;
}

std::optional<std::int64_t> NullIfZero(std::int64_t v) {
  return v == 0 ? std::nullopt : std::optional<std::int64_t>(v);
}

// The job's state; NotFound for an unknown id. Call inside the write transaction.
StatusOr<JobState> ReadState(Db& db, JobId id) {
  StatusOr<Statement> st = db.Prepare("SELECT state FROM jobs WHERE id = ?1");
  if (!st.ok()) return st.status();
  StatusOr<bool> row = st->Bind(1, id).Step();
  if (!row.ok()) return row.status();
  if (!*row) return NotFound("no job " + std::to_string(id));
  std::optional<JobState> state = ParseJobState(st->Text(0));
  if (!state) return Internal("job " + std::to_string(id) + " has unknown state '" + st->Text(0) + "'");
  return *state;
}

Status AddEvent(Db& db, JobId id, Time now, std::optional<JobState> from, JobState to,
                std::string_view reason, std::string_view actor) {
  StatusOr<Statement> st = db.Prepare(
      "INSERT INTO job_events (job_id, time, from_state, to_state, reason, actor) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  if (!st.ok()) return st.status();
  st->Bind(1, id).Bind(2, now).Bind(4, JobStateName(to)).Bind(5, reason).Bind(6, actor);
  if (from) {
    st->Bind(3, JobStateName(*from));
  } else {
    st->BindNull(3);
  }
  return st->Run();
}

Status WrongState(JobId id, JobState state, const char* expected, const char* action) {
  return FailedPrecondition("job " + std::to_string(id) + " is " + JobStateName(state) + ", not " + expected +
                            ": cannot " + action + " it");
}

// Runs one checked transition: in a write transaction, requires the job to be in `from`, runs
// `update` (which changes the row), appends the event `from -> to`, commits.
template <typename Update>
Status Transition(Db& db, JobId id, JobState from, JobState to, const char* action, std::string_view reason,
                  std::string_view actor, Time now, Update update) {
  Transaction tx(db);
  if (Status s = tx.Begin(); !s.ok()) return s;
  StatusOr<JobState> state = ReadState(db, id);
  if (!state.ok()) return state.status();
  if (*state != from) return WrongState(id, *state, JobStateName(from), action);
  if (Status s = update(); !s.ok()) return s;
  if (Status s = AddEvent(db, id, now, from, to, reason, actor); !s.ok()) return s;
  return tx.Commit();
}

}  // namespace

StatusOr<std::unique_ptr<JobStore>> JobStore::Open(const std::string& path) {
  StatusOr<std::unique_ptr<Db>> db = Db::Open(path);
  if (!db.ok()) return db.status();
  if (Status s = Migrate(**db); !s.ok()) return s;
  return std::unique_ptr<JobStore>(new JobStore(std::move(*db)));
}

namespace {

// Inserts one new pending job and its "Submitted" event. REQUIRES: inside a write transaction.
StatusOr<JobId> InsertJob(Db& db, const JobRecord& record, Time now) {
  const Job& j = record.job;
  if (j.user.empty()) return InvalidArgument("a job needs a user");
  if (record.command.empty()) return InvalidArgument("a job needs a command");
  StatusOr<Statement> st = db.Prepare(
      "INSERT INTO jobs (user, uid, project, name, tier, request_kind, request_gpus, request_memory, "
      "request_mig_profile, time_limit, submit_time, after_jobs, signal, grace, requeue, host_mem_per_gpu, "
      "command, cwd, env, output, interactive, after_ok_jobs, image, deadline, state) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, "
      "?21, ?22, ?23, ?24, 'pending')");
  if (!st.ok()) return st.status();
  st->Bind(1, j.user).Bind(2, record.uid).Bind(3, j.project).Bind(4, j.name).Bind(5, TierName(j.tier));
  st->Bind(6, RequestKindName(j.request.kind)).Bind(7, j.request.gpus).Bind(8, j.request.memory);
  st->Bind(9, j.request.mig_profile).Bind(10, j.time_limit).Bind(11, now).Bind(12, ToJson(j.after));
  st->Bind(13, j.signal).Bind(14, j.grace).Bind(15, j.requeue ? 1 : 0).Bind(16, j.host_mem_per_gpu);
  st->Bind(17, ToJson(record.command)).Bind(18, record.cwd).Bind(19, ToJson(record.env));
  st->Bind(20, record.output).Bind(21, record.interactive ? 1 : 0).Bind(22, ToJson(j.after_ok));
  st->Bind(23, record.image).Bind(24, record.deadline);
  if (Status s = st->Run(); !s.ok()) return s;
  const JobId id = db.LastInsertRowId();
  if (Status s = AddEvent(db, id, now, std::nullopt, JobState::kPending, "Submitted", j.user); !s.ok()) return s;
  return id;
}

}  // namespace

Status JobStore::Durability(bool full) {
  if (full == full_sync_) return Status();
  if (Status s = db_->Run(full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL"); !s.ok()) return s;
  full_sync_ = full;
  return Status();
}

StatusOr<JobId> JobStore::Submit(const JobRecord& record, Time now) {
  StatusOr<std::vector<JobId>> ids = SubmitMany({record}, now);
  if (!ids.ok()) return ids.status();
  return ids->front();
}

StatusOr<std::vector<JobId>> JobStore::SubmitMany(const std::vector<JobRecord>& records, Time now) {
  for (const JobRecord& r : records) {
    if (r.job.user.empty()) return InvalidArgument("a job needs a user");
    if (r.command.empty()) return InvalidArgument("a job needs a command");
  }
  if (Status s = Durability(true); !s.ok()) return s;
  Transaction tx(*db_);
  if (Status s = tx.Begin(); !s.ok()) return s;
  std::vector<JobId> ids;
  ids.reserve(records.size());
  for (const JobRecord& r : records) {
    StatusOr<JobId> id = InsertJob(*db_, r, now);
    if (!id.ok()) return id.status();
    ids.push_back(*id);
  }
  if (Status s = tx.Commit(); !s.ok()) return s;
  return ids;
}

Status JobStore::MarkStarted(JobId id, const StartInfo& start, Time now) {
  if (Status s = Durability(false); !s.ok()) return s;
  const Placement& p = start.placement;
  if (p.gpu_uuids.size() != p.alloc.gpus.size()) {
    return InvalidArgument("job " + std::to_string(id) + ": " + std::to_string(p.alloc.gpus.size()) +
                           " GPUs but " + std::to_string(p.gpu_uuids.size()) + " GPU UUIDs");
  }
  return Transition(*db_, id, JobState::kPending, JobState::kRunning, "start", start.reason, "rotad", now, [&] {
    StatusOr<Statement> st = db_->Prepare(
        "UPDATE jobs SET state = 'running', start_time = ?2, alloc_gpus = ?3, alloc_gpu_uuids = ?4, "
        "alloc_mig = ?5, alloc_mig_uuid = ?6, alloc_memory = ?7, preemptible = ?8, from_pool = ?9, "
        "signalled = 0, kill_at = NULL, preempted = 0, pid = ?10, pgid = ?11, cgroup = ?12 WHERE id = ?1");
    if (!st.ok()) return st.status();
    st->Bind(1, id).Bind(2, now).Bind(3, ToJson(p.alloc.gpus)).Bind(4, ToJson(p.gpu_uuids));
    st->Bind(5, p.alloc.mig).Bind(6, p.mig_uuid).Bind(7, p.alloc.memory).Bind(8, start.preemptible ? 1 : 0);
    st->Bind(9, start.from_pool ? 1 : 0).Bind(10, NullIfZero(start.pid)).Bind(11, NullIfZero(start.pgid));
    st->Bind(12, start.cgroup);
    return st->Run();
  });
}

Status JobStore::MarkSignalled(JobId id, Time kill_at, bool preempted, Time now) {
  if (Status s = Durability(false); !s.ok()) return s;
  // The kill's time as a span from now: the store knows no zone to print a time in (before, the
  // history said "kill at 1796687388").
  std::string reason = std::string(preempted ? "Signalled for preemption" : "Signalled for time limit") +
                       (kill_at > now ? ", killed in " + FormatDuration(kill_at - now) : ", killed now") +
                       " if still running";
  return Transition(*db_, id, JobState::kRunning, JobState::kRunning, "signal", reason, "rotad", now, [&] {
    StatusOr<Statement> st =
        db_->Prepare("UPDATE jobs SET signalled = 1, kill_at = ?2, preempted = ?3 WHERE id = ?1");
    if (!st.ok()) return st.status();
    return st->Bind(1, id).Bind(2, kill_at).Bind(3, preempted ? 1 : 0).Run();
  });
}

Status JobStore::MarkCancelRequested(JobId id, std::string_view actor, Time now) {
  if (Status s = Durability(true); !s.ok()) return s;
  const std::string reason = std::string(kCancelRequested) + std::string(actor);
  return Transition(*db_, id, JobState::kRunning, JobState::kRunning, "cancel", reason, actor, now,
                    [] { return Status(); });
}

Status JobStore::NoteJob(JobId id, std::string_view reason, std::string_view actor, Time now) {
  if (Status s = Durability(false); !s.ok()) return s;
  StatusOr<JobState> state = ReadState(*db_, id);
  if (!state.ok()) return state.status();
  if (*state != JobState::kPending && *state != JobState::kRunning) {
    return WrongState(id, *state, "pending or running", "note");
  }
  return Transition(*db_, id, *state, *state, "note", reason, actor, now, [] { return Status(); });
}

Status JobStore::SetEngineJob(JobId id, std::string_view engine_job, Time now) {
  if (Status s = Durability(false); !s.ok()) return s;
  StatusOr<JobState> state = ReadState(*db_, id);
  if (!state.ok()) return state.status();
  if (*state != JobState::kRunning) return WrongState(id, *state, "running", "name its run");
  return Transition(*db_, id, *state, *state, "note", "Runs as " + std::string(engine_job), "rotad", now, [&] {
    StatusOr<Statement> st = db_->Prepare("UPDATE jobs SET engine_job = ?2 WHERE id = ?1");
    if (!st.ok()) return st.status();
    st->Bind(1, id);
    st->Bind(2, engine_job);
    return st->Run();
  });
}

Status JobStore::SetForecast(JobId id, Time at, Time start) {
  if (Status s = Durability(false); !s.ok()) return s;
  StatusOr<Statement> st =
      db_->Prepare("UPDATE jobs SET forecast_at = ?2, forecast_start = ?3 WHERE id = ?1 AND state = 'pending'");
  if (!st.ok()) return st.status();
  st->Bind(1, id).Bind(2, at).Bind(3, start);
  return st->Run();
}

Status JobStore::SetPromise(JobId id, Time promise) {
  if (Status s = Durability(false); !s.ok()) return s;
  StatusOr<Statement> st = db_->Prepare("UPDATE jobs SET promise = ?2 WHERE id = ?1 AND state = 'pending'");
  if (!st.ok()) return st.status();
  st->Bind(1, id).Bind(2, promise);
  return st->Run();
}

Status JobStore::MovePlacement(JobId id, const Placement& p, std::string_view reason, Time now) {
  if (Status s = Durability(false); !s.ok()) return s;
  if (p.gpu_uuids.size() != p.alloc.gpus.size()) {
    return InvalidArgument("job " + std::to_string(id) + ": " + std::to_string(p.alloc.gpus.size()) +
                           " GPUs but " + std::to_string(p.gpu_uuids.size()) + " GPU UUIDs");
  }
  return Transition(*db_, id, JobState::kRunning, JobState::kRunning, "note", reason, "rotad", now, [&] {
    StatusOr<Statement> st = db_->Prepare(
        "UPDATE jobs SET alloc_gpus = ?2, alloc_gpu_uuids = ?3, alloc_mig = ?4, alloc_mig_uuid = ?5 WHERE id = ?1");
    if (!st.ok()) return st.status();
    st->Bind(1, id).Bind(2, ToJson(p.alloc.gpus)).Bind(3, ToJson(p.gpu_uuids)).Bind(4, p.alloc.mig);
    st->Bind(5, p.mig_uuid);
    return st->Run();
  });
}

StatusOr<std::string> JobStore::CancelRequestedBy(JobId id) {
  StatusOr<std::vector<JobEvent>> events = Events(id);
  if (!events.ok()) return events.status();
  std::string by;
  for (const JobEvent& e : *events) {
    if (e.to == JobState::kPending) by.clear();  // requeued since: that request is spent
    if (e.from == JobState::kRunning && e.to == JobState::kRunning && e.reason.rfind(kCancelRequested, 0) == 0) {
      by = e.reason.substr(kCancelRequested.size());
    }
  }
  return by;
}

Status JobStore::MarkEnded(JobId id, JobState state, std::optional<int> exit_code, std::string_view reason,
                           Time now, std::string_view actor) {
  if (Status s = Durability(false); !s.ok()) return s;
  if (!IsFinal(state)) {
    return InvalidArgument("job " + std::to_string(id) + ": " + JobStateName(state) +
                           " is not a final state");
  }
  return Transition(*db_, id, JobState::kRunning, state, "end", reason, actor, now, [&] {
    StatusOr<Statement> st = db_->Prepare(
        "UPDATE jobs SET state = ?2, end_time = ?3, exit_code = ?4, end_reason = ?5, env = '{}' WHERE id = ?1");
    if (!st.ok()) return st.status();
    st->Bind(1, id).Bind(2, JobStateName(state)).Bind(3, now).Bind(5, reason);
    st->Bind(4, exit_code ? std::optional<std::int64_t>(*exit_code) : std::nullopt);
    return st->Run();
  });
}

Status JobStore::InOneTransaction(const std::function<Status()>& writes, bool durable) {
  if (Status s = Durability(durable); !s.ok()) return s;
  Transaction tx(*db_);
  if (Status s = tx.Begin(); !s.ok()) return s;
  if (Status s = writes(); !s.ok()) return s;
  return tx.Commit();
}

Status JobStore::ChangeWith(const std::function<Status()>& change, const std::function<void()>& with,
                            bool durable) {
  if (!with) return change();
  return InOneTransaction(
      [&] {
        Status s = change();
        if (s.ok()) with();
        return s;
      },
      durable);
}

Status JobStore::Requeue(JobId id, std::string_view reason, Time now) {
  if (Status s = Durability(false); !s.ok()) return s;
  return Transition(*db_, id, JobState::kRunning, JobState::kPending, "requeue", reason, "rotad", now, [&] {
    StatusOr<Statement> st = db_->Prepare(
        "UPDATE jobs SET state = 'pending', start_time = NULL, alloc_gpus = '[]', alloc_gpu_uuids = '[]', "
        "alloc_mig = -1, alloc_mig_uuid = '', alloc_memory = 0, preemptible = 0, from_pool = 0, "
        "signalled = 0, kill_at = NULL, preempted = 0, pid = NULL, pgid = NULL, cgroup = '', engine_job = '', "
        "forecast_at = 0, forecast_start = 0 WHERE id = ?1");
    if (!st.ok()) return st.status();
    return st->Bind(1, id).Run();
  });
}

Status JobStore::Cancel(JobId id, std::string_view actor, Time now, std::string_view why) {
  if (Status s = Durability(true); !s.ok()) return s;
  std::string reason = why.empty() ? "Cancelled by " + std::string(actor) : std::string(why);
  return Transition(*db_, id, JobState::kPending, JobState::kCancelled, "cancel", reason, actor, now, [&] {
    StatusOr<Statement> st =
        db_->Prepare("UPDATE jobs SET state = 'cancelled', end_time = ?2, end_reason = ?3, env = '{}' WHERE id = ?1");
    if (!st.ok()) return st.status();
    return st->Bind(1, id).Bind(2, now).Bind(3, reason).Run();
  });
}

namespace {

StatusOr<std::vector<JobRecord>> Query(Db& db, std::string_view where_order,
                                       std::optional<std::int64_t> arg) {
  StatusOr<Statement> st =
      db.Prepare("SELECT " + std::string(kJobColumns) + " FROM jobs " + std::string(where_order));
  if (!st.ok()) return st.status();
  if (arg) st->Bind(1, *arg);
  std::vector<JobRecord> out;
  while (true) {
    StatusOr<bool> row = st->Step();
    if (!row.ok()) return row.status();
    if (!*row) return out;
    StatusOr<JobRecord> r = ReadJob(*st);
    if (!r.ok()) return r.status();
    out.push_back(std::move(*r));
  }
}

}  // namespace

StatusOr<std::vector<JobRecord>> JobStore::LoadActive() {
  return Query(*db_, "WHERE state IN ('pending', 'running') ORDER BY id", std::nullopt);
}

StatusOr<JobRecord> JobStore::Get(JobId id) {
  StatusOr<std::vector<JobRecord>> jobs = Query(*db_, "WHERE id = ?1", id);
  if (!jobs.ok()) return jobs.status();
  if (jobs->empty()) return NotFound("no job " + std::to_string(id));
  return std::move(jobs->front());
}

StatusOr<std::vector<JobRecord>> JobStore::History(Time since) {
  return Query(*db_, "WHERE end_time >= ?1 AND state NOT IN ('pending', 'running') ORDER BY end_time, id",
               since);
}

StatusOr<JobStore::HistoryPageResult> JobStore::HistoryPage(Time since, std::optional<std::int64_t> uid,
                                                             std::pair<Time, JobId> after, int limit) {
  StatusOr<Statement> st = db_->Prepare(
      "SELECT " + std::string(kJobColumns) +
      " FROM jobs WHERE end_time >= ?1 AND state NOT IN ('pending', 'running') AND (?2 IS NULL OR uid = ?2)"
      " AND (end_time, id) > (?3, ?4) ORDER BY end_time, id LIMIT ?5");
  if (!st.ok()) return st.status();
  st->Bind(1, since).Bind(2, uid).Bind(3, after.first).Bind(4, after.second).Bind(5, std::int64_t{limit} + 1);
  HistoryPageResult out;
  while (true) {
    StatusOr<bool> row = st->Step();
    if (!row.ok()) return row.status();
    if (!*row) return out;
    if (static_cast<int>(out.jobs.size()) == limit) {
      out.more = true;
      return out;
    }
    StatusOr<JobRecord> r = ReadJob(*st);
    if (!r.ok()) return r.status();
    out.jobs.push_back(std::move(*r));
  }
}

StatusOr<std::vector<JobEvent>> JobStore::Events(JobId id) {
  StatusOr<Statement> st = db_->Prepare(
      "SELECT time, from_state, to_state, reason, actor FROM job_events WHERE job_id = ?1 ORDER BY id");
  if (!st.ok()) return st.status();
  st->Bind(1, id);
  std::vector<JobEvent> out;
  while (true) {
    StatusOr<bool> row = st->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    JobEvent e;
    e.job_id = id;
    e.time = st->Int(0);
    if (!st->IsNull(1)) e.from = ParseJobState(st->Text(1));
    std::optional<JobState> to = ParseJobState(st->Text(2));
    if (!to || (!st->IsNull(1) && !e.from)) {
      return Internal("job " + std::to_string(id) + " has an event with an unknown state");
    }
    e.to = *to;
    e.reason = st->Text(3);
    e.actor = st->Text(4);
    out.push_back(std::move(e));
  }
  // Every job has its submission event, so no events means no job.
  if (out.empty()) return NotFound("no job " + std::to_string(id));
  return out;
}

namespace {

Status UpsertUsage(Db& db, AccountKind kind, std::string_view name, const Usage& u) {
  StatusOr<Statement> st = db.Prepare(
      "INSERT INTO usage (kind, name, decayed_gpu_seconds, as_of, week_gpu_seconds, pool_gpu_seconds, "
      "week_start) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (kind, name) DO UPDATE SET "
      "decayed_gpu_seconds = excluded.decayed_gpu_seconds, as_of = excluded.as_of, "
      "week_gpu_seconds = excluded.week_gpu_seconds, pool_gpu_seconds = excluded.pool_gpu_seconds, "
      "week_start = excluded.week_start");
  if (!st.ok()) return st.status();
  st->Bind(1, AccountKindName(kind)).Bind(2, name).Bind(3, u.decayed_gpu_seconds).Bind(4, u.as_of);
  st->Bind(5, u.week_gpu_seconds).Bind(6, u.pool_gpu_seconds).Bind(7, u.week_start);
  return st->Run();
}

}  // namespace

Status JobStore::SaveUsage(AccountKind kind, std::string_view name, const Usage& usage) {
  if (Status s = Durability(false); !s.ok()) return s;
  return UpsertUsage(*db_, kind, name, usage);  // one statement: its own transaction
}

Status JobStore::SaveAllUsage(const UsageMaps& usage) {
  if (Status s = Durability(false); !s.ok()) return s;
  Transaction tx(*db_);
  if (Status s = tx.Begin(); !s.ok()) return s;
  for (const auto& [name, u] : usage.users) {
    if (Status s = UpsertUsage(*db_, AccountKind::kUser, name, u); !s.ok()) return s;
  }
  for (const auto& [name, u] : usage.projects) {
    if (Status s = UpsertUsage(*db_, AccountKind::kProject, name, u); !s.ok()) return s;
  }
  return tx.Commit();
}

StatusOr<UsageMaps> JobStore::LoadUsage() {
  StatusOr<Statement> st = db_->Prepare(
      "SELECT kind, name, decayed_gpu_seconds, as_of, week_gpu_seconds, pool_gpu_seconds, week_start "
      "FROM usage");
  if (!st.ok()) return st.status();
  UsageMaps out;
  while (true) {
    StatusOr<bool> row = st->Step();
    if (!row.ok()) return row.status();
    if (!*row) return out;
    Usage u;
    u.decayed_gpu_seconds = st->Real(2);
    u.as_of = st->Int(3);
    u.week_gpu_seconds = st->Real(4);
    u.pool_gpu_seconds = st->Real(5);
    u.week_start = st->Int(6);
    (st->Text(0) == "user" ? out.users : out.projects)[st->Text(1)] = u;
  }
}

Status JobStore::SaveQuotaNotice(std::string_view user, Time week, int level) {
  if (Status s = Durability(false); !s.ok()) return s;
  StatusOr<Statement> st = db_->Prepare(
      "INSERT INTO quota_notices (user, week, level) VALUES (?1, ?2, ?3) "
      "ON CONFLICT (user) DO UPDATE SET week = excluded.week, level = excluded.level");
  if (!st.ok()) return st.status();
  st->Bind(1, user).Bind(2, static_cast<std::int64_t>(week)).Bind(3, level);
  return st->Run();
}

StatusOr<std::map<std::string, std::pair<Time, int>>> JobStore::LoadQuotaNotices() {
  StatusOr<Statement> st = db_->Prepare("SELECT user, week, level FROM quota_notices");
  if (!st.ok()) return st.status();
  std::map<std::string, std::pair<Time, int>> out;
  while (true) {
    StatusOr<bool> row = st->Step();
    if (!row.ok()) return row.status();
    if (!*row) return out;
    out[st->Text(0)] = {st->Int(1), static_cast<int>(st->Int(2))};
  }
}

}  // namespace rota::store
