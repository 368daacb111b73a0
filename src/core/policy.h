// Policy: everything an admin tunes about how decisions are made. A plain value, read from the
// configuration by the daemon and from flags by the simulator.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/types.h"
#include "core/zone.h"

namespace rota {

enum class Algorithm : std::uint8_t {
  kFifo,      // strict first come first served, head-of-line blocking
  kBackfill,  // FIFO order with EASY backfill: the Slurm-like baseline
  kRota,      // multifactor priority, conservative backfill, quotas, preemption
};
inline constexpr Algorithm kAlgorithms[] = {Algorithm::kFifo, Algorithm::kBackfill, Algorithm::kRota};
const char* AlgorithmName(Algorithm a);                      // "fifo", "backfill", "rota"
std::optional<Algorithm> ParseAlgorithm(std::string_view name);

// Whose usage counts for fair share and quota.
enum class AccountMode : std::uint8_t {
  kUser,     // each user
  kProject,  // each project
  kHybrid,   // users have a guaranteed base quota; projects an elastic pool on top
};
inline constexpr AccountMode kAccountModes[] = {AccountMode::kUser, AccountMode::kProject, AccountMode::kHybrid};
const char* AccountModeName(AccountMode m);                  // "user", "project", "hybrid"
std::optional<AccountMode> ParseAccountMode(std::string_view name);

// Weights of the priority factors; each factor is in [0, 1] (see priority.h).
struct Weights {
  double tier = 10000;
  double fairshare = 1000;
  double age = 500;
  double size = 1000;  // smaller requests (GPU-hours) rank higher
  double penalty = 1000;
};

// A window of the week in the server's local time with a priority multiplier for heavy jobs.
struct TimeOfDayRule {
  std::uint8_t weekdays = 0x7f;  // bit 0 = Monday ... bit 6 = Sunday (the day the window starts)
  int start_minute = 0;          // minutes after local midnight
  int end_minute = 0;            // exclusive; may be <= start to wrap past midnight
  double factor = 1.0;
};

struct QuotaPolicy {
  std::unordered_map<std::string, double> role_hours;      // weekly GPU-hours per role
  std::unordered_map<std::string, std::string> user_role;  // user -> role
  std::unordered_map<std::string, double> user_hours;      // per-user overrides
  // kProject: each project's quota. kHybrid: each project's elastic pool on top of user quotas.
  std::unordered_map<std::string, double> project_hours;
  double default_hours = -1;      // users without role or override; negative = unlimited
  int week_start_day = 0;         // 0 = Monday ... 6 = Sunday, local midnight
  bool overflow_as_explore = true;  // over-quota jobs may run preemptible in the explore tier
};

struct Policy {
  Algorithm algorithm = Algorithm::kRota;
  AccountMode mode = AccountMode::kUser;
  Weights weights;
  // Age reaches 1 after two weeks in the queue: tuned on the Philly per-VC replays (see
  // docs/benchmarks.md), where it halves backfill's average wait without a worse p99 on most VCs.
  Duration age_max = 14 * kDay;           // age factor reaches 1 after this long in the queue
  double age_cap = 1.0;                   // ... and keeps growing up to this (Slurm stops at 1)
  Duration fairshare_half_life = kWeek;   // usage halves in this time
  double size_max_gpu_hours = 256;        // requests this large or larger get size factor 0
  // The size factor on the job's predicted run (Job::predicted_run, from the lab's history) instead
  // of its time limit: shortest predicted first within a tier, other things equal. Users overstate
  // limits unevenly, so the limit ranks a careful user's 2-hour job behind a careless one's that
  // asks 48 hours and runs 1. Reservations and backfill stay on limits: a wrong prediction moves a
  // job in the order, never past a start it was promised (docs/design.md, "Start forecasts").
  bool size_by_prediction = false;
  // Heavy jobs (>= heavy_gpus GPUs or a limit >= heavy_time) get the time-of-day multiplier on
  // the non-tier part of their priority. Default table: weekdays 14:00-18:00 x0.5, nights x1.5.
  std::vector<TimeOfDayRule> time_of_day = DefaultTimeOfDay();
  int heavy_gpus = 2;
  Duration heavy_time = 4 * kHour;
  // The server's zone (daylight saving included): local days, weeks, peak hours, the booking grid.
  Zone zone;
  QuotaPolicy quota;
  bool preemption = true;
  std::uint8_t preemptible_tiers = 1u << static_cast<int>(Tier::kExplore);
  // The bound on overtaking (rota; docs/design.md, "How a decision is made", step 2): a job that
  // could start but for capacity (not explore, dependencies met, within quota) and has waited at
  // least `protect_after` is protected: it ranks above every
  // unprotected job of its tier, protected jobs among themselves by submit time, so its
  // reservation is made before theirs and nothing that comes later can delay it (as EASY does
  // for the head of its queue). At most `protect_max` jobs are protected at once, the longest
  // waiting. Negative protect_after: no protection.
  // A week: on the replays in docs/benchmarks.md it caps the longest waits near backfill's while
  // keeping most of the average's gain where waits are shorter; shorter bounds turn an overloaded
  // cluster into first come first served.
  Duration protect_after = 7 * kDay;
  int protect_max = 1;
  // A job is also protected once it is this long past its promise (Job::promise: the start
  // first come first served would have given it at arrival). Negative: promises are not kept.
  Duration promise_slack = -1;
  // Protection foreseen: a job is also protected (while fewer than protect_max are) as soon as
  // the pass's plan reserves it later than it will be due, since it would be protected before it
  // starts anyway; its reservation then holds from now on, and the others' are planned around it.
  bool protect_foreseen = true;
  // Blocked jobs that get an exact reservation (conservative backfill), in priority order. Every
  // pending job is still considered for starting now; later ones get an estimated start.
  // 64: on every replay in docs/benchmarks.md deeper plans (up to 1,000) change the waits by a
  // few percent either way and cost up to four times the replay time; a lab's queue rarely
  // holds more blocked jobs, and those past the depth get an estimated start.
  int plan_depth = 64;
  // Compute expected starts that no decision depends on (fifo's beyond the first blocked job,
  // backfill's estimates). The simulator turns this off: it needs decisions only.
  bool estimate_starts = true;
  // Describe every pending job in Decisions::pending (reason, expected start, factors). Off, only
  // the jobs that can never run are listed, and fifo looks no further than it must behind its
  // first blocked job: the simulator's setting when it needs no reasons (no bookings, no quotas).
  // Starts, signals, kills and wake-ups are the same either way.
  bool explain = true;
  bool enforce_time_limits = true;  // the simulator may turn this off (estimates are not limits)
  // Whether a job larger than any node may be placed over several nodes. The simulator's traces
  // have such jobs (64 GPUs on servers of 8); a daemon's job runs on one node (the local engine
  // has one, the Slurm engine submits `--nodes=1`), so rotad's configuration turns this off
  // (config::Config): such a job can never run there (CapacityPlan::Possible), and is refused
  // at submit rather than placed over nodes and then refused by Slurm.
  bool span_nodes = true;
  // A running job past its expected end (limits not enforced) is assumed to end this much later.
  Duration overdue_grace = 5 * kMinute;

  static std::vector<TimeOfDayRule> DefaultTimeOfDay();
  bool IsPreemptible(Tier t) const { return (preemptible_tiers >> static_cast<int>(t)) & 1u; }
};

}  // namespace rota
