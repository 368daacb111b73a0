#include "store/schema.h"

#include <gtest/gtest.h>

#include <array>

#include "testing/temp_dir.h"

namespace rota::store {
namespace schema_test {
namespace {

TEST(SchemaTest, MigratesEmptyFileToLatest) {
  testing::TempDir dir;
  auto db = Db::Open(dir.File("a.db"));
  ASSERT_TRUE(db.ok());
  EXPECT_EQ(*SchemaVersion(**db), 0);
  ASSERT_TRUE(Migrate(**db).ok());
  EXPECT_EQ(*SchemaVersion(**db), LatestSchemaVersion());
  EXPECT_EQ(LatestSchemaVersion(), 16);
  for (const char* table : {"meta", "jobs", "job_events", "usage", "job_measures", "api_tokens", "outbox"}) {
    EXPECT_EQ(*(*db)->QueryText(
                  std::string("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = '") +
                  table + "'"),
              "1")
        << table;
  }
  // Migrating again is a no-op.
  ASSERT_TRUE(Migrate(**db).ok());
  EXPECT_EQ(*SchemaVersion(**db), LatestSchemaVersion());
}

TEST(SchemaTest, Version1DatabaseGainsInteractiveColumnAndKeepsJobs) {
  testing::TempDir dir;
  {
    auto db = Db::Open(dir.File("a.db"));
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(Migrate(**db, Migrations().first(1)).ok());
    ASSERT_TRUE((*db)->Exec("INSERT INTO jobs (user, uid, tier, request_kind, request_gpus, request_memory, "
                            "time_limit, submit_time, signal, grace, requeue, host_mem_per_gpu, state) "
                            "VALUES ('alice', 1000, 'regular', 'gpus', 1, 0, 60, 5, 10, 120, 0, 0, 'pending')")
                    .ok());
  }
  auto db = Db::Open(dir.File("a.db"));
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE(Migrate(**db).ok());
  EXPECT_EQ(*(*db)->QueryText("SELECT user || ':' || interactive FROM jobs"), "alice:0");
  // Version 9: no --after-ok for the jobs submitted before it.
  EXPECT_EQ(*(*db)->QueryText("SELECT after_ok_jobs FROM jobs"), "[]");
}

TEST(SchemaTest, Version12KeepsTheJobsOfVersion11WithoutAnImage) {
  testing::TempDir dir;
  {
    auto db = Db::Open(dir.File("a.db"));
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(Migrate(**db, Migrations().first(11)).ok());
    ASSERT_TRUE((*db)->Exec("INSERT INTO jobs (user, uid, tier, request_kind, request_gpus, request_memory, "
                            "time_limit, submit_time, signal, grace, requeue, host_mem_per_gpu, state) "
                            "VALUES ('alice', 1000, 'regular', 'gpus', 1, 0, 60, 5, 10, 120, 0, 0, 'running')")
                    .ok());
  }
  auto db = Db::Open(dir.File("a.db"));
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE(Migrate(**db).ok());
  EXPECT_EQ(*(*db)->QueryText("SELECT user || ':' || state || ':[' || image || ']' FROM jobs"), "alice:running:[]");
}

TEST(SchemaTest, Version13KeepsTheJobsOfVersion12WithoutADeadline) {
  testing::TempDir dir;
  {
    auto db = Db::Open(dir.File("a.db"));
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(Migrate(**db, Migrations().first(12)).ok());
    ASSERT_TRUE((*db)->Exec("INSERT INTO jobs (user, uid, tier, request_kind, request_gpus, request_memory, "
                            "time_limit, submit_time, signal, grace, requeue, host_mem_per_gpu, image, state) "
                            "VALUES ('alice', 1000, 'regular', 'gpus', 1, 0, 60, 5, 10, 120, 0, 0, 'x:1', 'pending')")
                    .ok());
  }
  auto db = Db::Open(dir.File("a.db"));
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE(Migrate(**db).ok());
  EXPECT_EQ(*(*db)->QueryText("SELECT image || ':' || state || ':' || deadline FROM jobs"), "x:1:pending:0");
  // And version 14: no forecast yet.
  EXPECT_EQ(*(*db)->QueryText("SELECT forecast_at || ':' || forecast_start FROM jobs"), "0:0");
}

TEST(SchemaTest, Version10ScopesOldTokensFullAndDropsEndedJobsEnvironments) {
  testing::TempDir dir;
  {
    auto db = Db::Open(dir.File("a.db"));
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(Migrate(**db, Migrations().first(9)).ok());
    for (const char* state : {"pending", "completed"}) {
      ASSERT_TRUE((*db)->Exec(std::string("INSERT INTO jobs (user, uid, tier, request_kind, request_gpus, "
                                          "request_memory, time_limit, submit_time, signal, grace, requeue, "
                                          "host_mem_per_gpu, state, env) VALUES ('alice', 1000, 'regular', 'gpus', "
                                          "1, 0, 60, 5, 10, 120, 0, 0, '") +
                              state + "', '{\"SECRET\":\"x\"}')")
                      .ok());
    }
    ASSERT_TRUE((*db)->Exec("INSERT INTO api_tokens (hash, user, uid, created) VALUES ('h', 'alice', 1000, 1)").ok());
  }
  auto db = Db::Open(dir.File("a.db"));
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE(Migrate(**db).ok());
  EXPECT_EQ(*(*db)->QueryText("SELECT group_concat(state || '=' || env, ' ') FROM jobs"),
            "pending={\"SECRET\":\"x\"} completed={}");
  EXPECT_EQ(*(*db)->QueryText("SELECT scope FROM api_tokens"), "full");
  EXPECT_FALSE((*db)->Exec("UPDATE api_tokens SET scope = 'root'").ok());  // only the three scopes
}

TEST(SchemaTest, MigratesOlderDatabaseAndKeepsData) {
  testing::TempDir dir;
  const std::array<std::string_view, 1> v1 = {"CREATE TABLE t (a INTEGER)"};
  const std::array<std::string_view, 2> v2 = {"CREATE TABLE t (a INTEGER)",
                                              "ALTER TABLE t ADD COLUMN b TEXT NOT NULL DEFAULT 'new'"};
  {
    auto db = Db::Open(dir.File("a.db"));
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(Migrate(**db, v1).ok());
    ASSERT_TRUE((*db)->Exec("INSERT INTO t VALUES (7)").ok());
  }
  auto db = Db::Open(dir.File("a.db"));
  ASSERT_TRUE(db.ok());
  EXPECT_EQ(*SchemaVersion(**db), 1);
  ASSERT_TRUE(Migrate(**db, v2).ok());
  EXPECT_EQ(*SchemaVersion(**db), 2);
  EXPECT_EQ(*(*db)->QueryText("SELECT a || b FROM t"), "7new");
}

TEST(SchemaTest, RefusesNewerVersion) {
  testing::TempDir dir;
  const std::array<std::string_view, 2> v2 = {"CREATE TABLE t (a INTEGER)", "CREATE TABLE u (a INTEGER)"};
  {
    auto db = Db::Open(dir.File("a.db"));
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(Migrate(**db, v2).ok());
  }
  auto db = Db::Open(dir.File("a.db"));
  ASSERT_TRUE(db.ok());
  Status s = Migrate(**db, std::span<const std::string_view>(v2).first(1));
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("schema version 2"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("newer"), std::string::npos) << s.ToString();
  EXPECT_EQ(*SchemaVersion(**db), 2);  // untouched
}

TEST(SchemaTest, FailedStepLeavesPreviousVersion) {
  testing::TempDir dir;
  const std::array<std::string_view, 2> steps = {"CREATE TABLE t (a INTEGER)",
                                                 "CREATE TABLE u (a INTEGER); SELEKT broken"};
  auto db = Db::Open(dir.File("a.db"));
  ASSERT_TRUE(db.ok());
  Status s = Migrate(**db, steps);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("schema version 2"), std::string::npos) << s.ToString();
  EXPECT_EQ(*SchemaVersion(**db), 1);
  // The half-applied step was rolled back with its transaction.
  EXPECT_EQ(*(*db)->QueryText("SELECT count(*) FROM sqlite_schema WHERE name = 'u'"), "0");
}

}  // namespace
}  // namespace schema_test
}  // namespace rota::store
