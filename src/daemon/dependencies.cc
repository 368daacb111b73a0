// Dependencies between jobs: `--after` (start once these jobs ended, however) and `--after-ok`
// (start once they ended Completed). The core makes both wait while the jobs they name are
// pending, held or running; what a failed `--after-ok` job means is decided by AfterOk
// (after_ok.h) and carried out here: the jobs that wait for it could never start, so they are
// cancelled, and those waiting for them in turn (design.md, "Dependencies"). Tested by
// tests/daemon/test_dependencies.py.
#include <algorithm>

#include <spdlog/spdlog.h>

#include "api/protocol.h"
#include "daemon/daemon.h"

namespace rota::daemon {

void Daemon::CancelNeverSatisfied(Time now) {
  const AfterOk::IsActive active = [this](JobId id) { return jobs_.count(id) > 0; };
  const AfterOk::EndOf end_of = [this](JobId id) { return runner_->EndOf(id); };
  after_ok_.StartPass(active);
  bool cancelled = true;
  while (cancelled) {  // a cancelled job fails the --after-ok of those waiting for it
    cancelled = false;
    std::vector<std::pair<JobId, std::string>> doomed;
    for (const auto& [id, a] : jobs_) {
      if (a.rec.state != store::JobState::kPending || a.rec.job.after_ok.empty()) continue;
      if (std::string why = after_ok_.NeverSatisfied(a.rec.job, active, end_of); !why.empty()) {
        doomed.emplace_back(id, std::move(why));
      }
    }
    for (const auto& [id, why] : doomed) {
      store::JobRecord rec = jobs_.at(id).rec;
      if (Status s = CancelPending(id, "rotad", why, now); !s.ok()) {
        // Held out of the pass instead, so that it never starts; the next pass tries again.
        if (after_ok_.Refused(id)) spdlog::error("job {}: cannot record its cancel ({}): {}", id, why, s.message());
        after_ok_.Hold(id);
        continue;
      }
      after_ok_.Cancelled(id);
      spdlog::info("job {} ({}): {}", id, rec.job.user, why);
      notes_->NotifyJobEnd(rec, store::JobState::kCancelled, why, "rotad", false);
      cancelled = true;
    }
  }
}

Status Daemon::CancelPending(JobId id, const std::string& actor, const std::string& reason, Time now) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return NotFound("job " + std::to_string(id) + " is not pending");
  if (Status s = store_->Cancel(id, actor, now, reason); !s.ok()) return s;
  Active& a = it->second;
  if (a.session) {
    server_->Send(a.session, {{"v", api::kVersion}, {"ok", false}, {"event", "cancelled"},
                              {"error", {{"code", "failed_precondition"}, {"message", reason}}}});
  }
  jobs_.Take(it);  // with its session's connection and its waiting note
  dirty_ = true;
  return Status();
}

}  // namespace rota::daemon
