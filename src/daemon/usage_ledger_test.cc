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

using nlohmann::json;

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
    config_ = testing::ParsedConfig(kConfig);
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

// A plain sbatch of alice's that the Slurm engine saw end: charged to her week and fair share
// once, stored, and listed in her report row; the same run seen end again (after a restart)
// charges nothing more, and crossing 80 % of her quota tells her, as a job of Rota's would.
TEST_F(UsageLedgerTest, ARunOutsideRotaIsChargedOnceAndReported) {
  const store::OutsideRun run{"4711", "alice", 4, kStart, kStart + 2 * kHour};  // 8 of her 10 hours
  ASSERT_TRUE(ledger_->ChargeOutside(run).ok());
  EXPECT_DOUBLE_EQ(WeekHours("alice"), 8.0);
  EXPECT_GT(ledger_->maps().users.at("alice").decayed_gpu_seconds, 0.0);
  EXPECT_TRUE(ledger_->maps().projects.empty());
  EXPECT_EQ(Queued(), 1u);
  EXPECT_EQ(notes_->outbox()->List(std::nullopt)->at(0).event, "quota_80");
  ledger_ = MakeLedger();  // a restart
  EXPECT_DOUBLE_EQ(WeekHours("alice"), 8.0);
  ASSERT_TRUE(ledger_->ChargeOutside(run).ok());  // seen end again
  EXPECT_DOUBLE_EQ(WeekHours("alice"), 8.0);
  EXPECT_EQ(Queued(), 1u);
  // Nothing to charge: no owner, no GPU, an end before its start.
  ASSERT_TRUE(ledger_->ChargeOutside({"1", "", 1, kStart, kStart + kHour}).ok());
  ASSERT_TRUE(ledger_->ChargeOutside({"2", "bob", 0, kStart, kStart + kHour}).ok());
  ASSERT_TRUE(ledger_->ChargeOutside({"3", "bob", 1, kStart, kStart - 1}).ok());
  EXPECT_EQ(ledger_->maps().users.count("bob"), 0u);

  const json report = ledger_->Report(testing::Person("alice", 20001), {{"days", 7}}, JobTable(), kStart + 3 * kHour);
  ASSERT_TRUE(report.value("ok", false)) << report.dump();
  ASSERT_EQ(report["users"].size(), 1u) << report.dump();
  EXPECT_DOUBLE_EQ(report["users"][0]["outside_gpu_hours"].get<double>(), 8.0);
  EXPECT_DOUBLE_EQ(report["users"][0]["week_gpu_hours"].get<double>(), 8.0);
  EXPECT_EQ(report["users"][0]["jobs"], 0);
}

// A run outside Rota still running counts so far where the scheduler plans (MapsWith: a copy,
// nothing stored), in `rota rules`' week hours and in the report; when it ends, its charge takes
// the place of the part so far, not added to it.
TEST_F(UsageLedgerTest, ARunOutsideRotaStillRunningCountsSoFarAndOnceItEnds) {
  const store::OutsideRun so_far{"4712", "alice", 2, kStart, kStart + kHour};
  const store::UsageMaps planned = ledger_->MapsWith({so_far, {"9", "", 1, kStart, kStart + kHour}});
  const Time week = WeekStart(kStart, config_.policy);
  EXPECT_DOUBLE_EQ(WeekUsage(planned.users.at("alice"), week), 2.0 * kHour);
  EXPECT_GT(planned.users.at("alice").decayed_gpu_seconds, 0.0);
  EXPECT_EQ(planned.users.size(), 1u);  // a run without an owner counts for nobody
  EXPECT_EQ(ledger_->maps().users.count("alice"), 0u);  // only a copy
  EXPECT_DOUBLE_EQ(ledger_->WeekHours(JobTable(), kStart + 2 * kHour, {so_far})["alice"], 2.0);
  json report = ledger_->Report(testing::Person("alice", 20001), {{"days", 7}}, JobTable(), kStart + 2 * kHour, {so_far});
  ASSERT_EQ(report["users"].size(), 1u) << report.dump();
  EXPECT_DOUBLE_EQ(report["users"][0]["week_gpu_hours"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(report["users"][0]["outside_gpu_hours"].get<double>(), 2.0);
  // It ended at kStart + 3 h: charged, no longer running.
  ASSERT_TRUE(ledger_->ChargeOutside({"4712", "alice", 2, kStart, kStart + 3 * kHour}).ok());
  EXPECT_DOUBLE_EQ(ledger_->WeekHours(JobTable(), kStart + 4 * kHour)["alice"], 6.0);
  report = ledger_->Report(testing::Person("alice", 20001), {{"days", 7}}, JobTable(), kStart + 4 * kHour);
  EXPECT_DOUBLE_EQ(report["users"][0]["week_gpu_hours"].get<double>(), 6.0);
  EXPECT_DOUBLE_EQ(report["users"][0]["outside_gpu_hours"].get<double>(), 6.0);
}

TEST_F(UsageLedgerTest, TheReportJoinsTheChargesWithWhatWasMeasuredAndShowsEachUserTheirOwn) {
  // Bob's run ended: 2 GPU-hours measured, half of them busy.
  store::JobRecord bobs;
  bobs.job.user = "bob";
  bobs.uid = 20002;
  bobs.job.request.gpus = 1;
  bobs.command = {"true"};
  StatusOr<JobId> bob_id = store_->Submit(bobs, kStart);
  ASSERT_TRUE(bob_id.ok());
  bobs.job.id = *bob_id;
  store::StartInfo start;
  start.placement.alloc.gpus = {0};
  start.placement.gpu_uuids = {"GPU-0"};
  ASSERT_TRUE(store_->MarkStarted(*bob_id, start, kStart).ok());
  bobs.Started(start, kStart);
  ledger_->Charge(bobs, kStart + 2 * kHour);
  ASSERT_TRUE(ledger_
                  ->SaveWith(bobs, kStart + 2 * kHour,
                             [&] {
                               store::JobMeasures m;
                               m.measured_gpu_seconds = 7200;
                               m.busy_gpu_seconds = 3600;
                               m.idle_gpu_seconds = 3600;
                               if (Status s = store_->AddJobMeasures(*bob_id, m); !s.ok()) return s;
                               return store_->MarkEnded(*bob_id, store::JobState::kCompleted, 0, "Completed",
                                                        kStart + 2 * kHour);
                             })
                  .ok());
  // Alice's runs still, on both cards: an hour measured, all of it busy.
  JobTable jobs;
  ActiveJob alices;
  alices.rec = Run(2);
  alices.rec.job.id = *bob_id + 1;
  alices.rec.state = store::JobState::kRunning;
  alices.measures.measured_gpu_seconds = 3600;
  alices.measures.busy_gpu_seconds = 3600;
  jobs.Add(alices);

  const Time now = kStart + 3 * kHour;
  const json mine = ledger_->Report(testing::Person("alice", 20001), {{"days", 7}}, jobs, now);
  ASSERT_TRUE(mine.value("ok", false)) << mine.dump();
  EXPECT_EQ(mine["days_covered"], 7);
  ASSERT_EQ(mine["users"].size(), 1u) << mine.dump();  // her own row only
  EXPECT_EQ(mine["users"][0]["name"], "alice");
  EXPECT_DOUBLE_EQ(mine["users"][0]["allocated_util"].get<double>(), 100.0);  // percent
  EXPECT_DOUBLE_EQ(mine["totals"]["idle_gpu_hours"].get<double>(), 1.0);  // the lab's totals: everyone's

  const json all = ledger_->Report(testing::Person("root", 0, true), json::object(), jobs, now);
  ASSERT_EQ(all["users"].size(), 2u) << all.dump();
  EXPECT_EQ(all["days_covered"], 28);
  for (const json& u : all["users"]) {
    if (u["name"] == "bob") {
      EXPECT_DOUBLE_EQ(u["allocated_util"].get<double>(), 50.0);
      EXPECT_DOUBLE_EQ(u["week_gpu_hours"].get<double>(), 2.0);
    }
  }
  EXPECT_FALSE(ledger_->Report(testing::Person("alice", 20001), {{"days", 0}}, jobs, now).value("ok", true));
  EXPECT_FALSE(ledger_->Report(testing::Person("alice", 20001), {{"days", "7"}}, jobs, now).value("ok", true));
}

}  // namespace
}  // namespace usage_ledger_test
}  // namespace rota::daemon
