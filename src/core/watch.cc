// Tested by watch_test.cc.
#include "core/watch.h"

#include <algorithm>

namespace rota {

namespace {

// Buckets of a minute, or a fifteenth of the window when that is shorter (seconds in tests).
Duration Bucket(const WatchRules& rules) { return std::clamp<Duration>(rules.idle_after / 15, 1, 60); }

}  // namespace

const char* WatchAlertName(WatchAlert a) {
  switch (a) {
    case WatchAlert::kIdleWarning:
      return "idle_warning";
    case WatchAlert::kStuckWarning:
      return "stuck_warning";
    case WatchAlert::kAction:
      return "action";
    case WatchAlert::kBusyAgain:
      return "busy_again";
    case WatchAlert::kNone:
      break;
  }
  return "none";
}

void IdleWatch::Add(Time now, int util, double memory_fraction, Duration bucket) {
  const Time minute = FloorDiv(now, bucket) * bucket;
  if (minutes_.empty() || minutes_.back().start != minute) minutes_.push_back(Minute{minute});
  Minute& m = minutes_.back();
  if (util >= 0) {
    m.util_sum += util;
    ++m.util_n;
  }
  if (memory_fraction >= 0) {
    m.memory_sum += memory_fraction;
    ++m.memory_n;
  }
}

void IdleWatch::Judge(Time now, const WatchRules& rules) {
  // The window: the minutes that began after now - idle_after (a sample describes the time
  // before it, so the minute that began exactly idle_after ago is outside).
  while (!minutes_.empty() && minutes_.front().start <= now - rules.idle_after) minutes_.pop_front();
  double util = 0, memory = 0;
  int util_minutes = 0, memory_minutes = 0;
  for (const Minute& m : minutes_) {
    if (m.util_n > 0) {
      util += m.util_sum / m.util_n;
      ++util_minutes;
    }
    if (m.memory_n > 0) {
      memory += m.memory_sum / m.memory_n;
      ++memory_minutes;
    }
  }
  mean_util_ = util_minutes > 0 ? util / util_minutes : -1;
  mean_memory_ = memory_minutes > 0 ? memory / memory_minutes : -1;
  const bool covered = now - covered_from_ >= rules.idle_after;
  const bool idle = covered && mean_util_ >= 0 && mean_util_ < rules.idle_util;
  if (!idle) {
    idle_since_ = 0;
  } else if (idle_since_ == 0) {
    idle_since_ = now - rules.idle_after;  // the whole window was idle
  }
}

WatchAlert IdleWatch::Observe(Time now, int util, double memory_fraction, const WatchRules& rules) {
  Add(now, util, memory_fraction, Bucket(rules));
  Judge(now, rules);
  if (!rules.enabled) return WatchAlert::kNone;
  if (idle_since_ == 0) {
    if (stage_ == WatchStage::kOk) return WatchAlert::kNone;
    stage_ = WatchStage::kOk;
    return WatchAlert::kBusyAgain;
  }
  if (stage_ == WatchStage::kOk) {
    stage_ = WatchStage::kWarned;
    stuck_ = mean_memory_ >= rules.stuck_memory;
    return stuck_ ? WatchAlert::kStuckWarning : WatchAlert::kIdleWarning;
  }
  if (stage_ == WatchStage::kWarned && now - idle_since_ >= rules.act_after) {
    stage_ = WatchStage::kActed;
    return WatchAlert::kAction;
  }
  return WatchAlert::kNone;
}

int IdleWatch::keeps_left(Time now, const WatchRules& rules, const Zone& zone) const {
  const Time day = zone.Day(now);
  return rules.keeps_per_day - (day == keep_day_ ? keeps_ : 0);
}

Status IdleWatch::Keep(Time now, const WatchRules& rules, const Zone& zone) {
  const Time day = zone.Day(now);
  if (day != keep_day_) {
    keep_day_ = day;
    keeps_ = 0;
  }
  if (keeps_ >= rules.keeps_per_day) {
    return FailedPrecondition("no keep left today (" + std::to_string(rules.keeps_per_day) +
                              " a day); the next one is possible after midnight, server time");
  }
  ++keeps_;
  minutes_.clear();
  covered_from_ = now;
  idle_since_ = 0;
  stage_ = WatchStage::kOk;
  return Status();
}

}  // namespace rota
