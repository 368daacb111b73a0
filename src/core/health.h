// The health of one GPU as rotad's samples see it: healthy -> suspect -> drained and back. Pure:
// the daemon feeds one observation per sample (the card's error, or none, and whether any process
// still holds it) and acts on the transition it gets back (stop the card's jobs when it is
// drained, tell the admins, record it).
//
//   healthy --error--> suspect --`drain_after` errors in a row--> drained
//   suspect --good sample--> healthy
//   drained --`recover_after` good samples in a row with no process on the card--> healthy
//
// A suspect card gets no new work (the daemon marks it drained for the scheduler) but its jobs
// keep running: one failed read is often a transient driver hiccup. A drained card's jobs are
// stopped (NodeFail). It comes back by itself only when it is healthy again and nothing is left
// on it; an admin's drain (`rota drain`) is separate and only `rota resume` ends it.
#pragma once

#include <string>

namespace rota {

enum class HealthState { kHealthy, kSuspect, kDrained };
const char* HealthStateName(HealthState s);  // "healthy", "suspect", "drained"

struct GpuHealth {
  HealthState state = HealthState::kHealthy;
  int failures = 0;   // failed samples in a row
  int good = 0;       // good samples in a row with the card empty, while drained
  std::string error;  // the last error ("" once healthy again)
};

struct HealthRules {
  int drain_after = 3;    // failed samples in a row before drained (1: at the first error)
  int recover_after = 3;  // good, empty samples in a row before a drained card is healthy again
};

struct HealthChange {
  HealthState from = HealthState::kHealthy;
  HealthState to = HealthState::kHealthy;
  bool changed() const { return from != to; }
};

// Applies one sample of the card: `error` empty when the card read fine; `held` when processes
// are on it.
HealthChange ObserveHealth(GpuHealth& health, const std::string& error, bool held, const HealthRules& rules);

}  // namespace rota
