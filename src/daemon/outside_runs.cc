// Runs of a cluster's jobs outside Rota, the daemon's part (the engine follows them: Engine::
// OutsideRunning, EngineEvents::OutsideRunEnded): their owners named, their GPUs counted, and the
// ones that ended while rotad was away caught up from the cluster's accounting at the start
// (Engine::CatchUpOutside), from the time kept in the store up to which every ended run was
// charged. Tested by usage_ledger_test.cc and, on a real Slurm, tests/daemon/test_slurm.py and
// test_slurm_accounting.py.
#include <spdlog/spdlog.h>

#include "daemon/daemon.h"

namespace rota::daemon {

std::vector<store::OutsideRun> Daemon::OutsideRunning() const {
  std::vector<store::OutsideRun> out;
  std::map<std::string, std::optional<std::string>> names;
  for (const OutsideRun& r : engine_->OutsideRunning()) {
    auto known = outside_names_.find(r.job);
    const std::optional<std::string> name = known != outside_names_.end() ? known->second : UserName(r.uid);
    names[r.job] = name;
    if (name) out.push_back({r.job, *name, OutsideGpus(r), r.start, r.end});
  }
  outside_names_ = std::move(names);  // the runs that ended are forgotten
  return out;
}

double Daemon::OutsideGpus(const OutsideRun& run) const {
  double gpus = run.gpus;
  for (const std::string& node : run.nodes) {
    for (const auto& [type, count] : run.shards) gpus += cards_.ShardGpus(node, type, count);
    for (const auto& [type, count] : run.slices) gpus += cards_.SliceGpus(node, type, count);
  }
  return gpus;
}

void Daemon::TellOutsideQuota(Time now) {
  const std::vector<store::OutsideRun> running = OutsideRunning();
  if (running.empty()) return;
  const store::UsageMaps usage = ledger_->MapsWith(running);
  std::set<std::string> owners;
  for (const store::OutsideRun& r : running) owners.insert(r.user);
  for (const std::string& user : owners) notes_->CheckQuota(user, usage, now);  // once a level a week
}

void Daemon::CatchUpOutside() {
  if (config_.engine.kind != config::EngineKind::kSlurm) return;  // the kept time never moves then
  StatusOr<std::optional<Time>> since = store_->OutsideSeenUntil();
  if (!since.ok()) {
    spdlog::warn("jobs outside Rota that ended while rotad was away are not looked for: {}", since.status().message());
    return;
  }
  if (!*since) {  // never said (a first start): from now on
    OutsideCaughtUp(Now());
    return;
  }
  // Rota's own jobs of the window are not outside Rota: those in the table and those that ended
  // since (the store's), by their Slurm ids.
  std::set<std::string> ours;
  auto add = [&ours](const store::JobRecord& rec) {
    static constexpr std::string_view kPrefix = "Slurm job ";
    if (rec.engine_job.starts_with(kPrefix)) ours.insert(rec.engine_job.substr(kPrefix.size()));
  };
  for (const auto& [id, a] : jobs_) add(a.rec);
  StatusOr<std::vector<store::JobRecord>> ended = store_->History(**since - kOutsideWatermarkLag);
  if (!ended.ok()) {
    spdlog::warn("jobs outside Rota that ended while rotad was away are not looked for: {}", ended.status().message());
    return;
  }
  for (const store::JobRecord& rec : *ended) add(rec);
  engine_->CatchUpOutside(**since, std::move(ours));
}

void Daemon::OutsideCaughtUp(Time until) {
  outside_seen_moves_ = true;
  KeepOutsideSeenUntil(until);
}

void Daemon::KeepOutsideSeenUntil(Time until) {
  // Until the engine has caught up the older time stays (a crash then asks again from it); with
  // the local engine, which never does, nothing is kept.
  if (!outside_seen_moves_) return;
  if (Status s = store_->SetOutsideSeenUntil(until); !s.ok()) {
    spdlog::warn("keeping when the jobs outside Rota were last charged: {}", s.message());
    return;
  }
  outside_seen_kept_ = Now();
}

}  // namespace rota::daemon
