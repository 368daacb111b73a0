// The soak of a simulated lab (issue 27): days of a 20-person lab on one 8-card server, driven
// through the whole daemon in-process (testing::InProcessDaemon: the real store, scheduling,
// bookings, watches and notifier, on a fake clock and a fake engine) in 5-minute steps of virtual
// time. The lab submits jobs of 1 to 4 cards and memory shares through the working day and
// fewer at night and at weekends, cancels some, lets some fail, some overrun their limit and
// some sit idle until they are reclaimed; it books cards for the next day and comes to some of
// its bookings (and overruns a few) and not to others; everything that happens is notified on
// two channels, one of which fails now and then. Everyone reads the queue, their jobs, their
// history and their usage as they go.
//
// What it checks, as it goes and at the end: no card is given to two jobs at once; every job
// submitted ends in exactly one final state, was launched once per run its history records (so
// never twice without a requeue), and every run that ended was told to its owner; every
// notification the store says was sent was delivered exactly once. And, over three days or
// more, that nothing grows with history beyond the data itself (CheckFlat): the daemon's heap
// at the end of each day, the store's data per job and its log, the scheduling pass's time and
// the requests' times stay flat from the second day to the last.
//
// `make test` runs 7 days (under the sanitizers too, where the flatness is not checked: their
// allocator keeps freed memory in quarantine); scripts/lab-soak.sh runs longer ones
// (ROTA_SOAK_DAYS, ROTA_SOAK_SEED) and prints the table of docs/reliability.md, "Lab soak".
#include <gtest/gtest.h>
#include <malloc.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "testing/daemon/in_process.h"

namespace rota::daemon {
namespace lab_soak_test {
namespace {

using nlohmann::json;
using testing::InProcessDaemon;

// Whether AddressSanitizer's allocator is in (g++ says so one way, clang, the sanitized
// build's compiler, the other).
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

// Monday 2026-11-30 00:00 in Shanghai, the lab's zone.
constexpr Time kMondayMidnight = 1795968000;
constexpr Duration kStep = 5 * kMinute;
constexpr int kCards = 8;
constexpr MiB kCardMemory = 80 * 1024;

int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::atoi(v) : fallback;
}

// The lab: roles with weekly quotas (over them jobs run as explore, preemptible), bookings by the
// day before, idle jobs reclaimed, every event of a user's to the lab's chat and the admins'
// to their mail.
std::string LabConfig() {
  std::string c = testing::SimulatedCards(kCards) + R"(
[policy]
timezone = "Asia/Shanghai"
[quota]
default = "unlimited"
overflow_as_explore = true
[quota.roles]
phd = 300
master = 150
undergrad = 50
[preemption]
enabled = true
tiers = ["explore"]
[watch]
action = "reclaim"
[notify]
language = "en"
admin_channels = ["admins"]
admin_events = ["gpu_drained", "outside_process", "idle_action", "stuck_action", "over_memory_action",
                "booking_overrun", "booking_strikes", "channel_failing"]
user_channels = ["lab"]
user_events = ["job_ended", "job_failed", "job_preempted", "job_requeued", "booking_confirmed",
               "booking_rejected", "booking_starting", "booking_ending_soon", "booking_no_show",
               "booking_overrun", "idle_warning", "idle_action", "stuck_warning", "stuck_action",
               "over_memory", "time_limit_soon", "quota_80", "quota_100"]
first_backoff = "30s"
[notify.channels.lab]
type = "webhook"
url = "http://127.0.0.1:9/lab"
[notify.channels.admins]
type = "webhook"
url = "http://127.0.0.1:9/admins"
)";
  // 4 PhD students, 8 master's and 8 undergraduates.
  for (int i = 1; i <= testing::kLabUsers; ++i) {
    c += "[users." + testing::LabUser(i) + "]\nrole = \"" +
         (i <= 4    ? "phd"
          : i <= 12 ? "master"
                    : "undergrad") +
         "\"\n";
  }
  return c;
}

// What the lab means a job to do once it runs.
struct Plan {
  std::string user;
  Duration runtime = 0;  // from its start to its exit (past the limit: stopped by the daemon)
  int exit_code = 0;
  bool cancel_running = false;  // its owner cancels it halfway
};

// A booking and whether its owner comes.
struct Booked {
  std::int64_t id = 0;
  std::string user;
  int gpus = 0;
  Time start = 0, end = 0;
  bool comes = false;
  bool overruns = false;
};

// One day's figures (a row of the table).
struct Day {
  int submitted = 0, refused = 0, cancels = 0, launches = 0;
  int bookings = 0, bookings_refused = 0;
  int delivered = 0, failed_attempts = 0;
  double heap_mib = 0, sqlite_mib = 0, rss_mib = 0, store_kib = 0, wal_kib = 0, data_kib = 0;
  std::uint64_t jobs_so_far = 0;
  double pass_mean_ms = 0, pass_last_max_ms = 0;
  double queue_p50_ms = 0, queue_max_ms = 0, history_p50_ms = 0, usage_p50_ms = 0;
  double wall_s = 0;
};

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

double HeapMiB() {
  const struct mallinfo2 m = mallinfo2();
  return static_cast<double>(m.uordblks + m.hblkhd) / (1024.0 * 1024.0);
}

double RssMiB() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atof(line.c_str() + 6) / 1024.0;
  }
  return 0;
}

class Lab {
 public:
  Lab(InProcessDaemon& d, std::uint64_t seed) : d_(d), rng_(seed) {}

  // Runs `days` days of the lab, then lets what is left end (no new work) for up to a week.
  void Run(int days) {
    for (int day = 0; day < days; ++day) {
      const auto wall = std::chrono::steady_clock::now();
      today_ = Day{};
      const Time midnight = kMondayMidnight + day * kDay;
      const std::uint64_t passes_before = PassCount();
      const double pass_sum_before = pass_sum_;
      while (d_.clock().Now() < midnight + kDay) {
        Step(true);
        if (::testing::Test::HasFatalFailure()) return;
      }
      CountNotifications();
      CheckEndedJobs(d_.clock().Now() - kDay);  // their notices are through by now ([notify] max_age)
      ForgetOldDeliveries();
      ReadPasses();
      today_.pass_mean_ms = PassCount() > passes_before ? (pass_sum_ - pass_sum_before) /
                                                              static_cast<double>(PassCount() - passes_before)
                                                        : 0;
      today_.jobs_so_far = static_cast<std::uint64_t>(submitted_);
      today_.queue_p50_ms = Percentile(queue_ms_, 0.5);
      today_.queue_max_ms = Percentile(queue_ms_, 1.0);
      today_.history_p50_ms = Percentile(history_ms_, 0.5);
      today_.usage_p50_ms = Percentile(usage_ms_, 0.5);
      queue_ms_.clear();
      history_ms_.clear();
      usage_ms_.clear();
      today_.heap_mib = HeapMiB();
      today_.sqlite_mib = static_cast<double>(sqlite3_memory_used()) / (1024.0 * 1024.0);
      today_.rss_mib = RssMiB();
      StoreSize(today_);
      today_.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall).count();
      days_.push_back(today_);
    }
    // No new work: what is queued and running ends (within a week: limits are 12 hours at most).
    for (Time until = d_.clock().Now() + 7 * kDay; d_.clock().Now() < until && Active() > 0;) Step(false);
  }

  // The jobs that ended before `before` (kNever: every job, and each must have ended), checked
  // and then forgotten, so that what the soak keeps does not grow with the days: each ended
  // once, was launched once per run its events record (twice only after a requeue), and its
  // owner heard of each end of a run once (not of a cancel of their own) and of each requeue.
  void CheckEndedJobs(Time before) {
    std::map<JobId, int> launched;  // every launch the engine saw, per job
    for (JobId id : d_.engine().launches()) {
      if (plans_.count(id)) ++launched[id];
    }
    for (auto it = plans_.begin(); it != plans_.end();) {
      const JobId id = it->first;
      const json shown = d_.CallHttp("root", {{"v", 1}, {"op", "show"}, {"job_id", id}}).value("job", json());
      const std::string state = shown.value("state", "");
      if (state == "pending" || state == "running" || shown.value("end_time", Time{0}) >= before) {
        EXPECT_NE(before, kNever) << "job " << id << " never ended: " << shown.dump();
        ++it;
        continue;
      }
      int runs = 0, requeues = 0, finals = 0, told = 0;
      const json events = d_.CallHttp("root", {{"v", 1}, {"op", "events"}, {"job_id", id}});
      for (const json& e : events.value("events", json::array())) {
        // Transitions (from one state to another); notes repeat the state they were made in.
        const std::string from = e.value("from", json()).is_string() ? e["from"].get<std::string>() : "";
        const std::string to = e.value("to", json()).is_string() ? e["to"].get<std::string>() : "";
        if (from == to) continue;
        if (to == "running") ++runs;
        if (to != "pending" && to != "running") ++finals;
        if (from == "running" && to == "pending") ++requeues;
        if (from == "running" && !(to == "cancelled" && e.value("actor", "") == it->second.user)) ++told;
      }
      const Heard heard = heard_[id];
      EXPECT_EQ(heard.ends, told) << "job " << id
                                  << ": its owner was not told of each end once: " << events.dump();
      EXPECT_EQ(heard.requeues, requeues)
          << "job " << id << ": its owner was not told of each requeue once: " << events.dump();
      EXPECT_EQ(finals, 1) << "job " << id << ": " << shown.dump();
      EXPECT_EQ(launched[id], runs) << "job " << id << " was launched " << launched[id] << " times for "
                                    << runs << " runs: " << shown.dump();
      EXPECT_LE(runs, requeues + 1) << "job " << id << " ran twice without a requeue: " << shown.dump();
      ++states_[state];
      if (runs > 0) ++ran_;
      heard_.erase(id);
      it = plans_.erase(it);
    }
  }

  void SummariseJobs() {
    std::printf("jobs: %d submitted, %d ran;", submitted_, ran_);
    for (const auto& [state, n] : states_) std::printf(" %s %d", state.c_str(), n);
    std::printf("\n");
    EXPECT_TRUE(plans_.empty());
    EXPECT_GT(ran_, submitted_ / 2);
    // The lab did what the soak is for: some jobs of each fate.
    for (const char* state : {"completed", "failed", "cancelled", "timeout", "preempted"}) {
      EXPECT_GT(states_[state], 0) << state;
    }
  }

  // Every message the store holds as sent went through its channel exactly once; none is left.
  void CheckNotifications() {
    // Retries wait on virtual time: it moves until none is left (a day at most: [notify] max_age).
    for (Time until = d_.clock().Now() + kDay; !Rows("pending").empty() && d_.clock().Now() < until;) {
      d_.Advance(kMinute);
    }
    ASSERT_TRUE(d_.WaitFor([&] { return Rows("pending").empty(); })) << Rows("pending").dump();
    CountNotifications();
    const json failed = Rows("failed");
    EXPECT_TRUE(failed.empty()) << failed.dump();
    // The store keeps sent messages [notify] keep_messages (30 days): those delivered since
    // then, with a day's margin, are all there, once each.
    const Time kept_from = d_.clock().Now() - 29 * kDay;
    std::map<std::uint64_t, int> sent, delivered;  // Key(channel, subject) -> count
    int rows = 0;
    for (const json& m : Rows("sent")) {
      if (m.value("created", Time{0}) < kept_from) continue;
      ++sent[Key(m.value("channel", ""), m.value("subject", ""))];
      ++rows;
    }
    for (const auto& [key, times] : delivered_) {
      if (std::all_of(times.begin(), times.end(), [&](Time t) { return t >= kept_from + kDay; })) {
        delivered[key] = static_cast<int>(times.size());
      }
    }
    for (const auto& [key, n] : sent) {
      if (!delivered.count(key) && delivered_.count(key)) delivered[key] = n;  // delivered around kept_from
    }
    EXPECT_EQ(sent, delivered) << "the channels delivered other messages than the store says it sent";
    std::printf(
        "notifications: %d sent in the last 29 days and delivered once each (%d attempts failed and were "
        "retried)\n",
        rows, retried_);
    EXPECT_GT(retried_, 0);  // the failing channels' messages went through in the end
  }

  // Nothing grows with the days beyond the data: the second day is the baseline (the first
  // starts from nothing), or for what reads a window of days (`rota history`'s default week,
  // `rota usage`'s 28 days), the day after its window filled.
  void CheckFlat() const {
    ASSERT_GE(days_.size(), 3u);
    const Day& base = days_[1];
    const Day& last = days_.back();
    const double days = static_cast<double>(days_.size());
    // The daemon's heap, besides SQLite's (its page cache fills with the data, up to its 2 MiB
    // per connection). It grows by about 10 KiB a day for a month, and by 2 after: what the soak
    // keeps (a month of message keys, every launch of the fake engine) and the daemon's bookings
    // of the last 30 days (the penalty window). A leak of 1 KiB per job would add 40 KiB a day.
    EXPECT_LT((last.heap_mib - last.sqlite_mib) - (base.heap_mib - base.sqlite_mib), (96 + 16 * days) / 1024)
        << "the daemon's heap grew";
    // The store grows with its jobs (and sheds messages older than [notify] keep_messages), and
    // its log is checkpointed (at SQLite's 1,000 pages, 4 MiB) rather than growing.
    const double base_per_job = base.data_kib / static_cast<double>(base.jobs_so_far);
    const double last_per_job = last.data_kib / static_cast<double>(last.jobs_so_far);
    EXPECT_LT(last_per_job, base_per_job * 1.3) << "the store grew faster than its jobs";
    for (const Day& day : days_) EXPECT_LT(day.wal_kib, 8 * 1024) << "the write-ahead log grew";
    // Times are the machine's: twice the baseline and a margin (a loaded CI machine).
    EXPECT_LT(last.pass_mean_ms, base.pass_mean_ms * 2 + 0.5) << "scheduling passes slowed down";
    EXPECT_LT(last.queue_p50_ms, base.queue_p50_ms * 2 + 0.5) << "rota queue slowed down";
    if (days_.size() >= 10) {
      EXPECT_LT(last.history_p50_ms, days_[7].history_p50_ms * 2 + 1) << "rota history slowed down";
    }
    if (days_.size() >= 31) {
      EXPECT_LT(last.usage_p50_ms, days_[28].usage_p50_ms * 2 + 1) << "rota usage slowed down";
    }
  }

  void PrintTable() const {
    std::printf(
        "day | submitted | refused | cancels | launches | bookings (refused) | notified (failed tries) | "
        "heap MiB (SQLite) | "
        "RSS MiB | data KiB | file KiB (WAL) | data KiB/job | pass mean ms | queue p50/max ms | history p50 "
        "ms | usage p50 ms | wall s\n");
    for (std::size_t i = 0; i < days_.size(); ++i) {
      const Day& y = days_[i];
      std::printf(
          "%zu | %d | %d | %d | %d | %d (%d) | %d (%d) | %.2f (%.2f) | %.1f | %.0f | %.0f (%.0f) | %.2f | "
          "%.3f | %.2f/%.2f | %.2f | "
          "%.2f | %.1f\n",
          i + 1, y.submitted, y.refused, y.cancels, y.launches, y.bookings, y.bookings_refused, y.delivered,
          y.failed_attempts, y.heap_mib, y.sqlite_mib, y.rss_mib, y.data_kib, y.store_kib, y.wal_kib,
          y.data_kib / static_cast<double>(std::max<std::uint64_t>(1, y.jobs_so_far)), y.pass_mean_ms,
          y.queue_p50_ms, y.queue_max_ms, y.history_p50_ms, y.usage_p50_ms, y.wall_s);
    }
    std::fflush(stdout);
  }

  const std::vector<Day>& days() const { return days_; }
  std::map<std::string, int> BookingStates() {
    std::map<std::string, int> out;
    for (const Booked& b : bookings_) {
      const json r = d_.Call("root", {{"op", "bookings"}, {"id", b.id}});
      ++out[r.value("bookings", json::array()).empty() ? "?" : r["bookings"][0].value("state", "?")];
    }
    return out;
  }

 private:
  // One step: what ended ends, the lab works (when `work`), everyone reads, the cards are
  // sampled, and the clock moves 5 minutes.
  void Step(bool work) {
    const Time now = d_.clock().Now();
    EndWhatIsDue(now);
    if (work) {
      Submit(now);
      Book(now);
      Cancel();
      Read();
    }
    CheckCards();
    if (now % kHour == 0 && now / kHour % 7 == 3 && work) FailSomeDeliveries();
    d_.Sample();
    d_.AdvanceTo(now + kStep);
  }

  std::tm Local(Time t) const {
    const std::time_t shanghai = static_cast<std::time_t>(t + 8 * kHour);
    std::tm tm{};
    gmtime_r(&shanghai, &tm);
    return tm;
  }

  double Uniform() { return std::uniform_real_distribution<double>(0, 1)(rng_); }
  template <typename T>
  const T& Pick(const std::vector<T>& v) {
    return v[std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(rng_)];
  }

  // Runs launched since the last step get their end time; jobs due end (an exit, a failure); an
  // owner cancels a running job now and then.
  void EndWhatIsDue(Time now) {
    const std::vector<JobId>& launches = d_.engine().launches();
    for (; seen_launches_ < launches.size(); ++seen_launches_) {
      const JobId id = launches[seen_launches_];
      ends_[id] = now + plans_.at(id).runtime;
      ++today_.launches;
    }
    std::vector<JobId> exits;
    for (auto it = ends_.begin(); it != ends_.end();) {
      if (!d_.engine().Running(it->first)) {
        it = ends_.erase(it);  // stopped by the daemon (its limit, a reclaim, a preemption, a cancel)
        continue;
      }
      if (it->second <= now) exits.push_back(it->first);
      ++it;
    }
    for (JobId id : exits) {
      const Plan& plan = plans_.at(id);
      if (plan.cancel_running) {
        const json r = d_.CallHttp(plan.user, {{"v", 1}, {"op", "cancel"}, {"job_ids", {id}}});
        EXPECT_TRUE(r.value("ok", false)) << r.dump();
        ++today_.cancels;
      } else {
        d_.engine().Exit(id, plan.exit_code);
      }
    }
    if (!exits.empty()) d_.Settle();
  }

  // How busy the lab is at `now`, in jobs per person per hour: the working day, the evening,
  // the night; half at weekends.
  double Rate(Time now) const {
    const std::tm tm = Local(now);
    double r = tm.tm_hour >= 9 && tm.tm_hour < 18 ? 0.15 : tm.tm_hour >= 18 ? 0.1 : 0.01;
    if (tm.tm_wday == 0 || tm.tm_wday == 6) r /= 2;
    return r;
  }

  json NewJob(Plan& plan) {
    static const std::vector<Duration> kLimits = {30 * kMinute, kHour,     2 * kHour,
                                                  4 * kHour,    8 * kHour, 12 * kHour};
    json job = {{"name", "train"}, {"cwd", "/tmp"}};
    const double size = Uniform();
    if (size < 0.15) {
      job["request"] = {{"kind", "gpu_mem"}, {"memory", (10 + 10 * static_cast<int>(Uniform() * 4)) * 1024}};
    } else {
      job["request"] = {{"gpus", size < 0.65 ? 1 : size < 0.9 ? 2 : 4}};
    }
    const Duration limit = Pick(kLimits);
    job["time_limit"] = limit;
    // Most jobs end within their limit (users overstate it); one in ten runs into it.
    const double fate = Uniform();
    plan.runtime = fate < 0.1 ? limit + kHour : static_cast<Duration>(limit * (0.1 + 0.8 * Uniform()));
    plan.exit_code = Uniform() < 0.08 ? 1 : 0;
    plan.cancel_running = Uniform() < 0.03;
    // Busy while running; one in twenty sits idle (it is warned, then reclaimed).
    job["env"] = {{"ROTA_SIM_GPU_UTIL", Uniform() < 0.05 ? "1" : "85"}, {"ROTA_SIM_GPU_MEM", "8G"}};
    if (Uniform() < 0.3) job["signal"] = SIGUSR1;
    if (Uniform() < 0.1) {
      job["tier"] = "explore";
      job["requeue"] = Uniform() < 0.5;
    }
    return job;
  }

  void Submit(Time now) {
    const double p = Rate(now) * static_cast<double>(kStep) / static_cast<double>(kHour);
    for (int i = 1; i <= testing::kLabUsers; ++i) {
      if (Uniform() >= p) continue;
      const std::string user = testing::LabUser(i);
      Plan plan{user};
      json job = NewJob(plan);
      job["command"] = {"train"};
      SubmitAs(user, std::move(job), plan);
    }
    // Who booked for now comes, with a job as long as the booking (or longer: it overruns).
    for (Booked& b : bookings_) {
      if (b.start != now || !b.comes) continue;
      Plan plan{b.user, b.end - b.start - 15 * kMinute};
      if (b.overruns) plan.runtime = b.end - b.start + kHour;
      SubmitAs(b.user,
               {{"name", "booked"},
                {"cwd", "/tmp"},
                {"command", {"train"}},
                {"request", {{"gpus", b.gpus}}},
                {"time_limit", b.end - b.start + 2 * kHour},
                {"env", {{"ROTA_SIM_GPU_UTIL", "90"}}}},
               plan);
    }
  }

  void SubmitAs(const std::string& user, json job, const Plan& plan) {
    const json r = d_.CallHttp(user, {{"v", 1}, {"op", "submit"}, {"job", std::move(job)}});
    if (!r.value("ok", false)) {
      // A refusal is an answer (a quota of pending jobs, a request too large): it must say why.
      EXPECT_FALSE(r.value("error", json::object()).value("message", "").empty()) << r.dump();
      ++today_.refused;
      return;
    }
    plans_[r.value("job_id", JobId{0})] = plan;
    ++today_.submitted;
    ++submitted_;
  }

  // At 10:00 every day, three people book cards for tomorrow; seven in ten come.
  void Book(Time now) {
    const std::tm tm = Local(now);
    if (tm.tm_hour != 10 || tm.tm_min != 0) return;
    for (int n = 0; n < 3; ++n) {
      Booked b;
      b.user = testing::LabUser(1 + static_cast<int>(Uniform() * testing::kLabUsers));
      b.gpus = Uniform() < 0.6 ? 1 : 2;
      const Time tomorrow = now - 10 * kHour + kDay;  // 00:00 local
      b.start = tomorrow + 9 * kHour + static_cast<Duration>(Uniform() * 18) * 30 * kMinute;
      b.end = b.start + (2 + static_cast<Duration>(Uniform() * 3)) * kHour;
      b.comes = Uniform() < 0.7;
      b.overruns = b.comes && Uniform() < 0.15;
      const json r = d_.CallHttp(
          b.user,
          {{"v", 1}, {"op", "book"}, {"booking", {{"gpus", b.gpus}, {"start", b.start}, {"end", b.end}}}});
      if (!r.value("ok", false)) {
        ++today_.bookings_refused;
        continue;
      }
      b.id = r["booking"].value("id", std::int64_t{0});
      bookings_.push_back(b);
      ++today_.bookings;
    }
    d_.Settle();
  }

  // Now and then someone cancels a job that still waits.
  void Cancel() {
    if (Uniform() >= 0.05) return;
    const std::string user = testing::LabUser(1 + static_cast<int>(Uniform() * testing::kLabUsers));
    const json q = d_.CallHttp(user, {{"v", 1}, {"op", "queue"}});
    for (const json& j : q.value("jobs", json::array())) {
      if (j.value("user", "") != user || j.value("state", "") != "pending") continue;
      const json r = d_.CallHttp(user, {{"v", 1}, {"op", "cancel"}, {"job_ids", {j.value("id", JobId{0})}}});
      EXPECT_TRUE(r.value("ok", false)) << r.dump();
      ++today_.cancels;
      break;
    }
  }

  // Someone looks at the queue every step, at a job of theirs every other, at their history and
  // usage every hour.
  void Read() {
    const std::string user = testing::LabUser(1 + static_cast<int>(Uniform() * testing::kLabUsers));
    auto timed = [&](std::vector<double>& into, json request) {
      const auto t0 = std::chrono::steady_clock::now();
      const json r = d_.CallHttp(user, std::move(request));
      into.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      EXPECT_TRUE(r.value("ok", false)) << r.dump();
      return r;
    };
    timed(queue_ms_, {{"v", 1}, {"op", "queue"}, {"all", true}});
    const Time now = d_.clock().Now();
    if (now % kHour == 0) {
      timed(history_ms_, {{"v", 1}, {"op", "history"}, {"since", "7d"}});
      timed(usage_ms_, {{"v", 1}, {"op", "usage"}});
    }
    if (now % (2 * kStep) == 0 && !plans_.empty()) {
      const JobId id = std::prev(plans_.end())->first;
      const json r = d_.CallHttp(plans_.at(id).user, {{"v", 1}, {"op", "show"}, {"job_id", id}});
      EXPECT_TRUE(r.value("ok", false)) << r.dump();
    }
  }

  // No card holds two whole-card jobs, or a whole-card job and a share, or shares beyond its
  // memory.
  void CheckCards() {
    std::map<int, int> whole;
    std::map<int, MiB> shared;
    for (const auto& [id, job] : d_.engine().jobs()) {
      auto gpus = job.spec.env.find("ROTA_GPUS");
      ASSERT_NE(gpus, job.spec.env.end()) << "job " << id << " got no cards";
      auto mem = job.spec.env.find("ROTA_GPU_MEM");
      std::size_t at = 0;
      const std::string& list = gpus->second;
      while (at <= list.size()) {
        const std::size_t comma = std::min(list.find(',', at), list.size());
        const int card = std::atoi(list.substr(at, comma - at).c_str());
        if (mem == job.spec.env.end()) {
          ++whole[card];
        } else {
          shared[card] += std::atoll(mem->second.c_str());
        }
        at = comma + 1;
      }
    }
    for (int card = 0; card < kCards; ++card) {
      EXPECT_LE(whole[card], 1) << "card " << card << " given to two jobs";
      EXPECT_TRUE(whole[card] == 0 || shared[card] == 0) << "card " << card << " given whole and shared";
      EXPECT_LE(shared[card], kCardMemory) << "card " << card << " shared beyond its memory";
    }
  }

  // The admins' channel fails its next 3 attempts (a mail server down for a while).
  void FailSomeDeliveries() {
    if (testing::FakeChannel* admins = d_.channel("admins")) admins->FailNext(3, Unavailable("HTTP 503"));
    if (testing::FakeChannel* lab = d_.channel("lab")) lab->FailNext(2, Unavailable("HTTP 502"));
  }

  void CountNotifications() {
    for (const char* name : {"lab", "admins"}) {
      testing::FakeChannel* c = d_.channel(name);
      if (c == nullptr) continue;
      for (const testing::FakeChannel::Attempt& a : c->TakeAttempts()) {
        if (!a.delivered) {
          ++today_.failed_attempts;
          ++retried_;
          continue;
        }
        ++today_.delivered;
        delivered_[Key(name, a.message.subject)].push_back(a.at);
        // The lab's channel: what its members hear of their jobs ("Job 12 completed").
        const std::string& ev = a.message.event;
        JobId job = 0;
        const std::size_t at = a.message.subject.find("Job ");
        if (std::string(name) != "lab" || at == std::string::npos ||
            std::sscanf(a.message.subject.c_str() + at, "Job %" SCNd64, &job) != 1) {
          continue;
        }
        if (ev == "job_ended" || ev == "job_failed" || ev == "job_preempted") ++heard_[job].ends;
        if (ev == "job_requeued") ++heard_[job].requeues;
      }
    }
  }

  // A message as the soak counts it: its channel and subject (which name the job or booking and
  // what happened), hashed: a month of them is kept.
  static std::uint64_t Key(const std::string& channel, const std::string& subject) {
    return std::hash<std::string>{}(channel + '\n' + subject);
  }

  // Deliveries of messages the store no longer keeps are not compared (CheckNotifications).
  void ForgetOldDeliveries() {
    const Time old = d_.clock().Now() - 31 * kDay;
    std::erase_if(delivered_, [old](const auto& kv) {
      return std::all_of(kv.second.begin(), kv.second.end(), [old](Time t) { return t < old; });
    });
  }

  json Rows(const std::string& state) {
    const json r = d_.Call("root", {{"op", "notify_log"}, {"since", 0}, {"state", state}, {"limit", 10000}});
    return r.value("messages", json::array());
  }

  // Jobs pending or running.
  int Active() {
    const json s = d_.CallHttp("root", {{"v", 1}, {"op", "status"}}).value("jobs", json::object());
    return s.value("pending", 0) + s.value("running", 0);
  }

  std::uint64_t PassCount() const { return passes_; }
  void ReadPasses() {
    const json s = d_.CallHttp("root", {{"v", 1}, {"op", "status"}}).value("scheduler", json::object());
    passes_ = s.value("passes", std::uint64_t{0});
    pass_sum_ = s.value("mean_ms", 0.0) * static_cast<double>(passes_);
    today_.pass_last_max_ms = std::max(today_.pass_last_max_ms, s.value("max_ms", 0.0));
  }

  // The store's files (the database and its write-ahead log), and the data in them: the pages in
  // use, as a reader sees them through the log.
  void StoreSize(Day& day) const {
    for (const auto& e : std::filesystem::directory_iterator(d_.dir() + "/state")) {
      const std::string name = e.path().filename();
      if (!e.is_regular_file()) continue;
      if (name.ends_with(".db")) {
        day.store_kib += static_cast<double>(e.file_size()) / 1024.0;
        day.data_kib = DataKiB(e.path());
      }
      if (name.ends_with(".db-wal")) day.wal_kib += static_cast<double>(e.file_size()) / 1024.0;
    }
  }
  static double DataKiB(const std::string& path) {
    sqlite3* db = nullptr;
    double kib = 0;
    if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
      auto pragma = [db](const char* sql) {
        sqlite3_stmt* st = nullptr;
        std::int64_t v = 0;
        if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
          v = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
        return v;
      };
      kib = static_cast<double>((pragma("PRAGMA page_count") - pragma("PRAGMA freelist_count")) *
                                pragma("PRAGMA page_size")) /
            1024.0;
    }
    sqlite3_close(db);
    EXPECT_GT(kib, 0) << "cannot read " << path;
    return kib;
  }

  InProcessDaemon& d_;
  std::mt19937_64 rng_;
  std::map<JobId, Plan> plans_;
  std::size_t seen_launches_ = 0;  // of the engine's launches()
  std::map<JobId, Time> ends_;     // running jobs: when each exits
  std::vector<Booked> bookings_;
  // Key(channel, subject) -> when each delivery came
  std::map<std::uint64_t, std::vector<Time>> delivered_;
  struct Heard {
    int ends = 0, requeues = 0;
  };
  std::map<JobId, Heard> heard_;  // what the lab's channel told of each job
  int retried_ = 0;
  int submitted_ = 0, ran_ = 0;
  std::map<std::string, int> states_;  // of the jobs checked
  std::uint64_t passes_ = 0;
  double pass_sum_ = 0;
  Day today_;
  std::vector<double> queue_ms_, history_ms_, usage_ms_;  // today's, for today_
  std::vector<Day> days_;
};

TEST(LabSoakTest, ADaysOfALabLoseNothingAndGrowOnlyWithTheirData) {
  const int days = EnvInt("ROTA_SOAK_DAYS", 7);
  const std::uint64_t seed = static_cast<std::uint64_t>(EnvInt("ROTA_SOAK_SEED", 1));
  // What happens is in the table and the checks; the daemon's log of it would be 100,000 lines.
  const spdlog::level::level_enum level = spdlog::get_level();
  spdlog::set_level(spdlog::level::warn);
  InProcessDaemon d(LabConfig(), kMondayMidnight);
  ASSERT_TRUE(d.ok());
  Lab lab(d, seed);
  lab.Run(days);
  lab.PrintTable();
  if (HasFatalFailure()) return;
  lab.CheckNotifications();
  lab.CheckEndedJobs(kNever);
  lab.SummariseJobs();
  std::printf("bookings:");
  for (const auto& [state, n] : lab.BookingStates()) std::printf(" %s %d", state.c_str(), n);
  std::printf("\n");
  if (days >= 3 && !kSanitized) lab.CheckFlat();  // the sanitizers' allocator keeps freed memory
  spdlog::set_level(level);
}

}  // namespace
}  // namespace lab_soak_test
}  // namespace rota::daemon
