// Tested by gpus_format_test.cc.
//
// Design: a screen line is a row of plain cells plus a free-form tail (the holders). Widths are
// measured on the plain text and colour is wrapped around each cell after padding, so escape
// codes never count as columns. Every accessor tolerates a missing field or a wrong type: an
// older or newer daemon may leave one out, and one odd card must not hide the others.
#include "cli/gpus_format.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <map>
#include <set>
#include <vector>

#include "cli/json_fields.h"
#include "cli/text.h"

namespace rota::cli {

namespace {

using nlohmann::json;
using fields::Arr;
using fields::Bool;
using fields::Int;
using fields::Str;

constexpr const char* kRed = "\x1b[31m";
constexpr const char* kGreen = "\x1b[32m";
constexpr const char* kYellow = "\x1b[33m";
constexpr const char* kCyan = "\x1b[36m";
constexpr const char* kBoldCyan = "\x1b[1;36m";
constexpr const char* kReset = "\x1b[0m";

constexpr int kNameWidth = 24;     // the card's model name
constexpr int kJobNameWidth = 12;  // a holder's job name
constexpr int kHotCelsius = 80;    // temperature shown red from here
constexpr int kFullUtil = 90;      // utilisation shown yellow (saturated) from here

// MiB as GiB with one decimal ("20.1"); "?" when the source cannot say (negative).
std::string Gib(long long mib) {
  if (mib < 0) return "?";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", static_cast<double>(mib) / 1024.0);
  return buf;
}

class Painter {
 public:
  explicit Painter(bool on) : on_(on) {}
  std::string operator()(const std::string& text, const char* color) const {
    if (!on_ || color == nullptr || text.empty()) return text;
    return color + text + kReset;
  }

 private:
  bool on_;
};

struct Cell {
  std::string text;
  const char* color = nullptr;
};

// GPU NAME TEMP UTIL MEMORY, then the tail (already painted; it is the last column).
struct Row {
  Cell cells[5];
  std::string tail;
};

std::string Render(const std::vector<Row>& rows, const Painter& paint) {
  constexpr bool kRight[5] = {true, false, true, true, true};
  int widths[5] = {0, 0, 0, 0, 0};
  for (const Row& r : rows) {
    for (int i = 0; i < 5; ++i) widths[i] = std::max(widths[i], DisplayWidth(r.cells[i].text));
  }
  std::string out;
  for (const Row& r : rows) {
    std::string line;
    for (int i = 0; i < 5; ++i) {
      const Cell& c = r.cells[i];
      std::string pad(static_cast<size_t>(widths[i] - DisplayWidth(c.text)), ' ');
      line += kRight[i] ? pad + paint(c.text, c.color) : paint(c.text, c.color) + pad;
      line += "  ";
    }
    line += r.tail;
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

// "20.1G" for a whole card's holder; "9.5/20.0G" (used of share) for a memory share.
std::string HolderMemory(const json& h) {
  const long long used = Int(h, "memory_used", -1);
  const long long share = Int(h, "gpu_mem", 0);
  if (share > 0) return Gib(used) + "/" + Gib(share) + "G";
  return used < 0 ? "?" : Gib(used) + "G";
}

// "alice/17:bert(20.1G thesis 0:59 left)"; a session says so: "(... regular session 0:59 left)".
std::string Holder(const json& h, const Painter& paint) {
  std::string who = paint(Str(h, "user", "?"), Bool(h, "mine") ? kBoldCyan : kCyan) + "/" +
                    std::to_string(Int(h, "job_id", 0));
  std::string name = CutToWidth(Str(h, "name"), kJobNameWidth);
  if (!name.empty()) who += ":" + name;
  std::string what = HolderMemory(h) + " " + Str(h, "tier", "?");
  if (Bool(h, "interactive")) what += " session";
  if (long long left = Int(h, "time_left", -1); left >= 0) what += " " + FormatTimeLeft(left) + " left";
  return who + "(" + what + ")";
}

// Processes the holders do not account for: outside Rota, or a job's process on a card (or
// slice) its job does not hold. Summed per user (outside) or per job (not allocated), so a job
// with eight data-loader workers takes one entry, not eight.
std::vector<std::string> Strays(const json& processes, const Painter& paint) {
  struct Sum {
    std::string label;
    bool outside = true;
    long long memory = 0;
    bool known = false;  // some process's memory was known
    int count = 0;
    bool alarm = true;  // red: not a Slurm job's
  };
  std::vector<Sum> sums;
  std::map<std::string, size_t> index;
  for (const json& p : processes) {
    if (!p.is_object()) continue;
    const long long job = Int(p, "job_id", 0);
    const bool outside = Bool(p, "outside") || job == 0;
    if (!outside && Bool(p, "allocated", true)) continue;  // its job's memory_used covers it
    const long long pid = Int(p, "pid", -1);
    std::string user = Str(p, "user");
    std::string who = user.empty() ? "pid " + std::to_string(pid) : user;
    // A cluster node's process in a Slurm job outside Rota (plain sbatch): Slurm's, not a stray.
    const std::string slurm = outside && Bool(p, "in_slurm") ? Str(p, "slurm_job") : "";
    std::string key = !slurm.empty() ? "slurm:" + slurm
                      : outside      ? (user.empty() ? "pid:" + std::to_string(pid) : "user:" + user)
                                     : "job:" + std::to_string(job);
    auto [it, added] = index.emplace(key, sums.size());
    if (added) {
      sums.push_back({!slurm.empty() ? who + "/slurm:" + slurm
                      : outside      ? who + "/outside"
                                     : who + "/" + std::to_string(job) + "!",
                      outside, 0, false, 0, slurm.empty()});
    }
    Sum& s = sums[it->second];
    ++s.count;
    if (long long mem = Int(p, "memory", -1); mem >= 0) {
      s.memory += mem;
      s.known = true;
    }
  }
  std::vector<std::string> out;
  for (const Sum& s : sums) {
    std::string what = s.known ? Gib(s.memory) + "G" : "?";
    if (s.count > 1) what += " " + std::to_string(s.count) + " procs";
    if (!s.outside) what += " not allocated here";
    out.push_back(s.alarm ? paint(s.label + "(" + what + ")", kRed) : s.label + "(" + what + ")");
  }
  return out;
}

// DRAINED / SUSPECT markers of a card, "" for a healthy card in service.
std::string CardState(const json& g, const Painter& paint) {
  const std::string health = Str(g, "health");
  const std::string error = Str(g, "health_error");
  std::string out;
  if (Bool(g, "drained") || health == "drained") {
    const std::string by = Str(g, "drained_by");
    const std::string reason = Str(g, "drain_reason");
    std::string text;
    if (by == "health" || (by.empty() && health == "drained")) {
      // The last error says more than the generic reason of a health drain.
      const std::string why = error.empty() ? reason : error;
      text = "DRAINED (health)" + (why.empty() ? "" : ": " + why);
    } else {
      text = "DRAINED" + (by.empty() ? "" : " by " + by) + (reason.empty() ? "" : ": " + reason);
    }
    out = paint(text, kRed);
  }
  if (health == "suspect") {
    if (!out.empty()) out += "; ";
    out += paint("SUSPECT" + (error.empty() ? "" : ": " + error), kYellow);
  }
  return out;
}

// The tail of a card or slice line: state, then holders and strays ("; on it:" between them: a
// drain reason is free text, so no bare separator could tell where it ends); "free" when nothing
// is there.
std::string Tail(const std::string& state, const std::vector<std::string>& items, bool say_free,
                 const Painter& paint) {
  std::string joined;
  for (const std::string& item : items) joined += (joined.empty() ? "" : " ") + item;
  if (!state.empty()) return joined.empty() ? state : state + "; on it: " + joined;
  if (joined.empty() && say_free) return paint("free", kGreen);
  return joined;
}

std::string MemoryCell(const json& j) {
  return Gib(Int(j, "memory_used", -1)) + "/" + Gib(Int(j, "memory_total", -1)) + "G";
}

void AddCard(const json& g, const Painter& paint, std::vector<Row>* rows) {
  const json& slices = Arr(g, "mig");
  const json& holders = Arr(g, "jobs");
  std::set<std::string> slice_uuids;
  for (const json& m : slices) {
    if (m.is_object()) slice_uuids.insert(Str(m, "uuid"));
  }
  // Holders of the whole card, and any whose slice the sample does not list (not to lose them).
  std::vector<std::string> items;
  for (const json& h : holders) {
    if (h.is_object() && !slice_uuids.count(Str(h, "mig_uuid"))) items.push_back(Holder(h, paint));
  }
  for (std::string& s : Strays(Arr(g, "processes"), paint)) items.push_back(std::move(s));
  // A cluster's job outside Rota (plain sbatch) on the card: "bob/slurm:12(outside Rota)". Slurm's
  // to run, so not an alarm; but not free either.
  std::set<std::string> shown;  // Slurm jobs whose processes the node's agent named already
  for (const json& p : Arr(g, "processes")) {
    if (p.is_object() && Bool(p, "in_slurm")) shown.insert(Str(p, "slurm_job"));
  }
  for (const json& h : Arr(g, "held_by")) {
    // (Once each: on a card in MIG mode a job holding two slices is listed for each.)
    if (!h.is_object() || !shown.insert(Str(h, "slurm_job")).second) continue;
    items.push_back(paint(Str(h, "user", "?"), Bool(h, "mine") ? kBoldCyan : kCyan) + "/slurm:" +
                    Str(h, "slurm_job", "?") + "(outside Rota)");
  }
  if (items.empty() && Bool(g, "held_outside")) items.push_back(paint("held outside Rota", kYellow));

  Row row;
  const long long index = Int(g, "index", -1);
  row.cells[0] = {index < 0 ? "?" : std::to_string(index)};
  // A cluster's cards say their node first ("gpu-07 NVIDIA A100..."): which machine to look at.
  const std::string node = Str(g, "node");
  row.cells[1] = {CutToWidth((node.empty() ? "" : node + " ") + Str(g, "name", "?"), kNameWidth)};
  if (long long t = Int(g, "temperature", -1); t >= 0) {
    row.cells[2] = {std::to_string(t) + "C", t >= kHotCelsius ? kRed : nullptr};
  } else {
    row.cells[2] = {"?"};
  }
  if (long long u = Int(g, "util", -1); u >= 0) {
    row.cells[3] = {std::to_string(u) + "%", u >= kFullUtil ? kYellow : (u > 0 ? kGreen : nullptr)};
  } else {
    row.cells[3] = {"?"};
  }
  row.cells[4] = {MemoryCell(g)};
  row.tail = Tail(CardState(g, paint), items, slices.empty(), paint);
  rows->push_back(std::move(row));

  for (const json& m : slices) {
    if (!m.is_object()) continue;
    const std::string uuid = Str(m, "uuid");
    std::vector<std::string> slice_items;
    for (const json& h : holders) {
      if (h.is_object() && Str(h, "mig_uuid") == uuid) slice_items.push_back(Holder(h, paint));
    }
    for (std::string& s : Strays(Arr(m, "processes"), paint)) slice_items.push_back(std::move(s));
    // A cluster's job outside Rota holds it (which job holds which slice the cluster does not say:
    // the card's line names the jobs).
    if (slice_items.empty() && Bool(m, "held_outside")) slice_items.push_back(paint("held outside Rota", kYellow));
    Row slice;
    slice.cells[1] = {"\u2514 " + Str(m, "profile", "?")};
    slice.cells[4] = {MemoryCell(m)};
    slice.tail = Tail("", slice_items, true, paint);
    rows->push_back(std::move(slice));
  }
}

}  // namespace

std::string FormatTimeLeft(Duration d) {
  if (d <= 0) return "0:00";
  const long long minutes = (d + 59) / 60;
  const long long days = minutes / (24 * 60);
  const long long hours = minutes / 60 % 24;
  char buf[48];
  if (days > 0) {
    std::snprintf(buf, sizeof buf, "%lldd%02lld:%02lld", days, hours, minutes % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%lld:%02lld", hours, minutes % 60);
  }
  return buf;
}

std::string FormatGpus(const json& reply, const GpusFormat& options) {
  const Painter paint(options.color);
  std::string out;
  if (const std::string error = Str(reply, "sample_error"); !error.empty()) {
    const long long sampled = Int(reply, "sampled_at", 0);
    out += paint("GPU sample failed: " + error + "; " +
                     (sampled > 0 ? "values from " + FormatTime(sampled, "%H:%M:%S", "?") : std::string("no values yet")),
                 kYellow) +
           "\n";
  }
  std::string title = FormatTime(Int(reply, "time", 0), "%Y-%m-%d %H:%M:%S", "?");
  if (std::string driver = Str(reply, "driver_version"); !driver.empty()) title += "  driver " + driver;
  if (std::string source = Str(reply, "source"); !source.empty()) title += "  " + source;
  out += title + "\n";

  const json& gpus = Arr(reply, "gpus");
  if (gpus.empty()) return out + "no GPUs\n";
  std::vector<Row> rows;
  rows.push_back({{{"GPU"}, {"NAME"}, {"TEMP"}, {"UTIL"}, {"MEMORY"}}, "HOLDERS"});
  for (const json& g : gpus) {
    if (g.is_object()) AddCard(g, paint, &rows);
  }
  return out + Render(rows, paint);
}

}  // namespace rota::cli
