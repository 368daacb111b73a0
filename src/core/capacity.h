// CapacityPlan: the schedulable units of a cluster and what is committed on them over time.
//
// A unit is a whole card (not in MIG mode) or one MIG slice. Every unit has a memory capacity;
// a whole-GPU allocation or a MIG slice commits all of it, a memory share commits its memory.
// Commitments are intervals [start, end): running jobs (until their expected end), reservations
// for waiting jobs (conservative backfill), and bookings (held for their owner only). Each unit
// keeps them as a step profile, so a query or a commit is linear in its breakpoints. The plan
// answers "when is the earliest time this request fits, and where", which is both the start-now
// test and the reservation of a blocked job, so backfill never starts a job that would still be
// running on a unit when a reservation or a booking begins there. The one exception is a
// preemptible job (Holds::kBorrow): it may borrow booked capacity, because it leaves (preempted)
// when the owner needs it; it still never touches a running job or a reservation.
//
// A plan is built for one pass, or kept between passes by a caller that schedules the same cards
// again and again (the simulator): see "Kept between passes" below.
//
// Thread-compatible; borrows the ClusterState it was built from (it must outlive the plan), or
// for a kept plan the one of the last Sync().
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory_resource>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/cluster.h"
#include "core/policy.h"
#include "core/types.h"

namespace rota {

// A booking's hold on a unit: binds everyone but its owner (and preemptible jobs starting now,
// which borrow it: see Holds).
struct BookingHold {
  Time start = 0;
  Time end = 0;
  MiB amount = 0;
  int user = 0;  // interned owner
};

// Memory committed on a unit over time, as a step function: breakpoints sorted by time, each
// value holding from its time to the next breakpoint (the first is at -infinity, the last
// extends to +infinity).
using Profile = std::pmr::vector<std::pair<Time, MiB>>;

struct Unit {
  Unit() = default;
  explicit Unit(std::pmr::memory_resource* memory) : profile(memory) {}
  int gpu = 0;
  int mig = -1;  // slice index, or -1 for a whole card
  int node = 0;
  MiB capacity = 0;
  MiB used_now = 0;      // held by running jobs now
  MiB device_free = -1;  // free memory the device reports now; -1 unknown
  bool usable = true;    // not drained
  bool shared = false;   // holds (or is planned to hold) memory shares
  Profile profile;       // running jobs and reservations from now on
  std::vector<BookingHold> bookings;
  // Index of the profile for whole-unit requests (kept by CapacityPlan::Reindex): from `tail`
  // on nothing is committed, and no stretch with nothing committed before it is longer than
  // `max_hole`. A unit without a hole long enough is then answered without a scan. A unit free
  // from now on has the tail kFreeNow, below every time: it stays right as time moves on (a kept
  // plan), and such units keep their order by unit among themselves.
  Time tail = 0;
  Duration max_hole = 0;
  int running_shares = 0;  // a kept plan's: memory shares of running jobs on the unit
};

constexpr Time kFreeNow = std::numeric_limits<Time>::min();

// When a running job is expected to release its capacity: its kill time when a stop is under way,
// else start + time limit; a job already past that is assumed to end within a second (limits
// enforced) or Policy::overdue_grace (not enforced).
Time ExpectedEnd(const RunningJob& r, const Policy& policy, Time now);

// Which bookings bind a request, and which units it prefers (docs/design.md, "How a decision is
// made", step 4). Bookings are kept apart from the profile (Unit::bookings) precisely so that the
// same plan answers all three views without copies: a booking is one hold per unit, added to the
// profile on the fly only for the requests it binds.
enum class Holds : std::uint8_t {
  // The bookings of users other than `user` bind; `user`'s own are his. Among units free at the
  // same time the owner prefers those his booking holds over the job's span ("go there first").
  kOthers,
  // No booking binds but those of others who claim theirs (ClaimBookingsOf): a preemptible job
  // borrowing capacity that is booked but unused (the scheduler preempts it when the owner needs
  // the capacity). It prefers units nobody else holds over the job's span, so that it is
  // preempted less; then, like kOthers, its owner's own.
  kBorrow,
  // No booking binds and no preference: "would it fit but for the bookings?" (WaitReason::kBooking).
  kNone,
};

struct Placement {
  Time start = kNever;     // kNever: does not fit
  std::vector<int> units;  // indices into CapacityPlan::units()
};

class CapacityPlan {
 public:
  CapacityPlan(const ClusterState& state, const Policy& policy, Time now);
  // A plan to keep between passes, on the cards of `state` (which must not change while it is
  // kept) and the expected ends of `policy`; it is brought to each pass's state by Sync().
  struct Kept {};
  CapacityPlan(Kept, const ClusterState& state, const Policy& policy);
  CapacityPlan(const CapacityPlan&) = delete;
  CapacityPlan& operator=(const CapacityPlan&) = delete;

  // Interned id of a user for booking checks; -1 when the user holds no booking.
  int UserId(std::string_view user) const;

  // Whether some unit of this cluster (drained or not) could ever hold the request.
  bool Possible(const Request& req) const;
  // Fast test: could the request fit now on free capacity, ignoring reservations and bookings?
  bool PhysicallyFitsNow(const Request& req) const;
  // Whether no request that is Possible() fits now physically: every usable card, share and slice
  // is taken (the scheduler's pass stops looking then; scheduler.cc, Run).
  bool NothingFreeNow() const { return free_whole_ == 0 && max_share_free_ <= 0 && free_slices_ == 0; }

  // The earliest start >= not_before at which `req` fits for `duration` on usable units, and
  // where. `holds` says which bookings bind (by default those of users other than `user`).
  // `now_only` stops after checking not_before (cheaper). Returns start == kNever when it does
  // not fit.
  Placement Earliest(const Request& req, Duration duration, int user, Time not_before, bool now_only,
                     Holds holds = Holds::kOthers) const;
  // Whether any booking holds capacity from now on (UserId() is -1 for everyone otherwise, and
  // every view of the capacity is the same).
  bool HasBookings() const { return !booking_users_.empty(); }
  // The bookings of `user` (a UserId) bind borrowers too from now on: their owner has a job
  // waiting, which would preempt a borrower as soon as it started (scheduler.cc, "claimed").
  void ClaimBookingsOf(int user);
  bool Claimed(int user) const { return user >= 0 && claimed_[user]; }
  bool AnyClaimed() const { return any_claimed_; }

  // Commits the request on the placement over [start, end); a start <= now also counts as used now.
  void Commit(const Placement& p, const Request& req, Time start, Time end);
  // Moves the end of every commitment of running job `running` (a preemption victim) to `end`,
  // returning the previous end (for undo).
  Time SetRunningEnd(int running, Time end);
  // Units an allocation occupies, with the amount on each and whether it is a share.
  template <typename Fn>
  void ForAllocation(const Allocation& a, Fn&& fn) const;

  Allocation ToAllocation(const Placement& p, const Request& req) const;
  const std::vector<Unit>& units() const { return units_; }
  Time now() const { return now_; }

  // ---- Kept between passes ----
  // A pass builds its plan from the running jobs, at a cost that grows with the cards and the
  // running jobs: most of a replay's time on a large cluster. A kept plan holds the running jobs'
  // commitments from one pass to the next and changes only what changed: Sync() adds the runs
  // the caller appended to state.running, moves the expected ends that moved (a stop signalled,
  // a job overdue), and RunningTaken() removes one as the caller removes it. What a pass commits
  // (starts, reservations, earlier ends of preemption victims) is undone by Rollback(), so that
  // the plan then holds the running jobs alone again. Every answer is the one a plan built for
  // the pass would give (kept_plan_test.cc compares them, and whole replays give the same
  // figures); where the runs do not line up with what it holds (a job replaced without telling
  // it), Sync() builds it again from the state.
  //
  // Whether this kept plan can serve a pass on `state` under `policy`: the same cards, no
  // bookings (their holds are a pass's own), and the same rules for expected ends.
  bool Keeps(const ClusterState& state, const Policy& policy) const;
  // Brings the plan to `state` at `now`, for one pass (then Rollback()).
  void Sync(const ClusterState& state, Time now);
  // The caller removed state.running[i] from `state` (the one of the last Sync) by moving the last
  // run into its place.
  void RunningTaken(const ClusterState& state, size_t i);
  // Undoes every commitment since Sync().
  void Rollback();
  // How often Sync() had to build the plan from the state (the first time included).
  int rebuilds() const { return rebuilds_; }

 private:
  MiB Amount(const Unit& u, const Request& req) const;
  // The unit's profile with the bookings that bind `user` added (or the profile itself when none
  // does); `scratch` holds the combined copy. Inline: most units hold no booking, and most
  // requests are asked of many units.
  const Profile& Effective(const Unit& u, int user, Holds holds, Profile& scratch) const {
    if (u.bookings.empty() || holds == Holds::kNone || (holds == Holds::kBorrow && !any_claimed_)) {
      return u.profile;
    }
    return WithHolds(u, user, holds, scratch);
  }
  const Profile& WithHolds(const Unit& u, int user, Holds holds, Profile& scratch) const;
  // Highest total amount committed on `u` at any instant of [s, e).
  MiB Peak(const Unit& u, Time s, Time e, int user, Holds holds) const;
  // How much a job placed on `u` over [s, e) is wanted there, lower first: 0 on its owner's own
  // booking, 2 (kBorrow only) on someone else's, 1 otherwise. Only breaks ties between units free
  // at the same time, and is 1 everywhere for a job without bookings that does not borrow, whose
  // placement is thus exactly what it was before bookings could be borrowed.
  int BookingRank(const Unit& u, int user, Holds holds, Time s, Time e) const;
  // `share`: the request is a memory share (even of a whole card's memory), which must also fit
  // in what the device reports free now; whole cards and slices are not held to that.
  Time EarliestOnUnit(const Unit& u, MiB amount, bool share, Duration d, int user, Time t0, bool now_only,
                      Holds holds) const;
  Placement EarliestSingle(const Request& req, Duration d, int user, Time t0, bool now_only,
                           Holds holds) const;
  Placement EarliestMulti(const Request& req, Duration d, int user, Time t0, bool now_only,
                          Holds holds) const;
  // `rank`: BookingRank of each candidate (same order), chosen lowest first, then by NVLink.
  std::vector<int> PickWithinNode(std::vector<int> candidates, std::vector<int> rank, int n) const;
  // Chooses `n` whole cards among `usable` (all free over the job's span [t, t + d)), given how
  // many there are per dense node, preferring low BookingRank for `user` and `holds`. Returns
  // start == kNever if they do not suffice.
  Placement PickAt(Time t, Duration d, int user, Holds holds, const std::vector<int>& usable,
                   const std::vector<int>& per_node, int n) const;
  void Layout(const ClusterState& state);
  void AddBookings(const ClusterState& state);
  // Commits running job `r` until `end`: from `from` (the plan's now) or, kept, from the start of
  // time (so that it can be taken out again whatever the time then).
  void AddRunning(const RunningJob& r, Time from, Time end);
  void Rebuild(const ClusterState& state);
  // Saves unit `ui` before a pass changes a kept plan's unit (Rollback).
  void Touch(int ui);
  void RefreshNowSummary();
  void Reindex(int ui);
  void BuildTails() const;
  void SyncIndexes() const;
  // Earliest start for whole cards from the tails alone, valid when no booking exists and no
  // usable card has a hole of d or longer; nullopt when that does not hold.
  std::optional<Placement> EarliestWholeByTails(int n, Duration d, Time t0) const;

  const ClusterState* state_;
  Time now_;
  // The units' profiles come from one arena: a plan lives for one pass, and is built for every
  // pass. Declared before the units, which must not outlive it.
  std::pmr::monotonic_buffer_resource arena_;
  std::vector<Unit> units_;
  std::vector<int> whole_units_;  // non-MIG cards
  std::unordered_map<std::string, std::vector<int>> mig_units_;  // by profile
  std::unordered_map<std::string_view, int> booking_users_;
  std::vector<char> claimed_;  // per booking user: ClaimBookingsOf
  bool any_claimed_ = false;
  std::vector<int> first_unit_;  // per GPU: its card unit, or its first slice unit
  std::vector<Time> running_end_;  // per running job: when its profile entries end
  std::vector<int> dense_node_;  // per unit: its node numbered 0..nodes-1
  int max_node_size_ = 0;
  bool span_nodes_ = true;  // Policy::span_nodes
  // Whether `n` whole cards must be on one node: they fit on one, or jobs never span nodes.
  bool OneNode(int n) const { return n <= max_node_size_ || !span_nodes_; }
  MiB max_card_memory_ = 0;  // of the whole cards, drained or not (Possible)
  // Summary of what is free now (see PhysicallyFitsNow), refreshed after every start.
  int free_whole_ = 0;
  int max_node_free_ = 0;
  MiB max_share_free_ = 0;
  std::unordered_map<std::string, int> free_mig_;
  int free_slices_ = 0;  // the sum of free_mig_
  std::vector<int> free_whole_now_;  // usable cards nobody holds now
  std::vector<int> node_free_;       // per dense node: usable cards nobody holds now
  std::vector<int> gpu_free_slices_;  // per GPU: usable MIG slices nobody holds now
  // Usable whole cards by the time from which nothing is committed on them, and those with holes
  // by the longest: sorted vectors (a pass reads them in order far more than it changes them).
  // Built on first use (BuildTails), then kept current by Reindex.
  using Index = std::vector<std::pair<Time, int>>;
  mutable Index tails_;
  mutable Index holes_;  // (max_hole, unit), max_hole > 0
  // The cards in holes_ with a hole of d or longer: from the returned iterator to holes_.end().
  Index::const_iterator LongHoles(Duration d) const {
    return std::lower_bound(holes_.begin(), holes_.end(), std::pair<Time, int>{d, std::numeric_limits<int>::min()});
  }
  mutable bool tails_built_ = false;
  // Cards reindexed since the indexes were last brought up to date (SyncIndexes, before they are
  // read), and per unit the (tail, max_hole) the indexes hold for it.
  mutable std::vector<int> stale_;
  mutable std::vector<char> stale_flag_;
  mutable std::vector<std::pair<Time, Duration>> indexed_as_;
  mutable Index sync_[5];  // SyncIndexes' lists and scratch, kept for their memory

  // A kept plan's (see "Kept between passes").
  bool kept_ = false;
  Policy ends_;  // the policy it was made for: its rules for expected ends (ExpectedEnd)
  struct KeptRun {
    JobId job = 0;  // 0: a run the plan does not hold (RunningTaken moved one it had not seen)
    Time start = 0;
    Time end = 0;
    Allocation alloc;
  };
  std::vector<KeptRun> runs_;  // what the plan holds of state.running, in its order
  bool broken_ = true;         // Sync() must build the plan from the state
  int rebuilds_ = 0;
  struct Saved {
    // From the heap, as the kept plan's units: Rollback swaps the two, which needs one resource.
    Saved() : profile(std::pmr::new_delete_resource()) {}
    int unit = 0;
    Profile profile;
    MiB used_now = 0;
    MiB device_free = 0;
    bool shared = false;
  };
  std::vector<Saved> saved_;  // the units a pass changed, as they were; kept for their memory
  size_t n_saved_ = 0;
  std::vector<char> touched_;  // per unit: in saved_
  bool in_pass_ = false;       // between Sync() and Rollback()
};

template <typename Fn>
void CapacityPlan::ForAllocation(const Allocation& a, Fn&& fn) const {
  for (int gi : a.gpus) {
    if (gi < 0 || static_cast<size_t>(gi) >= state_->gpus.size()) continue;
    const Gpu& g = state_->gpus[gi];
    if (a.mig >= 0) {
      if (static_cast<size_t>(a.mig) < g.mig.size()) fn(first_unit_[gi] + a.mig, g.mig[a.mig].memory, false);
    } else if (g.mig.empty()) {
      fn(first_unit_[gi], a.memory > 0 ? a.memory : g.memory, a.memory > 0);
    }
  }
}

// Why a request that CapacityPlan::Possible refuses can never run on `gpus`, and what to ask for
// instead: "1 GPU, but every card here is in MIG mode: ask for a slice with --mig (3g.40gb)",
// "a memory share of 100G, larger than any card (the largest has 80G)", "3 GPUs, but a job runs
// on one node, and the largest here has 2 whole GPUs (4 GPUs on 2 nodes)".
std::string WhyNeverFits(const std::vector<Gpu>& gpus, const Request& r);

}  // namespace rota
