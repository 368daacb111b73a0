// What users read of jobs, alone (job_views.h), over a real store in a temporary directory and a
// job table: whose details one may see, the queue's order, past jobs a page at a time, and whose
// events one is shown. Output files opened with their owner's rights need real users:
// tests/daemon/test_permissions.py.
#include "daemon/job_views.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "testing/daemon/parts.h"
#include "testing/fake_clock.h"
#include "testing/temp_dir.h"

namespace rota::daemon {
namespace job_views_test {
namespace {

using nlohmann::json;
using testing::Person;

constexpr Time kNow = 1796115600;

std::vector<JobId> Ids(const json& jobs) {
  std::vector<JobId> out;
  for (const json& j : jobs) out.push_back(j.value("id", JobId{0}));
  return out;
}

class JobViewsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = testing::OpenStore(dir_);
    ASSERT_NE(store_, nullptr);
    JobViews::Setup s;
    s.store = store_.get();
    s.clock = &clock_;
    s.config = &config_;
    s.jobs = &jobs_;
    s.cards = &cards_;
    s.accounts = [](uid_t uid) -> StatusOr<UnixAccount> {
      return NotFound("no user " + std::to_string(uid));
    };
    views_ = std::make_unique<JobViews>(std::move(s));
  }

  // A job of `who` in the store (pending), and in the table unless `ended`: then it is ended in
  // the store as cancelled at `end`.
  JobId Job(const Caller& who, bool ended = false, Time end = kNow) {
    store::JobRecord rec;
    rec.job.user = who.name;
    rec.uid = who.uid;
    rec.job.request.gpus = 1;
    rec.job.time_limit = kHour;
    rec.command = {"train"};
    StatusOr<JobId> id = store_->Submit(rec, kNow - kHour);
    EXPECT_TRUE(id.ok());
    rec.job.id = *id;
    if (ended) {
      EXPECT_TRUE(store_->Cancel(*id, who.name, end, "Cancelled").ok());
      return *id;
    }
    ActiveJob a;
    a.rec = rec;
    jobs_.Add(std::move(a));
    return *id;
  }

  testing::TempDir dir_{"rota-job-views"};
  testing::FakeClock clock_{kNow};
  config::Config config_;
  JobTable jobs_;
  Inventory cards_;
  std::unique_ptr<store::JobStore> store_;
  std::unique_ptr<JobViews> views_;
  const Caller alice_ = Person("alice", 20001);
  const Caller bob_ = Person("bob", 20002);
  const Caller root_ = Person("root", 0, true);
};

TEST_F(JobViewsTest, OnesOwnJobsDetailsAreOnesOwnAndAdminsSeeAll) {
  const JobId mine = Job(alice_);
  const JobId old = Job(alice_, /*ended=*/true);
  EXPECT_TRUE(views_->Visible(alice_, mine).ok());
  EXPECT_EQ(views_->Visible(alice_, old)->state, store::JobState::kCancelled);  // from the store
  const StatusOr<store::JobRecord> theirs = views_->Visible(bob_, mine);
  EXPECT_EQ(theirs.status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(theirs.status().message(),
            "job " + std::to_string(mine) +
                " belongs to alice; only they and admins may see its details or act on it");
  EXPECT_TRUE(views_->Visible(root_, mine).ok());
  EXPECT_EQ(views_->Visible(alice_, 999).status().message(), "no job 999");

  const json shown = views_->Show(bob_, {{"job_id", mine}});
  EXPECT_EQ(shown["error"]["code"], "permission_denied") << shown.dump();
  const json own = views_->Show(alice_, {{"job_id", mine}});
  ASSERT_TRUE(own.value("ok", false)) << own.dump();
  EXPECT_EQ(own["job"]["user"], "alice");
  EXPECT_EQ(own["events"][0]["reason"], "Submitted");
}

TEST_F(JobViewsTest, TheQueueListsRunningThenPendingInThePassesOrderThenTheNewest) {
  const JobId a = Job(alice_);
  const JobId b = Job(alice_);
  const JobId c = Job(alice_);
  const JobId d = Job(bob_);
  jobs_.at(d).rec.state = store::JobState::kRunning;
  // The last pass put c before a; b came after it.
  jobs_.NoteWaiting({PendingInfo{c, WaitReason::kResources, kNow + 60, false, {}},
                     PendingInfo{a, WaitReason::kPriority, kNow + 120, false, {}}},
                    AfterOk(), kNow);
  EXPECT_EQ(Ids(views_->Queue(alice_, json::object())["jobs"]), (std::vector<JobId>{c, a, b}));
  EXPECT_EQ(Ids(views_->Queue(alice_, {{"all", true}})["jobs"]), (std::vector<JobId>{d, c, a, b}));
  const json queue = views_->Queue(alice_, json::object());
  EXPECT_EQ(queue["jobs"][0]["pending"]["reason"], "resources") << queue.dump();
  EXPECT_FALSE(queue["jobs"][2].contains("pending"));  // not in the last pass yet
}

TEST_F(JobViewsTest, ARunningJobOnAClusterSaysItsNode) {
  device::Snapshot snap;
  for (const char* node : {"n1", "n2"}) {
    device::GpuInfo g;
    g.uuid = std::string("SLURM-") + node + "-0";
    g.index = static_cast<int>(snap.gpus.size());
    g.node = node;
    g.memory_total = 81920;
    snap.gpus.push_back(g);
  }
  cards_.Load(&snap);
  const JobId running = Job(alice_);
  const JobId waiting = Job(alice_);
  jobs_.at(running).rec.state = store::JobState::kRunning;
  jobs_.at(running).rec.placement.alloc.gpus = {1};
  const json jobs = views_->Queue(alice_, json::object())["jobs"];
  ASSERT_EQ(Ids(jobs), (std::vector<JobId>{running, waiting}));
  EXPECT_EQ(jobs[0].value("node", ""), "n2") << jobs[0].dump();
  EXPECT_FALSE(jobs[1].contains("node"));
  // This machine's cards name no node: neither does the job.
  snap.gpus[0].node = snap.gpus[1].node = "";
  cards_.Load(&snap);
  EXPECT_FALSE(views_->Queue(alice_, json::object())["jobs"][0].contains("node"));
}

TEST_F(JobViewsTest, HistoryComesAPageAtATimeAndOthersJobsOnlyWithAll) {
  std::vector<JobId> ended;
  for (int i = 0; i < 5; ++i) ended.push_back(Job(alice_, true, kNow - 100 + i));
  const JobId bobs = Job(bob_, true, kNow);
  std::vector<JobId> seen;
  json request = {{"limit", 2}};
  for (int pages = 0; pages < 10; ++pages) {
    const json page = views_->History(alice_, request);
    ASSERT_TRUE(page.value("ok", false)) << page.dump();
    for (JobId id : Ids(page["jobs"])) seen.push_back(id);
    if (!page.contains("next")) break;
    EXPECT_EQ(page["jobs"].size(), 2u);
    request["after"] = page["next"];
  }
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, ended);  // each once, bob's not among them
  const std::vector<JobId> all = Ids(views_->History(root_, {{"all", true}, {"limit", 100}})["jobs"]);
  EXPECT_EQ(all.size(), 6u);
  EXPECT_NE(std::find(all.begin(), all.end(), bobs), all.end());
  EXPECT_EQ(views_->History(alice_, {{"limit", 0}})["error"]["code"], "invalid_argument");
  EXPECT_EQ(views_->History(alice_, {{"after", "yesterday"}})["error"]["code"], "invalid_argument");
}

TEST_F(JobViewsTest, EventsAreOnesOwnAndEveryonesOnlyForAdmins) {
  Job(alice_);
  const JobId bobs = Job(bob_);
  const json mine = views_->Events(alice_, {{"since", 0}});
  ASSERT_TRUE(mine.value("ok", false)) << mine.dump();
  for (const json& e : mine["events"]) EXPECT_EQ(e["user"], "alice") << e.dump();
  EXPECT_EQ(mine["events"].size(), 1u);
  EXPECT_EQ(views_->Events(alice_, {{"all", true}})["error"]["code"], "permission_denied");
  EXPECT_EQ(views_->Events(alice_, {{"job_id", bobs}})["error"]["code"], "permission_denied");
  EXPECT_EQ(views_->Events(root_, {{"all", true}, {"since", 0}})["events"].size(), 2u);
}

}  // namespace
}  // namespace job_views_test
}  // namespace rota::daemon
