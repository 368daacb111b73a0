// The cards' part alone (card_desk.h), over scripted cards (testing/daemon/fake_cards.h) and a
// real store: the inventory built from the first sample and answered for (status, gpus, idle
// cards), a source that fails as a whole, an admin's drain and resume, and a card that fails
// drain_after samples in a row stopping the job on it (and only that one). The same rules through
// a whole daemon on virtual time: cards_test.cc.
#include "daemon/card_desk.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "testing/daemon/fake_cards.h"
#include "testing/daemon/in_process.h"
#include "testing/daemon/parts.h"
#include "testing/fake_clock.h"
#include "testing/temp_dir.h"

namespace rota::daemon {
namespace card_desk_test {
namespace {

using nlohmann::json;

constexpr Time kStart = testing::kTuesdayMorning;

class CardDeskTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_ = testing::ParsedConfig(testing::SimulatedCards(2));
    store_ = testing::OpenStore(dir_);
    ASSERT_NE(store_, nullptr);
    notes_ = testing::QuietNotifications(*store_, clock_, config_);
    loop_ = testing::NewLoop();
    ASSERT_NE(loop_, nullptr);
    CardDesk::Setup setup;
    setup.store = store_.get();
    setup.clock = &clock_;
    setup.config = &config_;
    setup.loop = loop_.get();
    setup.devices = [this](const config::Config& c,
                           SimulatedLoadsFn loads) -> std::shared_ptr<device::Devices> {
      if (!fake_) fake_ = std::make_shared<testing::FakeCards>(MakeConfiguredDevices(c, std::move(loads)));
      return fake_;
    };
    setup.jobs = &jobs_;
    setup.cards = &cards_;
    setup.notes = notes_.get();
    setup.changed = [this] { ++changes_; };
    setup.stop = [this](ActiveJob& a, Time) { stopped_.push_back(a.rec.job.id); };
    setup.sampled = [this](Time) { ++sampled_; };
    desk_ = std::make_unique<CardDesk>(std::move(setup));
    ASSERT_TRUE(desk_->Open().ok());
  }

  // Job `id` of alice's, running on card `card` (the inventory loaded).
  void AddRunning(JobId id, int card) {
    ActiveJob a;
    a.rec.job.id = id;
    a.rec.job.user = "alice";
    a.rec.uid = 20001;
    a.rec.job.request.gpus = 1;
    a.rec.job.time_limit = kHour;
    a.rec.state = store::JobState::kRunning;
    a.rec.start_time = kStart;
    Allocation alloc;
    alloc.gpus = {card};
    a.rec.placement = cards_.PlacementOf(alloc);
    jobs_.Add(std::move(a));
  }

  json StatusJson() const {
    json out = json::object();
    desk_->AddToStatus(out);
    return out;
  }

  testing::TempDir dir_;
  testing::FakeClock clock_{kStart};
  config::Config config_;
  std::unique_ptr<store::JobStore> store_;
  std::unique_ptr<Notifications> notes_;
  std::unique_ptr<EventLoop> loop_;
  std::shared_ptr<testing::FakeCards> fake_;
  JobTable jobs_;
  Inventory cards_;
  std::unique_ptr<CardDesk> desk_;
  int changes_ = 0;
  int sampled_ = 0;
  std::vector<JobId> stopped_;
};

TEST_F(CardDeskTest, LoadsTheCardsFromTheFirstSampleAndAnswersForThem) {
  desk_->Load(kStart);
  ASSERT_EQ(cards_.gpus().size(), 2u);
  EXPECT_GT(changes_, 0);
  EXPECT_EQ(sampled_, 1);
  const json status = StatusJson();
  ASSERT_EQ(status["gpus"].size(), 2u) << status.dump();
  EXPECT_EQ(status["gpus"][1]["model"], "NVIDIA A100-SXM4-80GB");
  EXPECT_NE(status["devices"].get<std::string>().find("fake cards"), std::string::npos) << status.dump();
  EXPECT_FALSE(status.contains("devices_error"));
  EXPECT_EQ(desk_->IdleCards(), 2u);

  AddRunning(7, 1);
  EXPECT_EQ(desk_->IdleCards(), 1u);
  const json gpus = desk_->Gpus(testing::Person("alice", 20001));
  ASSERT_TRUE(gpus.value("ok", false)) << gpus.dump();
  ASSERT_EQ(gpus["gpus"].size(), 2u);
  EXPECT_TRUE(gpus["gpus"][0]["jobs"].empty());
  ASSERT_EQ(gpus["gpus"][1]["jobs"].size(), 1u) << gpus.dump();
  EXPECT_EQ(gpus["gpus"][1]["jobs"][0]["job_id"], 7);
  EXPECT_TRUE(gpus["gpus"][1]["jobs"][0]["mine"].get<bool>());
  EXPECT_FALSE(desk_->Gpus(testing::Person("bob", 20002))["gpus"][1]["jobs"][0]["mine"].get<bool>());
}

TEST_F(CardDeskTest, ASourceThatFailsLeavesNoCardAndSaysWhy) {
  // From the start: nothing to show but why.
  fake_ = std::make_shared<testing::FakeCards>(
      MakeConfiguredDevices(config_, [] { return std::vector<device::SimulatedLoad>{}; }));
  fake_->FailSamples(Unavailable("NVML is not loaded"));
  desk_->Load(kStart);
  EXPECT_TRUE(cards_.gpus().empty());
  EXPECT_EQ(StatusJson()["devices_error"], "NVML is not loaded");
  const json gpus = desk_->Gpus(testing::Person("alice", 20001));
  EXPECT_FALSE(gpus.value("ok", true));
  EXPECT_NE(gpus.dump().find("cannot read the GPUs: NVML is not loaded"), std::string::npos) << gpus.dump();
  EXPECT_EQ(sampled_, 0);  // nothing went on to the allocations

  // At a reload, after good samples: no card schedulable, the last good sample still shown.
  fake_->FailSamples(rota::Status());
  desk_->Load(kStart + 60);
  ASSERT_EQ(cards_.gpus().size(), 2u);
  fake_->FailSamples(Unavailable("NVML call timed out"));
  desk_->Load(kStart + 120);
  EXPECT_TRUE(cards_.gpus().empty());
  const json later = desk_->Gpus(testing::Person("alice", 20001));
  ASSERT_TRUE(later.value("ok", false)) << later.dump();
  EXPECT_EQ(later["sample_error"], "NVML call timed out");
  EXPECT_EQ(later["sampled_at"], kStart + 60);
  EXPECT_EQ(sampled_, 1);
}

TEST_F(CardDeskTest, AnAdminDrainsAndResumesACardByIndexOrUuid) {
  desk_->Load(kStart);
  const daemon::Caller root = testing::Person("root", 0, true);
  EXPECT_NE(desk_->Drain(root, {{"gpu", "1"}}).dump().find("needs a reason"), std::string::npos);
  EXPECT_FALSE(desk_->Drain(root, {{"gpu", "5"}, {"reason", "x"}}).value("ok", true));  // no such card
  const int before = changes_;
  const json drained = desk_->Drain(root, {{"gpu", "1"}, {"reason", "fan noise"}});
  ASSERT_TRUE(drained.value("ok", false)) << drained.dump();
  EXPECT_TRUE(cards_.gpus()[1].drained);
  EXPECT_FALSE(cards_.gpus()[0].drained);
  EXPECT_GT(changes_, before);
  EXPECT_TRUE(StatusJson()["gpus"][1]["drained"].get<bool>());
  EXPECT_EQ(desk_->InventoryReply()["gpus"][1]["drain_reason"], "fan noise");

  const json resumed = desk_->Resume(root, {{"gpu", cards_.gpus()[1].uuid}});
  ASSERT_TRUE(resumed.value("ok", false)) << resumed.dump();
  EXPECT_FALSE(cards_.gpus()[1].drained);
  EXPECT_FALSE(desk_->Resume(root, {{"gpu", "1"}}).value("ok", true));  // not drained any more
}

TEST_F(CardDeskTest, ACardThatFailsDrainAfterSamplesInARowStopsTheJobOnIt) {
  desk_->Load(kStart);
  AddRunning(7, 0);
  AddRunning(8, 1);
  fake_->SetHealth(0, Unavailable("GPU is lost"));
  for (int i = 1; i < config_.drain_after; ++i) desk_->Load(kStart + 60 * i);
  EXPECT_TRUE(stopped_.empty());  // suspect: nothing stops on a few bad reads
  desk_->Load(kStart + 60 * config_.drain_after);
  EXPECT_EQ(stopped_, std::vector<JobId>{7});
  EXPECT_NE(jobs_.at(7).node_fail.find("GPU 0 failed: GPU is lost"), std::string::npos)
      << jobs_.at(7).node_fail;
  EXPECT_TRUE(jobs_.at(8).node_fail.empty());
  EXPECT_TRUE(cards_.gpus()[0].drained);
  desk_->Load(kStart + 60 * (config_.drain_after + 1));
  EXPECT_EQ(stopped_.size(), 1u);  // once
}

// A cluster's MIG slices (one card in MIG mode per node and type) that its jobs outside Rota hold:
// the engine names a holder for each slice (ClusterHolders) without saying which slice, so as many
// are held, the last ones no Rota job is on; they take no new work and `rota gpus` says so. The
// card itself stays in service.
class CardDeskSlicesTest : public CardDeskTest {
 protected:
  void SetUp() override {
    CardDeskTest::SetUp();
    // The same desk over cards of which the second is in MIG mode with three slices.
    config_ = testing::ParsedConfig(
        "[gpus]\nsource = \"simulated\"\n[[gpus.card]]\nmemory = \"80G\"\n"
        "[[gpus.card]]\nmemory = \"80G\"\nmig = [\"1g.10gb\", \"1g.10gb\", \"1g.10gb\"]\n");
  }

  std::vector<bool> Held() const {
    std::vector<bool> held;
    for (const MigSlice& m : cards_.gpus()[1].mig) held.push_back(m.drained);
    return held;
  }
  std::vector<bool> HeldInGpus() const {
    std::vector<bool> held;
    const json gpus = desk_->Gpus(testing::Person("alice", 20001));
    for (const json& m : gpus["gpus"][1]["mig"]) held.push_back(m["held_outside"].get<bool>());
    return held;
  }
  // `n` slices of the second card held by bob's Slurm job 4711.
  void HoldSlices(int n) {
    std::vector<ClusterHolder> holders(static_cast<size_t>(n), ClusterHolder{cards_.gpus()[1].uuid, 20002, "4711"});
    desk_->SetClusterHolders(holders);
  }
};

TEST_F(CardDeskSlicesTest, SlicesHeldOutsideRotaAreTheLastOnesRotaIsNotOn) {
  desk_->Load(kStart);
  ASSERT_EQ(cards_.gpus().size(), 2u);
  ASSERT_EQ(cards_.gpus()[1].mig.size(), 3u);
  EXPECT_EQ(Held(), (std::vector<bool>{false, false, false}));

  const int before = changes_;
  HoldSlices(1);
  EXPECT_EQ(Held(), (std::vector<bool>{false, false, true}));
  EXPECT_EQ(HeldInGpus(), Held());
  EXPECT_GT(changes_, before);  // a pass sees it
  EXPECT_FALSE(cards_.gpus()[1].drained);  // the card's other slices still take work
  const json gpus = desk_->Gpus(testing::Person("bob", 20002));
  EXPECT_FALSE(gpus["gpus"][1]["held_outside"].get<bool>());
  ASSERT_EQ(gpus["gpus"][1]["held_by"].size(), 1u) << gpus.dump();
  EXPECT_EQ(gpus["gpus"][1]["held_by"][0]["slurm_job"], "4711");
  EXPECT_TRUE(gpus["gpus"][1]["held_by"][0]["mine"].get<bool>());

  // Rota's job on the last slice: the two held are the others.
  ActiveJob a;
  a.rec.job.id = 9;
  a.rec.job.user = "alice";
  a.rec.job.request.kind = RequestKind::kMig;
  a.rec.job.request.mig_profile = "1g.10gb";
  a.rec.state = store::JobState::kRunning;
  a.rec.start_time = kStart;
  Allocation alloc;
  alloc.gpus = {1};
  alloc.mig = 2;
  a.rec.placement = cards_.PlacementOf(alloc);
  jobs_.Add(std::move(a));
  HoldSlices(2);
  EXPECT_EQ(Held(), (std::vector<bool>{true, true, false}));
  HoldSlices(5);  // more than are free: every one Rota is not on
  EXPECT_EQ(Held(), (std::vector<bool>{true, true, false}));
  HoldSlices(0);  // the job outside Rota ended
  EXPECT_EQ(Held(), (std::vector<bool>{false, false, false}));
  EXPECT_TRUE(desk_->Gpus(testing::Person("bob", 20002))["gpus"][1]["held_by"].empty());
}

}  // namespace
}  // namespace card_desk_test
}  // namespace rota::daemon
