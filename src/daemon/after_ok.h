// What `--after-ok` means once the jobs it names have ended (design.md, "Dependencies"): a
// pending job one of whose --after-ok jobs ended other than Completed can never start, and is
// cancelled; one whose --after-ok job's end is not known (a store that cannot be read, an end
// not recorded yet) is held out of the pass until it is. A part of the daemon that owns what it
// remembers between passes: the jobs found Completed (no store read for them again), the jobs
// held out, the cancels the store refused (said once). How a job ended comes from the daemon
// (EndOf); which jobs are active too. Not thread-safe (the daemon's loop thread). Tested by
// after_ok_test.cc and tests/daemon/test_dependencies.py.
#pragma once

#include <cstddef>
#include <functional>
#include <set>
#include <string>
#include <unordered_set>

#include "core/cluster.h"
#include "core/status.h"

namespace rota::daemon {

// How a job that is not active ended.
struct JobEndSeen {
  bool final = false;      // false: pending again (a requeue) or its end not recorded
  bool completed = false;  // ended Completed
  std::string reason;      // its end reason, e.g. "Failed(exit 3)"
  std::string user;        // whose job it is
  // The reason as `who` may see it: another user's end reason (their paths, their outcome) is
  // private; they learn only that it ended without completing.
  std::string ReasonFor(const std::string& who) const {
    return who == user ? reason : "without completing (it is " + user + "'s job)";
  }
};

class AfterOk {
 public:
  using IsActive = std::function<bool(JobId)>;
  using EndOf = std::function<StatusOr<JobEndSeen>(JobId)>;
  // How many ids of jobs found Completed are remembered before they are forgotten.
  static constexpr std::size_t kMetKept = 4096;
  // The start of the reason of a job cancelled because an --after-ok job failed.
  static constexpr std::string_view kCancelled = "Cancelled: job ";

  // Before a pass: nothing is held out any more (the pass looks again), and the refused cancels
  // of jobs no longer active (their owners cancelled them) are forgotten.
  void StartPass(const IsActive& active);
  // Why pending job `j` can never start (an --after-ok job ended other than Completed), or "".
  // A job whose --after-ok job's end is not known is held out (held()).
  std::string NeverSatisfied(const Job& j, const IsActive& active, const EndOf& end_of);
  // Job `id` is held out of this pass (its cancel was refused, or an end is not known).
  void Hold(JobId id) { held_.insert(id); }
  bool held(JobId id) const { return held_.count(id) > 0; }
  // The store refused job `id`'s cancel: true the first time (to be said once).
  bool Refused(JobId id) { return refused_.insert(id).second; }
  // Job `id` was cancelled.
  void Cancelled(JobId id) { refused_.erase(id); }

 private:
  std::unordered_set<JobId> met_;
  std::set<JobId> held_;
  std::set<JobId> refused_;
};

}  // namespace rota::daemon
