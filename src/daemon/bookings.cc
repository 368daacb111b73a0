// Booking requests: book (with dry runs), list, cancel, release, extend, approve and reject. The
// rules are the core's (core/booking.h); this file turns requests into specs, applies verdicts to
// the store first and to memory second, and says what happened in words a student understands.
// Tested by tests/daemon/test_bookings.py.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <limits>

#include "api/job_json.h"
#include "api/protocol.h"
#include "api/request_fields.h"
#include "api/when.h"
#include "api/zone_json.h"
#include "core/civil_date.h"
#include "core/usage.h"
#include "daemon/clock.h"
#include "daemon/daemon.h"

namespace rota::daemon {

using nlohmann::json;

// How far ahead an extension may reach, and how far from now any time of a booking request may be
// at all: well within every time the daemon formats or adds to (the rules narrow it further).
constexpr Time kLongestExtension = 366 * kDay;
constexpr Time kFarestBookingTime = 10 * 366 * kDay;

namespace {

json CheckJson(const BookingCheck& c) {
  return {{"errors", c.errors},
          {"needs_admin", c.needs_admin},
          {"conflicts", c.conflicts},
          {"alternatives", c.alternatives},
          {"gpu_hours", c.gpu_hours}};
}

StatusOr<std::int64_t> BookingId(const json& request) {
  auto it = request.find("booking_id");
  if (it == request.end() || !it->is_number_integer() || it->get<std::int64_t>() <= 0) {
    return InvalidArgument("\"booking_id\" must be a booking id (a positive whole number)");
  }
  return it->get<std::int64_t>();
}

std::string ActorOf(const Caller& caller) { return caller.name.empty() ? std::to_string(caller.uid) : caller.name; }

}  // namespace

std::string Daemon::LocalTime(Time t) const { return FormatLocal(t, config_.policy.zone); }

std::string Daemon::DescribeBooking(const store::BookingRecord& rec) const {
  const BookingEntry& e = rec.entry;
  std::vector<std::string> cards;
  for (int g : e.alloc.gpus) {
    if (g >= 0 && static_cast<size_t>(g) < cards_.gpus.size()) cards.push_back(std::to_string(cards_.gpus[g].index));
  }
  std::string where = cards.empty() ? "not placed" : "GPU " + Join(cards, ",");
  if (e.alloc.mig >= 0 && !e.alloc.gpus.empty()) where += " slice " + e.spec.request.mig_profile;
  if (e.spec.request.kind == RequestKind::kMemShare) where += " " + FormatMemory(e.spec.request.memory);
  return std::to_string(e.id) + " (" + e.spec.user + ", " + where + ", " + LocalTime(e.spec.start) + " to " +
         LocalTime(e.spec.end) + ")";
}

void Daemon::NotifyBooking(const std::string& name, const store::BookingRecord& rec, const std::string& reason,
                           const std::string& actor, Time now) {
  const BookingEntry& e = rec.entry;
  notify::Event ev;
  ev.name = name;
  ev.user = e.spec.user;
  ev.booking = e.id;
  ev.reason = reason;
  ev.actor = actor == "rotad" ? "" : actor;
  std::vector<std::string> cards;
  for (int g : e.alloc.gpus) {
    if (g >= 0 && static_cast<size_t>(g) < cards_.gpus.size()) cards.push_back(std::to_string(cards_.gpus[g].index));
  }
  ev.gpus = Join(cards, ",");
  ev.when = LocalTime(e.spec.start) + " - " + LocalTime(e.spec.end);
  ev.minutes = e.spec.end > now ? (e.spec.end - now + 59) / 60 : 0;
  Notify(ev);
}

StatusOr<BookingSpec> Daemon::BookingSpecFrom(const Caller& caller, const json& b, Time now) {
  if (!b.is_object()) return InvalidArgument("\"booking\" must be an object");
  BookingSpec spec;
  spec.user = caller.name;
  if (b.contains("user") && b["user"].is_string() && b["user"].get<std::string>() != caller.name) {
    if (!caller.admin) return PermissionDenied("only admins may book for someone else");
    spec.user = b["user"].get<std::string>();
  }
  if (spec.user.empty()) return PermissionDenied("uid " + std::to_string(caller.uid) + " has no user name here");
  // gpus (any N whole cards), or gpu_mem (a share) or mig (a slice); gpu_ids names the cards: with
  // nothing else, that many whole cards; with a share or a slice, the card it must be on.
  int kinds = 0;
  if (auto it = b.find("gpu_ids"); it != b.end()) {
    if (!it->is_array() || it->empty()) return InvalidArgument("\"gpu_ids\" must list GPUs (indices or UUIDs)");
    for (const json& id : *it) {
      const std::string name = id.is_string() ? id.get<std::string>() : id.dump();
      StatusOr<size_t> card = FindCard(name);
      if (!card.ok()) return InvalidArgument(card.status().message());
      spec.cards.push_back(static_cast<int>(*card));
    }
    spec.request.kind = RequestKind::kWholeGpus;
    spec.request.gpus = static_cast<int>(spec.cards.size());
  }
  if (auto it = b.find("gpus"); it != b.end()) {
    if (!it->is_number_integer() || it->get<int>() < 1) return InvalidArgument("\"gpus\" must be a number of GPUs >= 1");
    if (!spec.cards.empty() && it->get<int>() != static_cast<int>(spec.cards.size())) {
      return InvalidArgument("\"gpus\" and the number of \"gpu_ids\" disagree");
    }
    spec.request.kind = RequestKind::kWholeGpus;
    spec.request.gpus = it->get<int>();
    ++kinds;
  }
  if (auto it = b.find("gpu_mem"); it != b.end()) {
    if (!it->is_number_integer() || it->get<MiB>() <= 0) return InvalidArgument("\"gpu_mem\" must be MiB above zero");
    spec.request.kind = RequestKind::kMemShare;
    spec.request.memory = it->get<MiB>();
    spec.request.gpus = 1;
    ++kinds;
  }
  if (auto it = b.find("mig"); it != b.end()) {
    if (!it->is_string()) return InvalidArgument("\"mig\" must be a MIG profile such as \"3g.40gb\"");
    spec.request.kind = RequestKind::kMig;
    spec.request.mig_profile = it->get<std::string>();
    spec.request.gpus = 1;
    ++kinds;
  }
  if (kinds == 0 && spec.cards.empty()) {
    return InvalidArgument("say what to book: gpus (any N), gpu_ids (these cards), gpu_mem or mig");
  }
  if (kinds > 1) return InvalidArgument("book one kind of capacity: gpus, gpu_mem or mig");
  const Zone& zone = config_.policy.zone;
  auto when = [&](const char* key, Time base_day) -> StatusOr<Time> {
    auto it = b.find(key);
    if (it == b.end()) return NotFound(key);
    if (it->is_number_integer()) return it->get<Time>();
    if (!it->is_string()) return InvalidArgument(std::string("\"") + key + "\" must be a time");
    return api::ParseWhen(it->get<std::string>(), now, zone, base_day);
  };
  StatusOr<Time> start = when("start", 0);
  if (!start.ok()) {
    if (start.status().code() == StatusCode::kNotFound) return InvalidArgument("a booking needs a start (--from)");
    return start.status();
  }
  spec.start = *start;
  StatusOr<Time> end = when("end", spec.start);
  if (end.ok()) {
    spec.end = *end;
  } else if (end.status().code() != StatusCode::kNotFound) {
    return end.status();
  } else if (auto it = b.find("for"); it != b.end() && it->is_number_integer() && it->get<Duration>() > 0) {
    if (__builtin_add_overflow(spec.start, it->get<Duration>(), &spec.end)) spec.end = std::numeric_limits<Time>::max();
  } else {
    return InvalidArgument("a booking needs an end (--until) or a length (--for)");
  }
  // Times from a request are any 64-bit numbers: far outside these bounds, what the calendar adds
  // to or formats would overflow. The rules ([bookings]) then narrow them much further.
  for (Time t : {spec.start, spec.end}) {
    if (t < now - kFarestBookingTime || t > now + kFarestBookingTime) {
      return InvalidArgument("a booking's start and end must lie within ten years of now (got " + std::to_string(t) + ")");
    }
  }
  spec.project = b.value("project", "");
  if (!config_.projects.empty() && !spec.project.empty() && !config_.projects.count(spec.project)) {
    std::vector<std::string> known;
    for (const auto& [name, p] : config_.projects) known.push_back(name);
    return InvalidArgument("unknown project \"" + spec.project + "\" (this server has: " + Join(known, ", ") + ")");
  }
  std::optional<Tier> tier = ParseTier(b.value("tier", "regular"));
  if (!tier) return InvalidArgument("tier must be explore, regular or thesis");
  spec.tier = *tier;
  spec.note = b.value("note", "");
  return spec;
}

json Daemon::Book(const Caller& caller, const json& request) {
  const Time now = Now();
  StatusOr<BookingSpec> spec = BookingSpecFrom(caller, request.value("booking", json()), now);
  if (!spec.ok()) return api::ErrorReply(spec.status());
  const BookingCheck check =
      CheckBooking(*spec, book_->Entries(), cards_.gpus, config_.bookings, config_.policy, now, caller.admin);
  StatusOr<bool> dry_run_field = api::fields::Bool(request, "dry_run");
  if (!dry_run_field.ok()) return api::ErrorReply(dry_run_field.status());
  const bool dry_run = *dry_run_field;
  store::BookingRecord rec;
  rec.entry.spec = *spec;
  rec.uid = spec->user == caller.name ? static_cast<std::int64_t>(caller.uid) : -1;
  for (int c : spec->cards) rec.asked_cards.push_back(cards_.gpus[static_cast<size_t>(c)].uuid);
  rec.created = now;
  rec.decided_by = "rotad";
  // The zone over the times the reply may name (the booking, the free starts nearby), for the
  // client to show them as they were read.
  const json zone = api::ZoneJson(config_.policy.zone, std::min(now, spec->start) - kDay,
                                  std::max(spec->end, now + config_.bookings.max_ahead) + kDay);
  // A dry run answers what would happen, refusals included, without storing anything.
  auto refuse = [&](const Status& why) {
    if (!dry_run) {
      json err = api::ErrorReply(why);
      err["error"]["details"] = CheckJson(check);
      err["zone"] = zone;
      return err;
    }
    json out = api::OkReply();
    out["zone"] = zone;
    out["dry_run"] = true;
    out["check"] = CheckJson(check);
    out["refused"] = why.message();
    rec.entry.state = BookingState::kRejected;
    rec.reason = why.message();
    out["booking"] = BookingJson(rec, caller);
    out["booking"]["gpu_hours"] = check.gpu_hours;  // what it would have held
    return out;
  };
  if (!check.errors.empty()) return refuse(InvalidArgument(Join(check.errors, "; ")));
  const bool thesis_over_others = !check.alloc && spec->tier == Tier::kThesis && !check.conflicts.empty();
  if (!check.alloc && !thesis_over_others) {
    std::vector<std::string> in_way, free;
    for (std::int64_t id : check.conflicts) {
      if (const store::BookingRecord* b = book_->Find(id)) in_way.push_back(DescribeBooking(*b));
    }
    for (Time t : check.alternatives) free.push_back(LocalTime(t));
    std::string msg = "the capacity is booked then";
    if (!in_way.empty()) msg += " (by booking " + Join(in_way, ", booking ") + ")";
    msg += free.empty() ? "; no free start nearby" : "; free starts nearby: " + Join(free, ", ");
    return refuse(FailedPrecondition(msg));
  }
  if (check.alloc) BookingBook::Place(rec, *check.alloc, cards_.gpus);
  if (check.needs_admin.empty()) {
    rec.entry.state = BookingState::kConfirmed;
    rec.reason = "within the rules";
  } else {
    rec.entry.state = BookingState::kRequested;
    rec.reason = "needs an admin: " + Join(check.needs_admin, "; ");
  }
  json out = api::OkReply();
  out["zone"] = zone;
  out["check"] = CheckJson(check);
  if (!dry_run) {
    StatusOr<std::int64_t> id = book_->Add(rec, ActorOf(caller), now);
    if (!id.ok()) return api::ErrorReply(Unavailable("cannot record the booking: " + id.status().message()));
    rec.entry.id = *id;
    dirty_ = true;  // a new hold for the scheduler
    spdlog::info("booking {}: {}, {}", DescribeBooking(rec), BookingStateName(rec.entry.state), rec.reason);
  }
  out["booking"] = BookingJson(rec, caller);
  out["dry_run"] = dry_run;
  return out;
}

json Daemon::BookingJson(const store::BookingRecord& rec, const Caller& caller) const {
  const BookingEntry& e = rec.entry;
  json gpus = json::array();
  for (int g : e.alloc.gpus) {
    if (g >= 0 && static_cast<size_t>(g) < cards_.gpus.size()) gpus.push_back(cards_.gpus[g].index);
  }
  return {{"id", e.id},
          {"user", e.spec.user},
          {"project", e.spec.project},
          {"note", e.spec.note},
          {"tier", TierName(e.spec.tier)},
          {"request", api::RequestToJson(e.spec.request)},
          {"gpus", gpus},
          {"gpu_uuids", rec.gpu_uuids},
          {"mig_uuid", rec.mig_uuid},
          {"start", e.spec.start},
          {"end", e.spec.end},
          {"state", BookingStateName(e.state)},
          {"actual_end", e.actual_end},
          {"created", rec.created},
          {"decided_by", rec.decided_by},
          {"reason", rec.reason},
          {"gpu_hours", HeldGpuHours(e, cards_.gpus)},
          {"mine", e.spec.user == caller.name}};
}

json Daemon::ListBookings(const Caller& caller, const json& request) {
  const Time now = Now();
  if (auto it = request.find("id"); it != request.end()) {
    if (!it->is_number_integer()) return api::ErrorReply(InvalidArgument("\"id\" must be a booking id"));
    StatusOr<store::BookingRecord> rec = store_->GetBooking(it->get<std::int64_t>());
    if (!rec.ok()) return api::ErrorReply(rec.status());
    if (const store::BookingRecord* live = book_->Find(rec->entry.id)) rec = *live;
    StatusOr<std::vector<store::BookingEvent>> events = store_->BookingEvents(rec->entry.id);
    if (!events.ok()) return api::ErrorReply(events.status());
    json b = BookingJson(*rec, caller);
    b["events"] = json::array();
    for (const store::BookingEvent& e : *events) {
      b["events"].push_back({{"time", e.time},
                             {"from", e.from ? json(BookingStateName(*e.from)) : json()},
                             {"to", BookingStateName(e.to)},
                             {"reason", e.reason},
                             {"actor", e.actor}});
    }
    json out = api::OkReply();
    out["bookings"] = json::array({b});
    return out;
  }
  StatusOr<bool> all_field = api::fields::Bool(request, "all");
  if (!all_field.ok()) return api::ErrorReply(all_field.status());
  StatusOr<bool> pending_field = api::fields::Bool(request, "pending");
  if (!pending_field.ok()) return api::ErrorReply(pending_field.status());
  const bool all = *all_field, pending = *pending_field;
  const Time week = WeekStart(now, config_.policy);
  auto time_field = [&](const char* key, Time fallback) -> StatusOr<Time> {
    auto it = request.find(key);
    if (it == request.end()) return fallback;
    if (it->is_number_integer()) return it->get<Time>();
    if (it->is_string()) return api::ParseWhen(it->get<std::string>(), now, config_.policy.zone);
    return InvalidArgument(std::string("\"") + key + "\" must be a time");
  };
  const Zone& zone = config_.policy.zone;
  // `week`: the week holding a day, read in the server's zone (rota bookings --week).
  StatusOr<Time> from_field = Time{0};
  if (auto it = request.find("week"); it != request.end()) {
    if (!it->is_string()) return api::ErrorReply(InvalidArgument("\"week\" must be text such as \"next\""));
    from_field = api::ParseWeek(it->get<std::string>(), now, zone);
  } else {
    from_field = time_field("from", week);
  }
  if (!from_field.ok()) return api::ErrorReply(from_field.status());
  // A week later on the wall clock: 167 or 169 hours across a change of daylight saving.
  StatusOr<Time> to_field = time_field("to", zone.FromLocal(zone.ToLocal(*from_field) + kWeek));
  if (!to_field.ok()) return api::ErrorReply(to_field.status());
  const Time from = *from_field;
  const Time to = *to_field;
  StatusOr<std::vector<store::BookingRecord>> rows = store_->BookingsBetween(from, to);
  if (!rows.ok()) return api::ErrorReply(rows.status());
  std::map<std::int64_t, store::BookingRecord> found;
  for (store::BookingRecord& r : *rows) found[r.entry.id] = std::move(r);
  for (const auto& [id, r] : book_->all()) {
    if (IsOpen(r.entry.state)) found[id] = r;  // open ones whatever their dates; memory is newer
  }
  json list = json::array();
  for (auto& [id, r] : found) {
    if (const store::BookingRecord* live = book_->Find(id)) r = *live;
    BookingBook::Remap(r, cards_.gpus);
    if (pending && r.entry.state != BookingState::kRequested) continue;
    if (!all && !pending && r.entry.spec.user != caller.name) continue;
    list.push_back(BookingJson(r, caller));
  }
  json out = api::OkReply();
  out["bookings"] = std::move(list);
  out["from"] = from;
  out["to"] = to;
  out["utc_offset"] = zone.OffsetAt(from);
  // Over the listed span and the open bookings of any date (up to max_ahead from now).
  out["zone"] = api::ZoneJson(zone, std::min(from, now) - kDay, std::max(to, now + config_.bookings.max_ahead) + kDay);
  return out;
}

StatusOr<const store::BookingRecord*> Daemon::OwnBooking(const Caller& caller, const json& request) {
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

Status Daemon::SaveBooking(store::BookingRecord& rec, BookingState from, const std::string& reason,
                           const std::string& actor, Time now, bool durable) {
  if (Status s = book_->Save(rec, from, reason, actor, now, durable); !s.ok()) return s;
  dirty_ = true;
  spdlog::info("booking {}: {} -> {}: {}", rec.entry.id, BookingStateName(from), BookingStateName(rec.entry.state),
               reason);
  const BookingState to = rec.entry.state;
  const char* event = nullptr;
  if (to != from) {
    if (to == BookingState::kConfirmed) event = "booking_confirmed";
    if (to == BookingState::kRejected) event = "booking_rejected";
    if (to == BookingState::kActive) event = "booking_starting";
    if (to == BookingState::kNoShow) event = "booking_no_show";
    if (to == BookingState::kOverrun) event = "booking_overrun";
  }
  if (event != nullptr && actor != rec.entry.spec.user) NotifyBooking(event, rec, reason, actor, now);
  return Status();
}

json Daemon::Unbook(const Caller& caller, const json& request) {
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
  rec.reason = "cancelled by " + ActorOf(caller);
  if (Status s = SaveBooking(rec, from, "Cancelled by " + ActorOf(caller), ActorOf(caller), now, true); !s.ok()) {
    return api::ErrorReply(Unavailable("cannot record it: " + s.message()));
  }
  json out = api::OkReply();
  out["booking"] = BookingJson(rec, caller);
  return out;
}

json Daemon::ReleaseBooking(const Caller& caller, const json& request) {
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
    rec.reason = "released by " + ActorOf(caller);
    if (Status s = SaveBooking(rec, BookingState::kActive, "Released by " + ActorOf(caller), ActorOf(caller), now, true);
        !s.ok()) {
      return api::ErrorReply(Unavailable("cannot record it: " + s.message()));
    }
    released.push_back(BookingJson(rec, caller));
  }
  json out = api::OkReply();
  out["bookings"] = std::move(released);
  return out;
}

json Daemon::ExtendBooking(const Caller& caller, const json& request) {
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
  BookingCheck check = CheckBooking(spec, book_->Entries(), cards_.gpus, config_.bookings, config_.policy, now, caller.admin,
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
  const std::string why = "Extended from " + LocalTime(old_end) + " to " + LocalTime(end) + " by " + ActorOf(caller);
  if (Status s = SaveBooking(rec, from, why, ActorOf(caller), now, true); !s.ok()) {
    return api::ErrorReply(Unavailable("cannot record it: " + s.message()));
  }
  json out = api::OkReply();
  out["booking"] = BookingJson(rec, caller);
  out["zone"] = api::ZoneJson(config_.policy.zone, rec.entry.spec.start - kDay, end + kDay);
  return out;
}

json Daemon::DecideBooking(const Caller& caller, const json& request, bool approve) {
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
  const std::string admin = ActorOf(caller);
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
  BookingCheck check = CheckBooking(rec.entry.spec, book_->Entries(), cards_.gpus, config_.bookings, config_.policy,
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
    BookingCheck placed = CheckBooking(rec.entry.spec, remaining, cards_.gpus, config_.bookings, config_.policy, now,
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
      BookingCheck moved = CheckBooking(victim.entry.spec, remaining, cards_.gpus, config_.bookings, config_.policy, now,
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
    check = CheckBooking(rec.entry.spec, book_->Entries(), cards_.gpus, config_.bookings, config_.policy, now, true,
                         rec.entry.id);
    if (!check.alloc) {
      return api::ErrorReply(FailedPrecondition("booking " + std::to_string(rec.entry.id) +
                                                " still does not fit (an active booking is in the way)"));
    }
  }
  BookingBook::Place(rec, *check.alloc, cards_.gpus);
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
