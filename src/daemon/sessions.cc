// Interactive allocations (`rota run`, `rota shell`): the client runs the command itself, as the
// user it already is; the daemon holds the GPUs for it and talks to it over its connection.
#include <signal.h>
#include <spdlog/spdlog.h>

#include "api/job_json.h"
#include "api/protocol.h"
#include "daemon/clock.h"
#include "daemon/daemon.h"
#include "exec/process.h"

namespace rota::daemon {

using nlohmann::json;

void Daemon::StartSession(Active& a, const rota::Start& start, Time now) {
  const JobId id = a.rec.job.id;
  // The client that asked may have exited while it waited, leaving its connection to a child and
  // its pid free for another process, another user's or root's: that pid is never moved or killed.
  if (!a.session_process || exec::PidfdExited(a.session_process->get())) {
    CancelOrphanedSession(a, now);
    return;
  }
  store::StartInfo info;
  info.placement = a.rec.placement;
  info.preemptible = start.preemptible;
  info.from_pool = start.from_pool;
  info.pid = a.session_pid;
  const std::string gpus = cards_.IndexList(start.alloc);
  info.reason = "Session started on GPU " + gpus;
  // Account the session's processes to the job where cgroups allow: the client's children
  // (the command) inherit its cgroup.
  StatusOr<std::string> cgroup =
      engine_->CreateSessionCgroup(id, HostMemoryLimit(a.rec, start.alloc, config_.default_mem_per_gpu),
                                   cards_.OtherCardsDevices(start.alloc));
  if (cgroup.ok() && !cgroup->empty()) {
    Status s = engine_->MoveToCgroup(*cgroup, a.session_pid);
    // Alive after the move: the pid still named the client when it was written. (Gone, its pid
    // could in principle have been taken between the check and the write: the cgroup is then
    // never killed, only removed once empty.)
    if (s.ok() && exec::PidfdExited(a.session_process->get())) {
      spdlog::warn("job {}: the session's client {} exited as it was moved into its cgroup; the cgroup is "
                   "removed once empty, never killed",
                   id, a.session_pid);
      stale_cgroups_.push_back(*cgroup);
    } else if (s.ok()) {
      info.cgroup = *cgroup;
    } else {
      spdlog::warn("job {}: session process {} stays outside its cgroup: {}", id, a.session_pid, s.message());
      (void)engine_->RemoveCgroup(*cgroup);
    }
  }
  if (Status s = store_->MarkStarted(id, info, now); !s.ok()) {
    a.retry_at = jobs_.StartNotRecorded(now);
    spdlog::error("job {}: cannot record the session's start ({}); tried again in {} s", id, s.message(),
                  a.retry_at - now);
    a.rec.placement = {};
    if (!info.cgroup.empty()) (void)engine_->RemoveCgroup(info.cgroup);
    return;
  }
  jobs_.StartRecorded();
  a.rec.Started(info, now);
  counters_.JobStarted(a.rec.job.submit_time, now);
  json env = json::object();
  for (auto& [k, v] : cards_.Env(a.rec)) env[k] = v;
  json indices = json::array();
  for (int g : start.alloc.gpus) indices.push_back(cards_.gpus()[static_cast<size_t>(g)].index);
  server_->Send(a.session, {{"v", api::kVersion},
                            {"ok", true},
                            {"event", "allocated"},
                            {"job_id", id},
                            {"env", env},
                            {"gpus", indices},
                            {"request", api::RequestToJson(a.rec.job.request)},
                            {"mig_index", a.rec.placement.alloc.mig},
                            {"gpu_mem", a.rec.placement.alloc.memory},
                            {"time_limit", a.rec.job.time_limit},
                            {"preemptible", start.preemptible}});
  spdlog::info("job {} ({}): session started on GPU {}", id, a.rec.job.user, gpus);
}

void Daemon::CancelOrphanedSession(Active& a, Time now) {
  const JobId id = a.rec.job.id;
  const ConnId conn = a.session;
  const std::string why = "Session cancelled: its client process exited before the allocation";
  spdlog::warn("job {} ({}): {} (a process that keeps its connection open is not the session)", id, a.rec.job.user,
               why);
  if (Status st = store_->Cancel(id, a.rec.job.user, now, why); !st.ok()) {
    spdlog::error("job {}: {}", id, st.message());
    a.retry_at = JobTable::RetryAt(jobs_.start_record_failures(), now);
    return;
  }
  if (conn != 0) {
    server_->Send(conn, api::ErrorReply("failed_precondition", why));
    server_->CloseAfterWrite(conn);
  }
  jobs_.Take(jobs_.find(id));  // with its connection
  dirty_ = true;
}

void Daemon::SendWaitingUpdates() {
  for (const auto& [conn, id] : jobs_.sessions()) {
    auto it = jobs_.find(id);
    if (it == jobs_.end() || it->second.rec.state != store::JobState::kPending) continue;
    const PendingInfo* info = jobs_.Waiting(id);
    if (info == nullptr) continue;
    const Time expected = info->expected_start == kNever ? 0 : info->expected_start;
    json update = {{"v", api::kVersion},
                   {"ok", true},
                   {"event", "waiting"},
                   {"job_id", id},
                   {"position", jobs_.PositionOf(id)},
                   {"reason", api::WaitReasonWire(info->reason)},
                   {"expected_start", expected}};
    std::string key = update.dump();
    if (key == it->second.last_waiting) continue;
    it->second.last_waiting = key;
    server_->Send(conn, update);
  }
}

json Daemon::SessionEnd(ConnId conn, const Caller& caller, const json& request) {
  (void)caller;
  const JobId id = jobs_.SessionOf(conn);
  if (id == 0) return api::ErrorReply("failed_precondition", "this connection holds no session");
  auto it = jobs_.find(id);
  if (it == jobs_.end()) {
    jobs_.Unbind(conn);
    return api::OkReply();
  }
  Active& a = it->second;
  const Time now = Now();
  if (a.rec.state == store::JobState::kPending) {
    if (Status st = store_->Cancel(a.rec.job.id, a.rec.job.user, now, "Session ended before its allocation"); !st.ok()) {
      return api::ErrorReply(st);
    }
    jobs_.Take(it);  // with its connection
    dirty_ = true;
    return api::OkReply();
  }
  exec::ExitInfo info;
  info.kind = exec::ExitInfo::Kind::kExited;
  if (auto code = request.find("exit_code"); code != request.end() && code->is_number_integer()) {
    const int c = code->get<int>();
    if (c > 128 && c < 128 + 65) {
      info.kind = exec::ExitInfo::Kind::kSignalled;
      info.signal = c - 128;
    } else {
      info.exit_code = c;
    }
  }
  a.session = 0;  // the reply below is the last message of this session
  jobs_.Unbind(conn);
  FinishJob(a, info, now);
  return api::OkReply();
}

void Daemon::OnClose(ConnId conn) {
  const JobId id = jobs_.SessionOf(conn);
  if (id == 0) return;
  jobs_.Unbind(conn);
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return;
  Active& a = it->second;
  const Time now = Now();
  dirty_ = true;
  if (a.rec.state == store::JobState::kPending) {
    if (Status st = store_->Cancel(id, a.rec.job.user, now, "Session closed"); !st.ok()) {
      spdlog::error("job {}: {}", id, st.message());
      return;
    }
    jobs_.Take(it);
    return;
  }
  // The terminal closed with the command still holding the allocation: stop what is left.
  if (!a.rec.cgroup.empty()) (void)engine_->KillCgroup(a.rec.cgroup);
  ledger_->Charge(a.rec, now);
  if (Status st = ledger_->SaveWith(a.rec, now, [&] {
        return store_->MarkEnded(id, store::JobState::kCancelled, std::nullopt, "Session closed", now, a.rec.job.user);
      });
      !st.ok()) {
    spdlog::error("job {}: {}", id, st.message());
  }
  if (!a.rec.cgroup.empty()) stale_cgroups_.push_back(a.rec.cgroup);
  jobs_.Take(it);
}

}  // namespace rota::daemon
