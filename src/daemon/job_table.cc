#include "daemon/job_table.h"

#include <algorithm>

namespace rota::daemon {

ActiveJob& JobTable::Add(ActiveJob a) {
  const JobId id = a.rec.job.id;
  if (a.session != 0) sessions_[a.session] = id;
  ActiveJob& in = jobs_[id];
  in = std::move(a);
  return in;
}

ActiveJob JobTable::Take(Map::iterator it) {
  ActiveJob a = std::move(it->second);
  const JobId id = it->first;
  jobs_.erase(it);
  if (a.session != 0) {
    auto s = sessions_.find(a.session);
    if (s != sessions_.end() && s->second == id) sessions_.erase(s);
  }
  waiting_.erase(id);
  return a;
}

JobId JobTable::SessionOf(ConnId conn) const {
  auto it = sessions_.find(conn);
  return it == sessions_.end() ? 0 : it->second;
}

void JobTable::Unbind(ConnId conn) { sessions_.erase(conn); }

void JobTable::Bind(ConnId conn, JobId id) {
  jobs_.at(id).session = conn;
  sessions_[conn] = id;
}

bool JobTable::Awaited(JobId id) const {
  for (const auto& [other, a] : jobs_) {
    if (a.rec.state != store::JobState::kPending) continue;
    const std::vector<JobId>& after = a.rec.job.after;
    const std::vector<JobId>& after_ok = a.rec.job.after_ok;
    if (std::find(after.begin(), after.end(), id) != after.end() ||
        std::find(after_ok.begin(), after_ok.end(), id) != after_ok.end()) {
      return true;
    }
  }
  return false;
}

void JobTable::Withdraw(const store::JobRecord& rec, const Allocation& alloc, Time now) {
  RunningJob holds = rec.ToRunningJob();
  holds.alloc = alloc;
  holds.start_time = now;
  holds.preemptible = false;
  holds.kill_at = kNever;
  withdrawn_[rec.job.id] = holds;
}

bool JobTable::HeldOut(const ActiveJob& a, const AfterOk& after_ok, Time now) const {
  const JobId id = a.rec.job.id;
  return a.retry_at > now || withdrawn_.count(id) > 0 || after_ok.held(id);
}

void JobTable::AddTo(ClusterState& st, const AfterOk& after_ok, Time now) const {
  st.pending.reserve(st.pending.size() + jobs_.size());  // most of a long table waits
  for (const auto& [id, a] : jobs_) {
    if (a.rec.state == store::JobState::kPending) {
      if (HeldOut(a, after_ok, now)) {
        st.held.push_back(id);
      } else {
        st.pending.push_back(a.rec.job);
      }
    } else if (a.released_at != 0) {
      st.held.push_back(id);  // its processes are gone (EngineEvents::JobReleased): its GPUs are free
    } else if (!a.rec.placement.alloc.gpus.empty()) {
      st.running.push_back(a.rec.ToRunningJob());
    }
  }
  for (const auto& [id, holds] : withdrawn_) st.running.push_back(holds);
}

Time JobTable::NoteWaiting(const std::vector<PendingInfo>& decided, const AfterOk& after_ok, Time now,
                           bool explained) {
  explained_ = explained;
  waiting_.clear();
  waiting_order_.clear();
  for (const PendingInfo& p : decided) {
    waiting_[p.job] = p;
    waiting_order_.push_back(p.job);
  }
  Time next_retry = kNever;
  for (const auto& [id, a] : jobs_) {
    if (a.rec.state != store::JobState::kPending || !HeldOut(a, after_ok, now)) continue;
    // Left out of the pass: its start could not be recorded, or a dependency's end is not known.
    const bool unsure = after_ok.held(id);
    PendingInfo held;
    held.job = id;
    held.reason = unsure ? WaitReason::kDependency : WaitReason::kStartRetry;
    held.expected_start = unsure ? kNever : std::max(a.retry_at, now);
    held.estimated = true;
    waiting_[id] = held;
    waiting_order_.push_back(id);
    if (a.retry_at > now) next_retry = std::min(next_retry, a.retry_at);
  }
  return next_retry;
}

void JobTable::Explained() const {
  if (explained_ || explaining_ || !explain_) return;
  explaining_ = true;
  explain_();
  explaining_ = false;
  explained_ = true;  // also where the explainer could not: asked again only after the next pass
}

const PendingInfo* JobTable::Waiting(JobId id) const {
  Explained();
  auto it = waiting_.find(id);
  return it == waiting_.end() ? nullptr : &it->second;
}

const std::unordered_map<JobId, PendingInfo>& JobTable::waiting() const {
  Explained();
  return waiting_;
}

const std::vector<JobId>& JobTable::waiting_order() const {
  Explained();
  return waiting_order_;
}

bool JobTable::AnyPending() const {
  return std::any_of(jobs_.begin(), jobs_.end(),
                     [](const auto& entry) { return entry.second.rec.state == store::JobState::kPending; });
}

int JobTable::PositionOf(JobId id) const {
  Explained();
  auto it = std::find(waiting_order_.begin(), waiting_order_.end(), id);
  return static_cast<int>(it - waiting_order_.begin()) + 1;
}

Time JobTable::RetryAt(int failures, Time now) {
  Time wait = kStartRetryFirst;
  for (int i = 0; i < failures && wait < kStartRetryMax; ++i) wait *= 2;
  return now + std::min(wait, kStartRetryMax);
}

ActiveJob JobTable::Requeued(ActiveJob ended, bool launch_failed, Time at) {
  store::JobRecord rec = std::move(ended.rec);
  rec.state = store::JobState::kPending;
  rec.start_time = 0;
  rec.placement = {};
  rec.preemptible = rec.from_pool = rec.signalled = rec.preempted = false;
  rec.kill_at = kNever;
  rec.pid = rec.pgid = 0;
  rec.cgroup.clear();
  ActiveJob fresh;
  fresh.rec = std::move(rec);
  fresh.launch_failures = ended.launch_failures;
  if (launch_failed) fresh.retry_at = RetryAt(fresh.launch_failures++, at);
  return fresh;
}

}  // namespace rota::daemon
