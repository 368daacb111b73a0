// Tests of the lab's history as a trace: what each recorded job becomes (whole cards, a memory
// share by its memory and a MIG slice by its profile, the recorded limit), the cards as they are
// (memory, nodes, MIG slices), the jobs that never
// ran left out and counted, the order, the recorded waits, and the clear errors.
#include "replay/store_trace.h"

#include <gtest/gtest.h>

namespace rota::replay {
namespace store_trace_test {
namespace {

using nlohmann::json;

json Job(int id, const std::string& user, json request, Time submit, Time start, Time end, Duration limit) {
  return {{"id", id},
          {"user", user},
          {"project", "p"},
          {"tier", "thesis"},
          {"request", request},
          {"submit_time", submit},
          {"start_time", start},
          {"end_time", end},
          {"time_limit", limit},
          {"name", "train-" + user}};
}

const json kGpus = {
    {"gpus", {{{"index", 0}, {"memory_total", 81920}}, {{"index", 1}, {"memory_total", 81920}}}}};

TEST(StoreTrace, RecordedJobsBecomeTraceJobs) {
  std::vector<json> jobs = {
      Job(3, "bo", {{"kind", "gpu_mem"}, {"memory", 20480}}, 2000, 2100, 2200, 600),
      Job(1, "ana", {{"kind", "gpus"}, {"gpus", 2}}, 1000, 1500, 4500, 7200),
      Job(2, "ana", {{"kind", "mig"}, {"profile", "3g.40gb"}}, 1500, 1500, 1500, 60),
      Job(4, "cy", {{"kind", "gpus"}, {"gpus", 1}}, 3000, 0, 3100, 60),  // cancelled while waiting
  };
  jobs[0]["after"] = {1};
  jobs[0]["after_ok"] = {2, "x"};
  StatusOr<StoreTrace> st = StoreTraceFromJson(kGpus, jobs);
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  EXPECT_EQ(st->gpus, 2);
  EXPECT_EQ(st->gpu_memory, 81920);
  const auto& t = st->trace.jobs;
  ASSERT_EQ(t.size(), 3u);
  EXPECT_TRUE(st->trace.absolute_times);
  EXPECT_EQ(st->trace.skipped, 1);
  EXPECT_EQ(st->trace.notes, std::vector<std::string>{"1 jobs that never ran left out"});
  // In submit order.
  EXPECT_EQ(t[0].submit, 1000);
  EXPECT_EQ(t[0].user, "ana");
  EXPECT_EQ(t[0].gpus, 2);
  EXPECT_EQ(t[0].duration, 3000);
  EXPECT_EQ(t[0].limit, 7200);
  EXPECT_EQ(t[0].project, "p");
  EXPECT_EQ(t[0].tier, "thesis");
  EXPECT_EQ(t[0].name, "train-ana");  // the key of the runtime prediction
  EXPECT_EQ(t[0].id, 1);
  EXPECT_TRUE(t[0].after.empty());
  EXPECT_EQ(t[2].id, 3);
  EXPECT_EQ(t[2].after, (std::vector<std::int64_t>{1, 2}));  // --after and --after-ok; a bad id ignored
  EXPECT_EQ(t[1].gpus, 0);
  EXPECT_EQ(t[1].mig_profile, "3g.40gb");    // replayed on a slice of that profile
  EXPECT_DOUBLE_EQ(t[1].gpu_fraction, 0.5);  // what it held as it was: 40 GB of an 80 GB card
  EXPECT_EQ(t[1].duration, 1);               // ended as it started: a second
  EXPECT_EQ(t[2].memory, 20480);             // a share asks its memory
  EXPECT_TRUE(t[2].mig_profile.empty());
  EXPECT_DOUBLE_EQ(t[2].gpu_fraction, 0.25);
  // The waits as they were.
  ASSERT_EQ(st->recorded.size(), 3u);
  EXPECT_EQ(st->recorded[0].start - st->recorded[0].submit, 100);  // job 3, in the history's order
  EXPECT_EQ(st->first_end, 1500);
}

TEST(StoreTrace, BookingsThatHeldCardsSharesOrSlicesInTheReplayedDaysAreReplayed) {
  auto booking = [](const std::string& user, const std::string& state, json request, Time created, Time start,
                    Time end) {
    return json{{"user", user},       {"state", state}, {"request", request},
                {"created", created}, {"start", start}, {"end", end}};
  };
  const json two = {{"kind", "gpus"}, {"gpus", 2}};
  const json reply = {
      {"bookings",
       {booking("ana", "ended", two, 500, 1000, 2000),
        booking("bo", "no_show", {{"kind", "gpus"}, {"gpus", 1}}, 100, 1200, 1800),
        booking("cy", "rejected", two, 50, 1000, 2000), booking("cy", "cancelled", two, 50, 1000, 2000),
        booking("cy", "ended", {{"kind", "gpu_mem"}, {"memory", 20480}}, 60, 1000, 2000),
        booking("eve", "ended", {{"kind", "mig"}, {"profile", "3g.40gb"}}, 70, 1000, 2000),
        booking("fay", "ended", {{"kind", "tpu"}}, 80, 1000, 2000),  // a kind it cannot read
        booking("dee", "confirmed", two, 900, 9000, 9900)}}};        // still to come
  const std::vector<sim::SimBooking> b = StoreBookingsFromJson(reply, 5000);
  ASSERT_EQ(b.size(), 4u);
  // By when they were made.
  EXPECT_EQ(b[0].user, "cy");
  EXPECT_EQ(b[0].memory, 20480);
  EXPECT_TRUE(b[0].mig_profile.empty());
  EXPECT_EQ(b[1].user, "eve");
  EXPECT_EQ(b[1].mig_profile, "3g.40gb");
  EXPECT_EQ(b[1].memory, 0);
  EXPECT_EQ(b[2].user, "bo");
  EXPECT_FALSE(b[2].show);
  EXPECT_EQ((b[2].made), 100);
  EXPECT_EQ(b[3].user, "ana");
  EXPECT_TRUE(b[3].show);
  EXPECT_EQ(b[3].gpus, 2);
  EXPECT_EQ(b[3].memory, 0);
  EXPECT_EQ(b[3].start, 1000);
  EXPECT_EQ(b[3].end, 2000);
  EXPECT_TRUE(StoreBookingsFromJson(json::object(), 5000).empty());
}

TEST(StoreTrace, AWindowThatBeginsDaysBeforeItsFirstEndIsSaid) {
  const Time end = 1796115600;
  const std::vector<json> jobs = {
      Job(1, "ana", {{"kind", "gpus"}, {"gpus", 1}}, end - 100, end - 50, end, 60)};
  StatusOr<StoreTrace> st = StoreTraceFromJson(kGpus, jobs, end - 3 * kDay - 5);
  ASSERT_TRUE(st.ok());
  ASSERT_EQ(st->trace.notes.size(), 1u);
  EXPECT_EQ(st->trace.notes[0],
            "nothing ended in the first 3 days asked for (the store's history may begin later): the replay "
            "starts 3 "
            "days after the start asked for");
  EXPECT_EQ(st->late_days, 3);
  EXPECT_EQ(StoreTraceFromJson(kGpus, jobs, end - kDay).value().late_days, 0);
  EXPECT_TRUE(StoreTraceFromJson(kGpus, jobs, end - kDay).value().trace.notes.empty());  // a day: not said
  EXPECT_TRUE(StoreTraceFromJson(kGpus, jobs).value().trace.notes.empty());              // no window known
}

TEST(StoreTrace, NothingToReplayIsSaid) {
  EXPECT_EQ(StoreTraceFromJson(kGpus, {}).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(StoreTraceFromJson(json::object(), {Job(1, "a", {{"kind", "gpus"}, {"gpus", 1}}, 1, 2, 3, 4)})
                .status()
                .code(),
            StatusCode::kFailedPrecondition);
}

TEST(StoreTrace, TheCardsAreReplayedAsTheyAre) {
  const json gpus = {
      {"gpus",
       {{{"index", 0},
         {"uuid", "GPU-a"},
         {"name", "A100"},
         {"node", "n1"},
         {"memory_total", 81920},
         {"mig",
          {{{"uuid", "MIG-a0"}, {"profile", "3g.40gb"}, {"memory_total", 40192}},
           {{"uuid", "MIG-a1"}, {"profile", "2g.20gb"}, {"memory_total", 19968}}}}},
        {{"index", 1}, {"uuid", "GPU-b"}, {"node", "n2"}, {"memory_total", 24576}, {"mig", json::array()}},
        {{"index", 2}, {"node", "n1"}, {"memory_total", 24576}}}}};
  StatusOr<StoreTrace> st =
      StoreTraceFromJson(gpus, {Job(1, "ana", {{"kind", "gpus"}, {"gpus", 1}}, 1000, 1000, 2000, 3600)});
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  ASSERT_EQ(st->cards.size(), 3u);
  EXPECT_EQ(st->cards[0].uuid, "GPU-a");
  EXPECT_EQ(st->cards[0].memory, 81920);
  ASSERT_EQ(st->cards[0].mig.size(), 2u);
  EXPECT_EQ(st->cards[0].mig[1].profile, "2g.20gb");
  EXPECT_EQ(st->cards[0].mig[1].memory, 19968);
  EXPECT_EQ(st->cards[1].memory, 24576);
  EXPECT_TRUE(st->cards[1].mig.empty());
  // Nodes by name: n1, n2, n1.
  EXPECT_EQ(st->cards[0].node, st->cards[2].node);
  EXPECT_NE(st->cards[0].node, st->cards[1].node);
  EXPECT_EQ(st->cards[2].uuid, "GPU-replay-2");  // a card without a uuid still has one of its own
}

}  // namespace
}  // namespace store_trace_test
}  // namespace rota::replay
