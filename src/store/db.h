// A thin RAII layer over the sqlite3 C API: one connection (Db), prepared statements
// (Statement) and write transactions (Transaction). Every failure comes back as a rota::Status
// that carries SQLite's own error text; nothing here throws.
//
// Not thread-safe: a Db and its statements belong to one thread (the daemon's event loop). The
// database is meant to have one writer process, rotad; readers (sqlite3 shell, backups) may
// attach concurrently thanks to WAL.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/status.h"

namespace rota::store {

// Maps an SQLite result code to a Status, e.g. SQLITE_FULL -> ResourceExhausted,
// SQLITE_BUSY -> Unavailable, SQLITE_READONLY / SQLITE_IOERR -> Unavailable, SQLITE_CONSTRAINT ->
// FailedPrecondition, anything else -> Internal. `what` says what was being done.
Status SqliteStatus(int code, std::string_view what, std::string_view detail);

class Db;

class Statement {
 public:
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  // Parameters are 1-based, as in sqlite3_bind_*. Bind errors are reported by the next Step().
  Statement& Bind(int index, std::int64_t value);
  Statement& Bind(int index, int value) { return Bind(index, static_cast<std::int64_t>(value)); }
  Statement& Bind(int index, double value);
  Statement& Bind(int index, std::string_view text);  // copied (SQLITE_TRANSIENT)
  Statement& Bind(int index, const char* text) { return Bind(index, std::string_view(text)); }
  Statement& BindNull(int index);
  // Binds NULL when the optional is empty.
  Statement& Bind(int index, std::optional<std::int64_t> value);

  // Runs one step. Returns true when a row is available, false when done.
  StatusOr<bool> Step();
  // Steps to completion, for statements that return no rows (or whose rows are ignored).
  Status Run();
  // Makes the statement ready to run again; bindings are kept.
  void Reset();

  // Column accessors for the current row; 0-based as in sqlite3_column_*.
  bool IsNull(int column) const;
  std::int64_t Int(int column) const;
  double Real(int column) const;
  std::string Text(int column) const;  // "" for NULL
  std::optional<std::int64_t> OptionalInt(int column) const;

 private:
  friend class Db;
  Statement(sqlite3* db, sqlite3_stmt* stmt, Db* owner) : db_(db), stmt_(stmt), owner_(owner) {}
  void Release();  // back to owner_'s cache, or finalized

  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  Db* owner_ = nullptr;  // the Db whose cache takes the statement back; null: finalize it
  int bind_error_ = SQLITE_OK;  // the first failed bind, reported by Step()
};

class Db {
 public:
  // Opens (creating if needed) the database file at `path` and applies the connection
  // settings: WAL journal, synchronous=FULL, foreign_keys=ON, a busy timeout. Does not touch
  // the schema (see schema.h).
  static StatusOr<std::unique_ptr<Db>> Open(const std::string& path);

  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;
  ~Db();

  // Runs one or more SQL statements that return no rows.
  Status Exec(std::string_view sql);
  // A statement for `sql` (one SQL statement). Statements are cached: a Statement, when it is
  // destroyed, is reset, its bindings cleared and kept for the next Prepare of the same text, so
  // the daemon's few dozen fixed statements are compiled once rather than on every request.
  // REQUIRES: every Statement is destroyed before its Db.
  StatusOr<Statement> Prepare(std::string_view sql);
  // Prepare(sql), then Run(): one statement that returns no rows, compiled once.
  Status Run(std::string_view sql);
  // Runs a one-column, one-row query such as "PRAGMA journal_mode" and returns its text.
  StatusOr<std::string> QueryText(std::string_view sql);

  std::int64_t LastInsertRowId() const;
  // The Status for the connection's current error, with `what` as context.
  Status LastError(std::string_view what) const;
  const std::string& path() const { return path_; }
  sqlite3* handle() { return db_; }

 private:
  friend class Statement;
  Db(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  void Recycle(sqlite3_stmt* stmt);  // from ~Statement: keep it for the next Prepare, or finalize

  sqlite3* db_ = nullptr;
  std::string path_;
  // Idle compiled statements by their SQL text: at most kIdlePerText per text and kIdleTotal
  // texts and statements in all (db.cc); a statement beyond those bounds is finalized.
  std::unordered_map<std::string, std::vector<sqlite3_stmt*>> idle_;
  std::size_t idle_count_ = 0;
};

// A write transaction (BEGIN IMMEDIATE: takes the write lock up front, so a busy database fails
// at Begin rather than halfway through). Rolls back on destruction if begun and not committed:
//   Transaction tx(db);
//   if (Status s = tx.Begin(); !s.ok()) return s;
//   ... writes ...
//   return tx.Commit();
// Begun inside another transaction it is a savepoint of it: its Commit releases the savepoint
// (the outer transaction commits it), its rollback undoes only its own writes.
class Transaction {
 public:
  explicit Transaction(Db& db) : db_(db) {}
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();

  Status Begin();
  // Durable when it returns OK (synchronous=FULL). On failure the transaction is rolled back.
  Status Commit();

 private:
  void Rollback();
  Db& db_;
  bool open_ = false;
  bool nested_ = false;  // a savepoint inside an outer transaction
};

}  // namespace rota::store
