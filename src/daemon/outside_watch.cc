#include "daemon/outside_watch.h"

#include <signal.h>

namespace rota::daemon {

OutsideWatch::Step OutsideWatch::Observe(std::vector<Process> sample, const Rules& rules, Time now) {
  Step step;
  std::map<Key, Process> seen;
  std::set<std::string> held;
  for (Process& p : sample) {
    held.insert(p.uuid);
    const Key key = KeyOf(p);
    if (auto was = seen_.find(key); was != seen_.end()) {
      p = was->second;
    } else {
      p.first_seen = now;
      step.new_processes.push_back(p);
    }
    // The policy stop: SIGTERM after the grace, SIGKILL a kill wait later; never root's.
    if (rules.stop && p.uid != 0 && p.stoppable && now - p.first_seen >= rules.grace) {
      const int sig = p.term_sent == 0 ? SIGTERM : (now - p.term_sent >= rules.kill_wait ? SIGKILL : 0);
      if (sig != 0 && !(sig == SIGKILL && p.killed)) step.signals.emplace_back(p, sig);
    }
    seen[key] = p;
  }
  seen_ = std::move(seen);  // processes no longer on a card are forgotten
  step.held_changed = held != held_;
  held_ = std::move(held);
  return step;
}

void OutsideWatch::Sent(const Process& p, int signo, Time now) {
  auto it = seen_.find(KeyOf(p));
  if (it == seen_.end()) return;
  if (signo == SIGTERM) it->second.term_sent = now;
  if (signo == SIGKILL) it->second.killed = true;
}

}  // namespace rota::daemon
