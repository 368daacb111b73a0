// The range of a forecast start (issue 29): how far the lab's own past forecasts were off. Every
// job that started adds one sample, the wait its forecast foresaw and the wait it had; a new
// forecast's p90 is the forecast scaled by those samples' 90th percentile of
// (actual + c) / (forecast + c), c = ten minutes (so that "now" and "in a minute" are read as
// alike). Its p50 is the forecast itself: scaled by the median ratio as well, it was further off
// on most replays in docs/benchmarks.md ("Start forecasts"), the ratios drifting with the load. Forecasts of
// a start at once and of a later one are calibrated apart when each has enough samples (they are off in
// different ways: the first only by what arrives meanwhile). A forecast at once without enough of its
// own borrows every sample; a later one only its own kind. Without enough samples the range runs from
// the forecast to the plan on time limits. Pure. Tested by start_range_test.cc.
#pragma once

#include <deque>

#include "core/types.h"

namespace rota {

struct StartRange {
  Time p50 = kNever;
  Time p90 = kNever;
  int samples = 0;  // past forecasts it is calibrated on; 0: from the plan on time limits
};

class WaitCalibration {
 public:
  explicit WaitCalibration(int window = 500, int min_samples = 20);

  // A job that started `actual` seconds after a forecast that foresaw `forecast` seconds.
  void Add(Duration forecast, Duration actual);

  // The range of a start forecast at `now` to be `forecast`, when the plan on time limits says
  // `limit_plan` (either may be kNever).
  StartRange Range(Time now, Time forecast, Time limit_plan) const;

  int samples() const { return static_cast<int>(all_.ratios.size()); }

 private:
  struct Samples {
    std::deque<double> ratios;
    mutable double q90 = 0;      // their 90th percentile, computed when first asked for
    mutable bool fresh = false;  // q90 is of the ratios as they are
    double Q90() const;
  };
  void Push(Samples& s, double ratio) const;

  int window_;
  int min_samples_;
  Samples all_, at_once_, later_;
};

}  // namespace rota
