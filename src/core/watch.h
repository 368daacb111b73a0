// Watching allocations: is a job (or session) holding GPUs that do nothing? Pure: the daemon feeds
// one observation per sample (time, the allocation's utilisation and memory) and acts on the
// verdict (warn the owner, then the configured action), recording everything it does.
//
// Idleness is judged over a sliding window, not "was it ever busy": utilisation is kept as
// per-minute means (per-second when idle_after is under 15 minutes, as in tests), and an allocation is idle when the mean over the last `idle_after` is under
// `idle_util` (a brief spike does not reset the clock; a job busy for hours that then idles is
// caught `idle_after` later). "Stuck" is idle with memory nearly full (a hung collective, a
// deadlock). Escalation per allocation:
//
//   ok --idle for idle_after--> warned --still idle at act_after--> acted (once)
//   warned|acted --busy again (window mean >= idle_util)--> ok
//   any --keep (`rota keep ID`, at most keeps_per_day per local day)--> ok, window restarted
#pragma once

#include <deque>
#include <string>

#include "core/status.h"
#include "core/types.h"
#include "core/zone.h"

namespace rota {

struct WatchRules {
  bool enabled = true;
  int idle_util = 5;                   // percent of the allocation's GPUs: under this is idle
  Duration idle_after = 15 * kMinute;  // idle this long: warn the owner
  Duration act_after = 30 * kMinute;   // idle this long (warned, no keep): the action
  double stuck_memory = 0.9;           // idle with more than this fraction of memory used: "stuck"
  bool reclaim = false;                // the action: false = tell the admins, true = stop the job
  int keeps_per_day = 3;               // `rota keep` per allocation per local day
  double over_memory = 1.05;           // a share using more than declared x this: warned
  // Still over after this long: the action (false: the admins are told; true: the job is stopped,
  // its signal, grace, then the stop; requeued if it asked).
  Duration over_memory_after = 5 * kMinute;
  bool over_memory_stop = false;
  // GPU processes that no allocation on their card covers: told (owner and admins) and the card
  // kept from new work while they hold it; with outside_stop, stopped after outside_grace.
  bool outside_stop = false;
  Duration outside_grace = 10 * kMinute;
};

enum class WatchStage : std::uint8_t { kOk, kWarned, kActed };

// What to do after an observation.
enum class WatchAlert : std::uint8_t {
  kNone,
  kIdleWarning,   // warn the owner (the message offers `rota keep`)
  kStuckWarning,  // idle with memory nearly full: "your job may be stuck"
  kAction,        // act_after reached without a keep: notify the admins or reclaim
  kBusyAgain,     // was warned, works again: the warning is withdrawn
};
const char* WatchAlertName(WatchAlert a);  // "idle_warning", "stuck_warning", "action", "busy_again", "none"

class IdleWatch {
 public:
  // Watching starts at `start` (the job's start): the window must be covered before idleness is
  // judged, so a job is never called idle in its first idle_after.
  explicit IdleWatch(Time start) : covered_from_(start) {}

  // One sample: the allocation's utilisation in percent (-1: unknown, which is ignored) and the
  // fraction of its memory in use (-1: unknown).
  WatchAlert Observe(Time now, int util, double memory_fraction, const WatchRules& rules);

  // `rota keep`: restarts the window and clears a warning. FailedPrecondition when the day's keeps
  // are used up (the message says when the next one is possible). `zone` decides the day.
  Status Keep(Time now, const WatchRules& rules, const Zone& zone);

  WatchStage stage() const { return stage_; }
  // The window's mean utilisation and memory fraction at the last observation (-1 if unknown).
  double mean_util() const { return mean_util_; }
  double mean_memory() const { return mean_memory_; }
  // How long the allocation has been idle (0 when it is not).
  Duration idle_for(Time now) const { return idle_since_ > 0 ? now - idle_since_ : 0; }
  int keeps_left(Time now, const WatchRules& rules, const Zone& zone) const;

 private:
  struct Minute {
    Time start = 0;  // the bucket's start (a multiple of its length: 60 s, less for short windows)
    double util_sum = 0;
    int util_n = 0;
    double memory_sum = 0;
    int memory_n = 0;
  };
  void Add(Time now, int util, double memory_fraction, Duration bucket);
  void Judge(Time now, const WatchRules& rules);

  std::deque<Minute> minutes_;  // the window, oldest first
  Time covered_from_;           // samples before this do not count (start, last keep)
  Time idle_since_ = 0;         // 0: not idle
  double mean_util_ = -1;
  double mean_memory_ = -1;
  WatchStage stage_ = WatchStage::kOk;
  bool stuck_ = false;
  Time keep_day_ = -1;  // the local day of the keeps counted in keeps_
  int keeps_ = 0;
};

}  // namespace rota
