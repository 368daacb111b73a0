// Tested by simulator_test.cc (hand-computed traces) and the Philly slice test.
//
// The state handed to Schedule() is kept between calls and changed in place: pending and
// running jobs are removed by swapping with the last element, so an event costs one pass of the
// core plus O(changes). Usage is charged when a run ends, as the daemon does.
//
// Bookings follow the daemon's booking pass (daemon/booking_life.cc): before each Schedule()
// call, bookings due are made (CheckBooking), StepBookings advances them with what runs and who
// waits for a booking (the wait reasons of the previous pass), and their holds go into the state.
// The owner's jobs get ids after the trace's; every run is recorded once bookings exist, for the
// booked-capacity accounting in ComputeBookingMetrics.
#include "sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <optional>
#include <queue>
#include <set>
#include <unordered_map>

#include "core/arrivals.h"
#include "core/capacity.h"
#include "core/forecast.h"
#include "core/promise.h"
#include "core/queue_index.h"
#include "core/quota.h"
#include "core/scheduler.h"
#include "core/start_range.h"
#include "core/usage.h"
#include "sim/idle.h"
#include "sim/rng.h"

namespace rota::sim {

namespace {

struct SimJob {
  const TraceJob* trace = nullptr;
  Job job;
  Duration remaining = 0;  // run time still to do
  Time first_start = -1;
  Time run_start = -1;     // start of the current run
  Time signalled_at = -1;  // preemption signal of the current run
  Duration promised_for = 0;  // the limit its promise holds (PromiseBook), as at arrival
};

// A booking in the replay: the rules' entry plus what the metrics want to know.
struct BookingLife {
  const SimBooking* in = nullptr;
  BookingVerdict verdict = BookingVerdict::kConfirmed;
  JobId job = 0;           // the owner's job for it (0 = none)
  bool submitted = false;  // the owner's job has arrived
  bool started = false;    // ... and started
  bool owner_blocked = false;
  bool owner_elsewhere = false;
};

class Replay {
 public:
  Replay(const Trace& trace, const SimConfig& config) : trace_(trace), config_(config), rng_(config.seed) {
    policy_ = config.policy;
    policy_.enforce_time_limits = false;
    policy_.estimate_starts = false;
    state_.gpus = config.cards;
    for (int i = 0; i < config.gpus && config.cards.empty(); ++i) {
      Gpu g;
      g.index = i;
      g.uuid = "GPU-sim-" + std::to_string(i);
      g.model = "simulated";
      g.memory = config.gpu_memory;
      g.node = config.gpus_per_node > 0 ? i / config.gpus_per_node : 0;
      state_.gpus.push_back(std::move(g));
    }
  }

  SimResult Run() {
    SimResult result;
    result.policy = AlgorithmName(policy_.algorithm);
    n_trace_ = trace_.jobs.size();
    const size_t n_books = config_.bookings.size();
    jobs_.resize(n_trace_ + n_books);
    pending_pos_.assign(n_trace_ + n_books + 1, 0);
    removed_.assign(n_trace_ + n_books + 1, 0);
    for (size_t i = 0; i < n_trace_; ++i) {
      const TraceJob& t = trace_.jobs[i];
      SimJob& s = jobs_[i];
      s.trace = &t;
      s.job.id = static_cast<JobId>(i + 1);
      s.job.user = TraceUserName(t);
      s.job.project = t.project;
      s.job.name = t.name;
      s.job.submit_time = trace_.absolute_times ? t.submit : config_.epoch + t.submit;
      s.job.tier = ParseTier(t.tier).value_or(Tier::kRegular);
      s.job.requeue = true;
      if (t.gpus > 0) {
        s.job.request.kind = RequestKind::kWholeGpus;
        s.job.request.gpus = t.gpus;
      } else if (!t.mig_profile.empty()) {
        s.job.request.kind = RequestKind::kMig;
        s.job.request.mig_profile = t.mig_profile;
      } else if (t.memory > 0) {
        s.job.request.kind = RequestKind::kMemShare;
        s.job.request.memory = t.memory;
      } else {
        s.job.request.kind = RequestKind::kMemShare;
        s.job.request.memory =
            std::max<MiB>(1, static_cast<MiB>(std::llround(t.gpu_fraction * static_cast<double>(config_.gpu_memory))));
      }
      s.remaining = std::max<Duration>(1, t.duration);
    }
    const bool dependencies = LinkDependencies();
    InitBookings();
    // Reasons are read only for bookings (who waits for one) and the idle causes; without bookings
    // and quotas every waiting job in a trace waits for capacity, which Idle() knows already.
    policy_.explain = !books_.empty() || dependencies || !QuotasUnlimited(policy_.quota);
    // Unexplained, the passes take their order from an index of the queue kept here between them
    // (core/queue_index.h): what a pass does not reach costs nothing. Bookings change a waiting
    // job's limit in place, and explained passes read every job anyway.
    // The capacity plan too is kept between such passes, told of every run that ends (TakeRunning).
    if (KeepsPromises(policy_)) {
      promises_.emplace(state_.gpus);
      gpu_table_.emplace(state_);
    }
    if (!policy_.explain) {
      index_.emplace(policy_, state_.gpus);
      plan_.emplace(CapacityPlan::Kept{}, state_, policy_);
    }
    // Trace jobs are sorted by submit; relative offsets keep that order.
    size_t next_arrival = 0;
    Time now = n_trace_ == 0 ? 0 : jobs_[0].job.submit_time;
    if (!books_.empty()) now = n_trace_ == 0 ? books_[0].in->made : std::min(now, books_[0].in->made);
    Time idle_since = kNever;  // since when nothing runs, starts or is left to arrive
    const int every = config_.predict_every;
    if (every > 0) prediction_of_.assign(n_trace_ + n_books + 1, -1);
    foresee_arrivals_ = every > 0 && config_.arrivals.horizon > 0 && ArrivalsOvertake(policy_);
    std::vector<JobId> foresee;
    while (true) {
      if (config_.stop != nullptr && config_.stop->load(std::memory_order_relaxed)) {
        result.stopped = true;
        return result;
      }
      Finish(now, result);
      while (next_arrival < n_trace_ && jobs_[next_arrival].job.submit_time <= now) {
        Arrive(jobs_[next_arrival], now);
        if (every > 0 && jobs_[next_arrival].job.id % every == 0) foresee.push_back(jobs_[next_arrival].job.id);
        ++next_arrival;
      }
      const Time bookings_due = books_.empty() ? kNever : BookingPass(now);
      Compact();  // owner's jobs withdrawn with their booking
      if (!foresee.empty()) {
        Foresee(foresee, now);
        foresee.clear();
      }
      if (index_) index_->Advance(now);
      Decisions d = Schedule(state_, policy_, now, index_ ? &*index_ : nullptr, plan_ ? &*plan_ : nullptr);
      ++result.schedule_calls;
      Apply(d, now, result);
      Compact();
      const std::pair<IdleCause, double> idle = Idle(d);
      // The next event.
      Time next = bookings_due;
      if (next_arrival < n_trace_) next = std::min(next, jobs_[next_arrival].job.submit_time);
      for (const RunningJob& r : state_.running) {
        const SimJob& s = jobs_[r.job.id - 1];
        next = std::min(next, s.run_start + s.remaining);
        if (r.kill_at != kNever) next = std::min(next, r.kill_at);
      }
      if (d.next_wakeup > now) next = std::min(next, d.next_wakeup);
      if (next == kNever) break;
      const bool bookings_left = bookings_due != kNever;
      if (state_.running.empty() && next_arrival >= n_trace_ && d.starts.empty() &&
          !(d.next_wakeup > now && d.next_wakeup != kNever) && !bookings_left) {
        break;
      }
      // Jobs left waiting on an idle cluster wait for a quota week (the only thing that changes
      // when nothing runs or arrives). Once a whole week has passed idle, nothing more can start:
      // without this, a job larger than a week's quota would wake the replay every week forever.
      if (state_.running.empty() && next_arrival >= n_trace_ && d.starts.empty() && !bookings_left) {
        idle_since = std::min(idle_since, now);
        if (now - idle_since > 2 * kWeek) break;
      } else {
        idle_since = kNever;
      }
      const Time then = std::max(now + 1, next);
      if (idle.second > 0) AddIdle(result.idle, idle.first, idle.second * static_cast<double>(then - now));
      now = then;
    }
    result.unfinished = 0;
    for (const Job& j : state_.pending) result.unfinished += IsTraceJob(j.id);
    result.metrics = ComputeMetrics(outcomes_, static_cast<double>(config_.gpus));
    // An outcome spans first start to end, which for a requeued job includes its time back in the
    // queue: utilisation comes from the runs actually charged instead.
    if (result.metrics.makespan > 0) {
      const double capacity =
          static_cast<double>(config_.gpus) * static_cast<double>(result.metrics.makespan);
      result.metrics.utilisation = busy_gpu_seconds_ / capacity;
    }
    if (!books_.empty()) {
      result.has_bookings = true;
      std::vector<BookingOutcome> outcomes = BookingOutcomes();
      result.bookings = ComputeBookingMetrics(outcomes, runs_);
      if (config_.keep_outcomes) result.booking_outcomes = std::move(outcomes);
    }
    if (config_.keep_outcomes) result.outcomes = std::move(outcomes_);
    if (every > 0) {
      result.has_prediction = true;
      result.foresaw_arrivals = foresee_arrivals_;
      result.prediction = ComputePredictionMetrics(predictions_);
    }
    return result;
  }

 private:
  bool IsTraceJob(JobId id) const { return static_cast<size_t>(id) <= n_trace_; }

  // Why the capacity nobody holds after this pass stays idle until the next event (sim/idle.h).
  std::pair<IdleCause, double> Idle(const Decisions& d) {
    waiting_.clear();
    if (!policy_.explain) {
      // No reasons given (see Run): every job left waits for capacity held or missing, and what
      // they ask for is all that matters, which the index counts.
      if (index_) {
        return ClassifyIdle(state_, index_->WholeRequests(), index_->ShareRequests(), index_->MigRequests());
      }
      for (const Job& j : state_.pending) waiting_.emplace_back(&j, WaitReason::kPriority);
      return ClassifyIdle(state_, waiting_);
    }
    for (const PendingInfo& p : d.pending) {
      if (p.reason == WaitReason::kImpossible) continue;  // removed by Compact
      waiting_.emplace_back(&state_.pending[pending_pos_[static_cast<size_t>(p.job)]], p.reason);
    }
    return ClassifyIdle(state_, waiting_);
  }

  // ---- Start forecasts ----

  // What is foreseen for `ids`, just arrived, on the state the next pass will see: the plan on
  // time limits (the estimates the core sees) and the forecast on predicted run times, with the
  // range calibrated on the sampled jobs that started so far.
  void Foresee(const std::vector<JobId>& ids, Time now) {
    Policy plain = policy_;
    plain.explain = true;
    plain.estimate_starts = true;
    const Decisions d = Schedule(state_, plain, now);
    std::unordered_map<JobId, Time> on_limits;
    for (const Start& s : d.starts) on_limits[s.job] = now;
    for (const PendingInfo& p : d.pending) on_limits[p.job] = p.expected_start;
    ForecastOptions options;
    options.targets = ids;
    if (foresee_arrivals_) {
      while (!recent_.empty() && recent_.front().submit_time < now - config_.arrivals.period)
        recent_.pop_front();
      options.arrivals = RepeatArrivals({recent_.begin(), recent_.end()}, now,
                                        static_cast<JobId>(jobs_.size() + 1), config_.arrivals);
    }
    const std::unordered_map<JobId, Time> forecast = ForecastStarts(state_, policy_, now, model_, options);
    for (JobId id : ids) {
      if (removed_[static_cast<size_t>(id)]) continue;
      PredictionRecord r;
      r.at = now;
      if (auto it = on_limits.find(id); it != on_limits.end()) r.limit_plan = it->second;
      if (auto it = forecast.find(id); it != forecast.end()) r.forecast = it->second;
      const StartRange range = calibration_.Range(now, r.forecast, r.limit_plan);
      r.p90 = range.p90;
      prediction_of_[static_cast<size_t>(id)] = static_cast<int>(predictions_.size());
      predictions_.push_back(r);
    }
  }

  // A sampled job's first start: its record is complete, and it calibrates the ranges to come.
  void Started(JobId id, Time now) {
    const int k = prediction_of_[static_cast<size_t>(id)];
    if (k < 0) return;
    PredictionRecord& r = predictions_[static_cast<size_t>(k)];
    r.actual = now;
    if (r.forecast != kNever) calibration_.Add(std::max<Time>(0, r.forecast - r.at), now - r.at);
  }

  // ---- Bookings ----

  void InitBookings() {
    const size_t n = config_.bookings.size();
    books_.resize(n);
    booking_traces_.resize(n);
    for (size_t k = 0; k < n; ++k) {
      const SimBooking& in = config_.bookings[k];
      books_[k].in = &in;
      TraceJob& t = booking_traces_[k];
      t.submit = in.start;
      t.duration = std::max<Duration>(1, in.end - in.start);
      t.user = in.user;
      const Request request = BookingRequest(in);
      t.gpus = request.kind == RequestKind::kWholeGpus ? request.gpus : 0;
      t.memory = request.memory;
      t.mig_profile = request.mig_profile;
      SimJob& s = jobs_[n_trace_ + k];
      s.trace = &t;
      s.job.id = static_cast<JobId>(n_trace_ + k + 1);
      s.job.user = in.user;
      s.job.tier = Tier::kRegular;
      s.job.requeue = false;
      s.job.request = request;  // the owner's work asks for what was booked
    }
  }

  static Request BookingRequest(const SimBooking& in) {
    Request r;
    if (!in.mig_profile.empty()) {
      r.kind = RequestKind::kMig;
      r.mig_profile = in.mig_profile;
    } else if (in.memory > 0) {
      r.kind = RequestKind::kMemShare;
      r.memory = in.memory;
    } else {
      r.kind = RequestKind::kWholeGpus;
      r.gpus = std::max(1, in.gpus);
    }
    return r;
  }

  // A booking is asked for: the rules decide, as for a user at `now` who is not an admin.
  void MakeBooking(size_t k, Time now) {
    const SimBooking& in = *books_[k].in;
    BookingEntry e;
    e.id = static_cast<std::int64_t>(k + 1);
    e.spec.user = in.user;
    e.spec.tier = Tier::kRegular;
    e.spec.request = BookingRequest(in);
    e.spec.start = in.start;
    e.spec.end = in.end;
    BookingCheck check =
        CheckBooking(e.spec, entries_, state_.gpus, config_.booking_rules, policy_, now, false);
    if (!check.errors.empty()) {
      books_[k].verdict = BookingVerdict::kRefused;
      e.state = BookingState::kRejected;
      e.actual_end = now;
    } else if (!check.alloc) {
      books_[k].verdict = BookingVerdict::kNoRoom;
      e.state = BookingState::kRejected;
      e.actual_end = now;
    } else {
      e.alloc = *check.alloc;
      // Waiting for an admin: requested (it counts in conflicts) until the rules reject it at its
      // start for want of an approval.
      books_[k].verdict =
          check.needs_admin.empty() ? BookingVerdict::kConfirmed : BookingVerdict::kNeedsAdmin;
      e.state = check.needs_admin.empty() ? BookingState::kConfirmed : BookingState::kRequested;
    }
    entries_.push_back(std::move(e));
  }

  // Whether `r` runs on what `b` holds: one of its cards; for a slice, that slice.
  static bool OnBooking(const BookingEntry& b, const RunningJob& r) {
    if (b.alloc.mig >= 0) {
      return r.alloc.mig == b.alloc.mig && !r.alloc.gpus.empty() && !b.alloc.gpus.empty() &&
             r.alloc.gpus[0] == b.alloc.gpus[0];
    }
    for (int g : r.alloc.gpus) {
      if (std::find(b.alloc.gpus.begin(), b.alloc.gpus.end(), g) != b.alloc.gpus.end()) return true;
    }
    return false;
  }

  // Makes the bookings due, advances them (StepBookings) and puts their holds and penalties in
  // the state. Returns when something is next due: a booking to make, or the rules' next_wakeup.
  Time BookingPass(Time now) {
    while (entries_.size() < books_.size() && books_[entries_.size()].in->made <= now) {
      MakeBooking(entries_.size(), now);
    }
    std::unordered_map<std::int64_t, BookingObservation> seen;
    for (const BookingEntry& b : entries_) {
      if (b.state != BookingState::kActive) continue;
      BookingObservation o;
      for (const RunningJob& r : state_.running) {
        if (r.job.user == b.spec.user && OnBooking(b, r)) {
          o.owner_running = true;
          break;
        }
      }
      o.others_waiting =
          !booking_waiters_.empty() && (booking_waiters_.size() > 1 || !booking_waiters_.count(b.spec.user));
      seen[b.id] = o;
    }
    const BookingRules& rules = config_.booking_rules;
    BookingStep step = StepBookings(entries_, seen, rules, now);
    for (std::int64_t id : step.mark_used) entries_[static_cast<size_t>(id - 1)].used = true;
    for (std::int64_t id : step.reminders) entries_[static_cast<size_t>(id - 1)].reminded = true;
    for (const BookingTransition& t : step.transitions) {
      const size_t k = static_cast<size_t>(t.id - 1);
      BookingEntry& e = entries_[k];
      BookingLife& life = books_[k];
      e.state = t.to;
      if (!IsOpen(t.to)) e.actual_end = now;
      if (t.to == BookingState::kActive && life.in->show && !life.submitted) SubmitOwnerJob(k, now);
      if (!IsOpen(t.to) && life.submitted && !life.started) {
        // The owner came for this booking only: their work goes home with it.
        if (t.to == BookingState::kNoShow) life.owner_blocked = true;
        RemovePending(life.job);
        life.started = true;  // never again
      }
    }
    for (std::int64_t id : step.stop_owner_jobs) {
      const BookingEntry& b = entries_[static_cast<size_t>(id - 1)];
      for (RunningJob& r : state_.running) {
        if (r.job.user != b.spec.user || !OnBooking(b, r) || r.kill_at != kNever) continue;
        // Its signal, its grace, then the stop, as the daemon does (a preemption for the
        // booking's sake: the job keeps its work and is requeued if it asked).
        r.signalled = true;
        r.preempted = true;
        r.kill_at = now + r.job.grace;
        jobs_[r.job.id - 1].signalled_at = now;
      }
    }
    // The owner's waiting job asks for what is left of its booking.
    for (size_t k = 0; k < entries_.size(); ++k) {
      const BookingLife& life = books_[k];
      if (!life.submitted || life.started) continue;
      Job& j = state_.pending[pending_pos_[static_cast<size_t>(life.job)]];
      j.time_limit = std::max<Duration>(1, entries_[k].spec.end - now);
    }
    AddBookingsToState(state_, entries_, rules, now);
    Time next = step.next_wakeup;
    if (entries_.size() < books_.size()) next = std::min(next, books_[entries_.size()].in->made);
    return next;
  }

  void SubmitOwnerJob(size_t k, Time now) {
    BookingLife& life = books_[k];
    SimJob& s = jobs_[n_trace_ + k];
    life.job = s.job.id;
    life.submitted = true;
    s.job.submit_time = now;
    s.job.time_limit = std::max<Duration>(1, entries_[k].spec.end - now);
    PushPending(s.job);
  }

  std::vector<BookingOutcome> BookingOutcomes() const {
    std::vector<BookingOutcome> out;
    out.reserve(books_.size());
    for (size_t k = 0; k < books_.size(); ++k) {
      const BookingLife& life = books_[k];
      BookingOutcome o;
      o.id = static_cast<std::int64_t>(k + 1);
      o.user = life.in->user;
      o.made = life.in->made;
      o.start = life.in->start;
      o.end = life.in->end;
      o.show = life.in->show;
      o.verdict = life.verdict;
      if (k < entries_.size()) {
        const BookingEntry& e = entries_[k];
        o.cards = e.alloc.gpus;
        o.mig = e.alloc.mig;
        if (!e.alloc.gpus.empty() && (e.alloc.memory > 0 || e.alloc.mig >= 0))
          o.per_card = AllocationGpus(state_, e.alloc);
        o.state = e.state;
        o.closed = e.actual_end;
        o.used = e.used;
      }
      o.owner_blocked = life.owner_blocked;
      o.owner_elsewhere = life.owner_elsewhere;
      out.push_back(std::move(o));
    }
    return out;
  }

  void RecordRun(const RunningJob& r, Time end) {
    if (books_.empty()) return;
    RunSpan span;
    span.job = r.job.id;
    span.user = r.job.user;
    span.cards = r.alloc.gpus;
    span.mig = r.alloc.mig;
    if (r.alloc.memory > 0 && !r.alloc.gpus.empty()) {
      span.per_card = static_cast<double>(r.alloc.memory) /
                      static_cast<double>(state_.gpus[static_cast<size_t>(r.alloc.gpus[0])].memory);
    } else if (r.alloc.mig >= 0) {
      span.per_card = AllocationGpus(state_, r.alloc);
    }
    span.start = r.start_time;
    span.end = end;
    span.planned_end = r.start_time + r.job.time_limit;
    if (!IsTraceJob(r.job.id)) span.booking = r.job.id - static_cast<JobId>(n_trace_);
    runs_.push_back(std::move(span));
  }

  // A store replay's dependencies (TraceJob::after: recorded ids) as the replay's job ids. A job
  // waited for that is not in the replay (it ended before the replayed days, or never ran) is
  // met, as it was. Returns whether any job has one.
  bool LinkDependencies() {
    std::unordered_map<std::int64_t, JobId> by_id;
    for (size_t i = 0; i < n_trace_; ++i) {
      if (trace_.jobs[i].id > 0) by_id[trace_.jobs[i].id] = jobs_[i].job.id;
    }
    bool any = false;
    for (size_t i = 0; i < n_trace_; ++i) {
      for (std::int64_t dep : trace_.jobs[i].after) {
        auto it = by_id.find(dep);
        if (it == by_id.end() || it->second == jobs_[i].job.id) continue;
        jobs_[i].job.after.push_back(it->second);
        any = true;
      }
    }
    return any;
  }

  // The smallest round limit (Estimates::kModal) of at least `d`; past a week, whole days.
  static Duration RoundLimit(Duration d) {
    static constexpr Duration kRound[] = {5 * kMinute, 10 * kMinute, 15 * kMinute, 30 * kMinute, kHour,
                                          2 * kHour,   4 * kHour,    8 * kHour,    12 * kHour,   kDay,
                                          2 * kDay,    3 * kDay,     7 * kDay};
    for (Duration r : kRound) {
      if (d <= r) return r;
    }
    return (d + kDay - 1) / kDay * kDay;
  }

  // A user's habitual limit (Estimates::kModal): from the name and the seed, not from the order
  // in which users first appear; FNV-1a, not std::hash, so a seed gives the same replay anywhere.
  Duration Habit(const std::string& user) {
    auto [it, fresh] = habits_.try_emplace(user, 0);
    if (fresh) {
      std::uint64_t h = 0xcbf29ce484222325ULL;
      for (unsigned char c : user) h = (h ^ c) * 0x100000001b3ULL;
      Rng r(config_.seed ^ h);
      static constexpr Duration kHabits[] = {4 * kHour, kDay, 3 * kDay};
      it->second = kHabits[r.Below(3)];
    }
    return it->second;
  }

  Duration Estimate(const SimJob& s) {
    Duration actual = s.remaining;
    switch (config_.estimates) {
      case Estimates::kExact: return actual;
      case Estimates::kNoisy: {
        double f = 1.0 + rng_.Uniform() * std::max(0.0, config_.noise_max - 1.0);
        return std::max<Duration>(1, static_cast<Duration>(std::ceil(static_cast<double>(actual) * f)));
      }
      case Estimates::kRecorded: return s.trace->limit > 0 ? s.trace->limit : actual;
      case Estimates::kModal: {
        if (rng_.Uniform() < 0.5) return RoundLimit(std::max(actual, Habit(s.job.user)));
        return RoundLimit(static_cast<Duration>(std::ceil(static_cast<double>(actual) * (1.0 + rng_.Uniform()))));
      }
      case Estimates::kHistory: {
        auto it = history_.find(s.job.user);
        if (it == history_.end() || it->second.empty()) return config_.history_default;
        double sum = 0;
        for (Duration x : it->second) sum += static_cast<double>(x);
        return std::max<Duration>(1, static_cast<Duration>(sum / static_cast<double>(it->second.size())));
      }
    }
    return actual;
  }

  void Arrive(SimJob& s, Time now) {
    s.job.time_limit = Estimate(s);
    // The daemon asks its model at each pass; here the prediction is the one at arrival (the model
    // moves little while a job waits, and asking again for every waiting job at every pass would
    // cost a replay of a long queue as much as the pass itself).
    if (policy_.size_by_prediction && model_.size() > 0) {
      const RuntimePrediction p = model_.Predict(s.trace->user, s.job.name, s.job.time_limit);
      if (TellsTheJobApart(p.basis)) s.job.predicted_run = p.runtime;
    }
    if (promises_ && Promisable(s.job)) {
      s.job.promise =
          promises_->For(s.job.request).Promise(now, gpu_table_->Of(s.job.request), s.job.time_limit);
      s.promised_for = s.job.time_limit;
    }
    PushPending(s.job);
    if (foresee_arrivals_) recent_.push_back(s.job);
  }

  void PushPending(Job job) {
    const size_t pos = state_.pending.size();
    pending_pos_[static_cast<size_t>(job.id)] = pos;
    if (index_) index_->Add(job, pos);
    state_.pending.push_back(std::move(job));
  }

  // With the queue index, removes a pending job at once by moving the last one into its place (the
  // index keeps the order); without it, marks the job for removal, and Compact() removes the
  // marked ones keeping the others in order (arrival order, which keeps the core's sort by submit
  // time cheap).
  void RemovePending(JobId id) {
    if (!index_) {
      removed_[static_cast<size_t>(id)] = 1;
      any_removed_ = true;
      return;
    }
    auto& p = state_.pending;
    const size_t i = pending_pos_[static_cast<size_t>(id)];
    index_->Remove(id);
    if (i + 1 != p.size()) {
      p[i] = std::move(p.back());
      pending_pos_[static_cast<size_t>(p[i].id)] = i;
      index_->Moved(p[i].id, i);
    }
    p.pop_back();
  }

  void Compact() {
    if (!any_removed_) return;
    auto& p = state_.pending;
    size_t out = 0;
    for (size_t i = 0; i < p.size(); ++i) {
      const size_t id = static_cast<size_t>(p[i].id);
      if (removed_[id]) {
        removed_[id] = 0;
        continue;
      }
      if (out != i) p[out] = std::move(p[i]);
      pending_pos_[id] = out++;
    }
    p.resize(out);
    any_removed_ = false;
  }

  RunningJob TakeRunning(size_t i) {
    RunningJob r = std::move(state_.running[i]);
    if (i + 1 != state_.running.size()) state_.running[i] = std::move(state_.running.back());
    state_.running.pop_back();
    if (plan_) plan_->RunningTaken(state_, i);
    return r;
  }

  void Charge(const RunningJob& r, Time end) {
    double gpus = AllocationGpus(state_, r.alloc);
    ChargeOwners(state_.user_usage, state_.project_usage, r.job, gpus, r.start_time, end, r.from_pool, policy_);
    // The main table is the trace's: a booking's work shows in the bookings' own figures.
    if (IsTraceJob(r.job.id)) busy_gpu_seconds_ += gpus * static_cast<double>(end - r.start_time);
    RecordRun(r, end);
  }

  // Ends runs that completed or were killed by `now`.
  void Finish(Time now, SimResult& result) {
    for (size_t i = 0; i < state_.running.size();) {
      const RunningJob& r = state_.running[i];
      SimJob& s = jobs_[r.job.id - 1];
      Time done = s.run_start + s.remaining;
      if (done <= now && (r.kill_at == kNever || done <= r.kill_at)) {
        RunningJob ended = TakeRunning(i);
        Charge(ended, done);
        ReleasePromise(s, now);
        Complete(s, done, AllocationGpus(state_, ended.alloc));
        continue;
      }
      if (r.kill_at != kNever && r.kill_at <= now) {
        RunningJob ended = TakeRunning(i);
        Charge(ended, ended.kill_at);
        ++result.preemptions;
        // It checkpointed when signalled: the work up to the signal is kept.
        Time kept_until = s.signalled_at >= 0 ? s.signalled_at : ended.kill_at;
        s.remaining = std::max<Duration>(1, s.remaining - (kept_until - s.run_start));
        if (ended.job.requeue) {
          PushPending(ended.job);  // original submit time kept
        } else {
          ReleasePromise(s, now);
          Complete(s, ended.kill_at, AllocationGpus(state_, ended.alloc));
        }
        continue;
      }
      ++i;
    }
  }

  // A job that ended holds nothing of its promise from now on (PromiseBook), whatever a booking
  // did to its limit since.
  void ReleasePromise(const SimJob& s, Time now) {
    if (!promises_ || s.job.promise == kNever) return;
    promises_->For(s.job.request).Release(now, gpu_table_->Of(s.job.request), s.job.promise, s.promised_for);
  }

  void Complete(SimJob& s, Time end, double gpus) {
    if (!IsTraceJob(s.job.id)) return;  // a booking's work: not part of the trace's metrics
    outcomes_.push_back({s.job.id, s.job.user, s.job.submit_time, s.first_start, end, gpus, s.job.time_limit});
    // The trace's own user (none where it names nobody: the lab's history only), not the name the
    // replay gives such jobs for fair share.
    if (config_.predict_every > 0 || policy_.size_by_prediction)
      model_.Add({s.trace->user, s.job.name, s.job.time_limit, s.trace->duration});
    auto& h = history_[s.job.user];
    h.push_back(s.trace->duration);
    if (static_cast<int>(h.size()) > config_.history_window) h.pop_front();
  }

  void Apply(const Decisions& d, Time now, SimResult& result) {
    if (!books_.empty()) booking_waiters_.clear();
    for (const PendingInfo& p : d.pending) {
      if (p.reason == WaitReason::kImpossible) {
        RemovePending(p.job);
        result.rejected += IsTraceJob(p.job);
      } else if (p.reason == WaitReason::kBooking && !books_.empty()) {
        booking_waiters_.insert(jobs_[p.job - 1].job.user);
      }
    }
    for (const Start& st : d.starts) {
      SimJob& s = jobs_[st.job - 1];
      RunningJob r;
      r.job = state_.pending[pending_pos_[static_cast<size_t>(st.job)]];
      RemovePending(st.job);
      r.alloc = st.alloc;
      r.start_time = now;
      r.preemptible = st.preemptible;
      r.from_pool = st.from_pool;
      if (s.first_start < 0) {
        s.first_start = now;
        if (!prediction_of_.empty()) Started(st.job, now);
      }
      s.run_start = now;
      s.signalled_at = -1;
      if (!IsTraceJob(st.job)) StartOwnerJob(s, st.alloc, now);
      state_.running.push_back(std::move(r));
    }
    for (const Signal& sig : d.signals) {
      for (RunningJob& r : state_.running) {
        if (r.job.id != sig.job) continue;
        r.signalled = true;
        r.kill_at = sig.kill_at;
        r.preempted = sig.cause == StopCause::kPreempted;
        if (r.preempted) jobs_[r.job.id - 1].signalled_at = now;
      }
    }
    // Kills that are due are carried out by Finish() at the next event (kill_at <= now).
  }

  // The owner's job for a booking starts: it works until the margin before the booking's end.
  void StartOwnerJob(SimJob& s, const Allocation& alloc, Time now) {
    const size_t k = static_cast<size_t>(s.job.id) - n_trace_ - 1;
    BookingLife& life = books_[k];
    const BookingEntry& e = entries_[k];
    life.started = true;
    const Duration margin = std::min(config_.booking_margin, (e.spec.end - e.spec.start) / 2);
    s.remaining = std::max<Duration>(1, e.spec.end - margin - now);
    for (int g : alloc.gpus) {
      if (std::find(e.alloc.gpus.begin(), e.alloc.gpus.end(), g) == e.alloc.gpus.end())
        life.owner_elsewhere = true;
    }
    if (e.alloc.mig >= 0 && alloc.mig != e.alloc.mig) life.owner_elsewhere = true;  // another slice
  }

  const Trace& trace_;
  const SimConfig& config_;
  Policy policy_;
  Rng rng_;
  ClusterState state_;
  std::vector<SimJob> jobs_;
  std::optional<QueueIndex> index_;  // the queue's order for unexplained passes (Run)
  std::optional<CapacityPlan> plan_;  // their capacity plan, kept between them (Run)
  // Promises at arrival (Policy::promise_slack), one book per kind of card (PromiseBooks).
  std::optional<PromiseBooks> promises_;
  std::optional<RequestGpuTable> gpu_table_;
  std::vector<size_t> pending_pos_;  // by job id: index in state_.pending (valid until Compact)
  std::vector<char> removed_;        // by job id: marked by RemovePending
  bool any_removed_ = false;
  std::unordered_map<std::string, std::deque<Duration>> history_;
  std::vector<JobOutcome> outcomes_;
  double busy_gpu_seconds_ = 0;
  size_t n_trace_ = 0;  // trace jobs have ids 1..n_trace_
  // Bookings (index k = booking id - 1 = the owner's job id - n_trace_ - 1).
  std::vector<BookingLife> books_;
  std::vector<TraceJob> booking_traces_;   // the owner's jobs' trace rows (sized once)
  std::vector<BookingEntry> entries_;      // the bookings made so far, in id order
  std::set<std::string> booking_waiters_;  // users with a job waiting for a booking (last pass)
  std::vector<RunSpan> runs_;
  std::vector<std::pair<const Job*, WaitReason>> waiting_;  // Idle()'s, kept for its capacity
  // Start forecasts (SimConfig::predict_every).
  RuntimeModel model_;
  std::unordered_map<std::string, Duration> habits_;  // Estimates::kModal
  WaitCalibration calibration_;
  std::vector<PredictionRecord> predictions_;
  std::vector<int> prediction_of_;  // by job id: index in predictions_, -1 when not sampled
  // Forecasts foresee arrivals (config_.arrivals) where the policy lets later jobs overtake.
  bool foresee_arrivals_ = false;
  std::deque<Job> recent_;  // then the trace jobs of the last arrival period, to come again
};

}  // namespace

const char* EstimatesName(Estimates e) {
  switch (e) {
    case Estimates::kExact: return "exact";
    case Estimates::kNoisy: return "noisy";
    case Estimates::kHistory: return "history";
    case Estimates::kRecorded: return "recorded";
    case Estimates::kModal: return "modal";
  }
  return "exact";
}

StatusOr<SimResult> Simulate(const Trace& trace, const SimConfig& config) {
  if (config.gpus < 1) return InvalidArgument("--gpus must be at least 1");
  if (config.gpus_per_node < 1) return InvalidArgument("--gpus-per-node must be at least 1");
  if (config.gpu_memory < 1) return InvalidArgument("--gpu-mem must be positive");
  if (!config.cards.empty() && config.cards.size() != static_cast<size_t>(config.gpus)) {
    return InvalidArgument("the cards given are not as many as the GPUs said");
  }
  const Status stopped = Unavailable("the replay was stopped");
  if (config.bookings.empty()) {
    SimResult r = Replay(trace, config).Run();
    if (r.stopped) return stopped;
    return r;
  }
  for (size_t k = 1; k < config.bookings.size(); ++k) {
    if (config.bookings[k].made < config.bookings[k - 1].made) {
      return InvalidArgument("bookings must be sorted by the time they are made");
    }
  }
  // Both replays keep their outcomes for the comparison; the caller gets them only if it asked.
  SimConfig with = config;
  with.keep_outcomes = true;
  SimConfig without = with;
  without.bookings.clear();
  SimResult result = Replay(trace, with).Run();
  const SimResult base = Replay(trace, without).Run();
  if (result.stopped || base.stopped) return stopped;
  std::set<std::string> bookers;
  for (const SimBooking& b : config.bookings) bookers.insert(b.user);
  auto others = [&bookers](const std::vector<JobOutcome>& outcomes, std::int64_t* jobs) {
    double sum = 0;
    std::int64_t n = 0;
    for (const JobOutcome& o : outcomes) {
      if (bookers.count(o.user)) continue;
      sum += static_cast<double>(o.start - o.submit);
      ++n;
    }
    if (jobs) *jobs = n;
    return n > 0 ? sum / static_cast<double>(n) : 0.0;
  };
  BookingMetrics& m = result.bookings;
  m.avg_wait_with = result.metrics.avg_wait;
  m.avg_wait_without = base.metrics.avg_wait;
  m.others_avg_wait_with = others(result.outcomes, &m.others_jobs);
  m.others_avg_wait_without = others(base.outcomes, nullptr);
  if (!config.keep_outcomes) {
    result.outcomes.clear();
    result.booking_outcomes.clear();
  }
  return result;
}

}  // namespace rota::sim
