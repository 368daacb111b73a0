// Tested by promise_test.cc, scheduler_test.cc (SchedulerProtectionTest), queue_index_test.cc,
// the random reference test (scheduler_random_test.cc) and tests/daemon/test_cli.py (PromiseTest).
#include "core/promise.h"

#include <algorithm>
#include <iterator>

#include "core/quota.h"

namespace rota {

bool Protecting(const Policy& policy) {
  return policy.algorithm == Algorithm::kRota && policy.protect_max > 0 &&
         (policy.protect_after >= 0 || policy.promise_slack >= 0);
}

bool KeepsPromises(const Policy& policy) { return policy.promise_slack >= 0 && Protecting(policy); }

Time ProtectedFrom(const Job& job, const Policy& policy) {
  Time due = policy.protect_after >= 0 ? job.submit_time + policy.protect_after : kNever;
  if (policy.promise_slack >= 0 && job.promise != kNever) due = std::min(due, job.promise + policy.promise_slack);
  return due;
}

void PromiseBook::Forget(Time now) {
  auto it = used_.upper_bound(now);
  if (it == used_.begin()) return;
  const double at_now = std::prev(it)->second;
  used_.erase(used_.begin(), it);
  if (at_now != 0) used_.emplace(now, at_now);
}

PromiseBook PromiseBook::Of(double capacity, Time now, const std::vector<Held>& held) {
  PromiseBook book(capacity);
  std::vector<std::pair<Time, double>> deltas;  // +gpus at the start, -gpus at the end
  deltas.reserve(2 * held.size());
  for (const Held& h : held) {
    const Time end = h.promise + std::max<Duration>(1, h.limit);
    const Time from = std::max(h.promise, now);
    if (from >= end) continue;
    const double gpus = std::min(h.gpus, capacity);
    deltas.push_back({from, gpus});
    deltas.push_back({end, -gpus});
  }
  std::sort(deltas.begin(), deltas.end());
  double used = 0;
  for (size_t i = 0; i < deltas.size();) {
    const Time t = deltas[i].first;
    for (; i < deltas.size() && deltas[i].first == t; ++i) used += deltas[i].second;
    // Sums of whole GPUs and card fractions: round what should be nothing to nothing.
    if (used < 1e-9) used = 0;
    book.used_.emplace_hint(book.used_.end(), t, used);
  }
  return book;
}

Time PromiseBook::Promise(Time now, double gpus, Duration limit) {
  Forget(now);
  gpus = std::min(gpus, capacity_);
  limit = std::max<Duration>(1, limit);
  const double room = capacity_ - gpus + 1e-9;
  // Walk the steps: `start` is the candidate; a step over `room` before start + limit moves it
  // to that step's end.
  Time start = now;
  for (auto it = used_.begin(); it != used_.end(); ++it) {
    const Time step_end = std::next(it) == used_.end() ? kNever : std::next(it)->first;
    if (step_end <= start) continue;
    if (it->first >= start + limit) break;
    if (it->second > room) start = step_end;
  }
  Add(start, start + limit, gpus);
  return start;
}

void PromiseBook::Add(Time from, Time to, double gpus) {
  // Split at both ends, then add to the steps between.
  auto last = Split(to);
  for (auto it = Split(from); it != last; ++it) it->second = std::max(0.0, it->second + gpus);
}

std::map<Time, double>::iterator PromiseBook::Split(Time t) {
  auto it = used_.lower_bound(t);
  if (it != used_.end() && it->first == t) return it;
  const double v = it == used_.begin() ? 0.0 : std::prev(it)->second;
  return used_.emplace_hint(it, t, v);
}

void PromiseBook::Release(Time now, double gpus, Time promise, Duration limit) {
  Forget(now);
  const Time from = std::max(promise, now);
  const Time to = promise + std::max<Duration>(1, limit);
  if (from >= to) return;
  Add(from, to, -std::min(gpus, capacity_));
}

double PromiseBooks::Cards(const std::vector<Gpu>& gpus, bool mig) {
  double n = 0;
  for (const Gpu& g : gpus) n += g.mig.empty() != mig ? 1.0 : 0.0;
  return n;
}

bool Promisable(const Job& j) { return j.tier != Tier::kExplore && j.after.empty() && j.after_ok.empty(); }

std::vector<std::pair<JobId, Time>> MakePromises(const ClusterState& state, const Policy& policy, Time now) {
  std::vector<std::pair<JobId, Time>> made;
  if (!KeepsPromises(policy)) return made;
  std::vector<const Job*> wanting;
  for (const Job& j : state.pending) {
    if (j.promise == kNever && Promisable(j)) wanting.push_back(&j);
  }
  if (wanting.empty()) return made;
  const RequestGpuTable gpus(state);
  std::vector<PromiseBook::Held> held[2];  // on the cards not in MIG mode, and on those that are
  auto hold = [&](const Job& j) {
    if (j.promise != kNever)
      held[PromiseBooks::OnMigCards(j.request)].push_back({j.promise, j.time_limit, gpus.Of(j.request)});
  };
  for (const RunningJob& r : state.running) hold(r.job);
  for (const Job& j : state.pending) hold(j);
  PromiseBooks books(PromiseBook::Of(PromiseBooks::Cards(state.gpus, false), now, held[0]),
                     PromiseBook::Of(PromiseBooks::Cards(state.gpus, true), now, held[1]));
  std::sort(wanting.begin(), wanting.end(), [](const Job* a, const Job* b) {
    return a->submit_time != b->submit_time ? a->submit_time < b->submit_time : a->id < b->id;
  });
  made.reserve(wanting.size());
  for (const Job* j : wanting) {
    made.push_back({j->id, books.For(j->request).Promise(now, gpus.Of(j->request), j->time_limit)});
  }
  return made;
}

}  // namespace rota
