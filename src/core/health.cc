// Tested by health_test.cc.
#include "core/health.h"

#include <algorithm>

namespace rota {

const char* HealthStateName(HealthState s) {
  switch (s) {
    case HealthState::kHealthy:
      return "healthy";
    case HealthState::kSuspect:
      return "suspect";
    case HealthState::kDrained:
      return "drained";
  }
  return "?";
}

HealthChange ObserveHealth(GpuHealth& h, const std::string& error, bool held, const HealthRules& rules) {
  HealthChange change{h.state, h.state};
  if (!error.empty()) {
    h.failures += 1;
    h.good = 0;
    h.error = error;
    if (h.state != HealthState::kDrained) {
      h.state = h.failures >= std::max(1, rules.drain_after) ? HealthState::kDrained : HealthState::kSuspect;
    }
  } else {
    h.failures = 0;
    if (h.state == HealthState::kSuspect) {
      h.state = HealthState::kHealthy;
      h.error.clear();
    } else if (h.state == HealthState::kDrained) {
      // Leftover processes (a job that did not die with the card, someone's direct run) keep it
      // drained: new work would land next to them.
      h.good = held ? 0 : h.good + 1;
      if (h.good >= std::max(1, rules.recover_after)) {
        h.state = HealthState::kHealthy;
        h.good = 0;
        h.error.clear();
      }
    }
  }
  change.to = h.state;
  return change;
}

}  // namespace rota
