// Admission (admission.h): a new job's record from its request, the checks of what can never
// work here and of what one user may take, and the group commit of a batch's submissions.
#include "daemon/admission.h"

#include <fmt/format.h>
#include <unistd.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "api/job_json.h"
#include "api/protocol.h"
#include "api/when.h"
#include "core/capacity.h"
#include "core/civil_date.h"
#include "daemon/containers.h"

namespace rota::daemon {

using nlohmann::json;

Admission::Admission(Setup setup)
    : store_(*setup.store), config_(*setup.config), setup_(std::move(setup)), jobs_(*setup_.jobs) {}

Status Admission::CheckSubmittable(const store::JobRecord& rec) {
  const Job& j = rec.job;
  if (!config_.projects.empty() && !j.project.empty() && !config_.projects.count(j.project)) {
    std::vector<std::string> known;
    for (const auto& [name, p] : config_.projects) known.push_back(name);
    return InvalidArgument("unknown project \"" + j.project + "\" (this server has: " + Join(known, ", ") +
                           ")");
  }
  // A host-memory limit beyond this server's memory can never be honoured (Slurm refuses such a
  // --mem as well): the cgroup would take it, but the job would not get what it asked for.
  if (j.host_mem_per_gpu > 0 && setup_.host_memory > 0) {
    const int gpus = j.request.kind == RequestKind::kWholeGpus ? std::max(1, j.request.gpus) : 1;
    const MiB total = j.host_mem_per_gpu * gpus;
    if (total > setup_.host_memory) {
      return ResourceExhausted("this job can never run here: it asks for " +
                               FormatMemory(j.host_mem_per_gpu) + " of host memory per GPU" +
                               (gpus > 1 ? " (" + FormatMemory(total) + " in all)" : "") +
                               ", but this server has " + FormatMemory(setup_.host_memory));
    }
  }
  if (Status s = CheckDependencies(j); !s.ok()) return s;
  if (setup_.engine_refuses) {
    if (std::string why = setup_.engine_refuses(j.request); !why.empty()) return FailedPrecondition(why);
  }
  if (j.request.kind == RequestKind::kMemShare) {
    if (std::string why = setup_.cards->WhyNoShares(); !why.empty()) return FailedPrecondition(why);
  }
  // Whether any card of this server could ever hold the request: the core's own test. Not while
  // a cluster's cards are unknown: the job waits for them, as it would for a busy cluster.
  if (setup_.cards_unknown && setup_.cards_unknown()) return Status();
  CapacityPlan plan(setup_.cards->state(), config_.policy, Now());
  if (!plan.Possible(j.request))
    return ResourceExhausted("this job can never run here: it asks for " +
                             WhyNeverFits(setup_.cards->gpus(), j.request));
  return Status();
}

StatusOr<store::JobRecord> Admission::Prepare(const Caller& caller, const json& request, bool interactive,
                                              ConnId conn) {
  if (caller.name.empty()) {
    return PermissionDenied("uid " + std::to_string(caller.uid) + " has no user name on this server");
  }
  if (interactive && jobs_.SessionOf(conn) != 0)
    return FailedPrecondition("this connection already holds a session");
  auto job = request.find("job");
  if (job == request.end()) return InvalidArgument("the request has no \"job\"");
  // A deadline as people type it is read here, in the lab's zone (a copy of the job only then).
  const Time now = Now();
  json read_deadline;
  const json* fields = &*job;
  if (auto d = job->find("deadline"); job->is_object() && d != job->end() && d->is_string()) {
    StatusOr<Time> when = api::ParseDeadline(d->get<std::string>(), now, config_.policy.zone);
    if (!when.ok()) return InvalidArgument("--deadline: " + when.status().message());
    read_deadline = *job;
    read_deadline["deadline"] = *when;
    fields = &read_deadline;
  }
  StatusOr<store::JobRecord> rec = api::JobFromRequest(*fields, interactive);
  if (!rec.ok()) return rec.status();
  if (rec->deadline > 0 && rec->deadline <= now) {
    return InvalidArgument("the deadline " + FormatLocal(rec->deadline, config_.policy.zone) +
                           " has passed (a deadline says when the job's results are needed)");
  }
  if (caller.uid == 0 && !setup_.user_mode && !config_.allow_root_jobs) {
    return PermissionDenied(
        "rotad does not run jobs as root; submit as the user the job should run as "
        "(sudo -u USER rota ...), or set allow_root_jobs = true in the configuration");
  }
  if (!rec->image.empty()) {
    if (Status s = CheckImage(config_, rec->image, !setup_.user_mode && geteuid() == 0); !s.ok()) return s;
  }
  rec->job.user = caller.name;
  rec->uid = caller.uid;
  // A job that asked for no warning signal gets the lab's, where the admin set one knowingly.
  if (rec->job.signal == 0 && config_.default_signal) {
    rec->job.signal = config_.default_signal->signal;
    rec->job.grace = config_.default_signal->grace;
  }
  if (rec->command.empty()) rec->command = {"(session)"};
  // A share of a cluster's card is given in the cluster's own shares: the core counts what the
  // job will hold there (10 GiB shares: --gpu-mem 15G holds 20 GiB).
  Request& asked = rec->job.request;
  if (asked.kind == RequestKind::kMemShare) asked.memory = setup_.cards->ShareGiven(asked.memory);
  if (Status s = CheckSubmittable(*rec); !s.ok()) return s;
  if (Status s = CheckLimits(caller); !s.ok()) return s;
  return rec;
}

Status Admission::CheckDependencies(const Job& j) {
  for (auto [flag, deps] : {std::pair{"--after", &j.after}, std::pair{"--after-ok", &j.after_ok}}) {
    for (JobId dep : *deps) {
      if (jobs_.count(dep)) continue;
      StatusOr<JobEndSeen> end = setup_.end_of(dep);
      if (!end.ok() && end.status().code() == StatusCode::kNotFound) {
        return InvalidArgument(std::string(flag) + " " + std::to_string(dep) + ": no such job");
      }
      if (!end.ok()) return end.status();
      if (deps == &j.after_ok && !end->completed && end->final) {
        return FailedPrecondition("--after-ok " + std::to_string(dep) + ": job " + std::to_string(dep) +
                                  " ended " + end->ReasonFor(j.user) +
                                  ", so this job could never start (--after starts it after any end)");
      }
    }
  }
  return Status();
}

Status Admission::CheckLimits(const Caller& caller) {
  if (caller.admin) return Status();
  const config::LimitsConfig& l = config_.limits;
  if (l.pending_per_user > 0) {
    if (!pending_counts_) {
      pending_counts_.emplace();
      for (const auto& [id, a] : jobs_) {
        if (a.rec.state == store::JobState::kPending) ++(*pending_counts_)[a.rec.uid];
      }
      for (const Batched& b : batch_) ++(*pending_counts_)[b.rec.uid];
    }
    const int mine = (*pending_counts_)[caller.uid];
    if (mine >= l.pending_per_user) {
      return ResourceExhausted("you have " + std::to_string(mine) +
                               " pending jobs, the most one user may have ([limits] "
                               "pending_per_user = " +
                               std::to_string(l.pending_per_user) +
                               "); wait for some to start, or cancel some");
    }
  }
  if (l.submit_rate > 0) {
    if (!submit_rate_) submit_rate_ = std::make_unique<web::RateLimiter>(l.submit_rate, l.submit_burst);
    const double now = std::chrono::duration<double>(CallerCache::Clock::now().time_since_epoch()).count();
    if (!submit_rate_->Allow(std::to_string(caller.uid), now)) {
      return ResourceExhausted(
          fmt::format("you are submitting faster than one user may ([limits] submit_rate = {:g} "
                      "jobs a second, in bursts of {:g}); slow down and try again",
                      l.submit_rate, l.submit_burst));
    }
  }
  // Counted now: the submissions of this batch are not in jobs_ before their group commit.
  if (pending_counts_) ++(*pending_counts_)[caller.uid];
  return Status();
}

std::vector<Admission::Answer> Admission::Flush() {
  std::vector<Answer> out;
  if (batch_.empty()) return out;
  std::vector<Batched> batch;
  batch.swap(batch_);
  out.reserve(batch.size());
  std::vector<store::JobRecord> records;
  records.reserve(batch.size());
  for (const Batched& b : batch) records.push_back(b.rec);
  const Time now = Now();
  StatusOr<std::vector<JobId>> ids = store_.SubmitMany(records, now);
  if (!ids.ok()) spdlog::error("submitting {} job(s): {}", batch.size(), ids.status().message());
  for (size_t i = 0; i < batch.size(); ++i) {
    json reply;
    if (ids.ok()) {
      const JobId id = (*ids)[i];
      ActiveJob a;
      a.rec = std::move(batch[i].rec);
      a.rec.job.id = id;
      a.rec.job.submit_time = now;
      jobs_.Add(std::move(a));
      reply = api::OkReply({{"job_id", id}});
    } else {
      reply = api::ErrorReply(ids.status());
    }
    if (!batch[i].tag.is_null()) reply["tag"] = batch[i].tag;
    out.push_back(Answer{batch[i].conn, std::move(reply), ids.ok()});
  }
  return out;
}

void Admission::Batch(ConnId conn, json tag, store::JobRecord rec) {
  batch_.push_back(Batched{conn, std::move(tag), std::move(rec)});
}

void Admission::Reconfigured() {
  submit_rate_.reset();
  pending_counts_.reset();
}

}  // namespace rota::daemon
