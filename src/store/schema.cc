// Tested by schema_test.cc.
//
// Design: the version check and each step run inside one BEGIN IMMEDIATE transaction, and the
// version is re-read inside it, so two processes opening the same file at once cannot apply a
// step twice. The `meta` table is created by the first transaction itself (it is not part of
// any step) so that version 0 means "nothing here yet". Step texts are plain SQL scripts; the
// CHECK constraints in them are the last line of defence behind the job store's own checks.
#include "store/schema.h"

#include <array>
#include <charconv>
#include <string>

namespace rota::store {

namespace {

// Version 1: jobs, their audit trail, and accumulated usage. Column meanings in docs/store.md.
constexpr std::string_view kV1 = R"sql(
CREATE TABLE jobs (
  id                  INTEGER PRIMARY KEY AUTOINCREMENT,
  user                TEXT    NOT NULL,
  uid                 INTEGER NOT NULL,
  project             TEXT    NOT NULL DEFAULT '',
  name                TEXT    NOT NULL DEFAULT '',
  tier                TEXT    NOT NULL CHECK (tier IN ('explore', 'regular', 'thesis')),
  request_kind        TEXT    NOT NULL CHECK (request_kind IN ('gpus', 'mem_share', 'mig')),
  request_gpus        INTEGER NOT NULL,
  request_memory      INTEGER NOT NULL,
  request_mig_profile TEXT    NOT NULL DEFAULT '',
  time_limit          INTEGER NOT NULL,
  submit_time         INTEGER NOT NULL,
  after_jobs          TEXT    NOT NULL DEFAULT '[]',
  signal              INTEGER NOT NULL,
  grace               INTEGER NOT NULL,
  requeue             INTEGER NOT NULL,
  host_mem_per_gpu    INTEGER NOT NULL,
  command             TEXT    NOT NULL DEFAULT '[]',
  cwd                 TEXT    NOT NULL DEFAULT '',
  env                 TEXT    NOT NULL DEFAULT '{}',
  output              TEXT    NOT NULL DEFAULT '',
  state               TEXT    NOT NULL CHECK (state IN ('pending', 'running', 'completed', 'failed',
                                                        'cancelled', 'timeout', 'preempted', 'node_fail')),
  start_time          INTEGER,
  end_time            INTEGER,
  alloc_gpus          TEXT    NOT NULL DEFAULT '[]',
  alloc_gpu_uuids     TEXT    NOT NULL DEFAULT '[]',
  alloc_mig           INTEGER NOT NULL DEFAULT -1,
  alloc_mig_uuid      TEXT    NOT NULL DEFAULT '',
  alloc_memory        INTEGER NOT NULL DEFAULT 0,
  exit_code           INTEGER,
  end_reason          TEXT    NOT NULL DEFAULT '',
  preemptible         INTEGER NOT NULL DEFAULT 0,
  from_pool           INTEGER NOT NULL DEFAULT 0,
  signalled           INTEGER NOT NULL DEFAULT 0,
  kill_at             INTEGER,
  preempted           INTEGER NOT NULL DEFAULT 0,
  pid                 INTEGER,
  pgid                INTEGER,
  cgroup              TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX jobs_active ON jobs (state) WHERE state IN ('pending', 'running');
CREATE INDEX jobs_end_time ON jobs (end_time) WHERE end_time IS NOT NULL;

CREATE TABLE job_events (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  job_id     INTEGER NOT NULL REFERENCES jobs (id),
  time       INTEGER NOT NULL,
  from_state TEXT,
  to_state   TEXT    NOT NULL,
  reason     TEXT    NOT NULL DEFAULT '',
  actor      TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX job_events_job ON job_events (job_id, id);

CREATE TABLE usage (
  kind                TEXT    NOT NULL CHECK (kind IN ('user', 'project')),
  name                TEXT    NOT NULL,
  decayed_gpu_seconds REAL    NOT NULL DEFAULT 0,
  as_of               INTEGER NOT NULL DEFAULT 0,
  week_gpu_seconds    REAL    NOT NULL DEFAULT 0,
  pool_gpu_seconds    REAL    NOT NULL DEFAULT 0,
  week_start          INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (kind, name)
);
)sql";

// Version 2: interactive allocations (`rota run`, `rota shell`), whose command is run by the
// client rather than by a shepherd.
constexpr std::string_view kV2 = R"sql(
ALTER TABLE jobs ADD COLUMN interactive INTEGER NOT NULL DEFAULT 0;
)sql";

// Version 3: the GPUs' side of the audit trail. A drain (by an admin, or by health after failed
// samples) is kept until it ends, so a restart does not put a sick or reserved card back to work;
// every health change, drain and resume is an event.
constexpr std::string_view kV3 = R"sql(
CREATE TABLE gpu_drains (
  uuid   TEXT    NOT NULL,
  kind   TEXT    NOT NULL CHECK (kind IN ('admin', 'health')),
  actor  TEXT    NOT NULL DEFAULT '',
  reason TEXT    NOT NULL DEFAULT '',
  since  INTEGER NOT NULL,
  PRIMARY KEY (uuid, kind)
);
CREATE TABLE gpu_events (
  id        INTEGER PRIMARY KEY AUTOINCREMENT,
  time      INTEGER NOT NULL,
  uuid      TEXT    NOT NULL,
  gpu_index INTEGER NOT NULL,
  event     TEXT    NOT NULL,
  reason    TEXT    NOT NULL DEFAULT '',
  actor     TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX gpu_events_uuid ON gpu_events (uuid, id);
)sql";

// Version 4: bookings, the lab's GPU calendar, with their own audit trail. Open bookings (and
// recently closed ones, for weekly hours and penalties) are loaded at start.
constexpr std::string_view kV4 = R"sql(
CREATE TABLE bookings (
  id                  INTEGER PRIMARY KEY AUTOINCREMENT,
  user                TEXT    NOT NULL,
  uid                 INTEGER NOT NULL DEFAULT -1,
  project             TEXT    NOT NULL DEFAULT '',
  note                TEXT    NOT NULL DEFAULT '',
  tier                TEXT    NOT NULL,
  request_kind        TEXT    NOT NULL CHECK (request_kind IN ('gpus', 'mem_share', 'mig')),
  request_gpus        INTEGER NOT NULL,
  request_memory      INTEGER NOT NULL,
  request_mig_profile TEXT    NOT NULL DEFAULT '',
  asked_cards         TEXT    NOT NULL DEFAULT '[]',
  gpu_uuids           TEXT    NOT NULL DEFAULT '[]',
  mig_uuid            TEXT    NOT NULL DEFAULT '',
  share_memory        INTEGER NOT NULL DEFAULT 0,
  start_time          INTEGER NOT NULL,
  end_time            INTEGER NOT NULL,
  state               TEXT    NOT NULL,
  actual_end          INTEGER NOT NULL DEFAULT 0,
  reminded            INTEGER NOT NULL DEFAULT 0,
  used                INTEGER NOT NULL DEFAULT 0,
  created             INTEGER NOT NULL,
  decided_by          TEXT    NOT NULL DEFAULT '',
  reason              TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX bookings_open ON bookings (state) WHERE state IN ('requested', 'confirmed', 'active');
CREATE INDEX bookings_start ON bookings (start_time);
CREATE TABLE booking_events (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  booking_id INTEGER NOT NULL REFERENCES bookings (id),
  time       INTEGER NOT NULL,
  from_state TEXT,
  to_state   TEXT    NOT NULL,
  reason     TEXT    NOT NULL DEFAULT '',
  actor      TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX booking_events_booking ON booking_events (booking_id, id);
)sql";

// Version 5: what the GPU samples said about each job while it ran, added up over its runs (a
// requeued job keeps its id): the usage report's utilisation of allocated GPUs and idle hours.
constexpr std::string_view kV5 = R"sql(
CREATE TABLE job_measures (
  job_id               INTEGER PRIMARY KEY REFERENCES jobs (id),
  measured_gpu_seconds REAL NOT NULL DEFAULT 0,
  busy_gpu_seconds     REAL NOT NULL DEFAULT 0,
  idle_gpu_seconds     REAL NOT NULL DEFAULT 0
);
)sql";

// Version 6: API tokens for scripts using the HTTP API (docs/http.md). Only the SHA-256 of a
// token is kept; revoked tokens stay as rows (revoked_at set) so the listing shows who revoked.
constexpr std::string_view kV6 = R"sql(
CREATE TABLE api_tokens (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  hash       TEXT    NOT NULL UNIQUE,
  user       TEXT    NOT NULL,
  uid        INTEGER NOT NULL,
  name       TEXT    NOT NULL DEFAULT '',
  created    INTEGER NOT NULL,
  expires    INTEGER NOT NULL DEFAULT 0,
  revoked_at INTEGER NOT NULL DEFAULT 0,
  revoked_by TEXT    NOT NULL DEFAULT ''
);
)sql";

// Version 7: the notifications' outbox (docs/design.md, "Notifications: outbox and delivery").
// The event loop inserts a row per message and channel; the notifier thread sends the due ones
// and marks them sent (or failed, with the reason), so a restart loses and repeats nothing.
constexpr std::string_view kV7 = R"sql(
CREATE TABLE outbox (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  channel      TEXT    NOT NULL,
  recipient    TEXT    NOT NULL DEFAULT '',
  mentions     TEXT    NOT NULL DEFAULT '[]',
  event        TEXT    NOT NULL,
  language     TEXT    NOT NULL DEFAULT 'en',
  subject      TEXT    NOT NULL,
  body         TEXT    NOT NULL,
  created      INTEGER NOT NULL,
  attempts     INTEGER NOT NULL DEFAULT 0,
  next_attempt INTEGER NOT NULL,
  last_error   TEXT    NOT NULL DEFAULT '',
  state        TEXT    NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'failed')),
  delivered    INTEGER
);
CREATE INDEX outbox_due ON outbox (next_attempt) WHERE state = 'pending';
)sql";

// Version 8: the quota levels each user was told of in their quota week, so that a restart does
// not tell them again.
constexpr std::string_view kV8 = R"sql(
CREATE TABLE quota_notices (
  user  TEXT    PRIMARY KEY,
  week  INTEGER NOT NULL,
  level INTEGER NOT NULL CHECK (level IN (80, 100))
);
)sql";

// Version 9: jobs that start only when others ended Completed (`--after-ok`); rotad cancels them
// when one of those ends otherwise.
constexpr std::string_view kV9 = R"sql(
ALTER TABLE jobs ADD COLUMN after_ok_jobs TEXT NOT NULL DEFAULT '[]';
)sql";

// Version 10 (docs/security.md): API tokens get a scope ('calendar': the calendar feed only,
// 'read': reading, 'full': everything their owner may do; the tokens made before were full), and
// ended jobs keep no environment (a job's is dropped when it ends from now on).
constexpr std::string_view kV10 = R"sql(
ALTER TABLE api_tokens ADD COLUMN scope TEXT NOT NULL DEFAULT 'full' CHECK (scope IN ('calendar', 'read', 'full'));
UPDATE jobs SET env = '{}' WHERE state NOT IN ('pending', 'running');
)sql";

// Version 11: where an engine that hands jobs to a cluster runs a job ("Slurm job 123"), for
// `rota show` and for finding it again.
constexpr std::string_view kV11 = R"sql(
ALTER TABLE jobs ADD COLUMN engine_job TEXT NOT NULL DEFAULT '';
)sql";

// Version 12: the container image a job runs in (`--image`); '' = none.
constexpr std::string_view kV12 = R"sql(
ALTER TABLE jobs ADD COLUMN image TEXT NOT NULL DEFAULT '';
)sql";

// Version 13: when a job's owner needs it done (`--deadline`), Unix seconds; 0 = none.
constexpr std::string_view kV13 = R"sql(
ALTER TABLE jobs ADD COLUMN deadline INTEGER NOT NULL DEFAULT 0;
)sql";

// Version 14: a job's first start forecast, to calibrate later ones; 0 = none.
constexpr std::string_view kV14 = R"sql(
ALTER TABLE jobs ADD COLUMN forecast_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN forecast_start INTEGER NOT NULL DEFAULT 0;
)sql";

// Version 15: the runs of a cluster's jobs outside Rota (plain sbatch or srun with GPUs) that the
// Slurm engine saw end, charged to their owner's usage: once each (the key: the cluster's job and
// its start), whatever restarts; `rota usage` lists their GPU-hours.
constexpr std::string_view kV15 = R"sql(
CREATE TABLE outside_runs (
  cluster_job TEXT    NOT NULL,
  start_time  INTEGER NOT NULL,
  end_time    INTEGER NOT NULL,
  user        TEXT    NOT NULL,
  gpus        REAL    NOT NULL CHECK (gpus >= 0),
  PRIMARY KEY (cluster_job, start_time)
);
CREATE INDEX outside_runs_end ON outside_runs (end_time);
)sql";

// Version 16: the start first come first served promised a job when it came (core/promise.h;
// [policy] promise_slack), Unix seconds; 0 = none. Kept across requeues: it is the job's bound.
constexpr std::string_view kV16 = R"sql(
ALTER TABLE jobs ADD COLUMN promise INTEGER NOT NULL DEFAULT 0;
)sql";

constexpr std::array<std::string_view, 16> kMigrations = {kV1,  kV2,  kV3,  kV4,  kV5,  kV6,  kV7,  kV8,
                                                          kV9,  kV10, kV11, kV12, kV13, kV14, kV15, kV16};

constexpr std::string_view kCreateMeta =
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)";

// REQUIRES: inside a transaction, or the caller accepts a racy read.
StatusOr<int> ReadVersion(Db& db) {
  StatusOr<Statement> has_meta =
      db.Prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'meta'");
  if (!has_meta.ok()) return has_meta.status();
  StatusOr<bool> row = has_meta->Step();
  if (!row.ok()) return row.status();
  if (!*row) return 0;
  StatusOr<Statement> st = db.Prepare("SELECT value FROM meta WHERE key = 'schema_version'");
  if (!st.ok()) return st.status();
  row = st->Step();
  if (!row.ok()) return row.status();
  if (!*row) return 0;
  std::string text = st->Text(0);
  int version = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), version);
  if (ec != std::errc() || end != text.data() + text.size() || version < 0) {
    return Internal("database " + db.path() + " has a malformed schema_version: '" + text + "'");
  }
  return version;
}

}  // namespace

std::span<const std::string_view> Migrations() { return kMigrations; }

int LatestSchemaVersion() { return static_cast<int>(kMigrations.size()); }

StatusOr<int> SchemaVersion(Db& db) { return ReadVersion(db); }

Status Migrate(Db& db, std::span<const std::string_view> steps) {
  const int target = static_cast<int>(steps.size());
  while (true) {
    Transaction tx(db);
    if (Status s = tx.Begin(); !s.ok()) return s;
    StatusOr<int> version = ReadVersion(db);
    if (!version.ok()) return version.status();
    if (*version > target) {
      return FailedPrecondition("database " + db.path() + " has schema version " + std::to_string(*version) +
                                " but this rotad knows only up to " + std::to_string(target) +
                                ": it was written by a newer rotad; upgrade rotad or restore a backup");
    }
    if (*version == target) return tx.Commit();
    if (Status s = db.Exec(kCreateMeta); !s.ok()) return s;
    const int next = *version + 1;
    if (Status s = db.Exec(steps[*version]); !s.ok()) {
      return Status(s.code(), "migrating to schema version " + std::to_string(next) + ": " + s.message());
    }
    StatusOr<Statement> set = db.Prepare(
        "INSERT INTO meta (key, value) VALUES ('schema_version', ?1) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value");
    if (!set.ok()) return set.status();
    if (Status s = set->Bind(1, std::to_string(next)).Run(); !s.ok()) return s;
    if (Status s = tx.Commit(); !s.ok()) return s;
  }
}

}  // namespace rota::store
