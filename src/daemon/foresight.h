// Start forecasts for the waiting jobs and predicted ends for the running ones (issue 29), from
// the lab's own history: run times predicted from the jobs that ended (core/runtime_model.h), the
// scheduler played forward on them (core/forecast.h) with the last week's jobs coming again where
// the policy lets later jobs go first (core/arrivals.h), and each forecast's p50 and p90 from how
// far the lab's past first forecasts were off (core/start_range.h). The plan on time limits stays
// what promises rest on (a reservation); a forecast is what is likely.
//
// It reads the ended jobs from the store, a page at a time from where it stopped (the last 60
// days when rotad starts), so a restart loses nothing; the last hour before where it stopped is
// read again (each job learnt once), for an end recorded after later ones (an engine's end time, a
// job found ended after a restart). Forecasts are computed when a view asks and a pass has run
// since; for a state of more than 2,000 jobs at most every 10 s of the daemon's clock (a long
// queue makes a forward play cost a few passes' worth; the play itself is bounded by job-visits).
// Runs on the daemon's loop thread. Tested by foresight_test.cc and tests/daemon/test_forecast.py.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "config/config.h"
#include "core/cluster.h"
#include "core/runtime_model.h"
#include "core/start_range.h"
#include "daemon/job_table.h"
#include "store/job_store.h"

namespace rota::daemon {

class Foresight {
 public:
  struct Setup {
    store::JobStore* store = nullptr;        // all must outlive it
    const config::Config* config = nullptr;  // the policy in force
    const JobTable* jobs = nullptr;          // the jobs and the last pass's plan
    std::function<ClusterState()> state;     // the state a pass would see now
  };
  struct Entry {
    Time forecast = kNever;     // the scheduler played forward on predicted run times
    StartRange range;           // its p50 and p90
    RuntimePrediction runtime;  // what the job is predicted to run
  };
  explicit Foresight(Setup setup);

  // Learns from the jobs that ended since it last looked (the last 60 days the first time).
  void Learn(Time now);
  // The plan changed (a pass ran: jobs may have ended): forecasts are recomputed when next asked
  // for, and the ended jobs read before the next prediction.
  void Changed() { stale_ = learn_due_ = true; }

  // A pending job's forecast (computed now if out of date and the time budget allows; the last one
  // otherwise); null when it has none yet.
  const Entry* Of(JobId id, Time now);
  // Every forecast, as Of computes them, their ranges as Of last refreshed them: the caller
  // (the first forecasts kept) reads the starts alone, and a range reads the queue's notes,
  // which a pass that acts does not make (JobTable::SetExplainer). `made_at`: when they were made.
  const std::unordered_map<JobId, Entry>& All(Time now, Time* made_at = nullptr);
  // Whether a forecast says more than the plan on time limits: some history predicted the run
  // times, or past forecasts calibrated the range. A lab without history gets the plan alone.
  static bool Telling(const Entry& e) {
    return e.runtime.basis != RuntimeBasis::kLimit || e.range.samples > 0;
  }
  // What a job is predicted to run (a running job's predicted end is its start plus this), on the
  // jobs ended by `now`.
  RuntimePrediction Runtime(const Job& job, Time now);

  // The forecast as the API gives it (docs/api.md, "forecast").
  nlohmann::json ToJson(const Entry& e) const;

  // When a forecast held back for a long queue may be made again.
  Time next_due() const;
  // How many times the forecasts were computed: All's entries change only then.
  std::uint64_t computations() const { return computations_; }

  int calibration_samples() const { return calibration_.samples(); }
  std::int64_t learnt() const { return model_.size(); }

 private:
  void Compute(Time now);
  bool Due(Time now) const;                // stale, and not a long queue forecast less than kRefresh ago
  void Refresh(JobId id, Entry& e) const;  // its range, on the calibration and plan of now
  // The jobs foreseen to arrive: the last week's (ended, running, waiting) again.
  std::vector<Job> Arrivals(const ClusterState& state, Time now);

  Setup setup_;
  RuntimeModel model_;
  WaitCalibration calibration_;
  bool loaded_ = false;
  std::pair<Time, JobId> cursor_{0, 0};   // the last ended job learnt from (end time, id)
  std::unordered_map<JobId, Time> seen_;  // the jobs learnt from within the hour before the cursor
  std::unordered_map<JobId, Job> arrived_;  // the ended jobs that ran, submitted in the last week
  bool stale_ = true;
  bool learn_due_ = true;
  Time made_at_ = 0;
  std::unordered_map<JobId, Entry> entries_;
  size_t jobs_seen_ = 0;  // pending and running in the last computation's state
  std::uint64_t computations_ = 0;
  int arrivals_ = 0;      // the jobs foreseen to arrive in the last computation
};

}  // namespace rota::daemon
