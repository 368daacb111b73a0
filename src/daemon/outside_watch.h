// Outside processes: GPU processes that no Rota allocation on their card covers (someone ran
// `python train.py` directly, or a job's process strayed onto a card its job was not given). A
// part of the daemon that owns what it has seen: each such process (by pid and start time) is
// new once (the daemon records and tells it), its card takes no new work while any is on it, and
// with [watch] outside_action = "stop" it gets SIGTERM after the grace and SIGKILL a kill wait
// later; root's processes are never stopped. Pure decisions: the daemon reads the processes and
// sends the signals. Not thread-safe (the daemon's loop thread). Tested by outside_watch_test.cc
// and tests/daemon/test_gpus.py (OutsideTest).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/types.h"

namespace rota::daemon {

class OutsideWatch {
 public:
  // One outside process in a sample.
  struct Process {
    int pid = 0;
    unsigned long long start_time = 0;  // with the pid, who it is (a pid may be reused)
    std::int64_t uid = -1;
    std::string user;
    JobId job = 0;  // a Rota job's process on a card its job was not given; 0: outside Rota
    // The cluster node it runs on ("" = this machine): its pid is that node's, and the daemon
    // neither reads nor signals it here; the policy's signals for it go to the node's agent.
    std::string node;
    // Whether the policy may stop it (not a node's process that names a Slurm job: Slurm's).
    bool stoppable = true;
    std::string uuid;
    int gpu_index = -1;
    MiB used_memory = -1;  // -1: unknown
    Time first_seen = 0;
    Time term_sent = 0;  // the policy stop: SIGTERM sent at (0: not yet)
    bool killed = false;
  };
  struct Rules {
    bool stop = false;        // [watch] outside_action = "stop"
    Duration grace = 0;       // [watch] outside_grace
    Duration kill_wait = 10;  // SIGTERM to SIGKILL
  };
  // What a sample asks of the daemon.
  struct Step {
    std::vector<Process> new_processes;             // first seen now: record and tell
    std::vector<std::pair<Process, int>> signals;   // send these (SIGTERM, SIGKILL); then Sent()
    bool held_changed = false;                      // the cards held by outside processes changed
  };

  // The outside processes of a sample at `now` (those that could be read), against what was
  // seen before: processes no longer on a card are forgotten.
  Step Observe(std::vector<Process> sample, const Rules& rules, Time now);
  // The daemon sent (or tried to send) `signo` to `p`: it is not sent again.
  void Sent(const Process& p, int signo, Time now);

  // Whether an outside process is on card `uuid` (it takes no new work).
  bool Holds(const std::string& uuid) const { return held_.count(uuid) > 0; }
  // Who a process is for good: its machine, pid and start time.
  using Key = std::tuple<std::string, int, unsigned long long>;
  const std::map<Key, Process>& seen() const { return seen_; }

 private:
  static Key KeyOf(const Process& p) { return {p.node, p.pid, p.start_time}; }
  std::map<Key, Process> seen_;
  std::set<std::string> held_;
};

}  // namespace rota::daemon
