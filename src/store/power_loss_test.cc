// Power loss below SQLite (docs/store.md, "Power loss"): a mixed workload of the daemon's writes
// runs on a store whose files go through CrashVfs (src/testing/store/crash_vfs.h); the power fails
// at a random write, sync or truncation; the files are put back as a disk could have them; the
// database is reopened as a restarted rotad opens it. The recovered database must be exactly the
// state after some prefix of the workload that holds every change acknowledged as durable: what a
// user was told (a submission, a cancel, a booking) and what the notifier recorded as sent.
// Bookkeeping written with synchronous=NORMAL may be lost, but only as a whole suffix, and each
// transaction is there entirely or not at all.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "store/job_store.h"
#include "store/outbox.h"
#include "testing/store/crash_vfs.h"
#include "testing/temp_dir.h"

namespace rota::store {
namespace power_loss_test {
namespace {

using rota::testing::CrashVfs;

constexpr Time kT0 = 1'764'576'000;  // 2025-12-01 08:00 UTC
constexpr int kSteps = 160;          // writes of one workload
// Production checkpoints the WAL every 1,000 pages (SQLite's default); the workload does so
// every 16 so that cuts fall inside checkpoints and WAL restarts as well.
constexpr int kCheckpointPages = 16;

// The files of a cut: in memory where there is a memory file system (what the disk keeps is
// CrashVfs's to say, and file creation and removal cost a disk's journal a thousand times over).
rota::testing::TempDir WorkDir() {
  struct stat st {};
  const bool shm = ::stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) && ::access("/dev/shm", W_OK) == 0;
  return rota::testing::TempDir("rota-power", shm ? "/dev/shm" : "/tmp");
}

// The whole database as text: every row of every table (sqlite_sequence too: a lost increment
// would hand out an id twice), rows sorted.
std::string Dump(const std::string& path) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
    sqlite3_close(db);
    return "(cannot open)";
  }
  auto rows = [&](const std::string& sql) {
    std::vector<std::string> out;
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) return out;
    while (sqlite3_step(st) == SQLITE_ROW) {
      std::string row;
      for (int c = 0; c < sqlite3_column_count(st); ++c) {
        const unsigned char* text = sqlite3_column_text(st, c);
        row += text ? reinterpret_cast<const char*>(text) : "<null>";
        row += '|';
      }
      out.push_back(std::move(row));
    }
    sqlite3_finalize(st);
    return out;
  };
  std::string dump;
  for (const std::string& table : rows("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")) {
    const std::string name = table.substr(0, table.size() - 1);
    std::vector<std::string> content = rows("SELECT * FROM \"" + name + "\"");
    std::sort(content.begin(), content.end());
    dump += "[" + name + "]\n";
    for (const std::string& row : content) dump += row + "\n";
  }
  sqlite3_close(db);
  return dump;
}

// Each job is in exactly one state, and it is the state its last audit row moved it to.
std::string AuditMismatches(JobStore& store) {
  StatusOr<Statement> st = store.db().Prepare(
      "SELECT j.id, j.state, (SELECT e.to_state FROM job_events e WHERE e.job_id = j.id ORDER BY e.id DESC "
      "LIMIT 1) FROM jobs j");
  if (!st.ok()) return st.status().ToString();
  std::string bad;
  for (;;) {
    StatusOr<bool> row = st->Step();
    if (!row.ok()) return row.status().ToString();
    if (!*row) return bad;
    if (st->Text(1) != st->Text(2)) {
      bad += "job " + st->Text(0) + ": " + st->Text(1) + " but its last event " + st->Text(2) + "\n";
    }
  }
}

JobRecord NewJob(std::mt19937_64& rng) {
  static const char* const kUsers[] = {"alice", "bob", "张三"};
  JobRecord r;
  r.job.user = kUsers[rng() % 3];
  r.job.project = "vision";
  r.job.name = "train";
  r.job.tier = rng() % 2 ? Tier::kThesis : Tier::kExplore;
  r.job.request.kind = RequestKind::kWholeGpus;
  r.job.request.gpus = 1 + static_cast<int>(rng() % 2);
  r.job.time_limit = 4 * kHour;
  r.job.requeue = rng() % 2;
  r.uid = 1001;
  r.command = {"python", "train.py", std::string(rng() % 300, 'x')};  // rows of varied size
  r.cwd = "/home/alice/proj";
  r.env = {{"PATH", "/usr/bin"}, {"HOME", "/home/alice"}};
  r.output = "/home/alice/proj/rota-%j.out";
  return r;
}

// One step's outcome: its status, and whether success means it is durable (acknowledged).
struct Step {
  Status status;
  bool durable = false;
};

// A deterministic mix of the daemon's writes: the same seed gives the same steps, as long as each
// succeeds. Two connections, as in rotad: the event loop's (jobs, bookings, the outbox's inserts)
// and the notifier's (the outbox's deliveries, synchronous=FULL on its own connection).
class Workload {
 public:
  explicit Workload(std::uint64_t seed) : rng_(seed) {}

  Step Next(JobStore& store, Db& notifier_db) {
    now_ += 1 + static_cast<Time>(rng_() % 60);
    Outbox loop_outbox(store.db());
    Outbox notifier(notifier_db);
    for (;;) {
      switch (rng_() % 12) {
        case 0:
        case 1: {  // a submission: durable before the user sees its id
          StatusOr<JobId> id = store.Submit(NewJob(rng_), now_);
          if (id.ok()) pending_.push_back(*id);
          return {id.status(), true};
        }
        case 2: {  // several submissions in one batch of events: one commit
          std::vector<JobRecord> jobs(2 + rng_() % 3);
          for (JobRecord& j : jobs) j = NewJob(rng_);
          StatusOr<std::vector<JobId>> ids = store.SubmitMany(jobs, now_);
          if (ids.ok()) pending_.insert(pending_.end(), ids->begin(), ids->end());
          return {ids.status(), true};
        }
        case 3: {  // a start: bookkeeping
          if (pending_.empty()) continue;
          const JobId id = Take(pending_);
          StartInfo start;
          start.placement.alloc.gpus = {static_cast<int>(rng_() % 4)};
          start.placement.gpu_uuids = {"GPU-" + std::to_string(start.placement.alloc.gpus[0])};
          start.pid = start.pgid = 1000 + id;
          Status s = store.MarkStarted(id, start, now_);
          if (s.ok()) running_.push_back(id);
          return {s, false};
        }
        case 4: {  // an end, with the run's usage in the same commit (UsageLedger::SaveWith)
          if (running_.empty()) continue;
          const JobId id = Take(running_);
          Usage usage;
          usage.decayed_gpu_seconds = static_cast<double>(now_ - kT0);
          usage.as_of = now_;
          const bool failed = rng_() % 3 == 0;
          Status ended;
          Status s = store.InOneTransaction([&] {
            if (Status u = store.SaveUsage(AccountKind::kUser, "alice", usage); !u.ok()) return u;
            ended = store.MarkEnded(id, failed ? JobState::kFailed : JobState::kCompleted, failed ? 1 : 0,
                                    failed ? "Failed(exit 1)" : "Completed", now_);
            return ended;
          });
          if (s.ok()) ended_.push_back(id);
          return {s, false};
        }
        case 5: {  // a cancel of a pending job: durable before the user is told
          if (pending_.empty()) continue;
          const JobId id = Take(pending_);
          Status s = store.Cancel(id, "alice", now_);
          return {s, true};
        }
        case 6: {  // a cancel of a running job: the request durable, the end bookkeeping
          if (running_.empty()) continue;
          const JobId id = running_.back();
          if (rng_() % 2 == 0) return {store.MarkCancelRequested(id, "bob", now_), true};
          running_.pop_back();
          Status s = store.MarkEnded(id, JobState::kCancelled, std::nullopt, "Cancelled by bob", now_, "bob");
          if (s.ok()) ended_.push_back(id);
          return {s, false};
        }
        case 7: {  // a signal, a requeue or a note: bookkeeping
          if (running_.empty()) continue;
          const JobId id = running_.back();
          switch (rng_() % 3) {
            case 0:
              return {store.MarkSignalled(id, now_ + 120, true, now_), false};
            case 1: {
              running_.pop_back();
              Status s = store.Requeue(id, "Preempted (requeued)", now_);
              if (s.ok()) pending_.push_back(id);
              return {s, false};
            }
            default:
              return {store.NoteJob(id, "idle for 30 min", "rotad", now_), false};
          }
        }
        case 8: {  // a booking: durable before its owner is told
          BookingRecord b;
          b.entry.spec.user = "alice";
          b.entry.spec.project = "nlp";
          b.entry.spec.note = "组会前跑完";
          b.entry.spec.request.kind = RequestKind::kWholeGpus;
          b.entry.spec.request.gpus = 1;
          b.entry.spec.start = now_ + kHour;
          b.entry.spec.end = now_ + 3 * kHour;
          b.entry.state = BookingState::kConfirmed;
          b.gpu_uuids = {"GPU-0"};
          StatusOr<std::int64_t> id = store.AddBooking(b, "alice", now_);
          if (id.ok()) bookings_.push_back(*id);
          return {id.status(), true};
        }
        case 9: {  // a booking's change: by its owner (durable) or its lifecycle (bookkeeping)
          if (bookings_.empty()) continue;
          StatusOr<BookingRecord> b = store.GetBooking(bookings_[rng_() % bookings_.size()]);
          if (!b.ok()) return {b.status(), false};
          const BookingState from = b->entry.state;
          const bool by_owner = rng_() % 2 == 0;
          b->entry.state = by_owner ? BookingState::kCancelled : BookingState::kActive;
          if (from == b->entry.state) continue;
          return {store.UpdateBooking(*b, from, by_owner ? "cancelled by alice" : "started",
                                      by_owner ? "alice" : "rotad", now_, by_owner),
                  by_owner};
        }
        case 10: {  // a notice of an ended job into the outbox (the event loop's connection)
          if (ended_.empty()) continue;
          OutboxRow row;
          row.channel = "mail";
          row.recipient = "alice";
          row.event = "job_ended";
          row.language = "zh";
          row.subject = "作业 " + std::to_string(Take(ended_)) + " 已结束";
          row.body = std::string(rng_() % 2000, 'b');
          row.created = row.next_attempt = now_;
          StatusOr<std::vector<std::int64_t>> ids = loop_outbox.Enqueue({row});
          if (ids.ok()) unsent_.push_back(ids->front());
          return {ids.status(), false};
        }
        default: {  // a delivery recorded by the notifier: durable (else sent twice after a cut)
          if (unsent_.empty()) continue;
          return {notifier.MarkSent(Take(unsent_), 1, now_), true};
        }
      }
    }
  }

 private:
  template <typename T>
  T Take(std::vector<T>& from) {
    const std::size_t i = rng_() % from.size();
    T value = from[i];
    from.erase(from.begin() + static_cast<std::ptrdiff_t>(i));
    return value;
  }

  std::mt19937_64 rng_;
  Time now_ = kT0;
  std::vector<JobId> pending_, running_, ended_;
  std::vector<std::int64_t> bookings_, unsent_;
};

// What a run up to the power cut did: the last step acknowledged as durable and the step that
// failed (kSteps + 1 when none did); 0 for both when the store could not even be opened.
struct Run {
  int last_durable = 0;
  int failed = 0;
};

Status SetCheckpoint(Db& db) {
  return db.Exec("PRAGMA wal_autocheckpoint = " + std::to_string(kCheckpointPages));
}

// Runs workload `seed` on a new store at `path`; `after_step` sees each step's result.
Run RunWorkload(const std::string& path, std::uint64_t seed, const std::function<void(int)>& after_step) {
  Run run;
  StatusOr<std::unique_ptr<JobStore>> store = JobStore::Open(path);
  if (!store.ok()) return run;
  StatusOr<std::unique_ptr<Db>> notifier = Db::Open(path);
  if (!notifier.ok() || !SetCheckpoint((*store)->db()).ok() || !SetCheckpoint(**notifier).ok()) return run;
  after_step(0);
  Workload workload(seed);
  for (int i = 1; i <= kSteps; ++i) {
    Step step = workload.Next(**store, **notifier);
    if (!step.status.ok()) {
      run.failed = i;
      return run;
    }
    if (step.durable) run.last_durable = i;
    after_step(i);
  }
  run.failed = kSteps + 1;
  return run;
}

// The dumps after each step of workload `seed` (index 0: the new store), run without faults.
std::vector<std::string> Reference(std::uint64_t seed) {
  rota::testing::TempDir dir = WorkDir();
  const std::string path = dir.File("rota.db");
  std::vector<std::string> dumps;
  Run run = RunWorkload(path, seed, [&](int) { dumps.push_back(Dump(path)); });
  EXPECT_EQ(run.failed, kSteps + 1) << "the workload fails without faults at step " << run.failed;
  return dumps;
}

struct Tally {
  int cuts = 0;
  int latest = 0;        // recovered to the last step attempted (or the one that failed)
  int earlier = 0;       // to an earlier state, with every durable change (bookkeeping lost)
  int lost = 0;          // to a state without an acknowledged durable change
  int inconsistent = 0;  // to no state of the workload at all, or a damaged file
  std::string first_failure;
};

// One power cut at the `cut`-th operation of workload `seed`: the run, the cut, the restart.
void CutOnce(std::uint64_t seed, const std::vector<std::string>& dumps, std::int64_t cut, CrashVfs::Loss loss,
             bool ignore_syncs, std::mt19937_64& rng, Tally& tally) {
  rota::testing::TempDir dir = WorkDir();
  const std::string path = dir.File("rota.db");
  Run run;
  std::string returned;
  {
    CrashVfs vfs;
    vfs.IgnoreSyncs(ignore_syncs);
    vfs.CutAt(cut);
    run = RunWorkload(path, seed, [](int) {});
    returned = vfs.PowerReturns(loss, rng);  // the connections closed at RunWorkload's return
  }
  ++tally.cuts;
  auto fail = [&](int& counter, const std::string& why) {
    ++counter;
    if (tally.first_failure.empty()) {
      tally.first_failure = "seed " + std::to_string(seed) + ", cut at operation " + std::to_string(cut) +
                            ", loss " + std::to_string(static_cast<int>(loss)) + ": " + why;
    }
  };
  if (!returned.empty()) return fail(tally.inconsistent, "putting the files back: " + returned);
  StatusOr<std::unique_ptr<JobStore>> store = JobStore::Open(path);
  if (!store.ok()) return fail(tally.inconsistent, "reopening: " + store.status().ToString());
  StatusOr<std::string> check = (*store)->db().QueryText("PRAGMA integrity_check");
  if (!check.ok() || *check != "ok") {
    return fail(tally.inconsistent, "integrity_check: " + (check.ok() ? *check : check.status().ToString()));
  }
  if (std::string bad = AuditMismatches(**store); !bad.empty()) return fail(tally.inconsistent, bad);
  const std::string now = Dump(path);
  const int last = std::min(run.failed, kSteps);
  for (int p = last; p >= 0; --p) {
    if (dumps[static_cast<std::size_t>(p)] != now) continue;
    if (p < run.last_durable) {
      return fail(tally.lost, "recovered to step " + std::to_string(p) + ", but step " +
                                  std::to_string(run.last_durable) + " was acknowledged as durable");
    }
    ++(p >= run.failed - 1 ? tally.latest : tally.earlier);
    return;
  }
  fail(tally.inconsistent, "the recovered database is no state of the workload (steps run: " +
                               std::to_string(run.failed - 1) + ")\n" + now);
}

// How many operations workload `seed` makes in all, closing included.
std::int64_t Operations(std::uint64_t seed) {
  rota::testing::TempDir dir = WorkDir();
  CrashVfs vfs;
  RunWorkload(dir.File("rota.db"), seed, [](int) {});
  return vfs.operations();
}

// ROTA_POWER_CUTS sets how many cuts in all (default 1,000, a quarter per workload; the sanitized
// build runs fewer).
int CutsPerWorkload() {
  const char* env = std::getenv("ROTA_POWER_CUTS");
  const int n = env ? std::atoi(env) : 0;
  return (n > 0 ? n : 1000) / 4;
}

// `cuts` power cuts at random operations of workload `seed`.
Tally CutMany(std::uint64_t seed, int cuts, bool ignore_syncs) {
  Tally tally;
  const std::vector<std::string> dumps = Reference(seed);
  if (dumps.size() != kSteps + 1) return tally;
  const std::int64_t operations = Operations(seed);
  EXPECT_GT(operations, 2 * kSteps);
  std::mt19937_64 rng(20261204 + seed);
  for (int i = 0; i < cuts; ++i) {
    const std::int64_t cut = 1 + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(operations));
    CutOnce(seed, dumps, cut, static_cast<CrashVfs::Loss>(i % 3), ignore_syncs, rng, tally);
  }
  return tally;
}

std::string Summary(const Tally& t) {
  return std::to_string(t.cuts) + " cuts: " + std::to_string(t.latest) + " recovered to the last step, " +
         std::to_string(t.earlier) + " to an earlier one with every durable change, " +
         std::to_string(t.lost) + " lost a durable change, " + std::to_string(t.inconsistent) +
         " inconsistent";
}

class PowerLossTest : public ::testing::TestWithParam<std::uint64_t> {};

TEST_P(PowerLossTest, EveryAcknowledgedChangeSurvivesACutAndNothingIsHalfApplied) {
  const Tally tally = CutMany(GetParam(), CutsPerWorkload(), false);
  std::printf("power loss, workload %llu: %s\n", static_cast<unsigned long long>(GetParam()),
              Summary(tally).c_str());
  EXPECT_EQ(tally.cuts, CutsPerWorkload());
  EXPECT_EQ(tally.lost, 0) << tally.first_failure;
  EXPECT_EQ(tally.inconsistent, 0) << tally.first_failure;
  // The cuts fell where it matters: after the last step and amid bookkeeping (an earlier step).
  EXPECT_GT(tally.latest, 0) << Summary(tally);
  if (tally.cuts >= 100) {
    EXPECT_GT(tally.earlier, 0) << Summary(tally);
  }
}

INSTANTIATE_TEST_SUITE_P(Workloads, PowerLossTest, ::testing::Values(1, 2, 3, 4));

// The negative control: a disk that makes nothing durable at a sync loses acknowledged changes,
// and the check above sees it (it is not blind to loss).
TEST(PowerLossControlTest, WithoutSyncsAcknowledgedChangesAreLostAndSeen) {
  const Tally tally = CutMany(1, 30, true);
  std::printf("power loss without syncs: %s\n", Summary(tally).c_str());
  EXPECT_GT(tally.lost, 0) << Summary(tally);
}

}  // namespace
}  // namespace power_loss_test
}  // namespace rota::store
