// The local executor: runs jobs as their owner under rota-shepherd, in a cgroup where possible.
//
// Each job runs under its own rota-shepherd process (src/shepherd), like Slurm's slurmstepd: the
// daemon starts the shepherd in a new session, the shepherd starts the job, waits for it, kills
// what the job left behind and records how it ended in <run_dir>/<job>.result. The shepherd does
// not depend on the daemon, so a job survives a daemon restart and its end is still recorded;
// the restarted daemon re-adopts live shepherds (Adopt) and collects dead ones (Collect).
//
// Lifecycle of one job, as the daemon drives it:
//   Launch -> Launched{pid, pidfd}; poll pidfd; Signal(pid, SIGTERM) ... Signal(pid, SIGKILL);
//   pidfd readable -> close(pidfd); Collect(job, pid) -> ExitInfo; the end recorded -> Forget(job).
// A shepherd that was a standby notes the end first (kEndedNote on note_fd): Collect then, and
// Reap(job, pid) once its pidfd is readable.
// After a restart: for each job the store says is running, Adopt(job, pid); on NotFound call
// Collect(job, pid) (it reads the result file the shepherd left, or reports kVanished). The
// result stays until Forget, so a daemon that dies between Collect and recording the end finds
// it again after its restart.
//
// Thread-safety: an Executor is thread-compatible (the daemon calls it from its event loop).
// REQUIRES of the calling process: it reaps shepherds only through Collect and Reap (no
// waitpid(-1) elsewhere, SIGCHLD not set to SIG_IGN), so that a Launched pid stays valid until
// then.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/job_end.h"
#include "core/status.h"
#include "core/types.h"
#include "exec/container.h"

namespace rota::exec {

// What to run, as whom, where. Filled in completely by the caller (the executor adds nothing).
struct LaunchSpec {
  JobId job_id = 0;                  // > 0
  uid_t uid = 0;                     // the job's user; the shepherd drops to it when it differs
  gid_t gid = 0;                     //   from the daemon's euid (the daemon must then be root)
  std::vector<gid_t> groups;         // supplementary groups, already resolved by the caller
  std::string user;                  // for messages
  std::vector<std::string> argv;     // non-empty; argv[0] is searched in env's PATH like execvp
  std::string cwd;                   // absolute
  std::map<std::string, std::string> env;  // the complete environment (caller adds CUDA vars)
  std::string output;                // absolute path of the log; stdout+stderr appended
  // Attached to its owner's terminal (`rota run --image`): the job's standard input, output and
  // error are the descriptors its client passed (`terminal`, which Launch hands the shepherd as
  // its own 0, 1 and 2; not in the spec file), and `output` names no log. Only for a container
  // (a session on the host is run by its client): Podman and Docker, started as root, relay
  // them; Apptainer, the user's own process, has them as its own.
  bool attached = false;
  int terminal[3] = {-1, -1, -1};
  std::int64_t memory_limit_bytes = 0;     // host memory limit (cgroup memory.max); 0 = none
  // Processes of the job (pids.max where the cgroup has it, else RLIMIT_NPROC of its user), open
  // files of each process (RLIMIT_NOFILE) and its CPU weight (cpu.weight where the cgroup has it);
  // 0 = not set (the shepherd's own then: a job never keeps rotad's raised open-file limit).
  std::int64_t max_processes = 0;
  std::int64_t max_open_files = 0;
  int cpu_weight = 0;
  // Set by the executor: the cgroup holds max_processes (pids.max), so the shepherd sets no
  // RLIMIT_NPROC (which counts all of the user's processes, not the job's).
  bool processes_in_cgroup = false;
  // Character devices the job's processes may not open: the device nodes of the cards it was not
  // given (device_filter.h). Applied by the executor to the job's cgroup where it can
  // (device_filter()); not written into the spec.
  std::vector<std::pair<unsigned, unsigned>> deny_devices;
  // What an engine that hands jobs to a cluster's own scheduler asks it for (the Slurm engine,
  // daemon/slurm_engine.h); the local executor and the shepherd ignore it.
  struct Cluster {
    std::string node;         // the node the core chose ("" when it did not name one)
    int gpus = 0;             // GPUs on one node
    // The cluster's names of the cards the core chose, one each (device::GpuInfo::cluster_name;
    // none: the cluster chooses `gpus` of the node's); a memory share of its one card (`share`) is `shares` of the card's
    // shares in the cluster (0: the cluster cannot share it).
    std::vector<std::string> cards;
    bool share = false;
    int shares = 0;
    bool slice = false;  // a MIG slice (of cards[0]'s type)
    Duration time_limit = 0;  // Rota's limit: Rota stops the job itself; the cluster's is a backstop
    int signal = 0;           // the job's warning signal (0: none) and how long before the stop
    Duration grace = 0;
  } cluster;
  // Run in a container (`--image`): the shepherd starts the runtime (exec/container_argv.h);
  // runtime kNone: the command itself, as above.
  ContainerSpec container;
  // Opaque to the executor and the shepherd: kept in the spec file and handed back by
  // FindLaunch. The daemon keeps there what it would record of the start (placement, time).
  std::string note;
};

// A started shepherd. The caller owns pidfd (O_CLOEXEC) and must close it.
struct Launched {
  pid_t pid = 0;       // the shepherd's pid (not the job's)
  int pidfd = -1;      // becomes readable (poll POLLIN) when the shepherd exits
  std::string cgroup;  // the job's cgroup directory, or "" when jobs are tracked by process group
  // A shepherd that was a standby: the socket it was handed its job on. It sends kEndedNote
  // (spec.h) on it once the job's result is written, before its own clean-up and exit (the
  // caller may Collect then); end of file when the shepherd is gone. -1 for other launches.
  int note_fd = -1;
};

// How a job ended (the core's JobExit: what every engine reports).
using ExitInfo = ::rota::JobExit;

const char* ExitKindName(ExitInfo::Kind kind);  // "exited", "signalled", "start_failed", "vanished"

// What FindLaunch found of a job's last launch.
struct FoundLaunch {
  enum class State {
    kNone,     // no launch is left: there was no spec, or its shepherd never took it (the spec is
               // now withdrawn, so none will; the job never started)
    kRunning,  // its shepherd runs: `pid`, to Adopt
    kEnded,    // its shepherd has exited, after starting the job: Collect(job, 0) tells how it ended
  };
  State state = State::kNone;
  pid_t pid = 0;
  std::string note;  // the LaunchSpec's note (kRunning and kEnded; "" when the spec was unreadable)
  bool withdrawn = false;  // kNone: a spec nobody took was removed, or a withdrawn launch's processes killed
};

struct JobCgroupLimits;  // cgroup.h

struct ExecutorOptions {
  std::string shepherd_path;  // the rota-shepherd binary (absolute)
  std::string run_dir;        // private dir for spec and result files; created 0700 if missing
  bool use_cgroups = true;    // false: never touch cgroups, track jobs by process group
  // The base cgroup's name (<mount>/<name> from the root cgroup, <mount><own>/<name> from a
  // cgroup of its own); must be unique per daemon on the machine.
  std::string cgroup_name = "rota";
};

class Executor {
 public:
  // How much later than its job's recorded start a shepherd's process may have started (clocks
  // read to the second, the launch recorded a moment after the spawn).
  static constexpr Time kStartSlack = 5;

  // Creates run_dir (0700; an existing one must be a directory owned by the euid) and probes
  // cgroup v2 (see docs/design.md, Executor): the base is <mount>/<cgroup_name> when the process
  // is in the root cgroup; otherwise (delegated systemd service) the process moves itself into
  // <mount><own>/daemon and jobs go in <mount><own>/<cgroup_name>. No writable cgroup v2 is not
  // an error.
  static StatusOr<std::unique_ptr<Executor>> Create(const ExecutorOptions& options);
  // Leaves shepherds running. Removes the ended jobs' cgroups not removed yet, and those that
  // Collect killed but could not remove yet (waiting up to 1 s for each to empty).
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // One line for the daemon's log, e.g. "cgroup v2 at /sys/fs/cgroup/rota (memory limits: yes)",
  // "cgroup v2 at /sys/fs/cgroup/unified/rota (memory limits: no: controller not available)",
  // "no writable cgroup v2 (mkdir /sys/fs/cgroup/rota: Permission denied): jobs are tracked by
  // process group".
  const std::string& cgroup_note() const { return note_; }
  // Whether job cgroups get a device program (LaunchSpec::deny_devices): cgroups and BPF here.
  bool device_filter() const { return device_filter_; }

  // Removes the ended jobs' cgroups (RemoveEndedCgroups), then the base cgroup this executor
  // created (<mount>/<name> or <mount><own>/<name>) when no job cgroup is left in it; for a
  // daemon that is stopping. Never the service's own cgroup.
  void RemoveBaseIfUnused();
  // Removes the empty job-<id> cgroups under the base whose job `in_use` does not name: what a
  // daemon that died, or a session's client that was still leaving, left behind. One that
  // still holds processes is left alone. Returns how many were removed. For a daemon that
  // starts, after it has re-adopted its jobs; its base is named after it, so no other daemon's
  // jobs are there.
  int RemoveLeftoverCgroups(const std::function<bool(JobId)>& in_use);
  // The directory that holds job-<id> cgroups, or "" without cgroups.
  const std::string& cgroup_base() const { return base_; }
  bool memory_limits() const { return memory_; }

  // Writes <run_dir>/<job>.spec, creates the job's cgroup (when available) and starts the
  // shepherd in its own session. Returns as soon as the shepherd runs; whether the job's command
  // could be started is reported later by Collect (kStartFailed). Errors: InvalidArgument for a
  // bad spec, FailedPrecondition when the job's cgroup exists and holds processes, Internal.
  StatusOr<Launched> Launch(const LaunchSpec& spec);

  // Starts standby shepherds until `count` wait: each of the next Launches hands one its job over
  // a socket instead of starting a process, which takes the shepherd's start (posix_spawn and
  // exec, about half a millisecond) off the path from one job's end to the next one's start.
  // For the daemon to call when idle. A standby that died is noticed by the Launch that tries
  // it, which tries the next or starts a shepherd as usual. Once starting one has failed, later
  // calls return FailedPrecondition at once and standbys_failed() is true, until the caller
  // decides to try again (RetryStandbys: the daemon does, after a while).
  Status PrepareStandbys(std::size_t count);
  bool standbys_failed() const { return standby_failed_; }
  void RetryStandbys() { standby_failed_ = false; }
  std::size_t standbys() const { return standbys_.size(); }
  pid_t next_standby() const { return standbys_.empty() ? 0 : standbys_.back().pid; }  // 0: none

  // After a daemon restart, for a job the store does not record as started: what became of its
  // last Launch, if any (the daemon died between Launch and recording the start). Found through
  // the launch lock on the spec (spec.h); a launch that no shepherd took is withdrawn under the
  // lock, so that a shepherd still on its way exits without starting the job. kEnded also when
  // the shepherd died without a result but the job's cgroup still holds processes (the job had
  // started). Without cgroups such leftovers cannot be seen: that case counts as kNone.
  StatusOr<FoundLaunch> FindLaunch(JobId job);

  // Re-adopts a shepherd found alive after a daemon restart: checks that `pid` runs this
  // executor's shepherd for `job` (guards against pid reuse: its command line names the job, or
  // for a standby-started one, it holds the lock on the job's spec) and returns a new pidfd.
  // It must also run as this executor does (root, in system mode: no user can make such a process)
  // and, when `started` (the job's recorded start, Unix seconds) is given, have started by then:
  // a command line alone a user's process on a reused pid could copy (docs/security.md).
  // NotFound when it is not (or no longer) that shepherd: then Collect(job, pid).
  StatusOr<Launched> Adopt(JobId job, pid_t pid, Time started = 0);

  // Delivers `signo` to the job's processes, not to the shepherd: the shepherd forwards it to the
  // job's process group; SIGKILL kills the whole job (its cgroup when it has one, else its
  // process group). A shepherd already gone is OK. InvalidArgument for a bad signal number.
  Status Signal(pid_t shepherd, int signo);

  // After the pidfd became readable (or at startup for a shepherd found dead): reaps the shepherd
  // if it is a child, reads <run_dir>/<job>.result, kills what is left in the job's cgroup and
  // leaves the cgroup to RemoveEndedCgroups. No result file => kVanished with a reason. Never
  // blocks. The job's files stay until Forget: the same Collect after a restart reads the same
  // result.
  // After kEndedNote, before the pidfd is readable: the shepherd is still exiting. Its result is
  // read, and the shepherd and its (empty) cgroup are left to Reap.
  ExitInfo Collect(JobId job, pid_t shepherd);
  // Once the pidfd of a shepherd collected early became readable: reaps it and leaves the job's
  // cgroup to RemoveEndedCgroups (killing what is left in it), unless the job was launched again
  // since: its cgroup is the new run's then.
  void Reap(JobId job, pid_t shepherd);
  // Removes the cgroups of the jobs collected or reaped since the last call. The caller calls it
  // a moment after the launches that the ends allowed (the daemon: kCgroupRemovalDelayNs after
  // the first end): a cgroup's removal holds the kernel's cgroup lock that the next job's mkdir
  // and clone need, and held up the hand-overs of jobs that ended together on four cards
  // (docs/benchmarks.md). A cgroup whose processes are still dying is retried at the next call.
  void RemoveEndedCgroups();
  // How many ended jobs' cgroups wait for RemoveEndedCgroups (not counting those whose
  // processes were still dying at the last try: they are tried again at each call and launch).
  std::size_t ended_cgroups() const { return ended_cgroups_.size(); }
  // Removes the job's files in the run directory (its spec and result): once its end is recorded,
  // or before a new launch of the same job (a requeue) is recorded. Missing files are OK.
  void Forget(JobId job);
  // Withdraws the job's launch whose start could not be recorded: removes its spec, so that its
  // shepherd does not start the job, or, having started it, writes no result (it checks its
  // spec's link count before it writes one), and a restart finds no launch (FindLaunch: kNone).
  // The caller then kills the job with Signal(SIGKILL). A spec already gone is OK.
  Status Withdraw(JobId job);

  // For interactive sessions (rota run), where the client runs the command, not a shepherd.
  // Returns the cgroup path, or "" when cgroups are unavailable (not an error).
  StatusOr<std::string> CreateCgroup(JobId job, std::int64_t memory_limit_bytes,
                                     const std::vector<std::pair<unsigned, unsigned>>& deny_devices = {});
  Status MoveToCgroup(const std::string& cgroup, pid_t pid);
  // cgroup.kill, or SIGKILL each pid in cgroup.procs on kernels without it.
  Status KillCgroup(const std::string& cgroup);
  // rmdir once empty; a cgroup already gone is OK; FailedPrecondition while it has processes.
  Status RemoveCgroup(const std::string& cgroup);

 private:
  // A standby shepherd: our child, blocked reading its job from the other end of `socket`.
  struct Standby {
    pid_t pid = 0;
    int pidfd = -1;
    int socket = -1;
  };

  explicit Executor(const ExecutorOptions& options);
  std::string JobCgroup(JobId job) const;
  void RetryStaleCgroups();
  // Kills what is left in the job's cgroup and keeps it for RemoveEndedCgroups.
  void ClearJobCgroup(JobId job);
  // The job's cgroup is in use again (a requeued job's new run has a cgroup of the same name,
  // made anew): no longer to be removed.
  void KeepCgroup(JobId job);
  // Drops `shepherd` as the job's latest; false when a later launch's shepherd is (then that
  // launch owns the job's cgroup).
  bool ForgetShepherd(JobId job, pid_t shepherd);
  // A job cgroup with `limits`, refused `deny_devices` where the device filter is on, kept.
  StatusOr<std::string> NewJobCgroup(JobId job, const JobCgroupLimits& limits,
                                     const std::vector<std::pair<unsigned, unsigned>>& deny_devices);
  // Hands the job to the next standby, which then is the job's shepherd; false when none is left
  // (dead ones met on the way are dropped).
  bool HandToStandby(JobId job, const std::string& token, Launched* launched);
  static void DropStandby(Standby& standby);  // kills and reaps it
  Status StartStandby();  // one more standby at the back of standbys_

  ExecutorOptions options_;
  std::string base_;    // "" without cgroups
  bool memory_ = false;  // memory.max can be set on job cgroups
  bool pids_ = false;    // pids.max
  bool device_filter_ = false;  // a device program can be attached to job cgroups
  bool cpu_ = false;     // cpu.weight
  std::string note_;
  std::set<JobId> ended_cgroups_;           // ended jobs whose (empty) cgroups are not removed yet
  std::vector<std::string> stale_cgroups_;  // killed but not yet removable; retried later
  // Shepherds started by Launch and not yet collected: unreaped children, so their pids cannot
  // have been reused (and their /proc cmdline may still be empty right after the spawn).
  std::set<pid_t> children_;
  // The shepherd of each job's latest launch (or adoption) not collected yet: a Reap of an
  // earlier one must leave the job's cgroup alone.
  std::map<JobId, pid_t> shepherds_;
  std::vector<Standby> standbys_;  // the next one to use is the last
  bool standby_failed_ = false;    // a standby could not be started: not tried again on its own
};

}  // namespace rota::exec
