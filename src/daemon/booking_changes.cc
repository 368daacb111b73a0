// Changes to a booking: cancel (unbook), release, extend, approve and reject, each by its owner
// or an admin (OwnBooking), written to the store before memory (SaveBooking, through
// BookingBook), with the events that tell the people concerned. Tested in-process by
// dispatch_test.cc and with real processes by tests/daemon/test_bookings.py.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "api/protocol.h"
#include "api/request_fields.h"
#include "api/when.h"
#include "api/zone_json.h"
#include "daemon/booking_desk.h"

namespace rota::daemon {

using nlohmann::json;

namespace {

// How far ahead an extension may reach: well within every time the daemon formats or adds to.
constexpr Time kLongestExtension = 366 * kDay;

StatusOr<std::int64_t> BookingId(const json& request) { return api::fields::Id(request, "booking_id", "a booking id"); }

}  // namespace

StatusOr<const store::BookingRecord*> BookingDesk::OwnBooking(const Caller& caller, const json& request) {
  StatusOr<std::int64_t> id = BookingId(request);
  if (!id.ok()) return id.status();
  const store::BookingRecord* b = book_->Find(*id);
  if (b == nullptr) {
    StatusOr<store::BookingRecord> old = store_->GetBooking(*id);
    if (!old.ok()) return old.status();
    return FailedPrecondition("booking " + std::to_string(*id) + " is " + BookingStateName(old->entry.state));
  }
  if (!caller.admin && b->entry.spec.user != caller.name) {
    return PermissionDenied("booking " + std::to_string(*id) + " belongs to " + b->entry.spec.user);
  }
  return b;
}

Status BookingDesk::SaveBooking(store::BookingRecord& rec, BookingState from, const std::string& reason,
                                const std::string& actor, Time now, bool durable, const char* notice) {
  const BookingState to = rec.entry.state;
  const char* event = notice;
  if (event == nullptr && to != from && actor != rec.entry.spec.user) {
    if (to == BookingState::kConfirmed) event = "booking_confirmed";
    if (to == BookingState::kRejected) event = "booking_rejected";
    if (to == BookingState::kActive) event = "booking_starting";
    if (to == BookingState::kNoShow) event = "booking_no_show";
    if (to == BookingState::kOverrun) event = "booking_overrun";
  }
  std::function<void()> tell;
  if (event != nullptr) tell = [&] { NotifyBooking(event, rec, notice ? "" : reason, actor, now); };
  if (Status s = book_->Save(rec, from, reason, actor, now, durable, tell); !s.ok()) return s;
  if (event != nullptr) notes_->Wake();  // the notice is committed now: the notifier may read it
  changed_();
  spdlog::info("booking {}: {} -> {}: {}", rec.entry.id, BookingStateName(from), BookingStateName(rec.entry.state),
               reason);
  return Status();
}

json BookingDesk::Unbook(const Caller& caller, const json& request) {
  StatusOr<const store::BookingRecord*> found = OwnBooking(caller, request);
  if (!found.ok()) return api::ErrorReply(found.status());
  store::BookingRecord rec = **found;
  const BookingState from = rec.entry.state;
  if (!IsOpen(from)) {
    return api::ErrorReply(FailedPrecondition("booking " + std::to_string(rec.entry.id) + " is already " +
                                              BookingStateName(from)));
  }
  if (from == BookingState::kActive) {
    return api::ErrorReply(FailedPrecondition("booking " + std::to_string(rec.entry.id) +
                                              " is active: end it with `rota release " +
                                              std::to_string(rec.entry.id) + "`"));
  }
  const Time now = Now();
  rec.entry.state = BookingState::kCancelled;
  rec.entry.actual_end = now;
  rec.reason = "cancelled by " + caller.Who();
  if (Status s = SaveBooking(rec, from, "Cancelled by " + caller.Who(), caller.Who(), now, true); !s.ok()) {
    return api::ErrorReply(Unavailable("cannot record it: " + s.message()));
  }
  json out = api::OkReply();
  out["booking"] = BookingJson(rec, caller);
  return out;
}

json BookingDesk::ReleaseBooking(const Caller& caller, const json& request) {
  std::vector<const store::BookingRecord*> targets;
  if (request.contains("booking_id")) {
    StatusOr<const store::BookingRecord*> found = OwnBooking(caller, request);
    if (!found.ok()) return api::ErrorReply(found.status());
    if ((*found)->entry.state != BookingState::kActive) {
      return api::ErrorReply(FailedPrecondition("booking " + std::to_string((*found)->entry.id) + " is " +
                                                BookingStateName((*found)->entry.state) +
                                                ", not active (cancel a future one with `rota unbook`)"));
    }
    targets.push_back(*found);
  } else {
    for (const auto& [id, r] : book_->all()) {
      if (r.entry.state == BookingState::kActive && r.entry.spec.user == caller.name) targets.push_back(&r);
    }
    if (targets.empty()) return api::ErrorReply(FailedPrecondition("you have no active booking"));
  }
  const Time now = Now();
  json released = json::array();
  for (const store::BookingRecord* target : targets) {
    store::BookingRecord rec = *target;
    rec.entry.state = BookingState::kReleased;
    rec.entry.actual_end = now;
    rec.reason = "released by " + caller.Who();
    if (Status s = SaveBooking(rec, BookingState::kActive, "Released by " + caller.Who(), caller.Who(), now, true);
        !s.ok()) {
      return api::ErrorReply(Unavailable("cannot record it: " + s.message()));
    }
    released.push_back(BookingJson(rec, caller));
  }
  json out = api::OkReply();
  out["bookings"] = std::move(released);
  return out;
}

json BookingDesk::ExtendBooking(const Caller& caller, const json& request) {
  StatusOr<const store::BookingRecord*> found = OwnBooking(caller, request);
  if (!found.ok()) return api::ErrorReply(found.status());
  store::BookingRecord rec = **found;
  const BookingState from = rec.entry.state;
  const Time now = Now();
  Time end = rec.entry.spec.end;
  if (auto it = request.find("end"); it != request.end()) {
    StatusOr<Time> t = it->is_number_integer() ? StatusOr<Time>(it->get<Time>())
                       : it->is_string()       ? api::ParseWhen(it->get<std::string>(), now,
                                                                config_.policy.zone, rec.entry.spec.start)
                                               : StatusOr<Time>(InvalidArgument("\"end\" must be a time"));
    if (!t.ok()) return api::ErrorReply(t.status());
    end = *t;
  } else if (auto f = request.find("for"); f != request.end() && f->is_number_integer() && f->get<Duration>() > 0) {
    // Checked arithmetic: a "for" of 2^62 seconds must be an error, not an overflow.
    if (__builtin_add_overflow(end, f->get<Duration>(), &end)) end = std::numeric_limits<Time>::max();
  } else {
    return api::ErrorReply(InvalidArgument("extend needs a new end (--until) or more time (--for)"));
  }
  if (end > now + kLongestExtension) {
    return api::ErrorReply(InvalidArgument("the new end is more than a year from now; book again later instead"));
  }
  if (end <= rec.entry.spec.end) {
    return api::ErrorReply(InvalidArgument("the new end " + LocalTime(end) + " is not after the current end " +
                                           LocalTime(rec.entry.spec.end)));
  }
  // The same cards, longer: checked as a booking of those cards from now (or its start) on.
  BookingSpec spec = rec.entry.spec;
  spec.start = std::max(spec.start, now - now % config_.bookings.slot);
  spec.end = end;
  if (rec.entry.alloc.mig < 0 && spec.request.kind == RequestKind::kWholeGpus) spec.cards = rec.entry.alloc.gpus;
  BookingCheck check = CheckBooking(spec, book_->Entries(), cards_.gpus(), config_.bookings, config_.policy, now, caller.admin,
                                    rec.entry.id);
  // A booking under way may start in the past; only the new end matters for the rules here.
  std::erase_if(check.errors, [](const std::string& e) { return e.find("in the past") != std::string::npos; });
  if (!check.errors.empty()) return api::ErrorReply(InvalidArgument(Join(check.errors, "; ")));
  if (!check.alloc || (rec.entry.alloc.mig >= 0 && check.alloc->mig != rec.entry.alloc.mig) ||
      (!rec.entry.alloc.gpus.empty() && check.alloc->gpus != rec.entry.alloc.gpus)) {
    std::vector<std::string> in_way;
    for (std::int64_t id : check.conflicts) {
      if (const store::BookingRecord* b = book_->Find(id)) in_way.push_back(DescribeBooking(*b));
    }
    return api::ErrorReply(FailedPrecondition("the same capacity is not free until " + LocalTime(end) +
                                              (in_way.empty() ? "" : " (booking " + Join(in_way, ", booking ") + ")")));
  }
  const Time old_end = rec.entry.spec.end;
  rec.entry.spec.end = end;
  rec.entry.reminded = false;
  const std::string why = "Extended from " + LocalTime(old_end) + " to " + LocalTime(end) + " by " + caller.Who();
  if (Status s = SaveBooking(rec, from, why, caller.Who(), now, true); !s.ok()) {
    return api::ErrorReply(Unavailable("cannot record it: " + s.message()));
  }
  json out = api::OkReply();
  out["booking"] = BookingJson(rec, caller);
  out["zone"] = api::ZoneJson(config_.policy.zone, rec.entry.spec.start - kDay, end + kDay);
  return out;
}

json BookingDesk::DecideBooking(const Caller& caller, const json& request, bool approve) {
  StatusOr<const store::BookingRecord*> found = OwnBooking(caller, request);
  if (!found.ok()) return api::ErrorReply(found.status());
  store::BookingRecord rec = **found;
  if (rec.entry.state != BookingState::kRequested) {
    return api::ErrorReply(FailedPrecondition("booking " + std::to_string(rec.entry.id) + " is " +
                                              BookingStateName(rec.entry.state) + ", not requested"));
  }
  StatusOr<std::string> reason_field = api::fields::Text(request, "reason");
  if (!reason_field.ok()) return api::ErrorReply(reason_field.status());
  const std::string reason = *reason_field;
  const std::string admin = caller.Who();
  const Time now = Now();
  if (!approve) {
    if (reason.empty()) return api::ErrorReply(InvalidArgument("reject needs a reason (the owner is told)"));
    rec.entry.state = BookingState::kRejected;
    rec.entry.actual_end = now;
    rec.decided_by = admin;
    rec.reason = reason;
    if (Status s = SaveBooking(rec, BookingState::kRequested, "Rejected by " + admin + ": " + reason, admin, now, true);
        !s.ok()) {
      return api::ErrorReply(Unavailable("cannot record it: " + s.message()));
    }
    json out = api::OkReply();
    out["booking"] = BookingJson(rec, caller);
    return out;
  }
  BookingCheck check = CheckBooking(rec.entry.spec, book_->Entries(), cards_.gpus(), config_.bookings, config_.policy,
                                    now, /*by_admin=*/true, rec.entry.id);
  if (!check.errors.empty()) return api::ErrorReply(InvalidArgument(Join(check.errors, "; ")));
  json displaced = json::array();
  if (!check.alloc) {
    // An admin's decision displaces the bookings in the way, never silently: a reason is needed,
    // and their owners get it with the nearest free starts.
    if (reason.empty()) {
      return api::ErrorReply(InvalidArgument("approving booking " + std::to_string(rec.entry.id) +
                                             " displaces others; give a reason (their owners are told)"));
    }
    // Where the approved booking goes once the future bookings in its way are gone: the displaced
    // owners' nearest free starts are computed around it.
    std::vector<std::int64_t> victims;
    for (std::int64_t id : check.conflicts) {
      const store::BookingRecord* b = book_->Find(id);
      if (b != nullptr && b->entry.state != BookingState::kActive) victims.push_back(id);
    }
    std::vector<BookingEntry> remaining = book_->Entries();
    std::erase_if(remaining, [&](const BookingEntry& e) {
      return std::find(victims.begin(), victims.end(), e.id) != victims.end();
    });
    BookingCheck placed = CheckBooking(rec.entry.spec, remaining, cards_.gpus(), config_.bookings, config_.policy, now,
                                       true, rec.entry.id);
    if (placed.alloc) {
      BookingEntry approved = rec.entry;
      approved.alloc = *placed.alloc;
      approved.state = BookingState::kConfirmed;
      std::erase_if(remaining, [&](const BookingEntry& e) { return e.id == rec.entry.id; });
      remaining.push_back(approved);
    }
    for (std::int64_t id : victims) {
      store::BookingRecord victim = *book_->Find(id);
      const BookingState from = victim.entry.state;
      BookingCheck moved = CheckBooking(victim.entry.spec, remaining, cards_.gpus(), config_.bookings, config_.policy, now,
                                        true, id);
      std::vector<std::string> free;
      for (Time t : moved.alternatives) free.push_back(LocalTime(t));
      if (moved.alloc) free.insert(free.begin(), LocalTime(victim.entry.spec.start) + " on other cards");
      victim.entry.state = BookingState::kRejected;
      victim.entry.actual_end = now;
      victim.decided_by = admin;
      victim.reason = "displaced by booking " + std::to_string(rec.entry.id) + ": " + reason +
                      (free.empty() ? "" : "; free: " + Join(free, ", "));
      if (Status s = SaveBooking(victim, from, "Displaced by booking " + std::to_string(rec.entry.id) + " (" + admin +
                                                   "): " + victim.reason,
                                 admin, now, true);
          !s.ok()) {
        return api::ErrorReply(Unavailable("cannot record it: " + s.message()));
      }
      displaced.push_back(id);
    }
    check = CheckBooking(rec.entry.spec, book_->Entries(), cards_.gpus(), config_.bookings, config_.policy, now, true,
                         rec.entry.id);
    if (!check.alloc) {
      return api::ErrorReply(FailedPrecondition("booking " + std::to_string(rec.entry.id) +
                                                " still does not fit (an active booking is in the way)"));
    }
  }
  BookingBook::Place(rec, *check.alloc, cards_.gpus());
  rec.entry.state = BookingState::kConfirmed;
  rec.decided_by = admin;
  rec.reason = reason.empty() ? "approved by " + admin : reason;
  if (Status s = SaveBooking(rec, BookingState::kRequested, "Approved by " + admin + (reason.empty() ? "" : ": " + reason),
                             admin, now, true);
      !s.ok()) {
    return api::ErrorReply(Unavailable("cannot record it: " + s.message()));
  }
  json out = api::OkReply();
  out["booking"] = BookingJson(rec, caller);
  out["displaced"] = displaced;
  return out;
}

}  // namespace rota::daemon
