// Cancels (job_runner.h): a user's `rota cancel` (a pending job cancelled at once, a running one
// stopped through the kill sequence and recorded as cancelled when it is gone), and the jobs
// whose --after-ok can never be satisfied. The core makes --after and --after-ok wait while the
// jobs they name are pending, held or running; what a failed --after-ok job means is decided by
// AfterOk (after_ok.h) and carried out here: the jobs that wait for it could never start, so
// they are cancelled, and those waiting for them in turn (design.md, "Dependencies"). Tested by
// job_runner_test.cc, after_ok_test.cc and tests/daemon/test_dependencies.py, test_jobs.py.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "api/protocol.h"
#include "daemon/job_runner.h"

namespace rota::daemon {

using nlohmann::json;

json JobRunner::Cancel(const Caller& caller, const json& request) {
  auto ids = request.find("job_ids");
  if (ids == request.end() || !ids->is_array() || ids->empty()) {
    return api::ErrorReply(InvalidArgument("\"job_ids\" must be a non-empty list of job ids"));
  }
  // Bounded, so one request's work on the loop stays small (rota cancel sends long lists in parts).
  if (ids->size() > static_cast<size_t>(config_.limits.ids_per_request)) {
    return api::ErrorReply(
        InvalidArgument("at most " + std::to_string(config_.limits.ids_per_request) +
                        " job ids in one cancel ([limits] ids_per_request); send the rest in another"));
  }
  const Time now = setup_.clock->Now();
  json results = json::array();
  for (const json& v : *ids) {
    if (!v.is_number_integer()) {
      results.push_back({{"job_id", v},
                         {"ok", false},
                         {"error", {{"code", "invalid_argument"}, {"message", "not a job id"}}}});
      continue;
    }
    const JobId id = v.get<JobId>();
    auto fail = [&](const Status& s) {
      setup_.refused(caller, "cancel", s);
      results.push_back({{"job_id", id},
                         {"ok", false},
                         {"error", {{"code", api::ErrorCode(s.code())}, {"message", s.message()}}}});
    };
    StatusOr<store::JobRecord> rec = setup_.visible(caller, id);
    if (!rec.ok()) {
      fail(rec.status());
      continue;
    }
    auto it = jobs_.find(id);
    if (it == jobs_.end()) {
      fail(FailedPrecondition("job " + std::to_string(id) + " has already ended (" +
                              store::JobStateName(rec->state) + ")"));
      continue;
    }
    ActiveJob& a = it->second;
    if (a.released_at != 0) {
      // Its processes are gone (EngineEvents::JobReleased): how it ended is being collected, not cancelled.
      fail(
          FailedPrecondition("job " + std::to_string(id) + " has already ended (its end is being recorded)"));
      continue;
    }
    if (a.rec.state == store::JobState::kPending) {
      if (Status s = CancelPending(id, caller.name, "Cancelled by " + caller.name, now); !s.ok()) {
        fail(s);
        continue;
      }
      results.push_back({{"job_id", id}, {"ok", true}, {"state", "cancelled"}});
    } else {
      if (a.cancelled_by.empty()) {
        // On disk first: a daemon restarted before the job is gone finishes the stop.
        if (Status s = store_.MarkCancelRequested(id, caller.name, now); !s.ok()) {
          fail(s);
          continue;
        }
        a.cancelled_by = caller.name;
      }
      BeginStop(a, now);
      results.push_back({{"job_id", id}, {"ok", true}, {"state", "cancelling"}});
    }
    setup_.changed();
  }
  return api::OkReply({{"results", std::move(results)}});
}

void JobRunner::CancelNeverSatisfied(Time now) {
  const AfterOk::IsActive active = [this](JobId id) { return jobs_.count(id) > 0; };
  const AfterOk::EndOf end_of = [this](JobId id) { return EndOf(id); };
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
    for (const auto& [id, reason] : doomed) {
      const std::string& why = reason;  // a lambda below captures it (clang 14: not a binding)
      store::JobRecord rec = jobs_.at(id).rec;
      auto tell = [&] { setup_.notes->NotifyJobEnd(rec, store::JobState::kCancelled, why, "rotad", false); };
      if (Status s = CancelPending(id, "rotad", why, now, tell); !s.ok()) {
        // Held out of the pass instead, so that it never starts; the next pass tries again.
        if (after_ok_.Refused(id))
          spdlog::error("job {}: cannot record its cancel ({}): {}", id, why, s.message());
        after_ok_.Hold(id);
        continue;
      }
      after_ok_.Cancelled(id);
      spdlog::info("job {} ({}): {}", id, rec.job.user, why);
      setup_.notes->Wake();  // its notice is committed now: the notifier may read it
      cancelled = true;
    }
  }
}

Status JobRunner::CancelPending(JobId id, const std::string& actor, const std::string& reason, Time now,
                                const std::function<void()>& with) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return NotFound("job " + std::to_string(id) + " is not pending");
  auto cancel = [&] { return store_.Cancel(id, actor, now, reason); };
  if (Status s = store_.ChangeWith(cancel, with, /*durable=*/true); !s.ok()) return s;
  ActiveJob& a = it->second;
  if (a.rec.interactive) setup_.sessions->TellCancelled(a, reason);
  jobs_.Take(it);  // with its session's connection and its waiting note
  setup_.changed();
  return Status();
}

}  // namespace rota::daemon
