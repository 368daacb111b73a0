#include "slurm/reservations.h"

#include <algorithm>
#include <charconv>
#include <ctime>
#include <map>

#include "slurm/queue.h"

namespace rota::slurm {

namespace {

std::vector<std::string> SplitTopLevel(std::string_view s, char sep) {
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  for (char c : s) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == sep && depth == 0) {
      out.push_back(cur);
      cur.clear();
      continue;
    }
    cur += c;
  }
  out.push_back(cur);
  return out;
}

std::vector<std::string> Sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

std::string Joined(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : ",") + s;
  return out;
}

bool ParseNumber(std::string_view s, long& out) {
  if (s.empty() || s.size() > 9) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

}  // namespace

std::string ReservationName(std::string_view tag, std::int64_t booking_id) {
  return std::string(tag) + "-b" + std::to_string(booking_id);
}

std::int64_t BookingOfReservation(std::string_view tag, std::string_view name) {
  if (name.size() <= tag.size() + 2 || name.substr(0, tag.size()) != tag || name.substr(tag.size(), 2) != "-b") {
    return 0;
  }
  const std::string_view digits = name.substr(tag.size() + 2);
  std::int64_t id = 0;
  auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), id);
  if (digits.front() < '1' || digits.front() > '9' || ec != std::errc() || p != digits.data() + digits.size()) return 0;
  return id;
}

StatusOr<std::vector<std::string>> ExpandHostlist(std::string_view list, size_t max_hosts) {
  std::vector<std::string> hosts;
  if (list.empty() || list == "(null)") return hosts;
  auto too_many = [&](size_t more) {
    return hosts.size() + more > max_hosts
               ? InvalidArgument("host list \"" + std::string(list.substr(0, 80)) + "\" names more than " +
                                 std::to_string(max_hosts) + " hosts")
               : Status();
  };
  for (const std::string& item : SplitTopLevel(list, ',')) {
    const size_t open = item.find('[');
    if (open == std::string::npos) {
      if (item.empty() || item.find(']') != std::string::npos)
        return InvalidArgument("bad host list \"" + std::string(list) + "\"");
      if (Status s = too_many(1); !s.ok()) return s;
      hosts.push_back(item);
      continue;
    }
    const size_t close = item.find(']', open);
    if (close == std::string::npos || item.find('[', open + 1) != std::string::npos)
      return InvalidArgument("bad host list \"" + std::string(list) + "\"");
    const std::string prefix = item.substr(0, open), suffix = item.substr(close + 1);
    for (const std::string& range :
         SplitTopLevel(std::string_view(item).substr(open + 1, close - open - 1), ',')) {
      const size_t dash = range.find('-');
      const std::string lo_text = range.substr(0, dash);
      const std::string hi_text = dash == std::string::npos ? lo_text : range.substr(dash + 1);
      long lo = 0, hi = 0;
      if (!ParseNumber(lo_text, lo) || !ParseNumber(hi_text, hi) || hi < lo || hi - lo > 100000)
        return InvalidArgument("bad range \"" + range + "\" in host list \"" + std::string(list) + "\"");
      if (Status s = too_many(static_cast<size_t>(hi - lo + 1)); !s.ok()) return s;
      for (long n = lo; n <= hi; ++n) {
        std::string digits = std::to_string(n);
        // Zero padding as written: "gpu[01-10]" -> gpu01 ... gpu10.
        if (digits.size() < lo_text.size()) digits.insert(0, lo_text.size() - digits.size(), '0');
        hosts.push_back(prefix + digits + suffix);
      }
    }
  }
  return hosts;
}

StatusOr<std::vector<Reservation>> ParseReservations(std::string_view text) {
  std::vector<Reservation> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    if (line.rfind("No reservations", 0) == 0) continue;
    std::map<std::string, std::string, std::less<>> fields;
    for (const std::string& word : SplitTopLevel(line, ' ')) {
      const size_t eq = word.find('=');
      if (eq != std::string::npos) fields.emplace(word.substr(0, eq), word.substr(eq + 1));
    }
    auto field = [&](const char* key) -> std::string {
      auto it = fields.find(key);
      return it == fields.end() ? "" : it->second;
    };
    Reservation r;
    r.name = field("ReservationName");
    if (r.name.empty()) return InvalidArgument("a reservation line without a name: " + std::string(line));
    StatusOr<Time> start = ParseSlurmTime(field("StartTime"));
    StatusOr<Time> end = ParseSlurmTime(field("EndTime"));
    if (!start.ok() || !end.ok()) return InvalidArgument("reservation " + r.name + ": unreadable times");
    r.start = *start;
    r.end = *end;
    StatusOr<std::vector<std::string>> nodes = ExpandHostlist(field("Nodes"));
    if (!nodes.ok()) return InvalidArgument("reservation " + r.name + ": " + nodes.status().message());
    r.nodes = Sorted(*nodes);
    const std::string users = field("Users");
    if (!users.empty() && users != "(null)") r.users = Sorted(SplitTopLevel(users, ','));
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<ReservationChange> PlanReservations(std::string_view tag, const std::vector<Reservation>& wanted,
                                                const std::vector<Reservation>& existing, Time now) {
  std::map<std::string, const Reservation*> want;
  for (const Reservation& w : wanted) {
    if (w.end > now && !w.nodes.empty()) want.emplace(w.name, &w);
  }
  std::vector<ReservationChange> deletes, others;
  std::map<std::string, const Reservation*> have;
  for (const Reservation& e : existing) {
    if (BookingOfReservation(tag, e.name) == 0) continue;  // not this Rota's
    have[e.name] = &e;
    if (want.count(e.name) == 0) deletes.push_back({ReservationChange::Kind::kDelete, e, false});
  }
  for (const Reservation& w : wanted) {  // in the order given
    auto wi = want.find(w.name);
    if (wi == want.end() || wi->second != &w) continue;  // over, without nodes, or named twice
    const std::string& name = w.name;
    Reservation r = w;
    r.users = Sorted(r.users);
    r.nodes = Sorted(r.nodes);
    auto it = have.find(name);
    if (it == have.end()) {
      others.push_back({ReservationChange::Kind::kCreate, r, false});
      continue;
    }
    const Reservation& e = *it->second;
    const bool started = e.start <= now;
    const bool same_start = started ? true : e.start == std::max(r.start, now);
    if (e.end != r.end || e.users != r.users || e.nodes != r.nodes || !same_start)
      others.push_back({ReservationChange::Kind::kUpdate, r, started});
  }
  deletes.insert(deletes.end(), others.begin(), others.end());
  return deletes;
}

std::vector<std::string> ReservationArgv(const std::string& scontrol, const ReservationChange& c, Time now) {
  const Reservation& r = c.r;
  if (c.kind == ReservationChange::Kind::kDelete) return {scontrol, "delete", "ReservationName=" + r.name};
  std::vector<std::string> a = {scontrol};
  if (c.kind == ReservationChange::Kind::kCreate) {
    a.push_back("create");
    a.push_back("reservation");
  } else {
    a.push_back("update");
  }
  a.push_back("ReservationName=" + r.name);
  // Slurm refuses a start in the past ("Invalid time specified"): a booking under way starts now.
  if (!c.started) a.push_back("StartTime=" + (r.start > now ? SlurmTime(r.start) : std::string("now")));
  a.push_back("EndTime=" + SlurmTime(r.end));
  a.push_back("Users=" + Joined(r.users));
  a.push_back("Nodes=" + Joined(r.nodes));
  // Rota's core has planned the jobs around the booking already; Slurm would otherwise refuse a
  // reservation on nodes where a job's time limit reaches into it.
  if (c.kind == ReservationChange::Kind::kCreate) a.push_back("Flags=IGNORE_JOBS");
  return a;
}

}  // namespace rota::slurm
