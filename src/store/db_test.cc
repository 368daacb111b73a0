#include "store/db.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "testing/temp_dir.h"

namespace rota::store {
namespace db_test {
namespace {

TEST(DbTest, OpenAppliesConnectionSettings) {
  testing::TempDir dir;
  ASSERT_TRUE(dir.ok());
  auto db = Db::Open(dir.File("a.db"));
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  EXPECT_EQ(*(*db)->QueryText("PRAGMA journal_mode"), "wal");
  EXPECT_EQ(*(*db)->QueryText("PRAGMA synchronous"), "2");  // FULL
  EXPECT_EQ(*(*db)->QueryText("PRAGMA foreign_keys"), "1");
  EXPECT_EQ(*(*db)->QueryText("PRAGMA busy_timeout"), "5000");
}

TEST(DbTest, TheDatabaseAndItsWalAreReadableByTheirOwnerAlone) {
  testing::TempDir dir;
  // An existing database of an older rotad, world-readable, is made owner-only too.
  const std::string path = dir.File("a.db");
  { std::ofstream(path) << ""; }
  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  auto db = Db::Open(path);
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  ASSERT_TRUE((*db)->Exec("CREATE TABLE t (a INTEGER); INSERT INTO t VALUES (1)").ok());
  for (const std::string& f : {path, path + "-wal", path + "-shm"}) {
    struct stat st {};
    ASSERT_EQ(::stat(f.c_str(), &st), 0) << f;
    EXPECT_EQ(st.st_mode & 0777, 0600u) << f;
  }
  // A link in its place is not followed.
  const std::string link = dir.File("link.db");
  ASSERT_EQ(::symlink(path.c_str(), link.c_str()), 0);
  EXPECT_FALSE(Db::Open(link).ok());
}

TEST(DbTest, StatementBindStepReset) {
  testing::TempDir dir;
  auto db = Db::Open(dir.File("a.db"));
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE((*db)->Exec("CREATE TABLE t (a INTEGER, b TEXT, c REAL)").ok());
  auto ins = (*db)->Prepare("INSERT INTO t VALUES (?1, ?2, ?3)");
  ASSERT_TRUE(ins.ok());
  for (int i = 0; i < 3; ++i) {
    ins->Bind(1, i).Bind(2, "x" + std::to_string(i)).Bind(3, i * 0.5);
    ASSERT_TRUE(ins->Run().ok());
    ins->Reset();
  }
  ins->Bind(1, std::optional<std::int64_t>()).Bind(2, "null").Bind(3, 0.0);
  ASSERT_TRUE(ins->Run().ok());
  auto sel = (*db)->Prepare("SELECT a, b, c FROM t ORDER BY rowid");
  ASSERT_TRUE(sel.ok());
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(*sel->Step());
    EXPECT_EQ(sel->Int(0), i);
    EXPECT_EQ(sel->Text(1), "x" + std::to_string(i));
    EXPECT_DOUBLE_EQ(sel->Real(2), i * 0.5);
  }
  ASSERT_TRUE(*sel->Step());
  EXPECT_TRUE(sel->IsNull(0));
  EXPECT_EQ(sel->OptionalInt(0), std::nullopt);
  EXPECT_FALSE(*sel->Step());
}

int CompiledStatements(Db& db) {
  int n = 0;
  for (sqlite3_stmt* st = sqlite3_next_stmt(db.handle(), nullptr); st; st = sqlite3_next_stmt(db.handle(), st)) ++n;
  return n;
}

TEST(DbTest, StatementsAreCompiledOnceAndComeBackClean) {
  testing::TempDir dir;
  auto db = Db::Open(dir.File("a.db"));
  ASSERT_TRUE(db.ok());
  Db& d = **db;
  ASSERT_TRUE(d.Exec("CREATE TABLE t (a INTEGER)").ok());
  const int before = CompiledStatements(d);
  for (int i = 0; i < 10; ++i) {
    auto ins = d.Prepare("INSERT INTO t VALUES (?1)");
    ASSERT_TRUE(ins.ok());
    ins->Bind(1, i);
    ASSERT_TRUE(ins->Run().ok());
  }
  EXPECT_EQ(CompiledStatements(d), before + 1) << "the insert was compiled more than once";
  {
    // A cached statement comes back without the last use's bindings: NULL, not 9.
    auto ins = d.Prepare("INSERT INTO t VALUES (?1)");
    ASSERT_TRUE(ins.ok());
    ASSERT_TRUE(ins->Run().ok());
    // Two at once of one text: a second one is compiled, both are kept.
    auto other = d.Prepare("INSERT INTO t VALUES (?1)");
    ASSERT_TRUE(other.ok());
    EXPECT_EQ(CompiledStatements(d), before + 2);
  }
  EXPECT_EQ(*d.QueryText("SELECT count(*) FROM t WHERE a IS NULL"), "1");
  {
    // A query left halfway through its rows is reset when put back: it holds no read
    // transaction, so this connection's view moves on when another connection writes.
    auto sel = d.Prepare("SELECT a FROM t ORDER BY a");
    ASSERT_TRUE(sel.ok());
    ASSERT_TRUE(*sel->Step());
  }
  auto writer = Db::Open(dir.File("a.db"));
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->Exec("INSERT INTO t VALUES (100)").ok());
  EXPECT_EQ(*d.QueryText("SELECT max(a) FROM t"), "100");
  // A schema change reaches cached statements (SQLite recompiles them).
  ASSERT_TRUE((*writer)->Exec("ALTER TABLE t ADD COLUMN b TEXT DEFAULT 'x'").ok());
  auto sel = d.Prepare("SELECT * FROM t LIMIT 1");
  ASSERT_TRUE(sel.ok());
  ASSERT_TRUE(*sel->Step());
  EXPECT_EQ(sel->Text(1), "x");
}

TEST(DbTest, StatementsWithVaryingTextAreNotKept) {
  testing::TempDir dir;
  auto db = Db::Open(dir.File("a.db"));
  ASSERT_TRUE(db.ok());
  Db& d = **db;
  const int before = CompiledStatements(d);
  for (int i = 0; i < 2000; ++i) {
    auto st = d.Prepare("SELECT " + std::to_string(i));
    ASSERT_TRUE(st.ok());
  }
  const int kept = CompiledStatements(d);
  EXPECT_LE(kept, before + 512);  // the cache's bound, not one per text
  // A text of two statements is not kept (only its first would be compiled and found again).
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(d.Prepare("SELECT 1; SELECT 2").ok());
  EXPECT_EQ(CompiledStatements(d), kept);
}

TEST(DbTest, ErrorsCarrySqliteText) {
  testing::TempDir dir;
  auto db = Db::Open(dir.File("a.db"));
  ASSERT_TRUE(db.ok());
  auto bad = (*db)->Prepare("SELEKT 1");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInternal);
  EXPECT_NE(bad.status().message().find("syntax error"), std::string::npos) << bad.status().ToString();

  ASSERT_TRUE((*db)->Exec("CREATE TABLE u (k TEXT PRIMARY KEY)").ok());
  ASSERT_TRUE((*db)->Exec("INSERT INTO u VALUES ('a')").ok());
  Status dup = (*db)->Exec("INSERT INTO u VALUES ('a')");
  EXPECT_EQ(dup.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(dup.message().find("UNIQUE constraint failed"), std::string::npos) << dup.ToString();
}

TEST(DbTest, OpenFailsCleanlyOnMissingDirectory) {
  auto db = Db::Open("/nonexistent-rota-dir/x/a.db");
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(db.status().message().find("/nonexistent-rota-dir/x/a.db"), std::string::npos);
}

TEST(DbTest, TransactionRollsBackUnlessCommitted) {
  testing::TempDir dir;
  auto db = Db::Open(dir.File("a.db"));
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE((*db)->Exec("CREATE TABLE t (a INTEGER)").ok());
  {
    Transaction tx(**db);
    ASSERT_TRUE(tx.Begin().ok());
    ASSERT_TRUE((*db)->Exec("INSERT INTO t VALUES (1)").ok());
  }  // dropped: rolled back
  {
    Transaction tx(**db);
    ASSERT_TRUE(tx.Begin().ok());
    ASSERT_TRUE((*db)->Exec("INSERT INTO t VALUES (2)").ok());
    ASSERT_TRUE(tx.Commit().ok());
  }
  EXPECT_EQ(*(*db)->QueryText("SELECT group_concat(a) FROM t"), "2");
}

// A transaction begun inside another is a savepoint: its rollback undoes only its own writes,
// its commit leaves them to the outer transaction, which commits or rolls back all of them.
TEST(DbTest, NestedTransactionsAreSavepointsOfTheOuterOne) {
  testing::TempDir dir;
  auto db = Db::Open(dir.File("a.db"));
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE((*db)->Exec("CREATE TABLE t (a INTEGER)").ok());
  auto nested = [&](int value, bool commit) {
    Transaction tx(**db);
    ASSERT_TRUE(tx.Begin().ok());
    ASSERT_TRUE((*db)->Exec("INSERT INTO t VALUES (" + std::to_string(value) + ")").ok());
    if (commit) {
      ASSERT_TRUE(tx.Commit().ok());
    }
  };
  {
    Transaction outer(**db);
    ASSERT_TRUE(outer.Begin().ok());
    nested(1, true);
    nested(2, false);  // rolled back alone
    nested(3, true);
    EXPECT_EQ(*(*db)->QueryText("SELECT group_concat(a) FROM t"), "1,3");
    ASSERT_TRUE(outer.Commit().ok());
  }
  EXPECT_EQ(*(*db)->QueryText("SELECT group_concat(a) FROM t"), "1,3");
  {
    Transaction outer(**db);
    ASSERT_TRUE(outer.Begin().ok());
    nested(4, true);
  }  // the outer one dropped: the committed savepoint goes with it
  EXPECT_EQ(*(*db)->QueryText("SELECT group_concat(a) FROM t"), "1,3");
  nested(5, true);  // no outer transaction: a transaction of its own again
  EXPECT_EQ(*(*db)->QueryText("SELECT group_concat(a) FROM t"), "1,3,5");
}

}  // namespace
}  // namespace db_test
}  // namespace rota::store
