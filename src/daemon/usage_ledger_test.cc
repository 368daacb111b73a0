// The usage ledger alone (usage_ledger.h), over a real store in a temporary directory: a run's
// charge to its owner and project, stored in the commit of its end and found again after a
// restart, nothing charged for a run that held no card, and the owner told when a charge crosses
// 80 % of their weekly quota.
#include "daemon/usage_ledger.h"

#include <gtest/gtest.h>

#include <string>

#include "core/usage.h"
#include "testing/builders.h"
#include "testing/daemon/parts.h"
#include "testing/fake_clock.h"
#include "testing/temp_dir.h"

namespace rota::daemon {
namespace usage_ledger_test {
namespace {

constexpr Time kStart = 1796115600;  // Tuesday 2026-12-01 09:00 UTC

constexpr char kConfig[] = R"(
[users.alice]
quota = 10
[notify]
user_channels = ["lab"]
user_events = ["quota_80", "quota_100"]
[notify.channels.lab]
type = "webhook"
url = "http://127.0.0.1:9/lab"
)";

class UsageLedgerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StatusOr<config::Config> config = config::ParseConfig(kConfig, "rota.toml");
    ASSERT_TRUE(config.ok()) << config.status().message();
    config_ = std::move(*config);
    store_ = testing::OpenStore(dir_);
    ASSERT_NE(store_, nullptr);
    cards_.gpus = testing::Cards(2);  // GPU-0 and GPU-1
    notes_ = testing::QuietNotifications(*store_, clock_, config_);
    ledger_ = MakeLedger();
  }

  std::unique_ptr<UsageLedger> MakeLedger() {
    UsageLedger::Setup s;
    s.store = store_.get();
    s.config = &config_;
    s.cards = &cards_;
    s.notes = notes_.get();
    auto ledger = std::make_unique<UsageLedger>(s);
    EXPECT_TRUE(ledger->Load().ok());
    return ledger;
  }

  // alice's run on `cards` whole cards of project "vision", started at kStart.
  store::JobRecord Run(int cards) {
    store::JobRecord rec;
    rec.job.id = 1;
    rec.job.user = "alice";
    rec.job.project = "vision";
    rec.start_time = kStart;
    for (int i = 0; i < cards; ++i) rec.placement.alloc.gpus.push_back(i);
    return rec;
  }

  double WeekHours(const std::string& user) {
    auto it = ledger_->maps().users.find(user);
    return it == ledger_->maps().users.end()
               ? 0
               : WeekUsage(it->second, WeekStart(kStart, config_.policy)) / 3600;
  }

  size_t Queued() { return notes_->outbox()->List(std::nullopt)->size(); }

  testing::TempDir dir_{"rota-usage-ledger"};
  testing::FakeClock clock_{kStart};
  config::Config config_;
  ClusterState cards_;
  std::unique_ptr<store::JobStore> store_;
  std::unique_ptr<Notifications> notes_;
  std::unique_ptr<UsageLedger> ledger_;
};

TEST_F(UsageLedgerTest, ARunIsChargedToItsOwnerAndProjectAndStoredWithItsEnd) {
  const store::JobRecord rec = Run(2);
  ledger_->Charge(rec, kStart + kHour);
  EXPECT_DOUBLE_EQ(WeekHours("alice"), 2.0);
  EXPECT_DOUBLE_EQ(ledger_->maps().projects.at("vision").week_gpu_seconds, 2.0 * 3600);
  bool end_written = false;
  ASSERT_TRUE(ledger_
                  ->SaveWith(rec, kStart + kHour,
                             [&] {
                               end_written = true;
                               return Status();
                             })
                  .ok());
  EXPECT_TRUE(end_written);
  ledger_ = MakeLedger();  // a restart
  EXPECT_DOUBLE_EQ(WeekHours("alice"), 2.0);
  EXPECT_DOUBLE_EQ(ledger_->maps().projects.at("vision").week_gpu_seconds, 2.0 * 3600);
}

TEST_F(UsageLedgerTest, AnEndThatCannotBeWrittenIsSaidAndTheChargeIsKept) {
  const store::JobRecord rec = Run(1);
  ledger_->Charge(rec, kStart + kHour);
  const Status s = ledger_->SaveWith(rec, kStart + kHour, [] { return Unavailable("disk full"); });
  EXPECT_EQ(s.message(), "disk full");
  ledger_ = MakeLedger();
  EXPECT_DOUBLE_EQ(WeekHours("alice"), 1.0);
}

TEST_F(UsageLedgerTest, ARunThatNeverStartedOrHeldNoCardChargesNothing) {
  store::JobRecord never = Run(1);
  never.start_time = 0;
  ledger_->Charge(never, kStart + kHour);
  ledger_->Charge(Run(0), kStart + kHour);
  ledger_->Charge(Run(1), kStart - 1);  // an end before its start
  EXPECT_DOUBLE_EQ(WeekHours("alice"), 0.0);
  EXPECT_TRUE(ledger_->maps().projects.empty());
}

TEST_F(UsageLedgerTest, TheOwnerIsToldWhenAChargeCrossesEightyPercentOfTheirQuota) {
  const store::JobRecord rec = Run(2);
  ledger_->Charge(rec, kStart + 3 * kHour);  // 6 of 10 hours
  ASSERT_TRUE(ledger_->SaveWith(rec, kStart + 3 * kHour, [] { return Status(); }).ok());
  EXPECT_EQ(Queued(), 0u);
  ledger_->Charge(rec, kStart + kHour);  // 2 more: 8 of 10
  ASSERT_TRUE(ledger_->SaveWith(rec, kStart + kHour, [] { return Status(); }).ok());
  EXPECT_EQ(Queued(), 1u);
  EXPECT_EQ(notes_->outbox()->List(std::nullopt)->at(0).event, "quota_80");
}

}  // namespace
}  // namespace usage_ledger_test
}  // namespace rota::daemon
