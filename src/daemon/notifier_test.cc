// Tests of the notifier thread with fake channels and a real database: rows are delivered and
// marked once, a rate limit defers without counting an attempt, a refusal fails the row and the
// admins hear of the channel once, and rows left when it stops are still pending.
#include "daemon/notifier.h"

#include <gtest/gtest.h>

#include <chrono>
#include <ctime>
#include <thread>

#include "store/job_store.h"
#include "testing/temp_dir.h"

namespace rota::daemon {
namespace notifier_test {
namespace {

class FakeChannel : public notify::Channel {
 public:
  Status Send(const notify::Message& m) override {
    std::lock_guard<std::mutex> lock(mu_);
    sent_.push_back(m);
    if (answers_.empty()) return Status();
    Status s = answers_.front();
    answers_.erase(answers_.begin());
    return s;
  }
  std::string Describe() const override { return "fake"; }
  void Answer(std::vector<Status> answers) {
    std::lock_guard<std::mutex> lock(mu_);
    answers_ = std::move(answers);
  }
  std::vector<notify::Message> sent() {
    std::lock_guard<std::mutex> lock(mu_);
    return sent_;
  }

 private:
  std::mutex mu_;
  std::vector<Status> answers_;
  std::vector<notify::Message> sent_;
};

store::OutboxRow Row(const std::string& channel, const std::string& subject) {
  store::OutboxRow r;
  r.channel = channel;
  r.recipient = "alice";
  r.event = "job_ended";
  r.language = "en";
  r.subject = subject;
  r.body = "body";
  r.created = r.next_attempt = static_cast<Time>(std::time(nullptr));
  return r;
}

template <typename F>
bool WaitFor(F done) {
  for (int i = 0; i < 500; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return done();
}

class NotifierTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = store::JobStore::Open(dir_.File("rota.db"));
    ASSERT_TRUE(store.ok()) << store.status().message();
    store_ = std::move(*store);
    outbox_ = std::make_unique<store::Outbox>(store_->db());
  }
  NotifierOptions Options() {
    NotifierOptions o;
    o.db_path = dir_.File("rota.db");
    o.channels = {{"lab", lab_}, {"admin", admin_}};
    o.per_minute = {{"lab", 0}, {"admin", 0}};
    o.admin_channels = {"admin", "lab"};
    o.language = "en";
    o.fail_after = 3;
    return o;
  }
  store::OutboxState StateOf(std::int64_t id) { return outbox_->Get(id)->state; }

  testing::TempDir dir_;
  std::unique_ptr<store::JobStore> store_;
  std::unique_ptr<store::Outbox> outbox_;
  std::shared_ptr<FakeChannel> lab_ = std::make_shared<FakeChannel>();
  std::shared_ptr<FakeChannel> admin_ = std::make_shared<FakeChannel>();
};

TEST_F(NotifierTest, DeliversOnceAndRateLimitsDefer) {
  NotifierOptions o = Options();
  o.per_minute["lab"] = 2;  // a bucket of one token, the next in 60 s
  auto ids = outbox_->Enqueue({Row("lab", "one"), Row("lab", "two")});
  ASSERT_TRUE(ids.ok());
  auto n = Notifier::Start(o);
  ASSERT_TRUE(n.ok()) << n.status().message();
  ASSERT_TRUE(WaitFor([&] { return StateOf((*ids)[0]) == store::OutboxState::kSent; }));
  ASSERT_TRUE(WaitFor([&] { return outbox_->Get((*ids)[1])->next_attempt > std::time(nullptr) + 30; }));
  auto second = outbox_->Get((*ids)[1]);
  EXPECT_EQ(second->state, store::OutboxState::kPending);
  EXPECT_EQ(second->attempts, 0);  // waiting for a token is not an attempt
  n->reset();
  ASSERT_EQ(lab_->sent().size(), 1u);
  EXPECT_EQ(lab_->sent()[0].subject, "one");
  EXPECT_EQ(outbox_->Get((*ids)[0])->attempts, 1);
}

TEST_F(NotifierTest, DeletesSettledMessagesOlderThanKeepMessages) {
  const Time now = static_cast<Time>(std::time(nullptr));
  store::OutboxRow old_row = Row("lab", "old"), recent = Row("lab", "recent"), waiting = Row("lab", "waiting");
  old_row.created = now - 10 * kDay;
  recent.created = now - 2 * kDay;
  waiting.created = now - 10 * kDay;
  waiting.next_attempt = now + 3600;  // not due: stays pending while the notifier runs
  auto ids = outbox_->Enqueue({old_row, recent, waiting});
  ASSERT_TRUE(ids.ok());
  ASSERT_TRUE(outbox_->MarkSent((*ids)[0], 1, now - 10 * kDay).ok());
  ASSERT_TRUE(outbox_->MarkSent((*ids)[1], 1, now - 2 * kDay).ok());
  NotifierOptions o = Options();
  o.keep_messages = 7 * kDay;
  auto n = Notifier::Start(o);
  ASSERT_TRUE(n.ok()) << n.status().message();
  ASSERT_TRUE(WaitFor([&] { return !outbox_->Get((*ids)[0]).ok(); })) << "the old sent message was not deleted";
  n->reset();
  EXPECT_EQ(StateOf((*ids)[1]), store::OutboxState::kSent);
  EXPECT_EQ(StateOf((*ids)[2]), store::OutboxState::kPending);
  EXPECT_EQ(outbox_->SettledTotals()->at("sent"), 2);
}

TEST_F(NotifierTest, RetriesThenARefusalFailsAndTheAdminsHearOnce) {
  lab_->Answer({Unavailable("HTTP 500"), FailedPrecondition("code 19024 keyword not found"),
                FailedPrecondition("code 19024 keyword not found")});
  NotifierOptions o = Options();
  o.retry.first_backoff = 1;
  auto n = Notifier::Start(o);
  ASSERT_TRUE(n.ok());
  auto ids = outbox_->Enqueue({Row("lab", "a")});
  (*n)->Wake();
  // 500 then (a second later) the refusal: failed, with the platform's reason.
  ASSERT_TRUE(WaitFor([&] { return StateOf((*ids)[0]) == store::OutboxState::kFailed; }));
  EXPECT_EQ(outbox_->Get((*ids)[0])->attempts, 2);
  EXPECT_EQ(outbox_->Get((*ids)[0])->last_error, "code 19024 keyword not found");
  auto more = outbox_->Enqueue({Row("lab", "b")});
  (*n)->Wake();
  ASSERT_TRUE(WaitFor([&] { return StateOf((*more)[0]) == store::OutboxState::kFailed; }));
  ASSERT_TRUE(WaitFor([&] { return admin_->sent().size() == 1; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ASSERT_EQ(admin_->sent().size(), 1u);  // once, not per failed message
  EXPECT_EQ(admin_->sent()[0].event, "channel_failing");
  EXPECT_NE(admin_->sent()[0].text.find("19024"), std::string::npos);
  // The failing channel does not carry its own report.
  for (const notify::Message& m : lab_->sent()) EXPECT_NE(m.event, "channel_failing");
}

TEST_F(NotifierTest, ReconfigureTakesNewChannelsBetweenSends) {
  auto n = Notifier::Start(Options());
  ASSERT_TRUE(n.ok());
  auto mail = std::make_shared<FakeChannel>();
  NotifierOptions o = Options();
  o.channels = {{"mail", mail}};  // "lab" and "admin" are gone
  (*n)->Reconfigure(o);
  auto ids = outbox_->Enqueue({Row("lab", "old"), Row("mail", "new")});
  (*n)->Wake();
  ASSERT_TRUE(WaitFor([&] { return StateOf((*ids)[1]) == store::OutboxState::kSent; }));
  ASSERT_TRUE(WaitFor([&] { return StateOf((*ids)[0]) == store::OutboxState::kFailed; }));
  EXPECT_EQ(outbox_->Get((*ids)[0])->last_error, "channel lab is no longer configured");
  EXPECT_TRUE(lab_->sent().empty());
  EXPECT_EQ(mail->sent().size(), 1u);
}

TEST_F(NotifierTest, TestSendsReportThroughTheEventFd) {
  lab_->Answer({Unavailable("HTTP 502")});
  auto n = Notifier::Start(Options());
  ASSERT_TRUE(n.ok());
  notify::Message m;
  m.subject = "test";
  (*n)->Test(7, "lab", m);
  (*n)->Test(7, "nope", m);
  std::vector<TestResult> got;
  ASSERT_TRUE(WaitFor([&] {
    for (TestResult& r : (*n)->TakeResults()) got.push_back(std::move(r));
    return got.size() == 2;
  }));
  EXPECT_EQ(got[0].token, 7u);
  EXPECT_EQ(got[0].status.message(), "HTTP 502");
  EXPECT_EQ(got[0].describe, "fake");
  EXPECT_EQ(got[1].status.code(), StatusCode::kNotFound);
  // A test is not an outbox row.
  EXPECT_TRUE(outbox_->List(std::nullopt)->empty());
}

}  // namespace
}  // namespace notifier_test
}  // namespace rota::daemon
