// The `sbatch` command line that submits one Rota job to Slurm, at the moment Rota's core starts
// it (issue 26; docs/design.md, "The Slurm engine"). Pure: the engine runs what this returns, as
// the job's owner.
//
// What Slurm is asked for, and why:
// - --job-name=<tag>-<id> (TagOf; tag "rota" unless configured): how Rota finds its jobs in
//   Slurm's queue, after a restart too,
//   and how a submission whose reply was lost is found before it would be sent again.
// - --nodelist (the node the core chose; none when the core left it to Slurm), one node, one
//   task, --gres=gpu[:type]:N, --mem (the job's host memory), the partition and account of the
//   configuration. Where each card is its own gres type, the cards the core chose by name
//   (--gres=gpu:card0:1,gpu:card2:1), and a memory share as that card's shards
//   (--gres=shard:card1:3): Slurm then gives exactly those.
// - --time: a backstop, the job's limit plus kBackstopSlack. Rota itself warns the job and stops
//   it at its limit (the same records as the local engine); Slurm's own limit and its
//   --signal=B:<signal>@<grace> only act when rotad is not there to.
// - --no-requeue: a job that must run again (preempted, its node failed) is requeued by Rota, in
//   Rota's queue, and started again when Rota's core says: Slurm requeuing it by itself would
//   run it where and when Rota did not decide.
// - --output with --open-mode=append (the local engine appends too), its '%' doubled: Slurm reads
//   the name as a pattern ("%u" its user, "%x" its name, "%%" a '%'; seen on 22.05.8), and the
//   file must be the one Rota names (rota logs, the output's checks); a name with a backslash,
//   which makes Slurm drop every backslash, cannot be said (SlurmCannotName). --chdir, --export=ALL with
//   the job's environment as captured at submit (less the variables that would steer sbatch or
//   name the local cards; Slurm sets CUDA_VISIBLE_DEVICES from the GPUs it gives).
// - --wrap="exec 'arg0' 'arg1' ...": the job's command, quoted for /bin/sh, with no script file.
//
// Tested by submit_test.cc.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/types.h"
#include "slurm/queue.h"

namespace rota::slurm {

// What the configuration says of every submission.
struct SubmitConfig {
  std::string sbatch = "sbatch";  // the command (an absolute path once the engine has found it)
  std::string tag{kDefaultTag};   // the installation's tag: jobs are named <tag>-<id> (TagOf)
  std::string partition;          // "": Slurm's default partition
  std::string account;            // "": the user's default account
  std::string slurm_conf;         // passed as SLURM_CONF when set (a cluster that is not /etc/slurm's)
};

// One job to submit.
struct BatchJob {
  JobId id = 0;
  std::vector<std::string> argv;  // non-empty
  std::string cwd;
  std::map<std::string, std::string> env;  // the job's environment, as captured at submit
  std::string output;                      // absolute
  std::string node;                        // "": any node of the partition
  int gpus = 0;
  std::string gpu_type;           // the gres type ("a100"), "" untyped
  // The cards' gres types, one each: their own (Node::CardTypes: exactly those cards), or a type
  // several share (one of that type; a MIG slice's type: one slice of it); none: Slurm chooses
  // `gpus` of any type. With `shares` > 0, a memory share of cards[0]: that many of its shards.
  std::vector<std::string> cards;
  int shares = 0;
  std::int64_t memory_bytes = 0;  // host memory; 0: Slurm's default
  Duration time_limit = 0;        // Rota's limit; 0: none given (the partition's)
  std::string reservation;        // the owner's booking's reservation on the node ("": none)
  // The most Slurm's limit may be (0: no bound): a reservation on the node begins then, and Slurm
  // would not start a job whose limit reaches into it.
  Duration limit_cap = 0;
  int signal = 0;                 // the job's warning signal (0: none)
  Duration grace = 0;             // sent this long before the kill
};

// Slurm's limit for Rota's `limit`, in whole minutes: the limit plus kBackstopSlack, rounded up,
// but not past `cap` less kCapMargin (when cap > 0: rounded down there, at least a minute).
long SlurmMinutes(Duration limit, Duration cap);
inline constexpr Duration kCapMargin = 30;

// Added to Rota's time limit for Slurm's: room for Rota's own stop (its grace is inside the
// limit) and for a daemon that is a little late.
inline constexpr Duration kBackstopSlack = 120;

// Why Slurm cannot write a job's output to exactly `path` ("" when it can): a backslash.
std::string SlurmCannotName(const std::string& path);

struct Submission {
  std::vector<std::string> argv;  // argv[0] is config.sbatch
  std::vector<std::string> env;   // "NAME=value", for execve
};
Submission BuildSubmission(const BatchJob& job, const SubmitConfig& config);

// An interactive session (`rota run`, `rota shell`) as a Slurm job: its client runs
// `srun <options> COMMAND`, as the user it already is, from the directory and environment it was
// started in (srun's own defaults). The same tag, node, GPUs, memory, partition, account and
// backstop limit as a batch job; no --signal (Rota's warning reaches the command through its
// client, and srun passes it on) and no output file (the terminal is the session's).
struct SessionJob {
  JobId id = 0;
  std::string node;
  int gpus = 0;
  std::string gpu_type;
  std::vector<std::string> cards;  // as BatchJob's
  int shares = 0;
  std::int64_t memory_bytes = 0;
  Duration time_limit = 0;
  std::string reservation;  // as BatchJob's
  Duration limit_cap = 0;
};
struct SessionCommand {
  std::vector<std::string> argv;      // srun and its options; the command follows
  std::vector<std::string> tty_argv;  // added after argv when the client's stdin is a terminal
};
SessionCommand BuildSessionCommand(const SessionJob& job, const std::string& srun, const SubmitConfig& config);

// `arg` quoted for /bin/sh: 'it'\''s'.
std::string ShellQuote(const std::string& arg);

// Whether a variable of the job's environment is left out of sbatch's: the SLURM_*, SBATCH_*,
// SALLOC_* and SRUN_* variables (a job submitted from inside another Slurm job would otherwise
// carry that job's id and options into sbatch), and the local engine's card variables.
bool DroppedFromSubmission(const std::string& name);

}  // namespace rota::slurm
