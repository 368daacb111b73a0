// The card watch: what rotad knows of its cards between samples. It owns the last sample (and
// why the last one failed), each card's health (core/health.h: healthy, suspect, drained) and
// admin drain, kept in the store across restarts, and who each GPU process belongs to: its
// user, and the Rota job it is part of (through the job's cgroup, else up the parent chain to the
// job's shepherd or session client), or none: outside Rota.
//
// It decides and records; the daemon carries out what follows (stops the jobs of a drained card,
// tells the admins, marks cards unschedulable) and owns the sampler thread. Processes are read
// through a ProcessReader (/proc by default) so that tests can give their own. Everything runs on
// the daemon's loop thread. Tested by card_watch_test.cc, cards_test.cc (in-process) and
// tests/daemon/test_gpus.py (through the real NVML code).
#pragma once

#include <sys/types.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/cluster.h"
#include "core/health.h"
#include "core/status.h"
#include "core/types.h"
#include "device/devices.h"
#include "exec/procfs.h"
#include "store/job_store.h"

namespace rota::daemon {

class CardWatch {
 public:
  struct ProcessOwner {
    std::int64_t uid = -1;  // -1: the process could not be read (gone, another pid namespace)
    std::string user;
    JobId job = 0;  // 0: outside Rota
  };
  struct CardState {
    GpuHealth health;
    std::optional<store::GpuDrain> admin_drain;
    // Drained for the scheduler by health or by an admin (a suspect card counts: no new work).
    bool Out() const { return admin_drain.has_value() || health.state != HealthState::kHealthy; }
  };
  // The running jobs, as the attribution needs them.
  struct RunningJobs {
    std::map<std::int64_t, JobId> pids;    // the pid that stands for a job: a shepherd, a session's client
    std::map<JobId, std::string> cgroups;  // every running job, with its cgroup ("" without one)
  };
  // How processes are read. The defaults read /proc and the user database.
  struct ProcessReader {
    std::function<StatusOr<exec::ProcessIdentity>(pid_t)> identity;
    std::function<StatusOr<unsigned long long>(pid_t)> start_time;  // in clock ticks after boot
    std::function<std::optional<std::string>(uid_t)> user_name;
  };
  static ProcessReader SystemProcesses();
  // Whether job `id` is placed on card `uuid` (a process of a job on a card it was not given is
  // not covered by its job).
  using PlacedOn = std::function<bool(JobId id, const std::string& uuid)>;

  // `store` must outlive the watch.
  explicit CardWatch(store::JobStore& store, ProcessReader reader = SystemProcesses());

  // The drains recorded before a restart: an admin's stays until `rota resume`; a card drained by
  // health stays drained until it proves healthy and empty.
  Status LoadDrains();
  // Forgets the user names and the processes it knows (a reload: accounts may have changed).
  void Forget();

  // ---- Samples ----
  // Takes a sample: kept when it succeeded (its processes attributed to `running`), its error
  // kept when it failed as a whole.
  void TakeSample(const StatusOr<device::Snapshot>& sample, const RunningJobs& running, Time now);
  // What one sample's observation of the cards changed.
  struct Observation {
    bool changed = false;         // some card's health moved: a pass is due
    std::vector<size_t> drained;  // cards (positions in `cards`) drained by health now
    // Cards drained by health at this sample, with what the admins are told.
    std::vector<std::pair<size_t, std::string>> newly_drained;
  };
  // Moves each card's health by the last sample (`stuck`: the index of the card the source hung
  // on, -1 none: when it hung the other cards were not read and are not judged) and records the
  // transitions in the store.
  Observation ObserveCards(const std::vector<Gpu>& cards, int stuck, const HealthRules& rules, Time now);

  // ---- What it knows ----
  const device::Snapshot& last_sample() const { return last_sample_; }
  Time sampled_at() const { return sampled_at_; }
  const std::string& sample_error() const { return sample_error_; }  // "" when the last sample succeeded
  const device::GpuInfo* Sampled(const std::string& uuid) const;     // in the last good sample
  ProcessOwner Owner(int pid) const;                                 // uid -1 when not seen
  const CardState& State(const std::string& uuid) const;
  // The processes on a card (and its MIG slices) that no job placed on it accounts for, with
  // their owners: outside Rota, or a job's process on a card its job was not given.
  std::vector<std::pair<device::ProcessInfo, ProcessOwner>> Uncovered(const device::GpuInfo& info,
                                                                      const PlacedOn& placed_on) const;
  // Those of card `uuid`, for a message: "pid 42 (bob)", each once.
  std::vector<std::string> Leftovers(const std::string& uuid, const PlacedOn& placed_on) const;
  // "pid 42 (bob, job 7)": a GPU process in messages (no user: just the pid; job 0: no job).
  static std::string ProcessLabel(int pid, const std::string& user, JobId job);

  // ---- Admins ----
  // `rota drain`: recorded, and the card out of scheduling until `rota resume`.
  Status Drain(const Gpu& card, const std::string& actor, const std::string& reason, Time now);
  // `rota resume`: refused while the card reads badly or `leftovers` hold it; ends the admin's
  // drain and a health drain (the current reading decides, not the stored error).
  Status Resume(const Gpu& card, const std::vector<std::string>& leftovers, const std::string& actor,
                Time now);

 private:
  ProcessOwner Attribute(int pid, const RunningJobs& running);

  store::JobStore& store_;
  ProcessReader reader_;
  device::Snapshot last_sample_;                  // the last sample that succeeded
  Time sampled_at_ = 0;                           // when it was taken
  std::string sample_error_;                      // why the last sample failed as a whole ("" = it did not)
  std::map<std::string, CardState> cards_;        // by card UUID
  std::unordered_map<int, ProcessOwner> owners_;  // the last sample's GPU processes by pid
  // Attribution between samples: a process (pid and start time) keeps its owner while its job
  // runs, and user names are looked up once per uid.
  struct KnownProcess {
    unsigned long long start_time = 0;
    ProcessOwner owner;
  };
  std::unordered_map<int, KnownProcess> known_;
  std::unordered_map<std::int64_t, std::string> user_names_;
};

}  // namespace rota::daemon
