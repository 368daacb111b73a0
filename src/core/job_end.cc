// Tested by job_end_test.cc.
#include "core/job_end.h"

#include "core/signal_spec.h"

namespace rota {

JobEnd DecideJobEnd(const StopContext& stop, const JobExit& exit) {
  using K = JobExit::Kind;
  JobEnd e;
  if (exit.kind == K::kExited) e.code = exit.exit_code;
  const bool may_requeue = stop.requeue && !stop.interactive;
  const std::string requeued = may_requeue ? " (requeued)" : "";
  if (!stop.cancelled_by.empty()) {
    e.state = JobState::kCancelled;
    e.reason = "Cancelled by " + stop.cancelled_by;
    e.actor = stop.cancelled_by;
  } else if (!stop.node_fail.empty()) {
    // Its card failed under it: the job did not finish its work, whatever its exit status.
    e.requeue = may_requeue;
    e.state = JobState::kNodeFail;
    e.reason = "NodeFail: " + stop.node_fail + requeued;
  } else if (stop.stopping && stop.preempted) {
    // Preempted, whether it was killed or ended on its own after the warning (a checkpoint):
    // either way it did not finish its work.
    e.requeue = may_requeue;
    e.state = JobState::kPreempted;
    if (!stop.stop_reason.empty()) {
      e.reason = stop.stop_reason + requeued;
    } else if (stop.preempted_by != 0) {
      e.reason = "Preempted by job " + std::to_string(stop.preempted_by) + requeued;
    } else {
      e.reason = "Preempted" + requeued;
    }
  } else if (stop.stopping && stop.term_sent) {
    e.state = JobState::kTimeout;
    e.reason = "TimeLimit";
  } else if (stop.stopping && exit.kind == K::kSignalled && stop.warning_signal != 0 &&
             exit.signal == stop.warning_signal) {
    // Its own warning ended it (a program that does not catch the signal it asked for): it reached
    // its time limit, and `rota show` says how to catch the signal to save a checkpoint.
    e.state = JobState::kTimeout;
    e.reason = "TimeLimit (ended by its warning signal " + SignalName(exit.signal) + ")";
  } else if (exit.kind == K::kExited && exit.exit_code == 0) {
    e.state = JobState::kCompleted;
  } else if (exit.kind == K::kExited) {
    e.state = JobState::kFailed;
    e.reason = "Failed(exit " + std::to_string(exit.exit_code) + ")";
  } else if (exit.kind == K::kSignalled) {
    e.state = JobState::kFailed;
    // With what the engine knows of why (the cgroup's OOM kill, Slurm's state): "Failed(signal
    // 9: out of memory (memory.max reached))".
    e.reason = "Failed(signal " + std::to_string(exit.signal) + (exit.reason.empty() ? "" : ": " + exit.reason) + ")";
  } else if (exit.kind == K::kStartFailed && exit.machine_fault && !stop.interactive) {
    // Its process could not be made (out of memory or processes): it never ran, so it waits
    // again whatever --requeue says, and is tried again later.
    e.requeue = true;
    e.launch_failed = true;
    e.state = JobState::kNodeFail;
    e.reason = "NodeFail: " + exit.reason + " (requeued)";
  } else if (exit.kind == K::kStartFailed) {
    e.state = JobState::kFailed;
    e.reason = "Failed: " + exit.reason;
  } else {  // kVanished
    e.requeue = may_requeue;
    e.state = JobState::kNodeFail;
    e.reason = "NodeFail: " + exit.reason + requeued;
  }
  return e;
}

}  // namespace rota
