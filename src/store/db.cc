// Tested by db_test.cc (and, through the job store, store_test.cc).
//
// Design: every sqlite3 handle lives in exactly one owner (Db owns the connection, Statement the
// prepared statement) and is finalized in its destructor. Errors are turned into Status at the
// call that saw them, with sqlite3_errmsg() text and the database path, so that a message in the
// daemon's log says both what failed and why ("database or disk is full"). SQLite's extended
// result codes are enabled and reduced to their primary code for the mapping.
//
// Durability: journal_mode=WAL with synchronous=FULL. In WAL mode synchronous=NORMAL already
// survives a crash of the process (kill -9), but a power loss may drop the last commits; FULL
// syncs the WAL on every commit, so a submission acknowledged to a client survives both. The
// cost is one fsync per write transaction (see docs/store.md).
#include "store/db.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

namespace rota::store {

namespace {

constexpr int kBusyTimeoutMs = 5000;
// The statement cache's bounds (Db::Prepare): the daemon uses about a hundred distinct texts,
// rarely more than one statement of a text at a time.
constexpr std::size_t kIdlePerText = 4;
constexpr std::size_t kIdleTotal = 512;

std::string Describe(std::string_view what, std::string_view detail) {
  std::string m(what);
  if (!detail.empty()) {
    m += ": ";
    m += detail;
  }
  return m;
}

}  // namespace

Status SqliteStatus(int code, std::string_view what, std::string_view detail) {
  std::string m = Describe(what, detail);
  switch (code & 0xff) {
    case SQLITE_OK:
    case SQLITE_ROW:
    case SQLITE_DONE:
      return Status::Ok();
    case SQLITE_FULL:
      return ResourceExhausted(m + " (free disk space, then retry)");
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Unavailable(m + " (another process holds the database lock)");
    case SQLITE_READONLY:
    case SQLITE_IOERR:
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
      return Unavailable(m);
    case SQLITE_CONSTRAINT:
      return FailedPrecondition(m);
    case SQLITE_MISUSE:
    case SQLITE_RANGE:
      return Internal(m);
    default:
      return Internal(m);
  }
}

// --- Statement ---

Statement::Statement(Statement&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)),
      stmt_(std::exchange(other.stmt_, nullptr)),
      owner_(std::exchange(other.owner_, nullptr)),
      bind_error_(other.bind_error_) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    Release();
    db_ = std::exchange(other.db_, nullptr);
    stmt_ = std::exchange(other.stmt_, nullptr);
    owner_ = std::exchange(other.owner_, nullptr);
    bind_error_ = other.bind_error_;
  }
  return *this;
}

Statement::~Statement() { Release(); }

void Statement::Release() {
  if (stmt_ == nullptr) return;
  if (owner_ != nullptr) {
    owner_->Recycle(stmt_);
  } else {
    sqlite3_finalize(stmt_);
  }
  stmt_ = nullptr;
}

Statement& Statement::Bind(int index, std::int64_t value) {
  int rc = sqlite3_bind_int64(stmt_, index, value);
  if (rc != SQLITE_OK && bind_error_ == SQLITE_OK) bind_error_ = rc;
  return *this;
}

Statement& Statement::Bind(int index, double value) {
  int rc = sqlite3_bind_double(stmt_, index, value);
  if (rc != SQLITE_OK && bind_error_ == SQLITE_OK) bind_error_ = rc;
  return *this;
}

Statement& Statement::Bind(int index, std::string_view text) {
  int rc = sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  if (rc != SQLITE_OK && bind_error_ == SQLITE_OK) bind_error_ = rc;
  return *this;
}

Statement& Statement::BindNull(int index) {
  int rc = sqlite3_bind_null(stmt_, index);
  if (rc != SQLITE_OK && bind_error_ == SQLITE_OK) bind_error_ = rc;
  return *this;
}

Statement& Statement::Bind(int index, std::optional<std::int64_t> value) {
  return value ? Bind(index, *value) : BindNull(index);
}

StatusOr<bool> Statement::Step() {
  if (bind_error_ != SQLITE_OK) {
    return SqliteStatus(bind_error_, "binding a parameter", sqlite3_errstr(bind_error_));
  }
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  const char* sql = sqlite3_sql(stmt_);
  std::string what = "running \"" + std::string(sql ? std::string_view(sql).substr(0, 60) : "") + "\"";
  return SqliteStatus(rc, what, sqlite3_errmsg(db_));
}

Status Statement::Run() {
  while (true) {
    StatusOr<bool> row = Step();
    if (!row.ok()) return row.status();
    if (!*row) return Status::Ok();
  }
}

void Statement::Reset() { sqlite3_reset(stmt_); }

bool Statement::IsNull(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }

std::int64_t Statement::Int(int column) const { return sqlite3_column_int64(stmt_, column); }

double Statement::Real(int column) const { return sqlite3_column_double(stmt_, column); }

std::string Statement::Text(int column) const {
  const unsigned char* p = sqlite3_column_text(stmt_, column);
  if (p == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(p), sqlite3_column_bytes(stmt_, column));
}

std::optional<std::int64_t> Statement::OptionalInt(int column) const {
  if (IsNull(column)) return std::nullopt;
  return Int(column);
}

// --- Db ---

StatusOr<std::unique_ptr<Db>> Db::Open(const std::string& path) {
  // Readable by its owner alone: it holds what users submitted (commands, paths, a pending job's
  // environment) and token hashes. SQLite gives its -wal and -shm files the database's mode.
  //
  // Never a descriptor of our own on a database that may be open here already (rotad's notifier
  // opens a second connection): closing any descriptor of a file drops every POSIX lock the
  // process holds on it, SQLite's among them. The next connection of another process (an admin's
  // sqlite3, a backup) to close then took itself for the last one, checkpointed and deleted the
  // -wal under rotad, and every later commit of rotad's went to the deleted file: invisible to
  // others, and gone at its restart. A new file is created here, before any connection has it;
  // an existing one is made 0600 by its path, not followed if it is a link (glibc does that with
  // an O_PATH descriptor, whose close drops no lock).
  if (path != ":memory:") {
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0) {
      ::close(fd);  // no connection has this new file yet
    } else if (errno != EEXIST) {
      return Unavailable("opening database " + path + ": " + std::strerror(errno));
    }
    if (::fchmodat(AT_FDCWD, path.c_str(), 0600, AT_SYMLINK_NOFOLLOW) != 0) {
      const int err = errno;
      const std::string why =
          err == EOPNOTSUPP ? " (it is a symbolic link)" : ": " + std::string(std::strerror(err));
      return Unavailable("opening database " + path + ": cannot make it 0600" + why);
    }
    for (const char* suffix : {"-wal", "-shm"}) {
      (void)::fchmodat(AT_FDCWD, (path + suffix).c_str(), 0600, AT_SYMLINK_NOFOLLOW);
    }
  }
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(
      path.c_str(), &raw,
      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW, nullptr);
  if (rc != SQLITE_OK) {
    std::string detail = raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc);
    sqlite3_close(raw);
    return SqliteStatus(rc, "opening database " + path, detail);
  }
  std::unique_ptr<Db> db(new Db(raw, path));
  sqlite3_extended_result_codes(raw, 1);
  sqlite3_busy_timeout(raw, kBusyTimeoutMs);

  // journal_mode answers with the mode in force; anything but "wal" (e.g. a read-only
  // directory where the -wal file cannot be created) is refused rather than silently degraded.
  StatusOr<std::string> mode = db->QueryText("PRAGMA journal_mode=WAL");
  if (!mode.ok()) return mode.status();
  if (*mode != "wal") {
    return Unavailable("opening database " + path + ": cannot switch to WAL mode (journal_mode is " + *mode +
                       ")");
  }
  // See the design note at the top: acknowledged writes must survive power loss.
  if (Status s = db->Exec("PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;"); !s.ok()) return s;
  return db;
}

Db::~Db() {
  for (auto& [sql, stmts] : idle_) {
    for (sqlite3_stmt* stmt : stmts) sqlite3_finalize(stmt);
  }
  sqlite3_close_v2(db_);
}

void Db::Recycle(sqlite3_stmt* stmt) {
  // Reset first: a statement stopped halfway through its rows holds a read transaction open.
  sqlite3_reset(stmt);
  sqlite3_clear_bindings(stmt);
  const char* sql = sqlite3_sql(stmt);
  auto it = sql == nullptr ? idle_.end() : idle_.find(sql);
  if (it == idle_.end() || it->second.size() >= kIdlePerText || idle_count_ >= kIdleTotal) {
    sqlite3_finalize(stmt);
    return;
  }
  it->second.push_back(stmt);
  ++idle_count_;
}

Status Db::Exec(std::string_view sql) {
  std::string copy(sql);
  char* err = nullptr;
  int rc = sqlite3_exec(db_, copy.c_str(), nullptr, nullptr, &err);
  if (rc == SQLITE_OK) return Status::Ok();
  std::string detail = err ? err : sqlite3_errmsg(db_);
  sqlite3_free(err);
  return SqliteStatus(rc, "executing SQL on " + path_, detail);
}

StatusOr<Statement> Db::Prepare(std::string_view sql) {
  const std::string text(sql);
  auto it = idle_.find(text);
  if (it != idle_.end() && !it->second.empty()) {
    sqlite3_stmt* cached = it->second.back();
    it->second.pop_back();
    --idle_count_;
    return Statement(db_, cached, this);
  }
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return SqliteStatus(rc, "preparing \"" + std::string(sql.substr(0, 60)) + "\"", sqlite3_errmsg(db_));
  }
  // Cached only when SQLite kept exactly this text (a single statement): Recycle finds it by
  // sqlite3_sql(). A text built on the fly takes a slot of the bounded cache like any other.
  const char* kept = sqlite3_sql(stmt);
  if (kept == nullptr || text != kept) return Statement(db_, stmt, nullptr);
  if (it == idle_.end() && idle_.size() < kIdleTotal) idle_.emplace(text, std::vector<sqlite3_stmt*>());
  return Statement(db_, stmt, this);
}

Status Db::Run(std::string_view sql) {
  StatusOr<Statement> st = Prepare(sql);
  if (!st.ok()) return st.status();
  return st->Run();
}

StatusOr<std::string> Db::QueryText(std::string_view sql) {
  StatusOr<Statement> st = Prepare(sql);
  if (!st.ok()) return st.status();
  StatusOr<bool> row = st->Step();
  if (!row.ok()) return row.status();
  if (!*row) return std::string();
  return st->Text(0);
}

std::int64_t Db::LastInsertRowId() const { return sqlite3_last_insert_rowid(db_); }

Status Db::LastError(std::string_view what) const {
  return SqliteStatus(sqlite3_errcode(db_), what, sqlite3_errmsg(db_));
}

// --- Transaction ---

Transaction::~Transaction() { Rollback(); }

Status Transaction::Begin() {
  nested_ = sqlite3_get_autocommit(db_.handle()) == 0;
  if (Status s = db_.Run(nested_ ? "SAVEPOINT nested" : "BEGIN IMMEDIATE"); !s.ok()) return s;
  open_ = true;
  return Status::Ok();
}

Status Transaction::Commit() {
  if (!open_) return Internal("commit without an open transaction");
  Status s = db_.Run(nested_ ? "RELEASE nested" : "COMMIT");
  if (!s.ok()) {
    Rollback();
    return s;
  }
  open_ = false;
  return Status::Ok();
}

void Transaction::Rollback() {
  if (!open_) return;
  open_ = false;
  // SQLite may already have rolled back on its own (e.g. after SQLITE_FULL); ROLLBACK would then
  // fail with "no transaction is active".
  if (sqlite3_get_autocommit(db_.handle()) == 0) {
    sqlite3_exec(db_.handle(), nested_ ? "ROLLBACK TO nested; RELEASE nested" : "ROLLBACK", nullptr, nullptr, nullptr);
  }
}

}  // namespace rota::store
