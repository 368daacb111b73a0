// Tests of the replay desk: a replay runs beside the loop and is given when done, again from the
// cache until asked fresh; one at a time; bad input and a history with nothing to replay are
// errors; a long replay is stopped when the desk goes.
#include "daemon/replay_desk.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace rota::daemon {
namespace replay_desk_test {
namespace {

using nlohmann::json;

// `n` one-card jobs submitted together, each a minute: a queue that takes the rota policy a
// while to replay when n is large.
replay::StoreTrace History(int n) {
  replay::StoreTrace st;
  st.gpus = 1;
  st.gpu_memory = 81920;
  for (int i = 0; i < n; ++i) {
    sim::TraceJob j;
    j.line = i + 1;
    j.submit = 1'800'000'000;
    j.duration = 60;
    j.limit = 120;
    j.gpus = 1;
    j.user = i % 3 ? "ana" : "bo";
    st.trace.jobs.push_back(j);
    st.recorded.push_back({i + 1, j.user, j.submit, j.submit + 60 * i, j.submit + 60 * (i + 1), 1});
  }
  st.trace.absolute_times = true;
  return st;
}

ReplayDesk::Setup DeskSetup(int jobs, std::vector<std::string>* asked = nullptr) {
  ReplayDesk::Setup s;
  s.history = [jobs, asked](const std::string& since) -> StatusOr<replay::StoreTrace> {
    if (asked) asked->push_back(since);
    if (since == "1h") return NotFound("no job that ran has ended since then: nothing to replay");
    return History(jobs);
  };
  s.policy = [] {
    Policy p;
    p.time_of_day = {};
    return p;
  };
  return s;
}

json WaitDone(ReplayDesk& desk, ReplayDesk::Kind kind, const json& request, Time now) {
  for (int i = 0; i < 3000; ++i) {
    json r = desk.Ask(kind, request, now);
    if (!r.value("ok", false) || r.value("state", "") == "done") return r;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return json{{"timed_out", true}};
}

TEST(ReplayDesk, AReplayRunsBesideAndIsGivenWhenDoneThenFromTheCache) {
  std::vector<std::string> asked;
  ReplayDesk desk(DeskSetup(30, &asked));
  const Time now = 1'800'100'000;
  json first = desk.Ask(ReplayDesk::Kind::kReplay, {{"since", "7d"}}, now);
  ASSERT_TRUE(first.value("ok", false)) << first.dump();
  EXPECT_EQ(first["state"], "running");
  EXPECT_EQ(first["started"], now);
  json done = WaitDone(desk, ReplayDesk::Kind::kReplay, {{"since", "7d"}}, now + 1);
  ASSERT_EQ(done.value("state", ""), "done") << done.dump();
  EXPECT_EQ(done["kind"], "replay");
  EXPECT_EQ(done["since"], "7d");
  EXPECT_EQ(done["made"], now + 1);
  const json& result = done["result"];
  ASSERT_EQ(result["results"].size(), 3u);
  EXPECT_EQ(result["jobs"], 30);
  // One card, thirty one-minute jobs at once: whatever the order, the last waits 29 minutes.
  for (const json& r : result["results"])
    EXPECT_DOUBLE_EQ(r["max_wait"].get<double>(), 29 * 60) << r["policy"];
  EXPECT_DOUBLE_EQ(result["recorded"]["max_wait"].get<double>(), 29 * 60);
  EXPECT_EQ(result["results"][0]["per_user"].size(), 2u);
  // Asked again within ten minutes: the same result, the history not read again.
  json again = desk.Ask(ReplayDesk::Kind::kReplay, {{"since", "7d"}}, now + 300);
  EXPECT_EQ(again["made"], now + 1);
  EXPECT_EQ(asked.size(), 1u);
  // Fresh, or later: replayed again.
  EXPECT_EQ(desk.Ask(ReplayDesk::Kind::kReplay, {{"since", "7d"}, {"fresh", true}}, now + 301)["state"],
            "running");
  EXPECT_EQ(asked.size(), 2u);
  EXPECT_EQ(WaitDone(desk, ReplayDesk::Kind::kReplay, {{"since", "7d"}}, now + 302)["made"], now + 302);
  EXPECT_EQ(desk.Ask(ReplayDesk::Kind::kReplay, {{"since", "7d"}}, now + 302 + 601)["state"], "running");
  // The tuning is its own: the grid's figures.
  WaitDone(desk, ReplayDesk::Kind::kReplay, {{"since", "7d"}}, now + 1000);
  json tune = WaitDone(desk, ReplayDesk::Kind::kTune, {}, now + 1000);
  ASSERT_EQ(tune.value("state", ""), "done") << tune.dump();
  EXPECT_EQ(tune["since"], "14d");  // the default
  EXPECT_EQ(tune["result"]["tried"], 101);  // the grid and the proposal with promises
  EXPECT_TRUE(tune["result"].contains("proposed"));
}

TEST(ReplayDesk, BadInputAndNothingToReplayAreClearErrors) {
  ReplayDesk desk(DeskSetup(3));
  auto message = [](const json& r) {
    return r.value("ok", true) ? std::string() : r["error"]["message"].get<std::string>();
  };
  EXPECT_EQ(message(desk.Ask(ReplayDesk::Kind::kReplay, {{"since", 14}}, 0)),
            "\"since\" must be a time such as \"14d\" or \"2026-11-01\"");
  EXPECT_EQ(message(desk.Ask(ReplayDesk::Kind::kReplay, {{"since", ""}}, 0)),
            "\"since\" must be a time such as \"14d\" or \"2026-11-01\"");
  EXPECT_EQ(message(desk.Ask(ReplayDesk::Kind::kReplay, {{"fresh", "yes"}}, 0)),
            "\"fresh\" must be true or false");
  EXPECT_EQ(message(desk.Ask(ReplayDesk::Kind::kReplay, {{"since", "1h"}}, 0)),
            "no job that ran has ended since then: nothing to replay");
  EXPECT_FALSE(desk.busy());
}

TEST(ReplayDesk, OneAtATimeAndALongOneStopsWithTheDesk) {
  auto desk = std::make_unique<ReplayDesk>(DeskSetup(20000));
  ASSERT_EQ(desk->Ask(ReplayDesk::Kind::kTune, {}, 100)["state"], "running");
  // Another while it runs: refused, saying which runs; the same: still running.
  json other = desk->Ask(ReplayDesk::Kind::kReplay, {}, 101);
  ASSERT_FALSE(other.value("ok", true)) << other.dump();
  EXPECT_EQ(other["error"]["message"],
            "a replay of the lab's history is under way (tune since 14d): ask again when it has finished");
  EXPECT_EQ(desk->Ask(ReplayDesk::Kind::kTune, {}, 102)["state"], "running");
  EXPECT_TRUE(desk->busy());
  // A hundred replays of 20,000 jobs take minutes; the desk goes at once.
  const auto began = std::chrono::steady_clock::now();
  desk.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - began, std::chrono::seconds(30));
}

}  // namespace
}  // namespace replay_desk_test
}  // namespace rota::daemon
