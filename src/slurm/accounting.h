// Slurm's accounting as the Slurm engine reads it (`sacct`, where the cluster runs slurmdbd): how
// a job ended after slurmctld has forgotten it. slurmctld lists an ended job for MinJobAge (300 s
// by default); a job that ended while rotad was away longer than that, or while rotad did not
// read the queue (stopped, its machine suspended), is then known only to slurmdbd. Without
// slurmdbd such an end is unknown (the job ends as a vanished run); with it, the job ends as it
// did in Slurm.
//
// What 22.05 prints (`sacct -P -n -X -a --delimiter=<d> -o <AccountingFields()>`): the State
// field is the long state name, "CANCELLED by 1000" when cancelled (the canceller's uid);
// ExitCode is "<exit>:<signal>" ("3:0", "0:9"), not a wait status; times as squeue's; NodeList
// "None assigned" for a job that never started. Without slurmdbd sacct exits 1 with "Slurm
// accounting storage is disabled". `-X` gives each job's allocation only (no steps), and without
// `--duplicates` only the latest run of a job id that Slurm requeued.
//
// Tested by accounting_test.cc (lines captured from 22.05.8) and, through rotad on a cluster with
// slurmdbd and MariaDB, by tests/daemon/test_slurm_accounting.py.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "core/types.h"
#include "slurm/queue.h"

namespace rota::slurm {

// The delimiter asked for (a control character no job name has; a line with one more is refused).
inline constexpr char kAccountingDelimiter = '\x1f';

// sacct's arguments (after the program) for the runs of Rota jobs `ids` (named TagOf(tag, id))
// that were running at or after `since` (Unix seconds; printed in the local zone, as sacct reads
// it): every user's, one line per job. At most kAccountingBatch ids (one argument holds them all,
// and the kernel limits one argument to 128 KiB).
inline constexpr size_t kAccountingBatch = 500;
std::vector<std::string> AccountingArgs(std::string_view tag, std::span<const JobId> ids, Time since);

// sacct's output as queue entries, so that the engine finds a job's entry and reads its end
// (ExitOf) as it does squeue's: "CANCELLED by 0" is CANCELLED (`reason` names who: "by uid 0"),
// "3:0" the wait status of exit 3, "0:9" that of signal 9. A line that cannot be read fails it all.
StatusOr<std::vector<QueuedJob>> ParseAccounting(std::string_view text);

// Whether sacct's words say the cluster keeps no accounting (no slurmdbd): asking again will not help.
bool AccountingDisabled(std::string_view sacct_output);

// What the cluster's accounting settings (`scontrol show config`) keep from Rota, as a sentence
// for `rota status` ("" when nothing): no slurmdbd (AccountingStorageType accounting_storage/none:
// ends Slurm forgot are not known, runs outside Rota that ended while rotad was away are not
// charged), or GPUs not among the accounted TRES (AccountingStorageTRES without gres/gpu: those
// runs are not charged). "" too where the settings are not there (not read: nothing is said).
std::string AccountingGap(std::string_view show_config);

// ---- Everyone's jobs that ran in a window: runs outside Rota that ended while rotad was away ----
// sacct's arguments for the jobs of every user that ran between `since` and `until`, one line a
// job, without names: sbatch takes any bytes in a name, so one user's job could make the output
// unreadable; Rota's own are told apart by their Slurm ids. Each run the window lists of a job Slurm
// requeued is a line of its own (`--duplicates`), state REQUEUED but the latest's (RunsArgs).
std::vector<std::string> WindowArgs(Time since, Time until);
// One such job: its use of GPUs from AllocTRES ("billing=2,cpu=2,gres/gpu=2,gres/gpu:card0=1,
// gres/gpu:card1=1,mem=1000M,node=1"), over all its nodes.
struct AccountedUse {
  std::string id;
  uid_t uid = 0;
  std::string state;  // "COMPLETED", "CANCELLED" (" by N" dropped), "RUNNING", ...
  std::string nodes;  // as printed ("n1", "n[1-2]"); "" when it never ran
  Time start = 0, end = 0;  // 0 when not known
  int gpus = 0;             // whole GPUs: the typed counts but MIG slices, else the untyped total
  std::vector<std::pair<std::string, int>> shards;  // (card type, count); ("", n) when untyped only
  std::vector<std::pair<std::string, int>> slices;  // MIG slices: (gres type, count)
};
StatusOr<std::vector<AccountedUse>> ParseWindow(std::string_view text);
// sacct's arguments for every run of the Slurm jobs `ids` (at most kAccountingBatch), read as a
// window's (ParseWindow). Why: 22.05.8 records a requeued job's later runs with uid 0 and no
// eligible time, and a window (-S/-E) lists none of them, only the first run (REQUEUED); asked by
// id they are listed (their owner is the first run's).
std::vector<std::string> RunsArgs(std::span<const std::string> ids);

}  // namespace rota::slurm
