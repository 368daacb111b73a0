// The Engine: what runs rotad's batch jobs. The daemon decides what starts where and when (the
// core's decisions); an engine starts it, delivers its signals, watches it and reports how it
// ended. LocalEngine (local_engine.h) runs jobs on this machine under rota-shepherd;
// testing::FakeEngine runs nothing and lets a test say when and how each job ends; a Slurm
// engine will submit to a cluster. docs/design.md, "Engines".
//
// Contract:
// - Calls come from the daemon's loop thread, and so do the engine's reports (EngineEvents):
//   an engine that waits for something watches it on the daemon's loop.
// - A job launched (Launch, or Adopt after a restart) is the engine's until it reports its end
//   (JobEnded, once) or the daemon withdraws it (Withdraw, then WithdrawnGone once). No report
//   comes from inside a call the daemon made.
// - An engine keeps a job's files (what Collect reads after a restart) until Forget: a daemon
//   that dies between an end and its record finds the same end again.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/cluster.h"
#include "core/job_end.h"
#include "core/status.h"
#include "core/types.h"
#include "exec/executor.h"

namespace rota::daemon {

// A card (its UUID in the inventory) held by a cluster's job outside Rota; on a card in MIG mode
// (a Slurm node's slices of one gres type), one slice of it: as many holders as slices held.
struct ClusterHolder {
  std::string card;
  uid_t uid = 0;
  std::string job;  // the cluster's id of it ("123")
  bool operator==(const ClusterHolder&) const = default;
};

// A run of a cluster's job outside Rota (plain sbatch/srun) that held GPUs: seen running
// from `start` (the cluster's start time) until it was seen gone at `end`
// (EngineEvents::OutsideRunEnded), or, while it runs, until the last read that listed it
// (Engine::OutsideRunning).
struct OutsideRun {
  std::string job;  // the cluster's id of it ("4711")
  uid_t uid = 0;
  int gpus = 0;  // whole GPUs, over all its nodes
  Time start = 0;
  Time end = 0;
  // Shards of cards (gres/shard) it holds on each of `nodes`: (the card's gres type, "" when
  // untyped; count). What they are in GPUs the daemon's inventory knows (Inventory::ShardGpus).
  std::vector<std::string> nodes;
  std::vector<std::pair<std::string, int>> shards;
  // And MIG slices on each of `nodes` (gres/gpu of a MIG type: the type, count; Inventory::SliceGpus).
  std::vector<std::pair<std::string, int>> slices;
};

// What the daemon hears from its engine.
class EngineEvents {
 public:
  // Job `id`'s processes are all gone (at `at`): its GPUs may go to the next job now, though how
  // it ended comes later (JobEnded). Engines that cannot tell this before the end do not call it.
  virtual void JobReleased(JobId id, Time at) = 0;
  // Job `id` ended: how (JobExit::end_time 0 when the engine does not know when).
  virtual void JobEnded(JobId id, const JobExit& exit) = 0;
  // A withdrawn launch is gone: the GPUs it held are free.
  virtual void WithdrawnGone(JobId id) = 0;
  // Job `id` runs as `engine_job` in the cluster the engine hands jobs to ("Slurm job 123"), once
  // the engine knows. Engines that run jobs here do not call it.
  virtual void JobNamed(JobId id, const std::string& engine_job) = 0;
  // The cluster gave job `id` these cards (their UUIDs in the inventory), which may be others
  // than the ones the daemon chose on that node: its record follows the cluster.
  virtual void JobPlaced(JobId id, const std::vector<std::string>& cards) = 0;
  // The cluster answers again after it did not: launches it refused as unavailable may be tried
  // at once, not after their backoff.
  virtual void EngineAvailable() {}
  // The cards that the cluster's jobs outside Rota (plain sbatch/srun) hold now, and whose: all of
  // them each time the set changes.
  virtual void ClusterHolders(const std::vector<ClusterHolder>& /*holders*/) {}
  // A job outside Rota that held GPUs is no longer running: its owner is charged for it.
  virtual void OutsideRunEnded(const OutsideRun& /*run*/) {}
  // Engine::CatchUpOutside has told every run outside Rota that ended up to `until` (each through
  // OutsideRunEnded): the daemon may count from there the next time it starts.
  virtual void OutsideCaughtUp(Time /*until*/) {}

 protected:
  ~EngineEvents() = default;
};

// Where a launched job runs, as the store records it.
struct Started {
  pid_t pid = 0;       // the process that stands for the job here (the local engine's shepherd)
  std::string cgroup;  // its processes' cgroup, or "" when it has none
};

class Engine {
 public:
  virtual ~Engine() = default;

  // One line for rotad's log and `rota status` ("cgroup v2 at /sys/fs/cgroup/rota ...").
  virtual std::string Describe() const = 0;
  // Whether a job is refused the device nodes of the cards it was not given (spec.deny_devices),
  // and whether jobs have cgroups at all (for the log's line on GPU isolation).
  virtual bool DeviceFilter() const = 0;
  virtual bool Cgroups() const = 0;

  // Starts a batch job. Ok: it has started (its end comes through JobEnded). InvalidArgument:
  // the spec is refused (the job fails); any other error: this machine cannot start it now (it
  // stays pending and is tried again).
  virtual StatusOr<Started> Launch(const exec::LaunchSpec& spec) = 0;
  // A launch whose start could not be recorded: stopped, its files removed (no end is reported
  // for it, and a restart finds no launch), then WithdrawnGone once it is gone.
  virtual void Withdraw(JobId id) = 0;
  // Delivers `signo` to the job's processes; SIGKILL kills all of them. A job already gone is ok.
  virtual Status Signal(JobId id, int signo) = 0;

  // After a restart. FindLaunch: what became of the last launch of a job the store does not
  // record as started (rotad died between the launch and its record). Adopt: watches again a
  // job found running (`pid` as Started gave it; `started` its recorded start, 0 when none);
  // NotFound when it runs no longer: then Collect. Collect: how a job that is not running
  // ended (its result, or kVanished).
  virtual StatusOr<exec::FoundLaunch> FindLaunch(JobId id) = 0;
  virtual StatusOr<Started> Adopt(JobId id, pid_t pid, Time started) = 0;
  virtual JobExit Collect(JobId id, pid_t pid) = 0;
  // Removes what ended jobs left that no job `in_use` names (after a restart); how many.
  virtual int RemoveLeftovers(const std::function<bool(JobId)>& in_use) = 0;
  // The job's end (or requeue) is recorded: its files may go.
  virtual void Forget(JobId id) = 0;

  // After each batch of events, when the daemon has started what it could: the engine's upkeep
  // (the local engine's standby shepherds, cgroup removal and end watches), off the path from
  // one job's end to the next one's start.
  virtual void AfterEvents() = 0;
  // The daemon is stopping: jobs keep running; the engine tidies what it may.
  virtual void Shutdown() = 0;
  // Why this engine cannot run a request of this shape ("" when it can): such jobs are refused at
  // submission with it, rather than run as something else. (Whether the cards can hold it is
  // the inventory's: Inventory::WhyNoShares.)
  virtual std::string Refuses(const Request& /*request*/) const { return ""; }
  // Something outside says a job may have ended (`rota poke` from a cluster's epilog): an engine
  // that polls looks now. Others ignore it.
  virtual void Poke() {}
  // The same from a hook that waits for the answer (`rota poke --wait` in a node's epilog, which
  // Slurm waits for before it lets the job go and schedules again): `settled` is called once the
  // engine has looked and handed on what it found (the jobs the daemon started on the GPUs an end
  // freed submitted), or after a bound. False when there is nothing to wait for: `settled` is
  // then never called.
  virtual bool PokeAndWait(std::function<void()> /*settled*/) {
    Poke();
    return false;
  }

  // The bookings that hold whole named nodes (confirmed or active, not yet over), told before each
  // scheduling pass: an engine in front of a cluster that people also use directly (plain
  // `sbatch`) reserves those nodes there for the booking's owner. Others ignore it.
  struct BookedNodes {
    std::int64_t booking = 0;
    std::string user;
    std::vector<std::string> nodes;
    Time start = 0;
    Time end = 0;
  };
  virtual void Booked(const std::vector<BookedNodes>& /*bookings*/) {}
  // The runs outside Rota that hold GPUs now (OutsideRun), each up to the last read that listed
  // it: their use so far counts for their owners (fair share, the quota week) before they end.
  virtual std::vector<OutsideRun> OutsideRunning() const { return {}; }
  // The runs outside Rota that ended while rotad was away, from `since` to now (the cluster's
  // accounting, where it keeps one): each through EngineEvents::OutsideRunEnded, then
  // OutsideCaughtUp. `ours`: the cluster's ids of Rota's own jobs in that time, which are not
  // outside Rota. Asynchronous; engines without such a record do nothing.
  virtual void CatchUpOutside(Time /*since*/, std::set<std::string> /*ours*/) {}

  // An interactive session (`rota run`, `rota shell`) the core started: where and with what.
  struct SessionStart {
    JobId id = 0;
    uid_t uid = 0;
    std::string user;
    std::string node;  // the node of its cards ("" when the core named none)
    int gpus = 0;
    std::vector<std::string> cards;  // as exec::LaunchSpec::Cluster's
    int shares = 0;
    std::int64_t memory_bytes = 0;
    Duration time_limit = 0;
  };
  // How its client runs the command: under `argv` (then `tty_argv` when its stdin is a terminal)
  // when not empty, with the variables named by `unset_prefixes` removed from its environment and
  // `env` set. The defaults: the command as it is, with `env` (the cards' variables) unchanged.
  struct SessionWrap {
    std::vector<std::string> argv;
    std::vector<std::string> tty_argv;
    std::vector<std::string> unset_prefixes;
    std::map<std::string, std::string> env;
  };
  virtual StatusOr<SessionWrap> WrapSession(const SessionStart& /*start*/, std::map<std::string, std::string> env) {
    SessionWrap w;
    w.env = std::move(env);
    return w;
  }
  // Session `id` (of user `uid`) ended or is being killed: what the engine holds for it is let go.
  virtual void EndSession(JobId /*id*/, uid_t /*uid*/) {}
  // Interactive sessions run in their client (`rota run`), not in the engine; where the engine
  // has cgroups it gives them one, with the job's limits and device filter. "" when it has none
  // (the defaults: an engine without cgroups, whose other calls then have nothing to do).
  virtual StatusOr<std::string> CreateSessionCgroup(JobId /*id*/, std::int64_t /*memory_limit_bytes*/,
                                                    const std::vector<std::pair<unsigned, unsigned>>& /*deny*/) {
    return std::string();
  }
  virtual Status MoveToCgroup(const std::string& /*cgroup*/, pid_t /*pid*/) { return Status(); }
  virtual Status KillCgroup(const std::string& /*cgroup*/) { return Status(); }
  virtual Status RemoveCgroup(const std::string& /*cgroup*/) { return Status(); }
};

}  // namespace rota::daemon
