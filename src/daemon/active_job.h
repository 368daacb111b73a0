// A job the daemon holds in memory: pending or running (the store is the truth on disk), with
// what the daemon is doing to it (stopping, cancelling, preempting), what it measured of it, and
// when a start that failed is tried again. The daemon's job table is a map of these by id.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "core/types.h"
#include "daemon/server.h"
#include "exec/files.h"
#include "store/job_record.h"
#include "store/job_store.h"

namespace rota::daemon {

struct ActiveJob {
  store::JobRecord rec;
  int client_pidfd = -1;  // a session re-adopted after a restart: its client process
  // When its last process was gone (0: not yet seen): its GPUs are free and its run charged;
  // its end is decided when the shepherd's result comes (design.md, "Freeing a job's GPUs
  // when its cgroup empties").
  Time released_at = 0;
  // Started, and its processes not seen gone: what stops, signals and reminders act on.
  bool Live() const { return rec.state == store::JobState::kRunning && released_at == 0; }
  ConnId session = 0;        // interactive job: its client's connection (0: none)
  pid_t session_pid = 0;     // interactive job: the client process
  // A new interactive job: a pidfd on its client, checked to be the caller's (RunSession). Its
  // pid is moved into the job's cgroup only while this shows the process alive.
  std::shared_ptr<exec::UniqueFd> session_process;
  // An attached session (`rota run --image`): its client's standard input, output and error, as
  // it passed them, until a launch hands them to the shepherd.
  std::shared_ptr<std::vector<exec::UniqueFd>> terminal;
  Time term_sent = 0;        // the kill sequence: SIGTERM sent at (0: not yet)
  std::string cancelled_by;  // a running job being cancelled, by whom
  JobId preempted_by = 0;    // a running job being preempted, for whom
  std::string node_fail;     // a running job being stopped because its card failed: why
  // A running job being stopped for a reason of the daemon's own (its booking ended and others
  // wait, it was reclaimed as idle): the end reason it gets.
  std::string stop_reason;
  bool over_memory_noted = false;  // a share job was told it uses more than it declared
  Time over_memory_since = 0;      // over its declared memory since (0: not over now)
  bool over_memory_acted = false;  // the over-memory action was taken
  // Its GPU use as the samples saw it since the last save (usage.cc), and the last sample's time.
  store::JobMeasures measures;
  Time measured_at = 0;
  // Last waiting update sent to a session client, so only changes are sent.
  std::string last_waiting;
  // A pending job whose start the store could not record, or that this machine could not
  // launch: not started again before this.
  Time retry_at = 0;
  int launch_failures = 0;  // launches of this job that failed for the machine's reasons
};

}  // namespace rota::daemon
