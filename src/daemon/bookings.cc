// Booking requests: book (with dry runs) and list; the changes to a booking (cancel, release,
// extend, approve, reject) are booking_changes.cc. The rules are the core's (core/booking.h);
// this file turns requests into specs, applies verdicts to the store first and to memory second
// (BookingBook), and says what happened in words a student understands. Tested in-process by
// lifecycle_test.cc and with real processes by tests/daemon/test_bookings.py.
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
#include "daemon/booking_desk.h"

namespace rota::daemon {

using nlohmann::json;

// How far from now any time of a booking request may be at all: well within every time the
// daemon formats or adds to (the rules narrow it further).
constexpr Time kFarestBookingTime = 10 * 366 * kDay;

namespace {

json CheckJson(const BookingCheck& c) {
  return {{"errors", c.errors},
          {"needs_admin", c.needs_admin},
          {"conflicts", c.conflicts},
          {"alternatives", c.alternatives},
          {"gpu_hours", c.gpu_hours}};
}

}  // namespace

std::string BookingDesk::LocalTime(Time t) const { return FormatLocal(t, config_.policy.zone); }

std::string BookingDesk::DescribeBooking(const store::BookingRecord& rec) const {
  const BookingEntry& e = rec.entry;
  const std::string cards = cards_.IndexList(e.alloc);
  std::string where = cards.empty() ? "not placed" : "GPU " + cards;
  if (e.alloc.mig >= 0 && !e.alloc.gpus.empty()) where += " slice " + e.spec.request.mig_profile;
  if (e.spec.request.kind == RequestKind::kMemShare) where += " " + FormatMemory(e.spec.request.memory);
  return std::to_string(e.id) + " (" + e.spec.user + ", " + where + ", " + LocalTime(e.spec.start) + " to " +
         LocalTime(e.spec.end) + ")";
}

void BookingDesk::NotifyBooking(const std::string& name, const store::BookingRecord& rec, const std::string& reason,
                           const std::string& actor, Time now) {
  const BookingEntry& e = rec.entry;
  notify::Event ev;
  ev.name = name;
  ev.user = e.spec.user;
  ev.booking = e.id;
  ev.reason = reason;
  ev.actor = actor == "rotad" ? "" : actor;
  ev.gpus = cards_.IndexList(e.alloc);
  ev.when = LocalTime(e.spec.start) + " - " + LocalTime(e.spec.end);
  ev.minutes = e.spec.end > now ? (e.spec.end - now + 59) / 60 : 0;
  notes_->Notify(ev);
}

StatusOr<BookingSpec> BookingDesk::BookingSpecFrom(const Caller& caller, const json& b, Time now) {
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
      StatusOr<size_t> card = cards_.Find(name);
      if (!card.ok()) return InvalidArgument(card.status().message());
      spec.cards.push_back(static_cast<int>(*card));
    }
    spec.request.kind = RequestKind::kWholeGpus;
    spec.request.gpus = static_cast<int>(spec.cards.size());
  }
  if (auto it = b.find("gpus"); it != b.end()) {
    // Compared as read (4294967297 as an int would be 1 GPU).
    if (!it->is_number_integer() || it->get<std::int64_t>() < 1 || it->get<std::int64_t>() > 4096) {
      return InvalidArgument("\"gpus\" must be a number of GPUs from 1 to 4096");
    }
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

json BookingDesk::Book(const Caller& caller, const json& request) {
  const Time now = Now();
  StatusOr<BookingSpec> spec = BookingSpecFrom(caller, request.value("booking", json()), now);
  if (!spec.ok()) return api::ErrorReply(spec.status());
  const BookingCheck check =
      CheckBooking(*spec, book_->Entries(), cards_.gpus(), config_.bookings, config_.policy, now, caller.admin);
  StatusOr<bool> dry_run_field = api::fields::Bool(request, "dry_run");
  if (!dry_run_field.ok()) return api::ErrorReply(dry_run_field.status());
  const bool dry_run = *dry_run_field;
  store::BookingRecord rec;
  rec.entry.spec = *spec;
  rec.uid = spec->user == caller.name ? static_cast<std::int64_t>(caller.uid) : -1;
  for (int c : spec->cards) rec.asked_cards.push_back(cards_.gpus()[static_cast<size_t>(c)].uuid);
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
  if (check.alloc) BookingBook::Place(rec, *check.alloc, cards_.gpus());
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
    StatusOr<std::int64_t> id = book_->Add(rec, caller.Who(), now);
    if (!id.ok()) return api::ErrorReply(Unavailable("cannot record the booking: " + id.status().message()));
    rec.entry.id = *id;
    changed_();  // a new hold for the scheduler
    spdlog::info("booking {}: {}, {}", DescribeBooking(rec), BookingStateName(rec.entry.state), rec.reason);
  }
  out["booking"] = BookingJson(rec, caller);
  out["dry_run"] = dry_run;
  return out;
}

json BookingDesk::BookingJson(const store::BookingRecord& rec, const Caller& caller) const {
  const BookingEntry& e = rec.entry;
  json gpus = json::array();
  for (int g : e.alloc.gpus) {
    if (g >= 0 && static_cast<size_t>(g) < cards_.gpus().size()) gpus.push_back(cards_.gpus()[g].index);
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
          {"gpu_hours", HeldGpuHours(e, cards_.gpus())},
          {"mine", e.spec.user == caller.name}};
}

json BookingDesk::ListBookings(const Caller& caller, const json& request) {
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
    BookingBook::Remap(r, cards_.gpus());
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

}  // namespace rota::daemon
