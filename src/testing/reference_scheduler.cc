// Tested by reference_scheduler_test.cc (deliberately wrong decisions must be reported) and used
// by scheduler_random_test.cc against Schedule() on seeded random states.
//
// Design note: clarity over speed. Every capacity question is answered by summing, at each
// instant that matters, the intervals of one unit (a whole card or a MIG slice) in a plain
// vector; "the earliest time X fits" tries every candidate time in order (the floor, the second
// after it, then every end of an interval: a request that fits at t but not just before t does
// so because an interval ended at t). Nothing here shares code with CapacityPlan, QuotaBook or
// the scheduler's pass; the only core code used is PriorityModel, to learn the priority value
// the scheduler gave the jobs that started (see the header), and RequestGpus to feed it the same
// input. The timeline replay is a backtracking search because Decisions do not say where a
// reservation was placed.
#include "testing/reference_scheduler.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "core/priority.h"
#include "core/quota.h"

namespace rota::testing {

namespace {

template <typename... Args>
std::string Cat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

std::string Rel(Time t, Time now) {
  if (t == kNever) return "never";
  if (t == now) return "now";
  return t > now ? Cat("now+", t - now) : Cat("now-", now - t);
}

std::string RequestText(const Request& r) {
  switch (r.kind) {
    case RequestKind::kWholeGpus:
      return Cat(r.gpus, " GPU", r.gpus == 1 ? "" : "s");
    case RequestKind::kMemShare:
      return Cat("share ", r.memory, "M");
    case RequestKind::kMig:
      return Cat("MIG ", r.mig_profile);
  }
  return "?";
}

std::string AllocText(const Allocation& a) {
  std::string s = "gpus[";
  for (size_t i = 0; i < a.gpus.size(); ++i) s += Cat(i ? "," : "", a.gpus[i]);
  s += "]";
  if (a.mig >= 0) s += Cat(" slice ", a.mig);
  if (a.memory > 0) s += Cat(" ", a.memory, "M");
  return s;
}

std::string JobName(JobId id) { return Cat("job ", id); }

bool Near(double a, double b, double tol) { return std::fabs(a - b) <= tol * std::max(1.0, std::fabs(b)); }

// ---- Calendar, quota and priority arithmetic, from their definitions ----
// At a fixed offset (the random states' zones have no daylight saving; core/zone_test.cc and
// the DST tests of usage and booking test the zone's arithmetic).

int Weekday(Time t, int off) { return static_cast<int>(((FloorDiv(t + off, kDay) % 7) + 7 + 3) % 7); }
Time Midnight(Time t, int off) { return FloorDiv(t + off, kDay) * kDay - off; }
int MinuteOfDay(Time t, int off) {
  return static_cast<int>((t + off - FloorDiv(t + off, kDay) * kDay) / kMinute);
}
Time RefWeekStart(Time t, const Policy& p) {
  int back = (Weekday(t, p.zone.OffsetAt(t)) - p.quota.week_start_day + 7) % 7;
  return Midnight(t, p.zone.OffsetAt(t)) - back * kDay;
}

double RefTimeOfDay(const Policy& p, Time now) {
  const int wd = Weekday(now, p.zone.OffsetAt(now));
  const int m = MinuteOfDay(now, p.zone.OffsetAt(now));
  for (const TimeOfDayRule& r : p.time_of_day) {
    auto on = [&r](int day) { return ((r.weekdays >> day) & 1u) != 0; };
    bool in = false;
    if (r.start_minute < r.end_minute) {
      in = on(wd) && m >= r.start_minute && m < r.end_minute;
    } else if (m >= r.start_minute) {
      in = on(wd);  // the evening part of a window that wraps past midnight
    } else if (m < r.end_minute) {
      in = on((wd + 6) % 7);  // the morning part belongs to the previous day's window
    }
    if (in) return r.factor;
  }
  return 1.0;
}

double RefRequestGpus(const ClusterState& s, const Request& r) {
  switch (r.kind) {
    case RequestKind::kWholeGpus:
      return r.gpus;
    case RequestKind::kMemShare: {
      MiB largest = 0;
      for (const Gpu& g : s.gpus)
        if (g.mig.empty()) largest = std::max(largest, g.memory);
      return largest > 0 ? std::min(1.0, static_cast<double>(r.memory) / static_cast<double>(largest)) : 1.0;
    }
    case RequestKind::kMig:
      for (const Gpu& g : s.gpus) {
        for (const MigSlice& m : g.mig) {
          if (m.profile == r.mig_profile && g.memory > 0)
            return static_cast<double>(m.memory) / static_cast<double>(g.memory);
        }
      }
      return 1.0;
  }
  return 1.0;
}

double RefAllocGpus(const ClusterState& s, const Allocation& a) {
  if (a.gpus.empty()) return 0;
  const Gpu& g = s.gpus[a.gpus[0]];
  if (a.mig >= 0 && g.memory > 0)
    return static_cast<double>(g.mig[a.mig].memory) / static_cast<double>(g.memory);
  if (a.memory > 0 && g.memory > 0)
    return std::min(1.0, static_cast<double>(a.memory) / static_cast<double>(g.memory));
  return static_cast<double>(a.gpus.size());
}

double UserHours(const QuotaPolicy& q, const std::string& user) {
  if (auto it = q.user_hours.find(user); it != q.user_hours.end()) return it->second;
  if (auto r = q.user_role.find(user); r != q.user_role.end()) {
    if (auto it = q.role_hours.find(r->second); it != q.role_hours.end()) return it->second;
  }
  return q.default_hours;
}

double ProjectHours(const QuotaPolicy& q, const std::string& project) {
  auto it = q.project_hours.find(project);
  return it == q.project_hours.end() ? -1 : it->second;
}

enum class Verdict { kOk, kPool, kExhausted };

// GPU-seconds spent this week per account, as the quota definition counts them.
struct Book {
  std::map<std::string, double> user;
  std::map<std::string, double> project;
};

double DecayedUsage(const Usage& u, Time now, Duration half_life) {
  if (u.decayed_gpu_seconds <= 0) return 0;
  if (half_life <= 0 || now <= u.as_of) return u.decayed_gpu_seconds;
  return u.decayed_gpu_seconds *
         std::exp2(-static_cast<double>(now - u.as_of) / static_cast<double>(half_life));
}

// ---- The explicit timeline ----

struct UnitInfo {
  int gpu = 0;
  int mig = -1;  // slice index, -1 for a whole card
  int node = 0;
  MiB cap = 0;
  bool usable = true;
  MiB reported_free = -1;
  std::string profile;  // slices only
};

struct Commit {
  Time start = 0;
  Time end = 0;
  MiB amount = 0;
  const std::string* booking_user = nullptr;  // non-null: a booking, which does not bind this user
  int running = -1;                           // index into state.running, or -1
  JobId job = 0;                              // started or reserved job, or running job
  bool reservation = false;
};

bool IsBlockedReason(WaitReason r) {
  return r != WaitReason::kDependency && r != WaitReason::kImpossible && r != WaitReason::kQuotaExhausted;
}

struct Facts {
  const Job* job = nullptr;
  const Start* start = nullptr;       // started now
  const PendingInfo* info = nullptr;  // stays pending
  double gpus = 0;                    // GPU-equivalents of the request
  Duration d = 1;                     // what the job occupies: max(1, limit)
  double need = 0;                    // GPU-seconds for quota
  bool deps_met = true;
  bool possible = true;
  bool over_initial = false;  // over quota as explore when the pass began (rota, overflow)
  bool as_explore = false;    // runs (or would run) over quota as explore at its turn
  PriorityFactors factors;    // as the scheduler computed them
  std::vector<int> victims;   // running indices this job preempted
  Time victim_deadline = 0;   // max(now + 1, victims' kill times)
  // No earlier than the time the scheduler required the job to fit by: victim_deadline, or the
  // time-limit kill of a job it could count on without signalling it (one warned of its limit in
  // this decision, preemptible and of a lower tier), which Decisions do not name.
  Time deadline_bound = 0;
};

using UnitAmounts = std::vector<std::pair<int, MiB>>;

class Checker {
 public:
  Checker(const ClusterState& s, const Policy& p, Time now, const Decisions& d, const CheckOptions& o)
      : s_(s),
        p_(p),
        now_(now),
        d_(d),
        opt_(o),
        fifo_(p.algorithm == Algorithm::kFifo),
        backfill_(p.algorithm == Algorithm::kBackfill),
        rota_(p.algorithm == Algorithm::kRota) {}

  CheckResult Run() {
    BuildUnits();
    const bool structure = CheckStructure();
    CheckStartAllocations();
    CheckCapacityNow();
    CheckDependencies();
    CheckStops();
    if (structure && allocations_ok_) {
      InitialQuota();
      ComputeOrder();
      CheckFactors();
      CheckQuotaAndReasons();
      CheckPreemptionSignals();
      CheckTimeline();
      CheckWakeup();
    }
    result_.search_steps = steps_;
    return std::move(result_);
  }

 private:
  void Violation(std::string m) { result_.violations.push_back(std::move(m)); }

  // ---- Units ----

  void BuildUnits() {
    card_unit_.assign(s_.gpus.size(), -1);
    slice_unit_.assign(s_.gpus.size(), {});
    std::map<int, int> per_node;
    for (size_t gi = 0; gi < s_.gpus.size(); ++gi) {
      const Gpu& g = s_.gpus[gi];
      if (g.mig.empty()) {
        card_unit_[gi] = static_cast<int>(units_.size());
        whole_units_.push_back(static_cast<int>(units_.size()));
        units_.push_back({static_cast<int>(gi), -1, g.node, g.memory, !g.drained, g.reported_free, ""});
        max_node_size_ = std::max(max_node_size_, ++per_node[g.node]);
        max_card_memory_ = std::max(max_card_memory_, g.memory);
      } else {
        for (size_t si = 0; si < g.mig.size(); ++si) {
          slice_unit_[gi].push_back(static_cast<int>(units_.size()));
          units_.push_back({static_cast<int>(gi), static_cast<int>(si), g.node, g.mig[si].memory, !g.drained,
                            -1, g.mig[si].profile});
        }
      }
    }
  }

  std::string UnitName(int u) const {
    const UnitInfo& x = units_[u];
    return x.mig < 0 ? Cat("GPU ", x.gpu) : Cat("GPU ", x.gpu, " slice ", x.mig, " (", x.profile, ")");
  }

  // The units an allocation holds and the amount on each; false (with why) if it is malformed.
  bool UnitsOf(const Allocation& a, UnitAmounts* out, std::string* why) const {
    out->clear();
    if (a.gpus.empty()) {
      *why = "no GPU";
      return false;
    }
    for (int gi : a.gpus) {
      if (gi < 0 || static_cast<size_t>(gi) >= s_.gpus.size()) {
        *why = Cat("GPU index ", gi, " out of range");
        return false;
      }
    }
    if (a.mig >= 0) {
      const Gpu& g = s_.gpus[a.gpus[0]];
      if (a.gpus.size() != 1 || static_cast<size_t>(a.mig) >= g.mig.size() || a.memory != 0) {
        *why = "a MIG slice must name one MIG card, a slice index in range and no memory";
        return false;
      }
      out->emplace_back(slice_unit_[a.gpus[0]][a.mig], g.mig[a.mig].memory);
      return true;
    }
    if (a.memory < 0 || (a.memory > 0 && a.gpus.size() != 1)) {
      *why = "a share must name exactly one card and a positive memory";
      return false;
    }
    std::set<int> seen;
    for (int gi : a.gpus) {
      const Gpu& g = s_.gpus[gi];
      if (!g.mig.empty()) {
        *why = Cat("GPU ", gi, " is in MIG mode: only its slices can be allocated");
        return false;
      }
      if (!seen.insert(gi).second) {
        *why = Cat("GPU ", gi, " listed twice");
        return false;
      }
      out->emplace_back(card_unit_[gi], a.memory > 0 ? a.memory : g.memory);
    }
    return true;
  }

  bool Possible(const Request& r) const {
    switch (r.kind) {
      case RequestKind::kWholeGpus:
        return r.gpus >= 1 && static_cast<size_t>(r.gpus) <= whole_units_.size();
      case RequestKind::kMemShare:
        return r.memory > 0 && r.memory <= max_card_memory_;
      case RequestKind::kMig:
        for (const UnitInfo& u : units_)
          if (u.mig >= 0 && u.profile == r.mig_profile) return true;
        return false;
    }
    return false;
  }

  // ---- Structure ----

  bool CheckStructure() {
    bool ok = true;
    for (size_t i = 0; i < s_.pending.size(); ++i) {
      if (!pending_.emplace(s_.pending[i].id, static_cast<int>(i)).second) {
        Violation(Cat("state: ", JobName(s_.pending[i].id), " is pending twice"));
        ok = false;
      }
    }
    for (size_t i = 0; i < s_.running.size(); ++i)
      running_.emplace(s_.running[i].job.id, static_cast<int>(i));
    for (const Start& st : d_.starts) {
      if (!pending_.count(st.job)) {
        Violation(Cat("start of ", JobName(st.job), ", which is not a pending job"));
        ok = false;
      } else if (!start_of_.emplace(st.job, &st).second) {
        Violation(Cat(JobName(st.job), " started twice"));
        ok = false;
      }
    }
    for (const PendingInfo& pi : d_.pending) {
      if (!pending_.count(pi.job)) {
        Violation(Cat("PendingInfo for ", JobName(pi.job), ", which is not a pending job"));
        ok = false;
      } else if (start_of_.count(pi.job)) {
        Violation(Cat("PendingInfo for ", JobName(pi.job), ", which starts now"));
        ok = false;
      } else if (!info_of_.emplace(pi.job, &pi).second) {
        Violation(Cat("two PendingInfo for ", JobName(pi.job)));
        ok = false;
      }
    }
    for (const Job& j : s_.pending) {
      if (!start_of_.count(j.id) && !info_of_.count(j.id)) {
        Violation(Cat(JobName(j.id), " neither starts nor has a PendingInfo"));
        ok = false;
      }
    }
    return ok;
  }

  // ---- Allocations of starts ----

  void CheckStartAllocations() {
    for (const Start& st : d_.starts) {
      auto it = pending_.find(st.job);
      if (it == pending_.end()) continue;
      const Job& j = s_.pending[it->second];
      const Request& r = j.request;
      const Allocation& a = st.alloc;
      UnitAmounts units;
      std::string why;
      if (!UnitsOf(a, &units, &why)) {
        Violation(Cat(JobName(j.id), " started with a malformed allocation ", AllocText(a), ": ", why));
        allocations_ok_ = false;
        continue;
      }
      const std::string who = Cat(JobName(j.id), " (", RequestText(r), ") started on ", AllocText(a));
      switch (r.kind) {
        case RequestKind::kWholeGpus:
          if (a.mig >= 0 || a.memory != 0 || static_cast<int>(a.gpus.size()) != r.gpus) {
            Violation(Cat(who, ": not ", r.gpus, " whole cards"));
          } else if (r.gpus <= max_node_size_) {
            for (int gi : a.gpus) {
              if (s_.gpus[gi].node != s_.gpus[a.gpus[0]].node) {
                Violation(Cat(who, ": spans nodes although a node has ", max_node_size_, " cards"));
                break;
              }
            }
          }
          break;
        case RequestKind::kMemShare:
          if (a.mig >= 0 || a.gpus.size() != 1 || a.memory != r.memory)
            Violation(Cat(who, ": not a share of ", r.memory, "M"));
          break;
        case RequestKind::kMig:
          if (a.mig < 0 || s_.gpus[a.gpus[0]].mig[a.mig].profile != r.mig_profile) {
            Violation(Cat(who, ": not a slice of profile ", r.mig_profile));
          }
          break;
      }
      for (int gi : a.gpus) {
        if (s_.gpus[gi].drained) Violation(Cat(who, ": GPU ", gi, " is drained"));
      }
    }
  }

  // ---- Capacity now: running jobs plus starts ----

  void CheckCapacityNow() {
    struct Holder {
      JobId job;
      bool start;
      bool whole;
      MiB amount;
    };
    std::vector<std::vector<Holder>> holders(units_.size());
    UnitAmounts units;
    std::string why;
    for (const RunningJob& r : s_.running) {
      if (!UnitsOf(r.alloc, &units, &why)) continue;  // CheckState reports it
      for (auto [u, amount] : units) holders[u].push_back({r.job.id, false, r.alloc.memory == 0, amount});
    }
    for (const Start& st : d_.starts) {
      if (!UnitsOf(st.alloc, &units, &why)) continue;
      for (auto [u, amount] : units) holders[u].push_back({st.job, true, st.alloc.memory == 0, amount});
    }
    for (size_t u = 0; u < units_.size(); ++u) {
      const auto& h = holders[u];
      if (std::none_of(h.begin(), h.end(), [](const Holder& x) { return x.start; })) continue;
      const UnitInfo& ui = units_[u];
      auto list = [&h] {
        std::string s;
        for (const Holder& x : h)
          s += Cat(s.empty() ? "" : ", ", JobName(x.job), x.start ? " (starts)" : " (running)",
                   x.whole ? " whole" : Cat(" ", x.amount, "M"));
        return s;
      };
      if (ui.mig >= 0) {
        if (h.size() > 1)
          Violation(Cat("MIG slice ", UnitName(static_cast<int>(u)), " given twice: ", list()));
        continue;
      }
      int wholes = 0;
      MiB shares = 0, new_shares = 0;
      for (const Holder& x : h) {
        if (x.whole) {
          ++wholes;
        } else {
          shares += x.amount;
          if (x.start) new_shares += x.amount;
        }
      }
      if (wholes > 0 && h.size() > 1)
        Violation(Cat("whole card ", UnitName(static_cast<int>(u)), " held together with others: ", list()));
      if (shares > ui.cap)
        Violation(Cat("shares on ", UnitName(static_cast<int>(u)), " sum to ", shares, "M > its ", ui.cap,
                      "M: ", list()));
      if (ui.reported_free >= 0 && new_shares > ui.reported_free) {
        Violation(Cat("new shares on ", UnitName(static_cast<int>(u)), " sum to ", new_shares, "M > the ",
                      ui.reported_free, "M the device reports free: ", list()));
      }
    }
  }

  // ---- Dependencies ----

  bool DepsMet(const Job& j) const {
    std::vector<JobId> deps = j.after;
    deps.insert(deps.end(), j.after_ok.begin(), j.after_ok.end());
    for (JobId dep : deps) {
      if (dep == j.id) continue;
      if (pending_.count(dep) || running_.count(dep)) return false;
      if (std::find(s_.held.begin(), s_.held.end(), dep) != s_.held.end()) return false;
    }
    return true;
  }

  void CheckDependencies() {
    for (const Start& st : d_.starts) {
      auto it = pending_.find(st.job);
      if (it == pending_.end()) continue;
      const Job& j = s_.pending[it->second];
      if (!DepsMet(j))
        Violation(Cat(JobName(j.id), " started although a job it runs after is still pending, held or running"));
    }
  }

  // ---- Stops: kills and signals ----

  void CheckStops() {
    std::map<JobId, int> kills;
    for (const Kill& k : d_.kills) {
      ++kills[k.job];
      auto it = running_.find(k.job);
      if (it == running_.end()) {
        Violation(Cat("kill of ", JobName(k.job), ", which is not running"));
        continue;
      }
      const RunningJob& r = s_.running[it->second];
      if (r.kill_at == kNever || r.kill_at > now_) {
        Violation(Cat("kill of ", JobName(k.job), " before its kill time ", Rel(r.kill_at, now_)));
      }
      StopCause cause = r.preempted ? StopCause::kPreempted : StopCause::kTimeLimit;
      if (k.cause != cause) Violation(Cat("kill of ", JobName(k.job), " with the wrong cause"));
    }
    for (const auto& [id, n] : kills) {
      if (n > 1) Violation(Cat(JobName(id), " killed ", n, " times"));
    }
    for (const RunningJob& r : s_.running) {
      if (r.kill_at != kNever && r.kill_at <= now_ && !kills.count(r.job.id)) {
        Violation(
            Cat(JobName(r.job.id), " is past its kill time ", Rel(r.kill_at, now_), " but is not killed"));
      }
    }
    std::map<JobId, int> signals;
    std::map<JobId, const Signal*> time_limit;
    for (const Signal& sg : d_.signals) {
      ++signals[sg.job];
      auto it = running_.find(sg.job);
      if (it == running_.end()) {
        Violation(Cat("signal to ", JobName(sg.job), ", which is not running"));
        continue;
      }
      const RunningJob& r = s_.running[it->second];
      if (r.kill_at != kNever)
        Violation(Cat("signal to ", JobName(sg.job), ", whose stop is already under way"));
      if (sg.signal != r.job.signal)
        Violation(
            Cat("signal to ", JobName(sg.job), " is ", sg.signal, ", the job asked for ", r.job.signal));
      if (sg.cause == StopCause::kTimeLimit) {
        time_limit[sg.job] = &sg;
        if (sg.requeue || sg.preempted_by != 0)
          Violation(Cat("time-limit signal to ", JobName(sg.job), " carries preemption fields"));
      }
    }
    for (const auto& [id, n] : signals) {
      if (n > 1) Violation(Cat(JobName(id), " gets ", n, " signals in one decision"));
    }
    for (const RunningJob& r : s_.running) {
      const Time end = r.start_time + r.job.time_limit;
      // Never before half the limit has passed, however long the grace (a 1-minute job asking
      // for its warning 120 s ahead gets it at 30 s, not at its start).
      const Time warn = std::max(r.start_time + r.job.time_limit / 2, end - r.job.grace);
      const bool due = p_.enforce_time_limits && r.kill_at == kNever && !r.signalled && now_ >= warn;
      auto it = time_limit.find(r.job.id);
      if (due && it == time_limit.end()) {
        Violation(Cat(JobName(r.job.id), " is due for its time-limit warning (warn at ", Rel(warn, now_),
                      ") but gets none"));
      } else if (!due && it != time_limit.end()) {
        Violation(Cat(JobName(r.job.id), " gets a time-limit signal although it is not due (warn at ",
                      Rel(warn, now_), ", signalled ", r.signalled, ", kill_at ", Rel(r.kill_at, now_),
                      ", limits enforced ", p_.enforce_time_limits, ")"));
      } else if (due) {
        const Time want = now_ >= end ? now_ + r.job.grace : end;
        if (it->second->kill_at != want) {
          Violation(Cat("time-limit signal to ", JobName(r.job.id), " kills at ",
                        Rel(it->second->kill_at, now_), ", expected ", Rel(want, now_)));
        }
      }
    }
  }

  // ---- Quota ----

  // What each account spent this week. Hybrid mode: what a user ran on the project's pool
  // (Usage::pool_gpu_seconds, running jobs started from_pool) is the pool's, not the user's.
  void InitialQuota() {
    week_start_ = RefWeekStart(now_, p_);
    const bool hybrid = p_.mode == AccountMode::kHybrid;
    for (const auto& [u, usage] : s_.user_usage) {
      book_.user[u] = usage.week_start == week_start_
                          ? usage.week_gpu_seconds - (hybrid ? usage.pool_gpu_seconds : 0)
                          : 0;
    }
    for (const auto& [pr, usage] : s_.project_usage) {
      double v = usage.week_start == week_start_
                     ? (p_.mode == AccountMode::kHybrid ? usage.pool_gpu_seconds : usage.week_gpu_seconds)
                     : 0;
      book_.project[pr] = v;
    }
    for (const RunningJob& r : s_.running) {
      Time end = r.kill_at != kNever ? r.kill_at : r.start_time + r.job.time_limit;
      Time from = std::max(r.start_time, week_start_);
      if (end <= from) continue;
      double spent = RefAllocGpus(s_, r.alloc) * static_cast<double>(end - from);
      if (!(hybrid && r.from_pool)) book_.user[r.job.user] += spent;
      if (p_.mode == AccountMode::kProject || (hybrid && r.from_pool)) book_.project[r.job.project] += spent;
    }
  }

  static double Left(const std::map<std::string, double>& spent, const std::string& key, double hours) {
    if (hours < 0) return -1;
    auto it = spent.find(key);
    return std::max(0.0, hours * kHour - (it == spent.end() ? 0 : it->second));
  }

  Verdict QuotaVerdictOf(const Book& b, const Job& j, double need) const {
    auto fits = [need](double left) { return left < 0 || need <= left + 1e-6; };
    const double user_left = Left(b.user, j.user, UserHours(p_.quota, j.user));
    const double project_left = Left(b.project, j.project, ProjectHours(p_.quota, j.project));
    switch (p_.mode) {
      case AccountMode::kUser:
        return fits(user_left) ? Verdict::kOk : Verdict::kExhausted;
      case AccountMode::kProject:
        return fits(project_left) ? Verdict::kOk : Verdict::kExhausted;
      case AccountMode::kHybrid:
        if (fits(user_left)) return Verdict::kOk;
        if (project_left >= 0 && need <= project_left + 1e-6) return Verdict::kPool;
        return Verdict::kExhausted;
    }
    return Verdict::kOk;
  }

  // ---- Order and factors ----

  void ComputeOrder() {
    PriorityModel model(s_, p_, now_);
    const bool overflow = rota_ && p_.quota.overflow_as_explore;
    facts_.resize(s_.pending.size());
    for (size_t i = 0; i < s_.pending.size(); ++i) {
      Facts& f = facts_[i];
      const Job& j = s_.pending[i];
      f.job = &j;
      if (auto it = start_of_.find(j.id); it != start_of_.end()) f.start = it->second;
      if (auto it = info_of_.find(j.id); it != info_of_.end()) f.info = it->second;
      f.gpus = RefRequestGpus(s_, j.request);
      const double core_gpus = RequestGpus(s_, j.request);
      if (!Near(f.gpus, core_gpus, 1e-12)) {
        Violation(Cat(JobName(j.id), ": GPU-equivalents of ", RequestText(j.request), " are ", f.gpus,
                      ", the core says ", core_gpus));
      }
      f.d = std::max<Duration>(1, j.time_limit);
      f.need = f.gpus * static_cast<double>(f.d);
      f.deps_met = DepsMet(j);
      f.possible = Possible(j.request);
      f.over_initial = overflow && QuotaVerdictOf(book_, j, f.need) == Verdict::kExhausted;
      f.factors = f.info ? f.info->factors : model.Factors(j, core_gpus, f.over_initial);
    }
    // Owners with a job waiting (its dependencies met) claim their bookings: these bind
    // borrowers too.
    for (const Facts& f : facts_) {
      if (f.deps_met) claimed_.insert(f.job->user);
    }
    order_.resize(s_.pending.size());
    for (size_t i = 0; i < order_.size(); ++i) order_[i] = static_cast<int>(i);
    // The bound on overtaking: of the jobs it may protect (Protectable) that are due (waited
    // protect_after, or promise_slack past their promise), the protect_max that waited longest
    // are protected.
    std::vector<char> guard(facts_.size(), 0);
    if (rota_ && p_.protect_max > 0 && (p_.protect_after >= 0 || p_.promise_slack >= 0)) {
      std::vector<int> old;
      for (size_t i = 0; i < facts_.size(); ++i) {
        if (Protectable(facts_[i]) && Due(*facts_[i].job) <= now_) old.push_back(static_cast<int>(i));
      }
      std::sort(old.begin(), old.end(), [this](int a, int b) {
        const Job& x = *facts_[a].job;
        const Job& y = *facts_[b].job;
        return x.submit_time != y.submit_time ? x.submit_time < y.submit_time : x.id < y.id;
      });
      for (size_t k = 0; k < old.size() && k < static_cast<size_t>(p_.protect_max); ++k) guard[old[k]] = 1;
      if (p_.protect_foreseen) {
        const size_t room =
            static_cast<size_t>(p_.protect_max) - std::min(old.size(), static_cast<size_t>(p_.protect_max));
        for (int i : Foreseen(room)) {
          guard[i] = 1;
          foreseen_.insert(facts_[i].job->id);
        }
      }
    }
    // Tiers first, then protected jobs by submit time, then priority, then submit time and id.
    std::sort(order_.begin(), order_.end(), [this, &guard](int a, int b) {
      const Job& x = *facts_[a].job;
      const Job& y = *facts_[b].job;
      if (rota_) {
        if (facts_[a].factors.tier != facts_[b].factors.tier) return facts_[a].factors.tier > facts_[b].factors.tier;
        if (guard[a] != guard[b]) return guard[a] > guard[b];
        if (!guard[a] && facts_[a].factors.priority != facts_[b].factors.priority) {
          return facts_[a].factors.priority > facts_[b].factors.priority;
        }
      }
      return x.submit_time != y.submit_time ? x.submit_time < y.submit_time : x.id < y.id;
    });
    for (size_t i = 0; i < facts_.size(); ++i) {
      if (facts_[i].info && facts_[i].info->factors.is_protected != (guard[i] != 0)) {
        Violation(Cat(JobName(facts_[i].job->id), guard[i] ? ": protected, but its factors do not say so"
                                                            : ": not protected, but its factors say so"));
      }
    }
    std::vector<JobId> want;
    for (int i : order_)
      if (!facts_[i].start) want.push_back(facts_[i].job->id);
    std::vector<JobId> got;
    for (const PendingInfo& pi : d_.pending) got.push_back(pi.job);
    if (want != got) {
      std::string w, g;
      for (JobId id : want) w += Cat(" ", id);
      for (JobId id : got) g += Cat(" ", id);
      Violation(Cat("PendingInfo is not in the scheduler's order (",
                    rota_ ? "tier, protected, priority, submit time, id" : "submit time, id", "): expected", w, ", got", g));
    }
  }

  // Protection foreseen (Policy::protect_foreseen), up to `room` jobs. With the same pass's
  // decisions without it (CheckOptions::unforeseen): the protectable jobs not due yet that it
  // reserved (not estimated) later than they will be due, the longest waiting first. Without
  // them, what the scheduler says it protected is taken where the rule allows it (protectable,
  // not due yet, within the room): the order and the timeline are checked with those.
  std::vector<int> Foreseen(size_t room) {
    std::vector<int> late;
    std::unordered_map<JobId, int> index;
    for (size_t i = 0; i < facts_.size(); ++i) index.emplace(facts_[i].job->id, static_cast<int>(i));
    auto may = [this](int i) {
      const Time due = Due(*facts_[i].job);
      return Protectable(facts_[i]) && due != kNever && due > now_;
    };
    if (opt_.unforeseen != nullptr) {
      for (const PendingInfo& pi : opt_.unforeseen->pending) {
        auto it = index.find(pi.job);
        if (it == index.end() || pi.factors.is_protected || pi.estimated || pi.expected_start == kNever)
          continue;
        if (may(it->second) && pi.expected_start > Due(*facts_[it->second].job)) late.push_back(it->second);
      }
    } else {
      for (size_t i = 0; i < facts_.size(); ++i) {
        if (facts_[i].info && facts_[i].info->factors.is_protected && may(static_cast<int>(i)))
          late.push_back(static_cast<int>(i));
      }
    }
    std::sort(late.begin(), late.end(), [this](int a, int b) {
      const Job& x = *facts_[a].job;
      const Job& y = *facts_[b].job;
      return x.submit_time != y.submit_time ? x.submit_time < y.submit_time : x.id < y.id;
    });
    if (late.size() > room) late.resize(room);
    return late;
  }

  // A job the bound on overtaking may protect: it could start but for capacity (not explore by
  // tier or over quota, its dependencies met, its request within its quota as the pass begins).
  bool Protectable(const Facts& f) const {
    return f.factors.tier > 0 && f.deps_met && QuotaVerdictOf(book_, *f.job, f.need) != Verdict::kExhausted;
  }

  // When a job may first be protected: protect_after after its submission, or promise_slack
  // after its promise, whichever is earlier (either off when negative, or with no promise).
  Time Due(const Job& j) const {
    Time due = kNever;
    if (p_.protect_after >= 0) due = j.submit_time + p_.protect_after;
    if (p_.promise_slack >= 0 && j.promise != kNever && j.promise + p_.promise_slack < due) due = j.promise + p_.promise_slack;
    return due;
  }

  void CheckFactors() {
    // Fair share: 2^(-U/S) with U the account's share of all decayed usage plus running jobs'
    // elapsed GPU-seconds, S = 1 / number of known accounts.
    auto shares = [this](const std::unordered_map<std::string, Usage>& usage, bool by_user) {
      std::map<std::string, double> used;
      for (const auto& [k, u] : usage) used[k] += DecayedUsage(u, now_, p_.fairshare_half_life);
      for (const RunningJob& r : s_.running) {
        used[by_user ? r.job.user : r.job.project] +=
            RefAllocGpus(s_, r.alloc) * static_cast<double>(std::max<Time>(0, now_ - r.start_time));
      }
      for (const Job& j : s_.pending) used.try_emplace(by_user ? j.user : j.project, 0.0);
      double total = 0;
      for (const auto& [k, v] : used) total += v;
      const double n = static_cast<double>(used.size());
      for (auto& [k, v] : used) v = total > 0 ? std::exp2(-(v / total) * n) : 1.0;
      return used;
    };
    const auto user_fs = shares(s_.user_usage, true);
    const auto project_fs = shares(s_.project_usage, false);
    auto lookup = [](const std::map<std::string, double>& m, const std::string& k) {
      auto it = m.find(k);
      return it == m.end() ? 1.0 : it->second;
    };
    const double tod = RefTimeOfDay(p_, now_);
    const Weights& w = p_.weights;
    // Fifo and backfill order by submit time; their factors are for display only and are not
    // computed when expected starts are not wanted either (the simulator).
    const bool want_factors = rota_ || p_.estimate_starts;
    for (const Facts& f : facts_) {
      const Job& j = *f.job;
      if (!want_factors) {
        const PriorityFactors none;
        const PriorityFactors& got = f.factors;
        if (f.info && (got.tier != none.tier || got.fairshare != none.fairshare || got.age != none.age ||
                       got.size != none.size || got.penalty != none.penalty ||
                       got.time_of_day != none.time_of_day || got.priority != none.priority)) {
          Violation(Cat(JobName(j.id),
                        ": factors computed although neither rota nor estimate_starts asks for them"));
        }
        continue;
      }
      PriorityFactors want;
      want.tier = f.over_initial ? 0.0 : static_cast<double>(static_cast<int>(j.tier)) / 2.0;
      switch (p_.mode) {
        case AccountMode::kUser:
          want.fairshare = lookup(user_fs, j.user);
          break;
        case AccountMode::kProject:
          want.fairshare = lookup(project_fs, j.project);
          break;
        case AccountMode::kHybrid:
          want.fairshare = 0.5 * (lookup(user_fs, j.user) + lookup(project_fs, j.project));
          break;
      }
      if (p_.age_max > 0) {
        want.age =
            std::clamp(static_cast<double>(now_ - j.submit_time) / static_cast<double>(p_.age_max), 0.0, 1.0);
      }
      const bool predicted = p_.size_by_prediction && j.predicted_run > 0 && j.predicted_run < j.time_limit;
      const double gpu_hours = f.gpus * static_cast<double>(predicted ? j.predicted_run : j.time_limit) / kHour;
      want.size = std::clamp(1.0 - std::log1p(gpu_hours) / std::log1p(std::max(p_.size_max_gpu_hours, 1e-9)),
                             0.0, 1.0);
      const bool heavy = f.gpus >= p_.heavy_gpus || j.time_limit >= p_.heavy_time;
      want.time_of_day = heavy ? tod : 1.0;
      if (auto it = s_.penalty.find(j.user); it != s_.penalty.end())
        want.penalty = std::clamp(it->second, 0.0, 1.0);
      const PriorityFactors& got = f.factors;
      const char* bad = nullptr;
      if (!Near(got.tier, want.tier, 1e-9))
        bad = "tier";
      else if (!Near(got.fairshare, want.fairshare, 1e-9))
        bad = "fairshare";
      else if (!Near(got.age, want.age, 1e-9))
        bad = "age";
      else if (!Near(got.size, want.size, 1e-9))
        bad = "size";
      else if (!Near(got.penalty, want.penalty, 1e-9))
        bad = "penalty";
      else if (!Near(got.time_of_day, want.time_of_day, 1e-9))
        bad = "time_of_day";
      if (bad) {
        Violation(Cat(JobName(j.id), ": priority factor ", bad, " is off: got tier ", got.tier, " fairshare ",
                      got.fairshare, " age ", got.age, " size ", got.size, " penalty ", got.penalty, " tod ",
                      got.time_of_day, "; expected ", want.tier, " ", want.fairshare, " ", want.age, " ",
                      want.size, " ", want.penalty, " ", want.time_of_day));
        continue;
      }
      const double sum =
          w.tier * got.tier +
          got.time_of_day * (w.fairshare * got.fairshare + w.age * got.age + w.size * got.size) -
          w.penalty * got.penalty;
      if (!Near(got.priority, sum, 1e-9)) {
        Violation(
            Cat(JobName(j.id), ": priority ", got.priority, " is not the weighted sum of its factors ", sum));
      }
    }
  }

  // ---- Quota replay and the reasons that do not need the timeline ----

  void CheckQuotaAndReasons() {
    Book book = book_;
    const bool overflow = rota_ && p_.quota.overflow_as_explore;
    for (int i : order_) {
      Facts& f = facts_[i];
      const Job& j = *f.job;
      const std::string who = JobName(j.id);
      const WaitReason* reason = f.info ? &f.info->reason : nullptr;
      if (!f.deps_met) {
        if (reason && *reason != WaitReason::kDependency)
          Violation(Cat(who, " waits for a job it runs after but has reason ", WaitReasonName(*reason)));
        continue;  // a start was reported by CheckDependencies
      }
      if (reason && *reason == WaitReason::kDependency)
        Violation(Cat(who, " has reason Dependency but every job it runs after has ended"));
      if (!f.possible) {
        if (f.start)
          Violation(Cat(who, " started although no card of the cluster can hold ", RequestText(j.request)));
        if (reason && *reason != WaitReason::kImpossible)
          Violation(Cat(who, " can never run (", RequestText(j.request), ") but has reason ",
                        WaitReasonName(*reason)));
        continue;
      }
      if (reason && *reason == WaitReason::kImpossible)
        Violation(Cat(who, " has reason Impossible but the cluster can hold ", RequestText(j.request)));
      const Verdict v = QuotaVerdictOf(book, j, f.need);
      if (v == Verdict::kExhausted && !overflow) {
        if (f.start)
          Violation(Cat(who, " started although its need of ", f.need,
                        " GPU-seconds exceeds what is left of its quota"));
        if (reason && *reason != WaitReason::kQuotaExhausted)
          Violation(Cat(who, " is over quota but has reason ", WaitReasonName(*reason)));
        if (reason && (f.info->expected_start != week_start_ + kWeek || !f.info->estimated)) {
          Violation(Cat(who, " waits for quota; expected start ", Rel(f.info->expected_start, now_),
                        " should be the next week start ", Rel(week_start_ + kWeek, now_), " (estimated)"));
        }
        continue;
      }
      if (reason && *reason == WaitReason::kQuotaExhausted)
        Violation(Cat(who, " has reason QuotaExhausted but its need fits its quota"));
      f.as_explore = v == Verdict::kExhausted;
      if (f.start) {
        const bool preemptible = rota_ && (f.as_explore || p_.IsPreemptible(j.tier));
        if (f.start->preemptible != preemptible)
          Violation(Cat(who, " starts with preemptible=", f.start->preemptible, ", expected ", preemptible));
        if (f.start->from_pool != (v == Verdict::kPool))
          Violation(
              Cat(who, " starts with from_pool=", f.start->from_pool, ", expected ", v == Verdict::kPool));
        if (v != Verdict::kPool) book.user[j.user] += f.need;
        if (p_.mode == AccountMode::kProject || v == Verdict::kPool) book.project[j.project] += f.need;
      }
      if (reason && *reason == WaitReason::kPeakHours && !(f.factors.time_of_day < 1)) {
        Violation(Cat(who, " has reason PeakHours but no time-of-day penalty"));
      }
    }
  }

  // ---- Preemption signals ----

  void CheckPreemptionSignals() {
    std::map<JobId, int> fact_of;
    for (size_t i = 0; i < facts_.size(); ++i) fact_of[facts_[i].job->id] = static_cast<int>(i);
    for (const Signal& sg : d_.signals) {
      if (sg.cause != StopCause::kPreempted) continue;
      const std::string who = Cat("preemption of ", JobName(sg.job), " by ", JobName(sg.preempted_by));
      if (!rota_ || !p_.preemption) {
        Violation(Cat(who, " although ", rota_ ? "preemption is off" : "the algorithm is not rota"));
        continue;
      }
      auto rit = running_.find(sg.job);
      if (rit == running_.end()) continue;  // reported by CheckStops
      const RunningJob& r = s_.running[rit->second];
      auto fit = fact_of.find(sg.preempted_by);
      if (fit == fact_of.end()) {
        Violation(Cat(who, ", which is not a pending job"));
        continue;
      }
      Facts& f = facts_[fit->second];
      if (f.start || !f.info) {
        Violation(Cat(who, ", which starts now instead of waiting"));
        continue;
      }
      const Tier victim_tier = r.preemptible ? Tier::kExplore : r.job.tier;
      if (!(r.preemptible || p_.IsPreemptible(r.job.tier)))
        Violation(Cat(who, ": the victim is not preemptible"));
      // A booking claim (the victim borrowed the preemptor's owner's booking) needs no lower tier.
      if (!Claim(r, f)) {
        if (!(victim_tier < f.job->tier))
          Violation(Cat(who, ": the victim's tier is not lower than the preemptor's"));
        if (f.as_explore) Violation(Cat(who, ": the preemptor runs over quota as explore"));
      }
      if (!IsBlockedReason(f.info->reason))
        Violation(Cat(who, ": the preemptor waits with reason ", WaitReasonName(f.info->reason)));
      if (sg.kill_at != now_ + std::max<Duration>(0, r.job.grace)) {
        Violation(Cat(who, " kills at ", Rel(sg.kill_at, now_), ", expected now + grace ", r.job.grace));
      }
      if (sg.requeue != r.job.requeue)
        Violation(Cat(who, ": requeue ", sg.requeue, " but the job asked for ", r.job.requeue));
      f.victims.push_back(rit->second);
      f.victim_deadline = std::max({f.victim_deadline, now_ + 1, sg.kill_at});
    }
    for (Facts& f : facts_) {
      f.deadline_bound = f.victim_deadline;
      if (f.victims.empty()) continue;
      for (const Signal& sg : d_.signals) {
        auto rit = running_.find(sg.job);
        if (sg.cause != StopCause::kTimeLimit || rit == running_.end()) continue;
        const RunningJob& r = s_.running[rit->second];
        const Tier victim_tier = r.preemptible ? Tier::kExplore : r.job.tier;
        if ((r.preemptible || p_.IsPreemptible(r.job.tier)) &&
            ((!f.as_explore && victim_tier < f.job->tier) || Claim(r, f))) {
          f.deadline_bound = std::max(f.deadline_bound, sg.kill_at);
        }
      }
    }
    // Stops already under way (preemptions of earlier decisions) that end by this time serve a
    // waiting job: no new preemption for a job that fits by then.
    stopping_until_ = now_ + 1;
    for (const RunningJob& r : s_.running) {
      if (r.preempted && r.kill_at != kNever) stopping_until_ = std::max(stopping_until_, r.kill_at);
    }
  }

  // Whether preempting running job `r` for `f` is a booking claim: `r` belongs to another user
  // and holds a unit of a booking of f's owner that has not ended and begins before f's limit
  // would run out if it started now.
  bool Claim(const RunningJob& r, const Facts& f) const {
    if (r.job.user == f.job->user) return false;
    UnitAmounts victim, booked;
    std::string why;
    if (!UnitsOf(r.alloc, &victim, &why)) return false;
    for (const Booking& b : s_.bookings) {
      if (b.user != f.job->user || b.end <= now_ || b.start >= now_ + f.d) continue;
      if (!UnitsOf(b.alloc, &booked, &why)) continue;
      for (auto [u, amount] : victim)
        for (auto [bu, bamount] : booked)
          if (u == bu) return true;
    }
    return false;
  }

  // Whether the job may start on capacity booked by others: it would start preemptible (rota:
  // explore tier or another preemptible one, or over quota as explore) and preemption can take
  // that capacity back when the owner needs it. Its reservation still respects the bookings.
  bool Borrows(const Facts& f) const {
    return rota_ && p_.preemption && (f.as_explore || p_.IsPreemptible(f.job->tier));
  }

  // ---- The timeline ----

  // How a share on a card whose device reports less free memory than the share needs now (a
  // "device-blocked" card: other tenants use it) is treated after now. The report only says
  // something about now, so the scheduler may unblock such a card at any time up to the next end
  // of a job (or booking) on it; the checker accepts anything between the two readings:
  //   kNowOnly      the report binds at now only (earliest possible reading);
  //   kUntilNextEnd the card takes no such share before the next end of an interval on it, when
  //                 the search starts at now (latest reading; the scheduler's first version).
  enum class DeviceRule { kNowOnly, kUntilNextEnd };

  // Which bookings bind a job: those of others (kBind); for a borrower, only those of others who
  // have a job waiting, which claim theirs (kBorrow); none ("would it fit but for bookings?").
  enum class Bookings { kBind, kBorrow, kIgnore };

  bool UnitFits(int u, Time t, Duration d, MiB amount, const std::string& user, Bookings bookings,
                bool share, DeviceRule rule = DeviceRule::kNowOnly, Time floor = kNever) const {
    const UnitInfo& ui = units_[u];
    if (!ui.usable || amount > ui.cap) return false;
    const Time e = t + d;
    const auto& cs = commits_[u];
    auto applies = [&](const Commit& c) {
      if (!c.booking_user) return true;
      if (*c.booking_user == user || bookings == Bookings::kIgnore) return false;
      return bookings == Bookings::kBind || claimed_.count(*c.booking_user) > 0;
    };
    if (share && ui.reported_free >= 0 && ui.reported_free - shares_started_[u] < amount) {
      if (t == now_) return false;
      if (rule == DeviceRule::kUntilNextEnd && floor == now_) {
        Time next_end = kNever;
        for (const Commit& c : cs)
          if (applies(c) && c.end > now_) next_end = std::min(next_end, c.end);
        if (t < next_end) return false;
      }
    }
    auto load_at = [&](Time p) {
      MiB sum = 0;
      for (const Commit& c : cs)
        if (applies(c) && c.start <= p && p < c.end) sum += c.amount;
      return sum;
    };
    if (load_at(t) + amount > ui.cap) return false;
    for (const Commit& c : cs) {
      if (applies(c) && c.start > t && c.start < e && load_at(c.start) + amount > ui.cap) return false;
    }
    return true;
  }

  std::string LoadText(int u, Time t, Duration d) const {
    std::string s;
    for (const Commit& c : commits_[u]) {
      if (c.end <= t || c.start >= t + d) continue;
      s += Cat("; ",
               c.booking_user ? Cat("booking of ", *c.booking_user)
                              : Cat(c.reservation    ? "reservation of "
                                    : c.running >= 0 ? "running "
                                                     : "start of ",
                                    JobName(c.job)),
               " [", Rel(c.start, now_), ", ", Rel(c.end, now_), ") ", c.amount, "M");
    }
    return s.empty() ? "; nothing" : s;
  }

  bool FitsAt(const Facts& f, Time t, Bookings bookings, DeviceRule rule = DeviceRule::kNowOnly,
              Time floor = kNever) const {
    const Job& j = *f.job;
    const Request& r = j.request;
    switch (r.kind) {
      case RequestKind::kWholeGpus: {
        if (r.gpus < 1) return false;
        std::map<int, int> per_node;
        int total = 0;
        for (int u : whole_units_) {
          if (UnitFits(u, t, f.d, units_[u].cap, j.user, bookings, false)) {
            ++total;
            if (++per_node[units_[u].node] >= r.gpus && r.gpus <= max_node_size_) return true;
          }
        }
        return r.gpus > max_node_size_ && total >= r.gpus;
      }
      case RequestKind::kMemShare:
        for (int u : whole_units_)
          if (UnitFits(u, t, f.d, r.memory, j.user, bookings, true, rule, floor)) return true;
        return false;
      case RequestKind::kMig:
        for (size_t u = 0; u < units_.size(); ++u) {
          if (units_[u].mig >= 0 && units_[u].profile == r.mig_profile &&
              UnitFits(static_cast<int>(u), t, f.d, units_[u].cap, j.user, bookings, false)) {
            return true;
          }
        }
        return false;
    }
    return false;
  }

  // The earliest time >= floor at which the job fits on the timeline, trying every candidate:
  // the floor, the second after it (a device-blocked card under kNowOnly) and every end.
  Time Earliest(const Facts& f, Time floor, DeviceRule rule) const {
    std::vector<Time> cands{floor, floor + 1};
    for (const auto& cs : commits_) {
      for (const Commit& c : cs)
        if (c.end > floor && c.end != kNever) cands.push_back(c.end);
    }
    std::sort(cands.begin(), cands.end());
    cands.erase(std::unique(cands.begin(), cands.end()), cands.end());
    for (Time t : cands)
      if (FitsAt(f, t, Bookings::kBind, rule, floor)) return t;
    return kNever;
  }

  // Whether the request fits at the instant `now` on what running jobs and earlier starts hold
  // (no bookings, no reservations): the scheduler's "physically fits" that picks the reason.
  bool PhysicallyNow(const Facts& f) const {
    const Request& r = f.job->request;
    switch (r.kind) {
      case RequestKind::kWholeGpus: {
        std::map<int, int> per_node;
        int total = 0, best = 0;
        for (int u : whole_units_) {
          if (units_[u].usable && used_now_[u] == 0) {
            ++total;
            best = std::max(best, ++per_node[units_[u].node]);
          }
        }
        return r.gpus <= max_node_size_ ? best >= r.gpus : total >= r.gpus;
      }
      case RequestKind::kMemShare:
        for (int u : whole_units_) {
          const UnitInfo& ui = units_[u];
          if (!ui.usable) continue;
          MiB free = ui.cap - used_now_[u];
          if (ui.reported_free >= 0) free = std::min(free, ui.reported_free - shares_started_[u]);
          if (free >= r.memory) return true;
        }
        return false;
      case RequestKind::kMig:
        for (size_t u = 0; u < units_.size(); ++u) {
          if (units_[u].mig >= 0 && units_[u].profile == r.mig_profile && units_[u].usable &&
              used_now_[u] == 0)
            return true;
        }
        return false;
    }
    return false;
  }

  // A key under which two units are interchangeable for the rest of the replay.
  std::string Signature(int u, size_t k) const {
    const UnitInfo& ui = units_[u];
    std::vector<std::string> cs;
    for (const Commit& c : commits_[u]) {
      cs.push_back(Cat(c.start, ":", c.end, ":", c.amount, ":", c.booking_user ? *c.booking_user : "-", ":",
                       c.running >= 0 && victim_[c.running] ? c.running : -1));
    }
    std::sort(cs.begin(), cs.end());
    std::string s = Cat(ui.profile, "|", ui.cap, "|", ui.node, "|", ui.usable, "|", ui.reported_free, "|",
                        shares_started_[u], "|", used_now_[u], "|");
    for (const std::string& c : cs) s += c + ";";
    s += "|";
    for (const auto& [pos, job] : starts_on_unit_[u])
      if (pos > k) s += Cat(job, ",");
    return s;
  }

  // Every placement of the job at t, up to interchangeable units.
  std::vector<UnitAmounts> Placements(const Facts& f, Time t, size_t k) const {
    const Job& j = *f.job;
    const Request& r = j.request;
    std::vector<UnitAmounts> out;
    std::set<std::vector<std::string>> seen;
    auto add = [&](const std::vector<int>& us, MiB amount_or_cap) {
      std::vector<std::string> key;
      UnitAmounts p;
      for (int u : us) {
        key.push_back(Signature(u, k));
        p.emplace_back(u, amount_or_cap < 0 ? units_[u].cap : amount_or_cap);
      }
      std::sort(key.begin(), key.end());
      if (seen.insert(key).second) out.push_back(std::move(p));
    };
    switch (r.kind) {
      case RequestKind::kWholeGpus: {
        std::vector<int> free;
        for (int u : whole_units_)
          if (UnitFits(u, t, f.d, units_[u].cap, j.user, Bookings::kBind, false)) free.push_back(u);
        std::vector<int> pick;
        // Subsets of size r.gpus of `pool`, in index order.
        std::vector<std::vector<int>> pools;
        if (r.gpus <= max_node_size_) {
          std::map<int, std::vector<int>> by_node;
          for (int u : free) by_node[units_[u].node].push_back(u);
          for (auto& [node, us] : by_node) pools.push_back(us);
        } else {
          pools.push_back(free);
        }
        for (const auto& pool : pools) {
          auto rec = [&](auto&& self, size_t from) -> void {
            if (static_cast<int>(pick.size()) == r.gpus) {
              add(pick, -1);
              return;
            }
            for (size_t i = from; i < pool.size(); ++i) {
              pick.push_back(pool[i]);
              self(self, i + 1);
              pick.pop_back();
            }
          };
          rec(rec, 0);
        }
        break;
      }
      case RequestKind::kMemShare:
        for (int u : whole_units_)
          if (UnitFits(u, t, f.d, r.memory, j.user, Bookings::kBind, true)) add({u}, r.memory);
        break;
      case RequestKind::kMig:
        for (size_t u = 0; u < units_.size(); ++u) {
          if (units_[u].mig >= 0 && units_[u].profile == r.mig_profile &&
              UnitFits(static_cast<int>(u), t, f.d, units_[u].cap, j.user, Bookings::kBind, false)) {
            add({static_cast<int>(u)}, -1);
          }
        }
        break;
    }
    return out;
  }

  // Adds the job over [start, start + d). Whatever is placed at now, a start or a reservation
  // (behind fifo's head of line), holds its memory now, also against the device's report.
  void Push(const UnitAmounts& ua, const Facts& f, Time start, bool reservation) {
    const bool share = f.job->request.kind == RequestKind::kMemShare;
    for (auto [u, amount] : ua) {
      commits_[u].push_back({start, start + f.d, amount, nullptr, -1, f.job->id, reservation});
      if (start == now_) {
        used_now_[u] += amount;
        if (share) shares_started_[u] += amount;
      }
    }
  }

  void Pop(const UnitAmounts& ua, const Facts& f, Time start) {
    const bool share = f.job->request.kind == RequestKind::kMemShare;
    for (auto [u, amount] : ua) {
      commits_[u].pop_back();
      if (start == now_) {
        used_now_[u] -= amount;
        if (share) shares_started_[u] -= amount;
      }
    }
  }

  struct Ctx {
    bool blocked_seen = false;
    JobId first_blocked = 0;
    int reserved = 0;
    Time fifo_floor = 0;
  };

  bool Fail(size_t k, std::string why) {
    if (opt_.trace) result_.trace.push_back(Cat("depth ", k, ": ", why));
    if (deepest_ < 0 || static_cast<long>(k) > deepest_) {
      deepest_ = static_cast<long>(k);
      deepest_why_ = std::move(why);
    }
    return false;
  }

  WaitReason ExpectedReason(const Facts& f, const Ctx& ctx) const {
    WaitReason r;
    if (fifo_ && ctx.blocked_seen) {
      r = WaitReason::kPriority;
    } else if (PhysicallyNow(f)) {
      r = !s_.bookings.empty() && FitsAt(f, now_, Bookings::kIgnore) ? WaitReason::kBooking
                                                                            : WaitReason::kPriority;
    } else {
      r = ctx.blocked_seen ? WaitReason::kPriority : WaitReason::kResources;
    }
    if (r == WaitReason::kPriority && f.factors.time_of_day < 1) r = WaitReason::kPeakHours;
    if (!f.victims.empty()) r = WaitReason::kResources;
    return r;
  }

  // What ShortenVictims changed: (unit, index in commits_[unit], previous end). Indices, not
  // pointers: deeper steps push onto the same vectors.
  using Undo = std::vector<std::tuple<int, size_t, Time>>;

  // Sets the end of the victims' running intervals to their kill time; returns what to restore.
  Undo ShortenVictims(const Facts& f) {
    Undo undo;
    for (int ri : f.victims) {
      const Time kill = std::max(now_ + 1, now_ + std::max<Duration>(0, s_.running[ri].job.grace));
      for (size_t u = 0; u < commits_.size(); ++u) {
        for (size_t i = 0; i < commits_[u].size(); ++i) {
          Commit& c = commits_[u][i];
          if (c.running == ri) {
            undo.emplace_back(static_cast<int>(u), i, c.end);
            c.end = kill;
          }
        }
      }
    }
    return undo;
  }

  // Empty if the job's expected start is the earliest time >= floor it fits on the timeline (for
  // a share, under some reading of DeviceRule); else that earliest time, or the range of them.
  std::string Range(const Facts& f, Time floor) const {
    const Time lo = Earliest(f, floor, DeviceRule::kNowOnly);
    const Time hi = Earliest(f, floor, DeviceRule::kUntilNextEnd);
    const Time got = f.info->expected_start;
    if (lo <= got && got <= hi) return "";
    return lo == hi ? Rel(lo, now_)
                    : Cat("between ", Rel(lo, now_), " and ", Rel(hi, now_), " (a device-blocked card)");
  }

  bool Replay(size_t k, Ctx ctx) {
    if (aborted_) return false;
    if (++steps_ > opt_.max_search_steps) {
      aborted_ = true;
      return false;
    }
    if (k == order_.size()) return true;
    const Facts& f = facts_[order_[k]];
    const Job& j = *f.job;
    const std::string who = Cat(JobName(j.id), " (", RequestText(j.request), ", ", f.d, "s, ", j.user, ")");
    if (f.start) {
      if (fifo_ && ctx.blocked_seen) {
        return Fail(k, Cat(who, " starts behind ", JobName(ctx.first_blocked), ", which is blocked (fifo)"));
      }
      UnitAmounts ua;
      std::string why;
      UnitsOf(f.start->alloc, &ua, &why);
      const bool borrows = Borrows(f);
      for (auto [u, amount] : ua) {
        if (!UnitFits(u, now_, f.d, amount, j.user, borrows ? Bookings::kBorrow : Bookings::kBind,
                      j.request.kind == RequestKind::kMemShare)) {
          return Fail(k, Cat(who, " starts on ", UnitName(u),
                             " but does not fit there for its limit, given the running jobs, ",
                             borrows ? "" : "bookings of others ", "and the jobs ahead of it",
                             LoadText(u, now_, f.d)));
        }
      }
      Push(ua, f, now_, false);
      const bool ok = Replay(k + 1, ctx);
      Pop(ua, f, now_);
      return ok;
    }
    if (!f.info || !IsBlockedReason(f.info->reason)) return Replay(k + 1, ctx);
    const PendingInfo& info = *f.info;
    if (!(fifo_ && ctx.blocked_seen) && FitsAt(f, now_, Borrows(f) ? Bookings::kBorrow : Bookings::kBind)) {
      return Fail(k, Cat(who, " waits (", WaitReasonName(info.reason),
                         ") although it fits now given the jobs ahead of it",
                         Borrows(f) ? " (it may borrow booked capacity)" : ""));
    }
    const WaitReason want = ExpectedReason(f, ctx);
    if (want != info.reason) {
      return Fail(k, Cat(who, " waits with reason ", WaitReasonName(info.reason), ", expected ",
                         WaitReasonName(want)));
    }
    Undo undo;
    auto restore = [this, &undo] {
      for (auto it = undo.rbegin(); it != undo.rend(); ++it)
        commits_[std::get<0>(*it)][std::get<1>(*it)].end = std::get<2>(*it);
      undo.clear();
    };
    if (!f.victims.empty()) {
      const Time before = Earliest(f, now_, DeviceRule::kUntilNextEnd);
      if (before <= f.victim_deadline) {
        return Fail(k, Cat(who, " preempts although it fits at ", Rel(before, now_),
                           " without, by the victims' kill time ", Rel(f.victim_deadline, now_)));
      }
      if (before <= stopping_until_) {
        return Fail(k, Cat(who, " preempts although stops under way let it start at ", Rel(before, now_)));
      }
      undo = ShortenVictims(f);
      const Time after = Earliest(f, now_, DeviceRule::kNowOnly);
      if (after > f.deadline_bound) {
        restore();
        return Fail(k, Cat(who, " preempts but still does not fit by the victims' kill time ",
                           Rel(f.deadline_bound, now_), " (earliest ", Rel(after, now_), ")"));
      }
    }
    Ctx next = ctx;
    next.blocked_seen = true;
    if (!ctx.blocked_seen) next.first_blocked = j.id;
    // Reservations: backfill's first blocked job, rota's and fifo's up to plan_depth (fifo's only
    // the head of line when expected starts are not wanted: nothing behind it starts anyway).
    int depth = backfill_ ? 1 : std::max(0, p_.plan_depth);
    if (fifo_ && !p_.estimate_starts) depth = std::min(depth, 1);
    bool ok = false;
    if (ctx.reserved < depth) {
      next.reserved = ctx.reserved + 1;
      const Time floor = fifo_ ? ctx.fifo_floor : now_;
      const Time e = info.expected_start;
      const std::string range = Range(f, floor);
      if (info.estimated) {
        ok = Fail(k, Cat(who, " is blocked job ", ctx.reserved + 1, " within the planning depth ", depth,
                         " but has only an estimate"));
      } else if (!range.empty()) {
        ok = Fail(k, Cat(who, " is reserved at ", Rel(e, now_), " but the earliest time it fits after ",
                         Rel(floor, now_),
                         " given only the running jobs, bookings and the jobs ahead of it is ", range));
      } else if (e == kNever) {
        ok = Replay(k + 1, next);
      } else {
        if (fifo_) next.fifo_floor = e;
        const std::vector<UnitAmounts> cands = Placements(f, e, k);
        if (cands.empty()) ok = Fail(k, Cat(who, " is reserved at ", Rel(e, now_), " but fits nowhere then"));
        if (cands.size() > 1) branched_ = true;
        for (const UnitAmounts& ua : cands) {
          Push(ua, f, e, true);
          ok = Replay(k + 1, next);
          Pop(ua, f, e);
          if (ok || aborted_) break;
        }
      }
    } else if (backfill_ && p_.estimate_starts && ctx.reserved < p_.plan_depth) {
      next.reserved = ctx.reserved + 1;
      const std::string range = Range(f, now_);
      if (!info.estimated || !range.empty()) {
        ok = Fail(k, Cat(who, " should have as estimate the earliest fit (not reserved), ",
                         range.empty() ? "which it has" : range, "; got ", Rel(info.expected_start, now_),
                         info.estimated ? " (estimated)" : " (not marked estimated)"));
      } else {
        ok = Replay(k + 1, next);
      }
    } else {
      if (!info.estimated || info.expected_start < now_) {
        ok = Fail(k, Cat(who, " is past the planning depth; its expected start ",
                         Rel(info.expected_start, now_), " should be an estimate no earlier than now"));
      } else {
        ok = Replay(k + 1, next);
      }
    }
    restore();
    return ok;
  }

  void CheckTimeline() {
    commits_.assign(units_.size(), {});
    used_now_.assign(units_.size(), 0);
    shares_started_.assign(units_.size(), 0);
    starts_on_unit_.assign(units_.size(), {});
    victim_.assign(s_.running.size(), false);
    for (const Facts& f : facts_)
      for (int ri : f.victims) victim_[ri] = true;
    for (size_t k = 0; k < order_.size(); ++k) {
      const Facts& f = facts_[order_[k]];
      if (!f.start) continue;
      UnitAmounts ua;
      std::string why;
      UnitsOf(f.start->alloc, &ua, &why);
      for (auto [u, amount] : ua) starts_on_unit_[u].emplace_back(k, f.job->id);
    }
    for (const Booking& b : s_.bookings) {
      if (b.end <= now_) continue;
      UnitAmounts ua;
      std::string why;
      if (!UnitsOf(b.alloc, &ua, &why)) continue;  // the scheduler ignores what it cannot map, too
      for (auto [u, amount] : ua) commits_[u].push_back({b.start, b.end, amount, &b.user, -1, 0, false});
    }
    for (size_t ri = 0; ri < s_.running.size(); ++ri) {
      const RunningJob& r = s_.running[ri];
      Time end;
      if (r.kill_at != kNever) {
        end = std::max(r.kill_at, now_ + 1);
      } else if (r.start_time + r.job.time_limit > now_) {
        end = r.start_time + r.job.time_limit;
      } else {
        end = now_ + (p_.enforce_time_limits ? 1 : std::max<Duration>(1, p_.overdue_grace));
      }
      UnitAmounts ua;
      std::string why;
      if (!UnitsOf(r.alloc, &ua, &why)) continue;
      for (auto [u, amount] : ua) {
        commits_[u].push_back(
            {std::min(r.start_time, now_), end, amount, nullptr, static_cast<int>(ri), r.job.id, false});
        used_now_[u] += amount;
      }
    }
    Ctx ctx;
    ctx.fifo_floor = now_;
    const bool ok = Replay(0, ctx);
    if (aborted_) {
      result_.inconclusive = true;
    } else if (!ok) {
      Violation(Cat("timeline: ", deepest_why_,
                    branched_ ? " (no placement of the earlier reservations avoids this)" : ""));
    }
  }

  // ---- Wake-up ----

  void CheckWakeup() {
    const Time w = d_.next_wakeup;
    bool kill_now = false;
    auto bound = [&](Time t, const std::string& what) {
      if (t > now_ && w > t)
        Violation(Cat("next_wakeup ", Rel(w, now_), " is after ", what, " at ", Rel(t, now_)));
    };
    for (const Signal& sg : d_.signals) {
      kill_now = kill_now || sg.kill_at == now_;
      bound(sg.kill_at, Cat("the kill of ", JobName(sg.job)));
    }
    if (w < now_ || (w == now_ && !kill_now))
      Violation(Cat("next_wakeup ", Rel(w, now_), " is not in the future"));
    for (const RunningJob& r : s_.running) {
      if (r.kill_at != kNever) {
        bound(r.kill_at, Cat("the kill of ", JobName(r.job.id)));
        continue;
      }
      if (!p_.enforce_time_limits) continue;
      const Time end = r.start_time + r.job.time_limit;
      if (r.signalled)
        bound(std::max(end, now_ + 1), Cat("the end of ", JobName(r.job.id)));
      else
        bound(std::max(r.start_time + r.job.time_limit / 2, end - r.job.grace), Cat("the warning of ", JobName(r.job.id)));
    }
    bool quota_blocked = false;
    for (const PendingInfo& pi : d_.pending) {
      if (!pi.estimated && IsBlockedReason(pi.reason))
        bound(pi.expected_start, Cat("the reservation of ", JobName(pi.job)));
      quota_blocked = quota_blocked || pi.reason == WaitReason::kQuotaExhausted;
    }
    if (quota_blocked) bound(week_start_ + kWeek, "the next quota week");
    // A job that will become protected while fewer than protect_max are: the order changes then.
    if (rota_ && p_.protect_max > 0 && (p_.protect_after >= 0 || p_.promise_slack >= 0)) {
      int old = 0;
      Time next = kNever;
      for (const Facts& f : facts_) {
        if (!Protectable(f)) continue;
        if (Due(*f.job) <= now_ || foreseen_.count(f.job->id))
          ++old;
        else
          next = std::min(next, Due(*f.job));
      }
      if (old < p_.protect_max) bound(next, "the protection of the next job old enough");
    }
    if (!s_.pending.empty()) {
      for (const Booking& b : s_.bookings) {
        bound(b.start, Cat("the start of booking ", b.id));
        bound(b.end, Cat("the end of booking ", b.id));
      }
    }
  }

  const ClusterState& s_;
  const Policy& p_;
  const Time now_;
  const Decisions& d_;
  const CheckOptions& opt_;
  const bool fifo_, backfill_, rota_;
  CheckResult result_;

  std::vector<UnitInfo> units_;
  std::vector<int> whole_units_;
  std::vector<int> card_unit_;
  std::vector<std::vector<int>> slice_unit_;
  int max_node_size_ = 0;
  MiB max_card_memory_ = 0;

  std::unordered_map<JobId, int> pending_, running_;
  std::unordered_map<JobId, const Start*> start_of_;
  std::unordered_map<JobId, const PendingInfo*> info_of_;
  bool allocations_ok_ = true;

  Time week_start_ = 0;
  Time stopping_until_ = 0;
  Book book_;
  std::vector<Facts> facts_;
  std::set<JobId> foreseen_;       // protected before they are due (Foreseen)
  std::set<std::string> claimed_;  // users whose bookings bind borrowers (ComputeOrder)
  std::vector<int> order_;

  std::vector<std::vector<Commit>> commits_;
  std::vector<MiB> used_now_;
  std::vector<MiB> shares_started_;
  std::vector<std::vector<std::pair<size_t, JobId>>> starts_on_unit_;
  std::vector<bool> victim_;
  long steps_ = 0;
  bool aborted_ = false;
  bool branched_ = false;
  long deepest_ = -1;
  std::string deepest_why_;
};

}  // namespace

CheckResult CheckDecisions(const ClusterState& state, const Policy& policy, Time now, const Decisions& d,
                           const CheckOptions& options) {
  return Checker(state, policy, now, d, options).Run();
}

std::vector<std::string> CheckState(const ClusterState& s) {
  std::vector<std::string> out;
  std::set<JobId> ids;
  for (const Job& j : s.pending)
    if (!ids.insert(j.id).second) out.push_back(Cat("duplicate id ", j.id));
  for (const RunningJob& r : s.running)
    if (!ids.insert(r.job.id).second) out.push_back(Cat("duplicate id ", r.job.id));
  std::map<std::pair<int, int>, std::vector<JobId>> slices;
  std::map<int, std::vector<JobId>> whole;
  std::map<int, MiB> shares;
  for (const RunningJob& r : s.running) {
    const Allocation& a = r.alloc;
    const std::string who = Cat("running ", JobName(r.job.id), " on ", AllocText(a));
    if (a.gpus.empty()) {
      out.push_back(who + ": no GPU");
      continue;
    }
    bool in_range = true;
    for (int gi : a.gpus) in_range = in_range && gi >= 0 && static_cast<size_t>(gi) < s.gpus.size();
    if (!in_range) {
      out.push_back(who + ": GPU index out of range");
      continue;
    }
    if (a.mig >= 0) {
      const Gpu& g = s.gpus[a.gpus[0]];
      if (a.gpus.size() != 1 || static_cast<size_t>(a.mig) >= g.mig.size()) {
        out.push_back(who + ": bad MIG slice");
        continue;
      }
      slices[{a.gpus[0], a.mig}].push_back(r.job.id);
      continue;
    }
    for (int gi : a.gpus) {
      if (!s.gpus[gi].mig.empty()) out.push_back(Cat(who, ": GPU ", gi, " is in MIG mode"));
      if (a.memory > 0)
        shares[gi] += a.memory;
      else
        whole[gi].push_back(r.job.id);
    }
    if (a.memory > 0 && a.gpus.size() != 1) out.push_back(who + ": a share on several cards");
  }
  for (const auto& [key, jobs] : slices)
    if (jobs.size() > 1)
      out.push_back(Cat("slice ", key.first, "/", key.second, " held ", jobs.size(), " times"));
  for (const auto& [gi, jobs] : whole) {
    if (jobs.size() > 1 || shares.count(gi))
      out.push_back(Cat("GPU ", gi, " whole-held by ", jobs.size(), " jobs and shared"));
  }
  for (const auto& [gi, mem] : shares) {
    if (mem > s.gpus[gi].memory)
      out.push_back(Cat("shares on GPU ", gi, " sum to ", mem, "M > ", s.gpus[gi].memory, "M"));
  }
  return out;
}

std::string DescribeCase(const ClusterState& s, const Policy& p, Time now) {
  std::ostringstream os;
  os << "policy: " << AlgorithmName(p.algorithm) << ", mode " << AccountModeName(p.mode) << ", preemption "
     << p.preemption << " (tiers mask " << static_cast<int>(p.preemptible_tiers) << "), plan_depth "
     << p.plan_depth << ", estimate_starts " << p.estimate_starts << ", enforce limits "
     << p.enforce_time_limits << ", overdue_grace " << p.overdue_grace << ", utc_offset " << p.zone.OffsetAt(now)
     << ", time-of-day rules " << p.time_of_day.size() << ", age_max " << p.age_max << "\n";
  const QuotaPolicy& q = p.quota;
  os << "quota: default " << q.default_hours << "h, overflow_as_explore " << q.overflow_as_explore
     << ", week starts day " << q.week_start_day;
  for (const auto& [u, h] : std::map<std::string, double>(q.user_hours.begin(), q.user_hours.end()))
    os << ", " << u << "=" << h << "h";
  for (const auto& [u, r] : std::map<std::string, std::string>(q.user_role.begin(), q.user_role.end())) {
    auto it = q.role_hours.find(r);
    os << ", " << u << " is " << r << "(" << (it == q.role_hours.end() ? -1 : it->second) << "h)";
  }
  for (const auto& [pr, h] : std::map<std::string, double>(q.project_hours.begin(), q.project_hours.end()))
    os << ", project " << pr << "=" << h << "h";
  os << "\nnow: " << now << " (weekday " << Weekday(now, p.zone.OffsetAt(now)) << ", minute "
     << MinuteOfDay(now, p.zone.OffsetAt(now)) << " local; quota week started " << Rel(RefWeekStart(now, p), now)
     << ")\n";
  for (size_t gi = 0; gi < s.gpus.size(); ++gi) {
    const Gpu& g = s.gpus[gi];
    os << "  GPU " << gi << ": node " << g.node << ", " << g.memory << "M";
    if (g.drained) os << ", DRAINED";
    if (g.reported_free >= 0) os << ", reports " << g.reported_free << "M free";
    for (size_t k = 0; k < g.mig.size(); ++k)
      os << (k ? " " : ", MIG ") << k << ":" << g.mig[k].profile << "/" << g.mig[k].memory << "M";
    if (!g.nvlink.empty()) {
      os << ", nvlink";
      for (int n : g.nvlink) os << " " << n;
    }
    os << "\n";
  }
  auto job_text = [now](const Job& j) {
    std::string after;
    for (JobId a : j.after) after += Cat(" ", a);
    for (JobId a : j.after_ok) after += Cat(" ok:", a);
    return Cat(JobName(j.id), " ", j.user, "/", j.project, " ", TierName(j.tier), " ", RequestText(j.request),
               " limit ", j.time_limit, "s submit ", Rel(j.submit_time, now), " grace ", j.grace,
               j.requeue ? " requeue" : "", after.empty() ? "" : " after" + after);
  };
  for (const RunningJob& r : s.running) {
    os << "  running " << job_text(r.job) << " on " << AllocText(r.alloc) << " since "
       << Rel(r.start_time, now) << " (limit ends " << Rel(r.start_time + r.job.time_limit, now) << ")"
       << (r.preemptible ? " preemptible" : "") << (r.signalled ? " signalled" : "")
       << (r.kill_at != kNever ? Cat(" kill_at ", Rel(r.kill_at, now), r.preempted ? " (preempted)" : "")
                               : "")
       << (r.from_pool ? " from_pool" : "") << "\n";
  }
  for (const Job& j : s.pending) os << "  pending " << job_text(j) << "\n";
  auto usage = [now](const std::string& who, const Usage& u) {
    return Cat("  usage ", who, ": decayed ", u.decayed_gpu_seconds, " as of ", Rel(u.as_of, now), ", week ",
               u.week_gpu_seconds, " (pool ", u.pool_gpu_seconds, ") for week ", Rel(u.week_start, now),
               "\n");
  };
  for (const auto& [k, u] : std::map<std::string, Usage>(s.user_usage.begin(), s.user_usage.end()))
    os << usage("user " + k, u);
  for (const auto& [k, u] : std::map<std::string, Usage>(s.project_usage.begin(), s.project_usage.end()))
    os << usage("project " + k, u);
  for (const auto& [k, v] : std::map<std::string, double>(s.penalty.begin(), s.penalty.end()))
    os << "  penalty " << k << " " << v << "\n";
  for (const Booking& b : s.bookings) {
    os << "  booking " << b.id << " of " << b.user << " on " << AllocText(b.alloc) << " ["
       << Rel(b.start, now) << ", " << Rel(b.end, now) << ")\n";
  }
  return os.str();
}

std::string DescribeDecisions(const Decisions& d, Time now) {
  std::ostringstream os;
  for (const Start& st : d.starts) {
    os << "  start " << JobName(st.job) << " on " << AllocText(st.alloc)
       << (st.preemptible ? " preemptible" : "") << (st.from_pool ? " from_pool" : "") << "\n";
  }
  for (const Signal& sg : d.signals) {
    os << "  signal " << sg.signal << " to " << JobName(sg.job) << ", kill at " << Rel(sg.kill_at, now)
       << (sg.cause == StopCause::kPreempted
               ? Cat(" (preempted by ", JobName(sg.preempted_by), sg.requeue ? ", requeue)" : ")")
               : " (time limit)")
       << "\n";
  }
  for (const Kill& k : d.kills) {
    os << "  kill " << JobName(k.job) << (k.cause == StopCause::kPreempted ? " (preempted)" : " (time limit)")
       << "\n";
  }
  for (const PendingInfo& pi : d.pending) {
    os << "  pending " << JobName(pi.job) << ": " << WaitReasonName(pi.reason) << ", expected "
       << Rel(pi.expected_start, now) << (pi.estimated ? " (estimate)" : "") << ", priority "
       << pi.factors.priority << " (tier " << pi.factors.tier << " fs " << pi.factors.fairshare << " age "
       << pi.factors.age << " size " << pi.factors.size << " pen " << pi.factors.penalty << " tod "
       << pi.factors.time_of_day << ")\n";
  }
  os << "  next_wakeup " << Rel(d.next_wakeup, now) << "\n";
  return os.str();
}

}  // namespace rota::testing
