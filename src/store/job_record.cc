// Tested by store_test.cc.
//
// Design: state names are the exact strings stored in jobs.state and job_events (and checked by
// the schema's CHECK constraint), so they must never change once released.
#include "store/job_record.h"

namespace rota::store {

const char* JobStateName(JobState state) {
  switch (state) {
    case JobState::kPending:
      return "pending";
    case JobState::kRunning:
      return "running";
    case JobState::kCompleted:
      return "completed";
    case JobState::kFailed:
      return "failed";
    case JobState::kCancelled:
      return "cancelled";
    case JobState::kTimeout:
      return "timeout";
    case JobState::kPreempted:
      return "preempted";
    case JobState::kNodeFail:
      return "node_fail";
  }
  return "pending";
}

std::optional<JobState> ParseJobState(std::string_view name) {
  for (JobState s : {JobState::kPending, JobState::kRunning, JobState::kCompleted, JobState::kFailed,
                     JobState::kCancelled, JobState::kTimeout, JobState::kPreempted, JobState::kNodeFail}) {
    if (name == JobStateName(s)) return s;
  }
  return std::nullopt;
}

bool IsFinal(JobState state) { return state != JobState::kPending && state != JobState::kRunning; }

RunningJob JobRecord::ToRunningJob() const {
  RunningJob r;
  r.job = job;
  r.alloc = placement.alloc;
  r.start_time = start_time;
  r.preemptible = preemptible;
  r.signalled = signalled;
  r.kill_at = kill_at;
  r.preempted = preempted;
  r.from_pool = from_pool;
  return r;
}

void JobRecord::Started(const StartInfo& start, Time now) {
  state = JobState::kRunning;
  start_time = now;
  placement = start.placement;
  preemptible = start.preemptible;
  from_pool = start.from_pool;
  signalled = preempted = false;
  kill_at = kNever;
  pid = start.pid;
  pgid = start.pgid;
  cgroup = start.cgroup;
}

const char* RequestKindName(RequestKind kind) {
  switch (kind) {
    case RequestKind::kWholeGpus:
      return "gpus";
    case RequestKind::kMemShare:
      return "mem_share";
    case RequestKind::kMig:
      return "mig";
  }
  return "gpus";
}

std::optional<RequestKind> ParseRequestKind(std::string_view name) {
  if (name == "gpus") return RequestKind::kWholeGpus;
  if (name == "mem_share") return RequestKind::kMemShare;
  if (name == "mig") return RequestKind::kMig;
  return std::nullopt;
}

}  // namespace rota::store
