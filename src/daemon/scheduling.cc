// The scheduling pass: the state the core is given (the cards, the jobs, usage, bookings), its
// decisions handed to the job runner (job_runner.h: starts, signals, kills), the sessions told
// where they wait, and the clock set for the next deadline.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/promise.h"
#include "core/runtime_model.h"
#include "core/scheduler.h"
#include "daemon/daemon.h"
#include "daemon/foresight.h"

namespace rota::daemon {

ClusterState Daemon::BuildState(const std::vector<BookingEntry>& bookings) const {
  ClusterState st;
  st.gpus = cards_.gpus();
  // Jobs outside Rota count while they run, as Rota's own do (design.md, Slurm engine).
  store::UsageMaps usage = ledger_->MapsWith(OutsideRunning());
  st.user_usage = std::move(usage.users);
  st.project_usage = std::move(usage.projects);
  const Time now = Now();
  jobs_.AddTo(st, runner_->after_ok(), now);
  runner_->AddHeld(st);
  AddBookingsToState(st, bookings, config_.bookings, now);
  if (config_.policy.size_by_prediction) {
    for (Job& j : st.pending) {
      const RuntimePrediction p = foresight_->Runtime(j, now);
      if (TellsTheJobApart(p.basis)) j.predicted_run = p.runtime;
    }
  }
  return st;
}

void Daemon::RunPasses() {
  // A pass that started or signalled jobs asks for another; a few rounds always settle (each
  // round starts only jobs that were pending), the limit guards against a bug looping. The
  // simulated cards' loads follow the running jobs, which change only in a pass (starts, and
  // the pass that follows every job's end).
  const bool any = dirty_;
  for (int round = 0; dirty_ && round < 4; ++round) SchedulePass();
  if (any) card_desk_->FollowJobs();
}

void Daemon::CatchUpOnSubmissions() {
  if (!submissions_waiting_) return;
  dirty_ = true;
  RunPasses();
}

void Daemon::SchedulePass() {
  const auto began = std::chrono::steady_clock::now();
  dirty_ = false;
  submissions_waiting_ = false;  // this pass considers them; a batch timer still armed finds nothing
  const Time now = Now();
  runner_->EscalateKills(now);
  const Time bookings_due = desk_->Pass(now);
  // The bookings, copied once for the state and the engine. Before any start: a job of a
  // booking's owner goes into the booking's reservation there.
  const std::vector<BookingEntry> bookings = desk_->book().Entries();
  std::vector<Engine::BookedNodes> booked;
  for (const BookingEntry& e : bookings) {
    if ((e.state != BookingState::kConfirmed && e.state != BookingState::kActive) || e.spec.end <= now)
      continue;
    std::vector<std::string> nodes = cards_.WholeNodesOf(e.alloc);
    if (!nodes.empty()) booked.push_back({e.id, e.spec.user, std::move(nodes), e.spec.start, e.spec.end});
  }
  engine_->Booked(booked);
  runner_->CancelNeverSatisfied(now);
  // The first forecast of each job that came since is made on the state this pass decides on, as
  // the simulator measures them: a job that starts at once was foreseen to, or not.
  foresight_->Changed();
  const Time foresee = RecordFirstForecasts(now);
  ClusterState state = BuildState(bookings);
  KeepPromises(state, now);
  // A pass that acts needs no reasons (design.md, "Reasons on demand"): they are made in the pass
  // only where they will be read before the next one (a waiting session is told its place, the
  // bookings' step reads who waits), and otherwise when first asked for.
  const bool explain = sessions_->AnyWaiting() || desk_->AnyActive();
  Policy acting = config_.policy;
  if (!explain) acting.explain = acting.estimate_starts = false;
  Decisions d = Schedule(state, acting, now);
  for (const rota::Start& s : d.starts) runner_->ApplyStart(s, now);
  for (const Signal& s : d.signals) runner_->ApplySignal(s, now);
  // Starts and signals change the state this pass was computed on (a started job's time-limit
  // warning is a new deadline): run another pass before sleeping.
  if (!d.starts.empty() || !d.signals.empty()) dirty_ = true;
  for (const Kill& k : d.kills) runner_->ApplyKill(k.job, now);
  const Time retry = jobs_.NoteWaiting(d.pending, runner_->after_ok(), now, explain);
  if (explain) counters_.Explained();
  foresight_->Changed();
  const Time wake = std::min({d.next_wakeup, bookings_due, retry, notes_->RemindTimeLimits(jobs_.all(), now),
                              runner_->NextEscalation(), foresee});
  sessions_->SendWaitingUpdates();
  sessions_->RemoveStaleCgroups();
  deps_.clock->WakeAt(wake);  // the loop wakes then (its clock fd), unless an event comes first
  if (now - outside_seen_kept_ >= kOutsideWatermarkEvery) KeepOutsideSeenUntil(now - kOutsideWatermarkLag);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  counters_.PassTook(took);
}

void Daemon::ExplainWaiting() {
  const Time now = Now();
  const ClusterState state = BuildState(desk_->book().Entries());
  const Decisions d = Schedule(state, config_.policy, now);
  jobs_.NoteWaiting(d.pending, runner_->after_ok(), now);
  counters_.Explained();
}

void Daemon::KeepPromises(ClusterState& state, Time now) {
  const std::vector<std::pair<JobId, Time>> made = MakePromises(state, config_.policy, now);
  if (made.empty()) return;
  std::unordered_map<JobId, Time> promise_of(made.begin(), made.end());
  for (Job& j : state.pending) {
    if (auto it = promise_of.find(j.id); it != promise_of.end()) j.promise = it->second;
  }
  // One commit for a burst of submissions; the job table takes what was committed. A promise that
  // could not be stored serves this pass only and is made again at the next (on the book then).
  std::vector<std::pair<JobId, Time>> stored;
  const Status kept = store_->InOneTransaction([&] {
    for (const auto& [id, promise] : made) {
      if (Status s = store_->SetPromise(id, promise); !s.ok()) {
        spdlog::warn("job {}: keeping its promise: {}", id, s.message());
        continue;
      }
      stored.push_back({id, promise});
    }
    return Status::Ok();
  });
  if (!kept.ok()) {
    spdlog::warn("keeping promises: {}", kept.message());
    return;
  }
  for (const auto& [id, promise] : stored) {
    if (auto it = jobs_.find(id); it != jobs_.end()) it->second.rec.job.promise = promise;
  }
}

Time Daemon::RecordFirstForecasts(Time now) {
  std::vector<JobId> unforeseen;
  for (const auto& [id, a] : jobs_) {
    if (a.rec.state == store::JobState::kPending && a.rec.forecast_at == 0) unforeseen.push_back(id);
  }
  if (unforeseen.empty()) return kNever;
  Time made = 0;
  const auto& all = foresight_->All(now, &made);
  // The same computation as last time: what it had is recorded, what it lacked it still lacks
  // (a long queue's forecast is made at most every minute; the jobs that came since would be
  // looked up again at every pass).
  if (foresight_->computations() == forecasts_recorded_from_) return std::max(now + 1, foresight_->next_due());
  forecasts_recorded_from_ = foresight_->computations();
  bool left = false;
  // One commit for a burst of submissions.
  const Status kept = store_->InOneTransaction([&] {
    for (JobId id : unforeseen) {
      auto e = all.find(id);
      auto it = jobs_.find(id);
      if (e == all.end() || made == 0) {
        left = true;  // not in the last computation: a long queue's was made before it came
        continue;
      }
      store::JobRecord& rec = it->second.rec;
      const Time start = e->second.forecast == kNever ? 0 : e->second.forecast;
      if (Status s = store_->SetForecast(id, made, start); !s.ok()) {
        spdlog::warn("job {}: keeping its forecast: {}", id, s.message());
      }
      rec.forecast_at = made;
      rec.forecast_start = start;
    }
    return Status::Ok();
  });
  if (!kept.ok()) spdlog::warn("keeping first forecasts: {}", kept.message());
  return left ? std::max(now + 1, foresight_->next_due()) : kNever;
}

}  // namespace rota::daemon
