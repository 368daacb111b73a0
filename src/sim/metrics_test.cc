#include "sim/metrics.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace rota::sim {
namespace metrics_test {
namespace {

JobOutcome Job(std::int64_t id, std::string user, Time submit, Time start, Time end,
               double gpus = 1) {
  return JobOutcome{id, std::move(user), submit, start, end, gpus};
}

TEST(MetricsTest, EmptyInputIsAllZero) {
  Metrics m = ComputeMetrics({}, 8);
  EXPECT_EQ(m.jobs, 0);
  EXPECT_EQ(m.avg_wait, 0);
  EXPECT_EQ(m.p99_wait, 0);
  EXPECT_EQ(m.makespan, 0);
  EXPECT_EQ(m.utilisation, 0);
  EXPECT_EQ(m.users, 0);
  EXPECT_EQ(m.jain_wait, -1);
  EXPECT_EQ(m.jain_slowdown, -1);
}

TEST(MetricsTest, NearestRankPercentiles) {
  std::vector<double> v;
  for (int i = 1; i <= 100; ++i) v.push_back(i);
  EXPECT_EQ(NearestRankPercentile(v, 50), 50);
  EXPECT_EQ(NearestRankPercentile(v, 99), 99);
  EXPECT_EQ(NearestRankPercentile(v, 100), 100);
  EXPECT_EQ(NearestRankPercentile({7}, 99), 7);
  // n = 5: p50 rank ceil(2.5) = 3, p99 rank ceil(4.95) = 5.
  EXPECT_EQ(NearestRankPercentile({1, 2, 3, 4, 5}, 50), 3);
  EXPECT_EQ(NearestRankPercentile({1, 2, 3, 4, 5}, 99), 5);
  EXPECT_EQ(NearestRankPercentile({}, 50), 0);
}

TEST(MetricsTest, WaitPercentilesFromOutcomes) {
  std::vector<JobOutcome> jobs;
  // Waits 1..100 (given in reverse order), each job runs 10 s.
  for (int i = 100; i >= 1; --i) jobs.push_back(Job(i, "u", 0, i, i + 10));
  Metrics m = ComputeMetrics(jobs, 100);
  EXPECT_EQ(m.jobs, 100);
  EXPECT_DOUBLE_EQ(m.avg_wait, 50.5);
  EXPECT_EQ(m.p50_wait, 50);
  EXPECT_EQ(m.p99_wait, 99);
  EXPECT_EQ(m.max_wait, 100);
  EXPECT_DOUBLE_EQ(m.avg_jct, 60.5);
  EXPECT_EQ(m.p99_jct, 109);
  EXPECT_EQ(m.makespan, 110);
  EXPECT_EQ(m.users, 1);
  EXPECT_EQ(m.jain_wait, -1);  // one user
}

TEST(MetricsTest, JainIndexKnownValues) {
  EXPECT_DOUBLE_EQ(JainIndex({1, 1, 1, 1}), 1.0);
  EXPECT_DOUBLE_EQ(JainIndex({1, 0, 0, 0}), 0.25);      // 1 / (4 * 1)
  EXPECT_DOUBLE_EQ(JainIndex({1, 2, 3}), 36.0 / 42.0);  // 6^2 / (3 * 14)
  EXPECT_DOUBLE_EQ(JainIndex({0, 0}), 1.0);
  EXPECT_EQ(JainIndex({5}), -1);
  EXPECT_EQ(JainIndex({}), -1);
}

TEST(MetricsTest, JainOverPerUserMeans) {
  // alice: waits 10 and 30 (mean 20); bob: wait 60. J = 80^2 / (2 * (400 + 3600)) = 0.8.
  // Runs are 100 s: slowdowns alice (110/100 + 130/100)/2 = 1.2, bob 160/100 = 1.6.
  // J = 2.8^2 / (2 * (1.44 + 2.56)) = 7.84 / 8 = 0.98.
  std::vector<JobOutcome> jobs = {Job(1, "alice", 0, 10, 110), Job(2, "alice", 0, 30, 130),
                                  Job(3, "bob", 0, 60, 160)};
  Metrics m = ComputeMetrics(jobs, 4);
  EXPECT_EQ(m.users, 2);
  EXPECT_DOUBLE_EQ(m.jain_wait, 0.8);
  EXPECT_DOUBLE_EQ(m.jain_slowdown, 0.98);
}

TEST(MetricsTest, BoundedSlowdownFloorsShortRuns) {
  // a: wait 0, run 1 -> (0 + 1) / 10 = 0.1. b: wait 9, run 1 -> 10 / 10 = 1.
  // J = 1.1^2 / (2 * (0.01 + 1)) = 1.21 / 2.02.
  std::vector<JobOutcome> jobs = {Job(1, "a", 0, 0, 1), Job(2, "b", 0, 9, 10)};
  Metrics m = ComputeMetrics(jobs, 1);
  EXPECT_DOUBLE_EQ(m.jain_slowdown, 1.21 / 2.02);
  EXPECT_DOUBLE_EQ(m.jain_wait, 0.5);  // 9^2 / (2 * 81)
}

TEST(MetricsTest, AllZeroWaitsAreFair) {
  std::vector<JobOutcome> jobs = {Job(1, "a", 0, 0, 50), Job(2, "b", 5, 5, 20)};
  Metrics m = ComputeMetrics(jobs, 2);
  EXPECT_EQ(m.jain_wait, 1.0);
  EXPECT_EQ(m.avg_wait, 0);
}

TEST(MetricsTest, UtilisationCountsShares) {
  // 4 GPUs, makespan 100 s (submit 0 .. end 100).
  // busy = 2 GPUs * 100 s + 0.5 GPU * 40 s + 1 GPU * 50 s = 270 GPU-s -> 270 / 400.
  std::vector<JobOutcome> jobs = {Job(1, "a", 0, 0, 100, 2), Job(2, "a", 10, 20, 60, 0.5),
                                  Job(3, "b", 30, 50, 100, 1)};
  Metrics m = ComputeMetrics(jobs, 4);
  EXPECT_EQ(m.makespan, 100);
  EXPECT_DOUBLE_EQ(m.utilisation, 0.675);
  EXPECT_EQ(ComputeMetrics(jobs, 0).utilisation, 0);
}

TEST(MetricsTest, MakespanFromFirstSubmitToLastEnd) {
  std::vector<JobOutcome> jobs = {Job(1, "a", 1000, 1200, 1300), Job(2, "a", 900, 950, 1250)};
  Metrics m = ComputeMetrics(jobs, 1);
  EXPECT_EQ(m.makespan, 400);
  // busy = 100 + 300 = 400 GPU-s on 1 GPU over 400 s.
  EXPECT_DOUBLE_EQ(m.utilisation, 1.0);
}

// ---- Bookings ----

BookingOutcome Booked(std::int64_t id, std::string user, std::vector<int> cards, Time made, Time start,
                      Time end, rota::BookingState state, Time closed) {
  BookingOutcome b;
  b.id = id;
  b.user = std::move(user);
  b.cards = std::move(cards);
  b.made = made;
  b.start = start;
  b.end = end;
  b.state = state;
  b.closed = closed;
  return b;
}

RunSpan Span(std::int64_t job, std::string user, std::vector<int> cards, Time start, Time end,
             Time planned_end, double per_card = 1, std::int64_t booking = 0) {
  return RunSpan{job, std::move(user), std::move(cards), per_card, start, end, planned_end, booking, -1};
}

TEST(SimBookingMetricsTest, HandComputedSplitOfTheBookedHours) {
  constexpr Time h = 3600;
  // Booking 1: alice, cards {0, 1}, made at 0, [10h, 14h), ended at 14h: booked 8 GPU-h.
  //  - carol's half share on card 0, started at 9h (after the booking was made) with a limit to
  //    9h30m but running until 10h30m: in the way over [10h, 10h30m), 0.5 x 0.5 = 0.25.
  //  - alice's 2-card run [10h30m, 13h): used 2 x 2.5 = 5.
  //  - bob's run on card 1 [13h, 15h), started after the booking was made with a limit past its
  //    start: lent (backfill) over [13h, 14h): 1.
  //  - dan's run on card 5: not on the booking.
  //  idle = 8 - 0.25 - 5 - 1 = 1.75.
  // Booking 2: erin, card {2}, made at 1h, [10h, 12h), no-show at 10h15m: booked 2, released
  //  1.75; frank's run on card 2 [0, 10h10m), started before the booking was made: in the way
  //  10 m; idle 5 m. Frank's run after the release [10h20m, 11h) counts nowhere.
  // Booking 6: gil, card {4}, [10h, 12h), ended; gil's job for it ran on cards {4, 6} [10h, 11h)
  //  and his job for booking 7 on card 4 [11h, 12h): used 1 + 1 (his jobs, whichever booking),
  //  elsewhere 1 (card 6, the job of booking 6). Booked 2.
  // Booking 3: refused; booking 4: no room; booking 5: needs an admin.
  std::vector<BookingOutcome> books = {
      Booked(1, "alice", {0, 1}, 0, 10 * h, 14 * h, rota::BookingState::kEnded, 14 * h),
      Booked(2, "erin", {2}, h, 10 * h, 12 * h, rota::BookingState::kNoShow, 10 * h + 900),
      Booked(3, "x", {}, 0, 10 * h, 12 * h, rota::BookingState::kRejected, 0),
      Booked(4, "x", {}, 0, 10 * h, 12 * h, rota::BookingState::kRejected, 0),
      Booked(5, "x", {3}, 0, 10 * h, 12 * h, rota::BookingState::kRejected, 10 * h),
      Booked(6, "gil", {4}, 0, 10 * h, 12 * h, rota::BookingState::kEnded, 12 * h)};
  books[0].used = true;
  books[1].show = false;
  books[2].verdict = BookingVerdict::kRefused;
  books[3].verdict = BookingVerdict::kNoRoom;
  books[4].verdict = BookingVerdict::kNeedsAdmin;
  std::vector<RunSpan> runs = {
      Span(1, "alice", {0, 1}, 10 * h + 1800, 13 * h, 14 * h),
      Span(2, "bob", {1}, 13 * h, 15 * h, 15 * h),
      Span(3, "carol", {0}, 9 * h, 10 * h + 1800, 9 * h + 1800, 0.5),
      Span(4, "dan", {5}, 0, 20 * h, 20 * h),
      Span(5, "frank", {2}, 0, 10 * h + 600, 10 * h + 600),
      Span(6, "frank", {2}, 10 * h + 1200, 11 * h, 11 * h),
      Span(7, "gil", {4, 6}, 10 * h, 11 * h, 12 * h, 1, 6),
      Span(8, "gil", {4}, 11 * h, 12 * h, 12 * h, 1, 7),
  };
  BookingMetrics m = ComputeBookingMetrics(books, runs);
  EXPECT_EQ(m.requested, 6);
  EXPECT_EQ(m.confirmed, 3);
  EXPECT_EQ(m.refused, 3);
  EXPECT_EQ(m.refused_rules, 1);
  EXPECT_EQ(m.refused_no_room, 1);
  EXPECT_EQ(m.needs_admin, 1);
  EXPECT_EQ(m.shows, 2);
  EXPECT_EQ(m.used, 1);
  EXPECT_EQ(m.no_shows, 1);
  EXPECT_DOUBLE_EQ(m.booked_gpu_hours, 12);
  EXPECT_DOUBLE_EQ(m.used_gpu_hours, 7);
  EXPECT_DOUBLE_EQ(m.elsewhere_gpu_hours, 1);
  EXPECT_DOUBLE_EQ(m.lent_gpu_hours, 1);
  EXPECT_NEAR(m.in_way_gpu_hours, 0.25 + 10.0 / 60, 1e-12);
  EXPECT_DOUBLE_EQ(m.released_gpu_hours, 1.75);
  EXPECT_NEAR(m.idle_gpu_hours, 1.75 + 5.0 / 60, 1e-12);
  EXPECT_NEAR(
      m.used_gpu_hours + m.lent_gpu_hours + m.in_way_gpu_hours + m.released_gpu_hours + m.idle_gpu_hours,
      m.booked_gpu_hours, 1e-12);
}

// A share and a slice hold part of a card.
// Booking 1: ana, half of card 0, made at 9h30m, [10h, 14h): booked 0.5 x 4 = 2 GPU-h. On card 0:
//  ana's quarter [10h, 12h) (used 0.25 x 2 = 0.5); bob's half [10h, 14h) and carol's quarter
//  [11h, 13h), both started after the booking was made with limits past its start (lent); dan's
//  quarter [9h, 11h), started before (in the way). The others fill the card's other half first:
//  [10h, 11h) they hold 0.75, so 0.25 of the booked half, lent and in the way as 0.5 : 0.25
//  (1/6 and 1/12); [11h, 12h) 0.75 again, all lent (0.25); [12h, 13h) 0.75 with ana gone: 0.25
//  lent; [13h, 14h) bob's half fits beside it. Used 0.5, lent 2/3, in the way 1/12, idle 0.75.
// Booking 2: eve, slice 1 of card 1 (half the card), [10h, 12h): booked 1. Eve's run on slice 1
//  [10h, 11h): used 0.5; gus's on slice 1 [11h, 12h): lent 0.5; fay's on slice 0 [10h30m, 12h):
//  not on the booking. Eve's job for this booking on slice 0 [10h, 10h30m): elsewhere 0.25 (the
//  card, but another slice).
TEST(SimBookingMetricsTest, ASharesAndASlicesHoursCountTheirPartOfTheCard) {
  constexpr Time h = 3600;
  std::vector<BookingOutcome> books = {
      Booked(1, "ana", {0}, 9 * h + 1800, 10 * h, 14 * h, rota::BookingState::kEnded, 14 * h),
      Booked(2, "eve", {1}, 9 * h, 10 * h, 12 * h, rota::BookingState::kEnded, 12 * h)};
  books[0].per_card = 0.5;
  books[1].per_card = 0.5;
  books[1].mig = 1;
  auto slice = [](RunSpan s, int mig) {
    s.mig = mig;
    return s;
  };
  std::vector<RunSpan> runs = {
      Span(1, "ana", {0}, 10 * h, 12 * h, 12 * h, 0.25),
      Span(2, "bob", {0}, 10 * h, 14 * h, 15 * h, 0.5),
      Span(3, "carol", {0}, 11 * h, 13 * h, 13 * h, 0.25),
      Span(4, "dan", {0}, 9 * h, 11 * h, 11 * h, 0.25),
      slice(Span(5, "eve", {1}, 10 * h, 11 * h, 11 * h, 0.5), 1),
      slice(Span(6, "gus", {1}, 11 * h, 12 * h, 12 * h, 0.5), 1),
      slice(Span(7, "fay", {1}, 10 * h + 1800, 12 * h, 12 * h, 0.5), 0),
      slice(Span(8, "eve", {1}, 10 * h, 10 * h + 1800, 12 * h, 0.5, 2), 0),
  };
  const BookingMetrics m = ComputeBookingMetrics(books, runs);
  EXPECT_DOUBLE_EQ(m.booked_gpu_hours, 3);
  EXPECT_DOUBLE_EQ(m.used_gpu_hours, 1);
  EXPECT_NEAR(m.lent_gpu_hours, 2.0 / 3 + 0.5, 1e-12);
  EXPECT_NEAR(m.in_way_gpu_hours, 1.0 / 12, 1e-12);
  EXPECT_NEAR(m.idle_gpu_hours, 0.75, 1e-12);
  EXPECT_DOUBLE_EQ(m.elsewhere_gpu_hours, 0.25);
  EXPECT_DOUBLE_EQ(m.released_gpu_hours, 0);
}

TEST(SimBookingMetricsTest, NothingBookedIsAllZero) {
  BookingMetrics m = ComputeBookingMetrics({}, {Span(1, "a", {0}, 0, 10, 10)});
  EXPECT_EQ(m.requested, 0);
  EXPECT_EQ(m.booked_gpu_hours, 0);
  EXPECT_EQ(m.idle_gpu_hours, 0);
}

}  // namespace
}  // namespace metrics_test
}  // namespace rota::sim
