// Tested by start_range_test.cc.
#include "core/start_range.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace rota {

namespace {

constexpr double kSlack = 10 * kMinute;
constexpr Duration kAtOnce = kMinute;  // a forecast wait this short is a start at once

double Quantile(std::vector<double> v, double q) {
  const size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
  const size_t i = std::min(v.size() - 1, rank == 0 ? 0 : rank - 1);
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(i), v.end());
  return v[i];
}

}  // namespace

WaitCalibration::WaitCalibration(int window, int min_samples)
    : window_(std::max(1, window)), min_samples_(std::max(1, min_samples)) {}

void WaitCalibration::Push(Samples& s, double ratio) const {
  s.ratios.push_back(ratio);
  while (s.ratios.size() > static_cast<size_t>(window_)) s.ratios.pop_front();
  s.fresh = false;
}

double WaitCalibration::Samples::Q90() const {
  if (!fresh) {
    q90 = Quantile(std::vector<double>(ratios.begin(), ratios.end()), 0.9);
    fresh = true;
  }
  return q90;
}

void WaitCalibration::Add(Duration forecast, Duration actual) {
  const double f = static_cast<double>(std::max<Duration>(0, forecast));
  const double a = static_cast<double>(std::max<Duration>(0, actual));
  const double ratio = (a + kSlack) / (f + kSlack);
  Push(all_, ratio);
  Push(forecast < kAtOnce ? at_once_ : later_, ratio);
}

StartRange WaitCalibration::Range(Time now, Time forecast, Time limit_plan) const {
  StartRange r;
  if (forecast == kNever) return r;
  forecast = std::max(now, forecast);
  const size_t enough = static_cast<size_t>(min_samples_);
  // A later start is never calibrated on starts at once alone: those were off only by what
  // arrived, and say nothing of run times. Pooled with them, a queue that starts nothing for
  // weeks after its first jobs (fifo behind one that waits) had its p90s at the forecast itself.
  const bool at_once = forecast - now < kAtOnce;
  const Samples& bucket = at_once ? at_once_ : later_;
  const Samples* from = bucket.ratios.size() >= enough            ? &bucket
                        : at_once && all_.ratios.size() >= enough ? &all_
                                                                  : nullptr;
  r.p50 = forecast;
  if (from == nullptr) {
    r.p90 = limit_plan == kNever ? kNever : std::max(forecast, limit_plan);
    return r;
  }
  const double base = static_cast<double>(forecast - now) + kSlack;
  r.p90 =
      std::max(r.p50, now + std::max<Time>(0, static_cast<Time>(std::llround(base * from->Q90() - kSlack))));
  r.samples = static_cast<int>(from->ratios.size());
  return r;
}

}  // namespace rota
