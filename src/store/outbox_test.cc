// Tests of the notifications' outbox: rows survive reopening the database, each settles once.
#include "store/outbox.h"

#include <gtest/gtest.h>

#include "store/job_store.h"
#include "testing/temp_dir.h"

namespace rota::store {
namespace outbox_test {
namespace {

constexpr Time kT0 = 1'764'576'000;

OutboxRow Row(std::string channel, std::string event, Time next) {
  OutboxRow r;
  r.channel = std::move(channel);
  r.recipient = "alice";
  r.mentions = {"alice@lab.example.edu"};
  r.event = std::move(event);
  r.language = "zh";
  r.subject = "作业 17 已结束";
  r.body = "line 1\nline 2";
  r.created = kT0;
  r.next_attempt = next;
  return r;
}

TEST(Outbox, EnqueueSurvivesReopenAndIsDueInOrder) {
  testing::TempDir dir;
  std::vector<std::int64_t> ids;
  {
    auto store = JobStore::Open(dir.File("rota.db"));
    ASSERT_TRUE(store.ok()) << store.status().message();
    Outbox out((*store)->db());
    auto got = out.Enqueue({Row("mail", "job_ended", kT0 + 5), Row("lab", "job_ended", kT0)});
    ASSERT_TRUE(got.ok()) << got.status().message();
    ids = *got;
    ASSERT_EQ(ids.size(), 2u);
  }
  auto store = JobStore::Open(dir.File("rota.db"));
  ASSERT_TRUE(store.ok());
  Outbox out((*store)->db());
  auto next = out.NextDue();
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(*next, kT0);
  auto due = out.Due(kT0, 10);
  ASSERT_TRUE(due.ok());
  ASSERT_EQ(due->size(), 1u);
  EXPECT_EQ((*due)[0].channel, "lab");
  due = out.Due(kT0 + 5, 10);
  ASSERT_EQ(due->size(), 2u);
  EXPECT_EQ((*due)[0].id, ids[1]);  // earliest attempt first
  const OutboxRow& r = (*due)[1];
  EXPECT_EQ(r.subject, "作业 17 已结束");
  EXPECT_EQ(r.body, "line 1\nline 2");
  EXPECT_EQ(r.mentions, std::vector<std::string>{"alice@lab.example.edu"});
  EXPECT_EQ(r.language, "zh");
  EXPECT_EQ(r.recipient, "alice");
  EXPECT_EQ(r.state, OutboxState::kPending);
  EXPECT_EQ(r.attempts, 0);
  EXPECT_FALSE(r.delivered.has_value());
}

TEST(Outbox, SentOnceRetryDeferAndFail) {
  testing::TempDir dir;
  auto store = JobStore::Open(dir.File("rota.db"));
  ASSERT_TRUE(store.ok());
  Outbox out((*store)->db());
  auto ids =
      out.Enqueue({Row("mail", "job_ended", kT0), Row("lab", "idle_warning", kT0), Row("x", "test", kT0)});
  ASSERT_TRUE(ids.ok());
  const std::int64_t a = (*ids)[0], b = (*ids)[1], c = (*ids)[2];

  ASSERT_TRUE(out.MarkSent(a, 1, kT0 + 1).ok());
  // Settled rows are not due and cannot be settled again.
  EXPECT_EQ(out.MarkSent(a, 2, kT0 + 2).code(), StatusCode::kNotFound);
  EXPECT_EQ(out.MarkFailed(a, 2, "late").code(), StatusCode::kNotFound);
  auto got = out.Get(a);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->state, OutboxState::kSent);
  EXPECT_EQ(got->delivered, kT0 + 1);
  EXPECT_EQ(got->attempts, 1);

  ASSERT_TRUE(out.Retry(b, 1, kT0 + 30, "HTTP 500").ok());
  ASSERT_TRUE(out.Defer(c, kT0 + 3).ok());
  auto due = out.Due(kT0 + 10, 10);
  ASSERT_TRUE(due.ok());
  ASSERT_EQ(due->size(), 1u);
  EXPECT_EQ((*due)[0].id, c);
  EXPECT_EQ((*due)[0].attempts, 0);  // a deferral is not an attempt
  got = out.Get(b);
  EXPECT_EQ(got->attempts, 1);
  EXPECT_EQ(got->last_error, "HTTP 500");
  EXPECT_EQ(got->next_attempt, kT0 + 30);

  ASSERT_TRUE(out.MarkFailed(b, 2, "gave up after 2 attempts: HTTP 500").ok());
  EXPECT_EQ(out.Get(b)->state, OutboxState::kFailed);
  EXPECT_EQ(out.Retry(b, 3, kT0, "again").code(), StatusCode::kNotFound);
  auto pending = out.List(OutboxState::kPending);
  ASSERT_TRUE(pending.ok());
  ASSERT_EQ(pending->size(), 1u);
  EXPECT_EQ((*pending)[0].id, c);
  EXPECT_EQ(out.List(std::nullopt)->size(), 3u);
  EXPECT_EQ(*out.NextDue(), kT0 + 3);
}

}  // namespace
}  // namespace outbox_test
}  // namespace rota::store

namespace rota::store {
namespace outbox_test {
namespace {

TEST(Outbox, CountByStateForMetrics) {
  testing::TempDir dir;
  auto store = JobStore::Open(dir.File("rota.db"));
  ASSERT_TRUE(store.ok()) << store.status().message();
  Outbox out((*store)->db());
  auto empty = out.CountByState();
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
  auto ids = out.Enqueue({Row("mail", "job_ended", kT0), Row("lab", "job_ended", kT0), Row("lab", "test", kT0)});
  ASSERT_TRUE(ids.ok());
  ASSERT_TRUE(out.MarkSent((*ids)[0], 1, kT0 + 1).ok());
  ASSERT_TRUE(out.MarkFailed((*ids)[1], 3, "HTTP 403").ok());
  auto counts = out.CountByState();
  ASSERT_TRUE(counts.ok()) << counts.status().message();
  EXPECT_EQ(*counts, (std::map<std::string, std::int64_t>{{"failed", 1}, {"pending", 1}, {"sent", 1}}));
}

TEST(Outbox, RecentIsNewestFirstSinceAStateAndLimited) {
  testing::TempDir dir;
  auto store = JobStore::Open(dir.File("rota.db"));
  ASSERT_TRUE(store.ok()) << store.status().message();
  Outbox out((*store)->db());
  std::vector<OutboxRow> rows;
  for (int i = 0; i < 4; ++i) {
    rows.push_back(Row("lab", "e" + std::to_string(i), kT0));
    rows.back().created = kT0 + i;
  }
  auto ids = out.Enqueue(rows);
  ASSERT_TRUE(ids.ok());
  ASSERT_TRUE(out.MarkFailed((*ids)[1], 1, "refused").ok());
  ASSERT_TRUE(out.MarkFailed((*ids)[3], 1, "refused").ok());
  auto all = out.Recent(kT0 + 1, std::nullopt, 10);
  ASSERT_TRUE(all.ok()) << all.status().message();
  ASSERT_EQ(all->size(), 3u);  // created at kT0 + 1 or later
  EXPECT_EQ((*all)[0].event, "e3");
  EXPECT_EQ((*all)[2].event, "e1");
  auto failed = out.Recent(kT0, OutboxState::kFailed, 10);
  ASSERT_TRUE(failed.ok());
  ASSERT_EQ(failed->size(), 2u);
  EXPECT_EQ((*failed)[0].event, "e3");
  EXPECT_EQ((*failed)[0].last_error, "refused");
  auto one = out.Recent(kT0, std::nullopt, 1);
  ASSERT_TRUE(one.ok());
  ASSERT_EQ(one->size(), 1u);
  EXPECT_EQ((*one)[0].event, "e3");
}

TEST(Outbox, PruneDeletesOldSettledRowsAndKeepsTheTotals) {
  testing::TempDir dir;
  std::int64_t kept_sent = 0, old_pending = 0;
  {
    auto store = JobStore::Open(dir.File("rota.db"));
    ASSERT_TRUE(store.ok()) << store.status().message();
    Outbox out((*store)->db());
    OutboxRow fresh = Row("lab", "job_ended", kT0);
    fresh.created = kT0 + 100;
    auto ids = out.Enqueue({Row("mail", "a", kT0), Row("mail", "b", kT0), Row("lab", "c", kT0), Row("lab", "d", kT0), fresh});
    ASSERT_TRUE(ids.ok()) << ids.status().message();
    ASSERT_TRUE(out.MarkSent((*ids)[0], 1, kT0 + 1).ok());
    ASSERT_TRUE(out.MarkSent((*ids)[1], 1, kT0 + 1).ok());
    ASSERT_TRUE(out.MarkFailed((*ids)[2], 3, "HTTP 403").ok());
    old_pending = (*ids)[3];  // as old, but not settled: never pruned
    ASSERT_TRUE(out.MarkSent((*ids)[4], 1, kT0 + 101).ok());
    kept_sent = (*ids)[4];

    auto pruned = out.Prune(kT0 + 50);
    ASSERT_TRUE(pruned.ok()) << pruned.status().message();
    EXPECT_EQ(*pruned, 3);
    auto again = out.Prune(kT0 + 50);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*again, 0);  // nothing twice: the totals are not added to again
  }
  auto store = JobStore::Open(dir.File("rota.db"));
  ASSERT_TRUE(store.ok());
  Outbox out((*store)->db());
  auto left = out.List(std::nullopt);
  ASSERT_TRUE(left.ok());
  ASSERT_EQ(left->size(), 2u);
  EXPECT_EQ((*left)[0].id, old_pending);
  EXPECT_EQ((*left)[1].id, kept_sent);
  auto counts = out.CountByState();
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ(*counts, (std::map<std::string, std::int64_t>{{"pending", 1}, {"sent", 1}}));
  auto totals = out.SettledTotals();  // the rows kept and those pruned
  ASSERT_TRUE(totals.ok()) << totals.status().message();
  EXPECT_EQ(*totals, (std::map<std::string, std::int64_t>{{"failed", 1}, {"sent", 3}}));
  // A second prune adds to the totals.
  ASSERT_TRUE(out.MarkSent(old_pending, 1, kT0 + 200).ok());
  auto pruned = out.Prune(kT0 + 1000);
  ASSERT_TRUE(pruned.ok());
  EXPECT_EQ(*pruned, 2);
  totals = out.SettledTotals();
  ASSERT_TRUE(totals.ok());
  EXPECT_EQ(*totals, (std::map<std::string, std::int64_t>{{"failed", 1}, {"sent", 4}}));
}

}  // namespace
}  // namespace outbox_test
}  // namespace rota::store
