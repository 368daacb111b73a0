#include "daemon/usage_ledger.h"

#include <spdlog/spdlog.h>

#include "core/capacity.h"
#include "core/quota.h"
#include "core/usage.h"

namespace rota::daemon {

namespace {

// A run charges nothing when it never started, held no card, or "ended" before its start.
bool Charges(const store::JobRecord& rec, Time end) {
  return rec.start_time > 0 && !rec.placement.alloc.gpus.empty() && end >= rec.start_time;
}

}  // namespace

UsageLedger::UsageLedger(Setup setup) : setup_(std::move(setup)) {}

Status UsageLedger::Load() {
  StatusOr<store::UsageMaps> usage = setup_.store->LoadUsage();
  if (!usage.ok()) return usage.status();
  usage_ = std::move(*usage);
  return Status();
}

void UsageLedger::Charge(const store::JobRecord& rec, Time end) {
  if (!Charges(rec, end)) return;
  const double gpus = AllocationGpus(*setup_.cards, rec.placement.alloc);
  const Policy& policy = setup_.config->policy;
  ChargeOwners(usage_.users, usage_.projects, rec.job, gpus, rec.start_time, end, rec.from_pool, policy);
}

Status UsageLedger::SaveWith(const store::JobRecord& rec, Time at, const std::function<Status()>& end) {
  // One commit (a failed part undoes only itself): a crash cannot store the run's usage without
  // its end, which the restart would then charge a second time.
  Status ended;
  Status committed = setup_.store->InOneTransaction([&] {
    Save(rec, at);
    ended = end();
    return Status::Ok();
  });
  // After the commit: a notice goes through the outbox.
  if (setup_.notes != nullptr) setup_.notes->CheckQuota(rec.job.user, usage_, at);
  return ended.ok() ? committed : ended;
}

Status UsageLedger::ChargeOutside(const store::OutsideRun& run) {
  if (run.user.empty() || run.gpus <= 0 || run.end < run.start) return Status();
  Usage before;
  if (auto it = usage_.users.find(run.user); it != usage_.users.end()) before = it->second;
  bool added = false;
  Status committed = setup_.store->InOneTransaction([&]() -> Status {
    StatusOr<bool> recorded = setup_.store->AddOutsideRun(run);
    if (!recorded.ok()) return recorded.status();
    added = *recorded;
    if (!added) return Status();
    Job owner;
    owner.user = run.user;
    ChargeOwners(usage_.users, usage_.projects, owner, run.gpus, run.start, run.end, false,
                 setup_.config->policy);
    return setup_.store->SaveUsage(store::AccountKind::kUser, run.user, usage_.users[run.user]);
  });
  if (!committed.ok()) {
    usage_.users[run.user] = before;  // as the store has it
    return committed;
  }
  if (added && setup_.notes != nullptr) setup_.notes->CheckQuota(run.user, usage_, run.end);
  return Status();
}

store::UsageMaps UsageLedger::MapsWith(const std::vector<store::OutsideRun>& running) const {
  store::UsageMaps maps = usage_;
  for (const store::OutsideRun& run : running) {
    if (run.user.empty() || run.gpus <= 0 || run.end <= run.start) continue;
    Job owner;
    owner.user = run.user;
    ChargeOwners(maps.users, maps.projects, owner, run.gpus, run.start, run.end, false, setup_.config->policy);
  }
  return maps;
}

void UsageLedger::Save(const store::JobRecord& rec, Time end) {
  if (!Charges(rec, end)) return;
  if (Status s = setup_.store->SaveUsage(store::AccountKind::kUser, rec.job.user, usage_.users[rec.job.user]);
      !s.ok()) {
    spdlog::error("saving usage of {}: {}", rec.job.user, s.message());
  }
  if (!rec.job.project.empty()) {
    (void)setup_.store->SaveUsage(store::AccountKind::kProject, rec.job.project,
                                  usage_.projects[rec.job.project]);
  }
}

}  // namespace rota::daemon
