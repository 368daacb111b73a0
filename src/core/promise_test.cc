// Promises: the start first come first served would give a job at arrival (core/promise.h).
#include "core/promise.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "testing/builders.h"

namespace rota {
namespace {

constexpr Time kNow = 1'700'000'000;

TEST(PromiseBookTest, EachJobIsPromisedWhereItFirstFitsBehindThoseBeforeIt) {
  PromiseBook book(4);
  EXPECT_EQ(book.Promise(kNow, 4, kHour), kNow);               // the whole cluster for an hour
  EXPECT_EQ(book.Promise(kNow, 2, kHour), kNow + kHour);       // then half of it ...
  EXPECT_EQ(book.Promise(kNow, 4, kHour), kNow + 2 * kHour);   // ... then all of it again
  // A small short job fits beside the second one: promised at once behind the first, and no
  // earlier promise moves for it (conservative backfill on the pooled GPUs).
  EXPECT_EQ(book.Promise(kNow, 2, 30 * kMinute), kNow + kHour);
  EXPECT_EQ(book.Promise(kNow, 2, 2 * kHour), kNow + 3 * kHour);  // too long for the hole
  // A request wider than the cluster counts as all of it, and time goes on.
  EXPECT_EQ(book.Promise(kNow + 10 * kHour, 9, kHour), kNow + 10 * kHour);
}

TEST(PromiseBookTest, AJobThatEndsEarlyGivesItsHoldBackToLaterArrivals) {
  PromiseBook book(2);
  EXPECT_EQ(book.Promise(kNow, 2, 10 * kHour), kNow);
  EXPECT_EQ(book.Promise(kNow, 1, kHour), kNow + 10 * kHour);
  // The first job ends after an hour: the second keeps its promise, the next arrival is
  // promised the freed card at once.
  book.Release(kNow + kHour, 2, kNow, 10 * kHour);
  EXPECT_EQ(book.Promise(kNow + kHour, 1, kHour), kNow + kHour);
  EXPECT_EQ(book.Promise(kNow + kHour, 2, kHour), kNow + 2 * kHour);  // after the third
  EXPECT_EQ(book.Promise(kNow + kHour, 2, 9 * kHour), kNow + 11 * kHour);  // after the second
  // A job that ends before its promise gives back all of it, and only it.
  PromiseBook early(1);
  EXPECT_EQ(early.Promise(kNow, 1, kHour), kNow);
  EXPECT_EQ(early.Promise(kNow, 1, kHour), kNow + kHour);
  early.Release(kNow + 60, 1, kNow + kHour, kHour);  // the second, started early by rota
  EXPECT_EQ(early.Promise(kNow + 60, 1, 2 * kHour), kNow + kHour);
}

// The daemon rebuilds the book from the promises it stored (MakePromises); the simulator keeps
// one, releasing each job's hold when it ends. On a random sequence both promise the same.
TEST(PromiseBookTest, TheRebuiltBookPromisesWhatTheKeptOnePromises) {
  std::mt19937 rnd(7);
  auto pick = [&rnd](int n) { return static_cast<int>(rnd() % static_cast<unsigned>(n)); };
  ClusterState state;
  state.gpus = testing::Cards(6);
  Policy policy;
  policy.promise_slack = 0;
  PromiseBook kept(6);
  Time now = kNow;
  JobId next = 1;
  int checked = 0;
  for (int step = 0; step < 400; ++step) {
    now += pick(3) * 600;
    // Some jobs end (pending or running alike: only the book is under test).
    for (std::vector<Job>* jobs : {&state.pending}) {
      for (size_t i = 0; i < jobs->size();) {
        const Job& j = (*jobs)[i];
        if (pick(5) == 0 || j.promise + j.time_limit <= now) {
          kept.Release(now, j.request.gpus, j.promise, j.time_limit);
          (*jobs)[i] = jobs->back();
          jobs->pop_back();
          continue;
        }
        ++i;
      }
    }
    Job j = testing::MakeJob(next++, "u", 1 + pick(6), (1 + pick(8)) * 900, now);
    state.pending.push_back(j);
    const auto made = MakePromises(state, policy, now);
    ASSERT_EQ(made.size(), 1u);
    ASSERT_EQ(made[0].first, j.id);
    const Time promise = kept.Promise(now, j.request.gpus, j.time_limit);
    ASSERT_EQ(made[0].second, promise) << "step " << step;
    state.pending.back().promise = promise;
    checked += promise > now ? 1 : 0;
  }
  EXPECT_GT(checked, 100);  // most were promised a later start: the book was busy
}

TEST(PromiseTest, OnlyJobsThatMayBeProtectedArePromisedInSubmitOrder) {
  ClusterState state;
  state.gpus = testing::Cards(2);
  state.running.push_back({});
  state.running[0].job = testing::MakeJob(9, "u", 2, kHour, kNow - 100);
  state.running[0].job.promise = kNow - 100;  // holds both cards until kNow + 3500
  state.pending.push_back(testing::MakeJob(3, "u", 2, kHour, kNow - 10));
  state.pending.push_back(testing::MakeJob(1, "u", 1, kHour, kNow - 20));
  state.pending.push_back(testing::MakeJob(2, "u", 1, kHour, kNow - 5, Tier::kExplore));
  state.pending.push_back(testing::MakeJob(4, "u", 1, kHour, kNow - 30));
  state.pending.back().after = {9};
  Policy policy;
  EXPECT_TRUE(MakePromises(state, policy, kNow).empty());  // promises not kept
  policy.promise_slack = 0;
  const auto made = MakePromises(state, policy, kNow);
  // Job 1 (submitted first) behind the running job, job 3 behind job 1; no promise for the
  // explore job or the one that waits on another.
  ASSERT_EQ(made.size(), 2u);
  EXPECT_EQ(made[0], std::make_pair(JobId{1}, kNow + 3500));
  EXPECT_EQ(made[1], std::make_pair(JobId{3}, kNow + 3500 + kHour));
  // Jobs promised already are not promised again.
  state.pending[0].promise = made[1].second;
  state.pending[1].promise = made[0].second;
  EXPECT_TRUE(MakePromises(state, policy, kNow).empty());
  policy.algorithm = Algorithm::kBackfill;
  state.pending[0].promise = kNever;
  EXPECT_TRUE(MakePromises(state, policy, kNow).empty());
  // Nothing is protected: a promise would mean nothing.
  policy.algorithm = Algorithm::kRota;
  EXPECT_EQ(MakePromises(state, policy, kNow).size(), 1u);
  policy.protect_max = 0;
  EXPECT_TRUE(MakePromises(state, policy, kNow).empty());
}

TEST(PromiseTest, EachRequestIsPromisedOnTheCardsThatCouldHoldIt) {
  // Two cards and one in MIG mode; a running 2-card job holds both cards for an hour.
  ClusterState state;
  state.gpus = testing::Cards(3);
  state.gpus[2].mig = {{"", "3g.40gb", 40960}, {"", "3g.40gb", 40960}};
  state.running.push_back({});
  state.running[0].job = testing::MakeJob(9, "u", 2, kHour, kNow);
  state.running[0].job.promise = kNow;
  state.pending.push_back(testing::MakeJob(1, "u", 1, kHour, kNow - 20));
  Job slice = testing::MakeJob(2, "u", 1, kHour, kNow - 10);
  slice.request = {RequestKind::kMig, 0, 0, "3g.40gb"};
  state.pending.push_back(slice);
  Policy policy;
  policy.promise_slack = 0;
  const auto made = MakePromises(state, policy, kNow);
  // The 1-card job only once the two cards free (pooled, the MIG card would have promised it a
  // start now); the slice at once, on the MIG card, whatever the whole cards hold.
  ASSERT_EQ(made.size(), 2u);
  EXPECT_EQ(made[0], std::make_pair(JobId{1}, kNow + kHour));
  EXPECT_EQ(made[1], std::make_pair(JobId{2}, kNow));
  // The simulator's kept books promise alike.
  PromiseBooks books(state.gpus);
  EXPECT_EQ(books.For(state.running[0].job.request).Promise(kNow, 2, kHour), kNow);
  EXPECT_EQ(books.For(state.pending[0].request).Promise(kNow, 1, kHour), kNow + kHour);
  EXPECT_EQ(books.For(slice.request).Promise(kNow, 0.5, kHour), kNow);
}

TEST(PromiseTest, AJobIsDueAtTheEarlierOfTheWeekAndItsPromise) {
  Job j = testing::MakeJob(1, "u", 1, kHour, kNow);
  Policy p;
  EXPECT_EQ(ProtectedFrom(j, p), kNow + 7 * kDay);  // no promise
  j.promise = kNow + kDay;
  EXPECT_EQ(ProtectedFrom(j, p), kNow + 7 * kDay);  // promises not kept
  p.promise_slack = kHour;
  EXPECT_EQ(ProtectedFrom(j, p), kNow + kDay + kHour);
  p.protect_after = -1;
  EXPECT_EQ(ProtectedFrom(j, p), kNow + kDay + kHour);
  j.promise = kNever;
  EXPECT_EQ(ProtectedFrom(j, p), kNever);
  EXPECT_TRUE(Protecting(p));
  p.promise_slack = -1;
  EXPECT_FALSE(Protecting(p));
}

}  // namespace
}  // namespace rota
