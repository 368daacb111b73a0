// PromiseBook: the start each job would be promised if the queue were first come first served,
// with every job reserved where it first fits (conservative backfill on the cluster's GPUs of its
// kind in all, no node boundaries, on time limits; PromiseBooks keeps one per kind). The bound on
// overtaking protects a job once it is past its promise (Policy::promise_slack; docs/design.md,
// "How a decision is made", step 2).
//
//   PromiseBook book(/*capacity=*/64);
//   Time p = book.Promise(now, /*gpus=*/8, /*limit=*/kHour);  // and holds [p, p + limit)
//
// A promise is made once, at arrival, and never moved: a job that ends early gives back the rest
// of its hold for later arrivals (Release) but does not move the promises made already, so each
// one is at least as late as the start conservative backfill would give it. The book is what the
// jobs not ended yet were promised: the daemon rebuilds it from its stored promises
// (MakePromises), the simulator keeps one (Promise, Release). Pure: no clock, no I/O.
#pragma once

#include <map>
#include <utility>
#include <vector>

#include "core/cluster.h"
#include "core/policy.h"
#include "core/types.h"

namespace rota {

// Whether the bound on overtaking protects any job under `policy` (rota only; by age, by promise
// or both).
bool Protecting(const Policy& policy);
// Whether jobs are promised starts under `policy`: promise_slack set, and something protected.
bool KeepsPromises(const Policy& policy);
// When `job` may first be protected: once it has waited protect_after, or is promise_slack past
// its promise, whichever comes first; kNever if neither applies. Explore jobs are never protected
// (the caller checks the tier a job ranks in).
Time ProtectedFrom(const Job& job, const Policy& policy);

class PromiseBook {
 public:
  explicit PromiseBook(double capacity) : capacity_(capacity) {}

  // The earliest t >= now with `gpus` free over [t, t + limit), which is then held. A request
  // wider than the cluster is treated as the whole cluster.
  Time Promise(Time now, double gpus, Duration limit);
  // Gives back what is left from now on of the hold [promise, promise + limit) of `gpus`: the job
  // ended (sooner than its limit, or before its promise).
  void Release(Time now, double gpus, Time promise, Duration limit);
  // What jobs promised already hold, from now on: [promise, promise + limit) of gpus each.
  struct Held {
    Time promise;
    Duration limit;
    double gpus;
  };
  // The book holding all of `held` (rebuilding it: one sort, not a walk per hold).
  static PromiseBook Of(double capacity, Time now, const std::vector<Held>& held);
 private:
  void Forget(Time now);  // steps that ended before now
  std::map<Time, double>::iterator Split(Time t);  // a step that starts at t
  void Add(Time from, Time to, double gpus);       // to [from, to), never below nothing

  double capacity_;
  std::map<Time, double> used_;  // GPUs held from each key until the next; 0 after the last
};

// A cluster's promises, in two books: MIG slices on the cards in MIG mode, whole GPUs and memory
// shares on the others, each book on its own cards' count; a request is promised only on cards
// that could hold it (pooled together, a whole-GPU job would be promised a start on MIG cards).
class PromiseBooks {
 public:
  explicit PromiseBooks(const std::vector<Gpu>& gpus) : cards_(Cards(gpus, false)), mig_(Cards(gpus, true)) {}
  PromiseBooks(PromiseBook cards, PromiseBook mig) : cards_(std::move(cards)), mig_(std::move(mig)) {}
  // The book of `request`'s cards.
  PromiseBook& For(const Request& request) { return OnMigCards(request) ? mig_ : cards_; }
  static bool OnMigCards(const Request& request) { return request.kind == RequestKind::kMig; }
  // How many of `gpus` are in MIG mode (`mig`) or not.
  static double Cards(const std::vector<Gpu>& gpus, bool mig);

 private:
  PromiseBook cards_;
  PromiseBook mig_;
};

// Whether `job` is promised a start (MakePromises): it may be protected (not explore) and waits on
// no other job.
bool Promisable(const Job& job);

// The promises to make on `state` at `now` (where the policy KeepsPromises): every pending job
// without one (Job::promise == kNever) that may be protected (not explore, no dependencies) is
// promised, in submit order, on books (PromiseBooks) that hold what the pending and running jobs
// were promised already (the running jobs' holds stay until they end). Returns (job, promise)
// pairs, in submit order; empty when promises are not kept or every job has one.
std::vector<std::pair<JobId, Time>> MakePromises(const ClusterState& state, const Policy& policy, Time now);

}  // namespace rota
