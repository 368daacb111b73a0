// Tests of reading the lab's history through rotad's replies (pages, the bookings of those days,
// errors passed on) and of replaying and tuning it (three policies, the recorded waits, a stop).
#include "replay/lab_history.h"

#include <gtest/gtest.h>

#include <vector>

namespace rota::replay {
namespace lab_history_test {
namespace {

using nlohmann::json;

json Job(int id, const std::string& user, Time submit, Time start, Time end) {
  return {{"id", id},
          {"user", user},
          {"request", {{"kind", "gpus"}, {"gpus", 1}}},
          {"submit_time", submit},
          {"start_time", start},
          {"end_time", end},
          {"time_limit", 3600},
          {"name", "train"}};
}

// rotad as the replies of its three ops: one card, two pages of history, one booking.
struct FakeRotad {
  std::vector<json> asked;
  StatusOr<json> operator()(const json& r) {
    asked.push_back(r);
    const std::string op = r["op"];
    if (op == "gpus") return json{{"gpus", {{{"index", 0}, {"memory_total", 81920}}}}};
    if (op == "history") {
      if (r["since"] == "bad") return InvalidArgument("\"bad\" is not a time");
      if (!r.contains("after"))
        return json{{"jobs", {Job(1, "ana", 1000, 1000, 2000)}}, {"next", "p2"}, {"since", 900}};
      return json{{"jobs", {Job(2, "bo", 1500, 2000, 2600)}}, {"since", 900}};
    }
    return json{{"bookings",
                 {{{"user", "cy"},
                   {"state", "done"},
                   {"request", {{"kind", "gpus"}, {"gpus", 1}}},
                   {"created", 100},
                   {"start", 3000},
                   {"end", 3600}}}}};
  }
};

TEST(LabHistory, ReadsEveryPageAndTheBookingsOfThoseDays) {
  FakeRotad rotad;
  StatusOr<StoreTrace> st = LoadHistory([&rotad](const json& r) { return rotad(r); }, "14d");
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  EXPECT_EQ(st->gpus, 1);
  ASSERT_EQ(st->trace.jobs.size(), 2u);
  EXPECT_EQ(st->trace.jobs[1].name, "train");
  ASSERT_EQ(rotad.asked.size(), 4u);
  EXPECT_EQ(rotad.asked[2]["after"], "p2");
  EXPECT_EQ(rotad.asked[1]["all"], true);
  // The bookings asked for: from the first submission to just past the last end.
  EXPECT_EQ(rotad.asked[3]["from"], 1000);
  EXPECT_EQ(rotad.asked[3]["to"], 2601);
  // The booking starts after the last end: not one of those days.
  EXPECT_TRUE(st->bookings.empty());
  FakeRotad again;
  StatusOr<StoreTrace> bad = LoadHistory([&again](const json& r) { return again(r); }, "bad");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

TEST(LabHistory, ReplaysUnderEachPolicyAndTunes) {
  FakeRotad rotad;
  StatusOr<StoreTrace> st = LoadHistory([&rotad](const json& r) { return rotad(r); }, "14d");
  ASSERT_TRUE(st.ok());
  Policy p;
  p.time_of_day = {};
  StatusOr<json> replay = ReplayHistoryJson(*st, p);
  ASSERT_TRUE(replay.ok()) << replay.status().ToString();
  ASSERT_EQ((*replay)["results"].size(), 3u);
  EXPECT_EQ((*replay)["results"][0]["policy"], "fifo");
  EXPECT_EQ((*replay)["results"][2]["policy"], "rota");
  // Bo's job came while Ana's ran on the one card: it waits 500 s in every replay; as recorded
  // it waited 500 s too.
  for (const json& r : (*replay)["results"])
    EXPECT_DOUBLE_EQ(r["max_wait"].get<double>(), 500) << r["policy"];
  EXPECT_DOUBLE_EQ((*replay)["recorded"]["max_wait"].get<double>(), 500);
  EXPECT_EQ((*replay)["jobs"], 2);
  StatusOr<json> tune = TuneHistoryJson(*st, p);
  ASSERT_TRUE(tune.ok()) << tune.status().ToString();
  EXPECT_EQ((*tune)["tried"], 101);  // the grid and the proposal with promises
  EXPECT_EQ((*tune)["proposed_other_promises"]["promise_slack"], 0);
  EXPECT_EQ((*tune)["proposed_other_promises"]["weights"], (*tune)["proposed"]["weights"]);
  EXPECT_EQ((*tune)["change"], false);  // nothing can wait less than one job behind another
  std::atomic<bool> stop{true};
  EXPECT_EQ(ReplayHistoryJson(*st, p, &stop).status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(TuneHistoryJson(*st, p, &stop).status().code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace lab_history_test
}  // namespace rota::replay
