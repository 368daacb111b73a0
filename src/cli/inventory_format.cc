// Tested by inventory_format_test.cc.
//
// Design: both forms come from the same rows; only the table renderer differs (markdown pipes
// or columns padded by display width), so the wiki page and the terminal never disagree.
#include "cli/inventory_format.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>

#include "cli/gpus_format.h"
#include "cli/json_fields.h"
#include "cli/text.h"

namespace rota::cli {

namespace {

using nlohmann::json;
using fields::Arr;
using fields::Bool;
using fields::Int;
using fields::Str;

struct Column {
  std::string title;
  bool right = false;
};

// A markdown table, or columns padded by display width with two spaces between them.
std::string RenderTable(const std::vector<Column>& columns, const std::vector<std::vector<std::string>>& rows,
                        bool markdown) {
  std::string out;
  if (markdown) {
    auto cell = [](std::string text) {
      std::string escaped;
      for (char c : text) escaped += c == '|' ? std::string("\\|") : std::string(1, c);
      return escaped.empty() ? std::string("-") : escaped;
    };
    std::string header = "|", rule = "|";
    for (const Column& c : columns) {
      header += " " + c.title + " |";
      rule += c.right ? "---:|" : "---|";
    }
    out += header + "\n" + rule + "\n";
    for (const auto& row : rows) {
      std::string line = "|";
      for (size_t i = 0; i < columns.size(); ++i) line += " " + cell(i < row.size() ? row[i] : "") + " |";
      out += line + "\n";
    }
    return out;
  }
  std::vector<int> widths;
  for (const Column& c : columns) widths.push_back(DisplayWidth(c.title));
  for (const auto& row : rows) {
    for (size_t i = 0; i < columns.size() && i < row.size(); ++i) widths[i] = std::max(widths[i], DisplayWidth(row[i]));
  }
  auto emit = [&](const std::vector<std::string>& row) {
    std::string line;
    for (size_t i = 0; i < columns.size(); ++i) {
      line += PadToWidth(i < row.size() ? row[i] : "", widths[i], columns[i].right);
      if (i + 1 < columns.size()) line += "  ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  };
  std::vector<std::string> header;
  for (const Column& c : columns) header.push_back(c.title);
  emit(header);
  for (const auto& row : rows) emit(row);
  return out;
}

std::string Heading(const std::string& title, bool markdown) {
  return markdown ? "## " + title + "\n\n" : title + ":\n";
}

// "on: 3g.40gb x2, 1g.10gb", "off", or "-" for a card without MIG.
std::string MigMode(const json& g) {
  if (!Bool(g, "mig_capable")) return "-";
  if (!Bool(g, "mig_enabled")) return "off";
  std::vector<std::pair<std::string, int>> profiles;  // in the order the card lists them
  for (const json& m : Arr(g, "mig")) {
    if (!m.is_object()) continue;
    std::string profile = Str(m, "profile", "?");
    auto it = std::find_if(profiles.begin(), profiles.end(), [&](const auto& p) { return p.first == profile; });
    if (it == profiles.end()) {
      profiles.push_back({profile, 1});
    } else {
      ++it->second;
    }
  }
  if (profiles.empty()) return "on, no slices";
  std::vector<std::string> parts;
  for (const auto& [profile, count] : profiles) {
    parts.push_back(count > 1 ? profile + " x" + std::to_string(count) : profile);
  }
  return "on: " + Join(parts, ", ");
}

// "healthy", "suspect", "drained: fan noise", "drained (health): GPU_IS_LOST".
std::string GpuStatus(const json& g) {
  const std::string health = Str(g, "health", "?");
  const std::string reason = Str(g, "drain_reason");
  if (health == "drained") return "drained (health)" + (reason.empty() ? "" : ": " + reason);
  std::string out;
  if (Bool(g, "drained")) out = "drained" + (reason.empty() ? "" : ": " + reason);
  if (health != "healthy" || out.empty()) out += (out.empty() ? "" : "; ") + health;
  return out;
}

std::string GpuSection(const json& inventory, bool markdown) {
  std::vector<std::vector<std::string>> rows;
  for (const json& g : Arr(inventory, "gpus")) {
    if (!g.is_object()) continue;
    std::vector<std::string> peers;
    for (const json& p : Arr(g, "nvlink")) {
      if (p.is_number()) peers.push_back(std::to_string(p.get<long long>()));
    }
    const long long mib = Int(g, "memory_total", -1);
    rows.push_back({std::to_string(Int(g, "index", -1)), Str(g, "name", "?"),
                    mib < 0 ? "?" : HumanBytes(static_cast<unsigned long long>(mib) << 20),
                    peers.empty() ? "-" : Join(peers, ","), Bool(g, "mig_capable") ? "yes" : "no", MigMode(g),
                    GpuStatus(g)});
  }
  std::string out = Heading("GPUs", markdown);
  if (rows.empty()) return out + "no GPUs\n";
  return out + RenderTable({{"GPU", true},
                            {"Model"},
                            {"Memory", true},
                            {"NVLink to"},
                            {"MIG capable"},
                            {"MIG mode"},
                            {"Status"}},
                           rows, markdown);
}

std::string UsePercent(const StorageInfo& s) {
  const unsigned long long total = s.used + s.free;
  if (total == 0) return "-";
  // Rounded up, as df does: a file system shown as 100% is full, not nearly full.
  return std::to_string((s.used * 100 + total - 1) / total) + "%";
}

std::string StorageSection(const std::vector<StorageInfo>& storage, bool markdown) {
  std::string out = Heading("Storage", markdown);
  if (storage.empty()) return out + "no storage paths configured ([inventory] storage)\n";
  // A path that could not be measured gets "-" for its numbers and the reason in an Error column
  // (present only then), so one bad path neither fails the report nor widens the number columns.
  const bool errors =
      std::any_of(storage.begin(), storage.end(), [](const StorageInfo& s) { return !s.error.empty(); });
  std::vector<std::vector<std::string>> rows;
  for (const StorageInfo& s : storage) {
    if (!s.error.empty()) {
      rows.push_back({TerminalSafe(s.path), "-", "-", "-", "-", "error: " + TerminalSafe(s.error)});
    } else {
      rows.push_back({TerminalSafe(s.path), HumanBytes(s.size), HumanBytes(s.used), HumanBytes(s.free), UsePercent(s)});
      if (errors) rows.back().push_back("");
    }
  }
  std::vector<Column> columns = {{"Path"}, {"Size", true}, {"Used", true}, {"Free", true}, {"Use%", true}};
  if (errors) columns.push_back({"Error"});
  return out + RenderTable(columns, rows, markdown);
}

std::string Limit(long long kib) { return kib <= 0 ? "none" : HumanBytes(static_cast<unsigned long long>(kib) << 10); }

std::string QuotaStatus(const std::string& status) {
  if (status == "soft") return "over soft limit";
  if (status == "hard") return "over hard limit";
  return status.empty() ? "-" : TerminalSafe(status);
}

std::string QuotaSection(const QuotaReport& quota, bool markdown) {
  std::string out = Heading("Per-user usage", markdown);
  const std::string kNone = "per-user usage: not available (";
  if (!quota.unavailable.empty()) return out + kNone + TerminalSafe(quota.unavailable) + ")\n";
  if (quota.filesystems.empty()) return out + kNone + "no storage to report on)\n";
  // One reason for every file system (typically: not root, or quotas off) is said once.
  const std::string& first_error = quota.filesystems.front().error;
  if (!first_error.empty() && std::all_of(quota.filesystems.begin(), quota.filesystems.end(),
                                          [&](const QuotaFilesystem& f) { return f.error == first_error; })) {
    return out + kNone + TerminalSafe(first_error) + ")\n";
  }
  std::vector<std::vector<std::string>> rows;
  std::string notes;
  for (const QuotaFilesystem& f : quota.filesystems) {
    std::vector<std::string> names;
    for (const std::string& p : f.paths) names.push_back(TerminalSafe(p));
    const std::string where = names.empty() ? TerminalSafe(f.mount) : Join(names, ", ");
    if (!f.error.empty()) {
      notes += "per-user usage on " + where + ": not available (" + TerminalSafe(f.error) + ")\n";
      continue;
    }
    if (f.users.empty()) {
      notes += "per-user usage on " + where + ": nobody has files there\n";
      continue;
    }
    std::vector<QuotaUsage> users = f.users;
    std::stable_sort(users.begin(), users.end(), [](const QuotaUsage& a, const QuotaUsage& b) {
      return a.used_kib != b.used_kib ? a.used_kib > b.used_kib : a.user < b.user;
    });
    for (const QuotaUsage& u : users) {
      const unsigned long long used = static_cast<unsigned long long>(std::max(0LL, u.used_kib)) << 10;
      rows.push_back({where, TerminalSafe(u.user), HumanBytes(used), Limit(u.soft_kib), Limit(u.hard_kib),
                      QuotaStatus(u.status)});
    }
  }
  if (!rows.empty()) {
    out += RenderTable({{"Storage"}, {"User"}, {"Used", true}, {"Soft limit", true}, {"Hard limit", true}, {"Status"}},
                       rows, markdown);
    if (!notes.empty() && markdown) out += "\n";
  }
  return out + notes;
}

}  // namespace

std::string HumanBytes(unsigned long long bytes) {
  static const char* const kUnits[] = {"B", "K", "M", "G", "T", "P", "E"};
  if (bytes < 1024) return std::to_string(bytes) + "B";
  double v = static_cast<double>(bytes);
  int unit = 0;
  while (v >= 1024 && unit < 6) {
    v /= 1024;
    ++unit;
  }
  char buf[32];
  // One decimal below 10 (9.5G), none above (512G); a value that rounds up to 1024 takes the next unit.
  if (v < 9.95) {
    std::snprintf(buf, sizeof buf, "%.1f%s", v, kUnits[unit]);
  } else if (v < 1023.5 || unit == 6) {
    std::snprintf(buf, sizeof buf, "%.0f%s", v, kUnits[unit]);
  } else {
    std::snprintf(buf, sizeof buf, "1.0%s", kUnits[unit + 1]);
  }
  return buf;
}

StatusOr<std::vector<QuotaUsage>> ParseRepquotaCsv(std::string_view text) {
  // Fields counted from the right: a user name could hold a comma, the other ten fields cannot.
  constexpr size_t kFixed = 10;
  std::vector<QuotaUsage> users;
  bool header = false;
  size_t line_no = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    if (line.rfind("User,", 0) == 0) {  // a report per file system; each starts with the header
      header = true;
      continue;
    }
    if (!header) return InvalidArgument("not a repquota CSV report (no \"User,...\" header)");
    std::vector<std::string> fields;
    size_t start = 0;
    while (true) {
      size_t comma = line.find(',', start);
      fields.emplace_back(line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    if (fields.size() < kFixed + 1) {
      return InvalidArgument("repquota line " + std::to_string(line_no) + " has " + std::to_string(fields.size()) +
                             " fields, expected 11");
    }
    const size_t name_end = fields.size() - kFixed;
    QuotaUsage u;
    for (size_t i = 0; i < name_end; ++i) u.user += (i ? "," : "") + fields[i];
    u.status = fields[name_end];
    long long* numbers[] = {&u.used_kib, &u.soft_kib, &u.hard_kib};
    for (size_t i = 0; i < 3; ++i) {
      const std::string& f = fields[name_end + 2 + i];
      char* end = nullptr;
      long long v = std::strtoll(f.c_str(), &end, 10);
      if (f.empty() || *end != '\0') {
        return InvalidArgument("repquota line " + std::to_string(line_no) + ": \"" + f + "\" is not a number of KiB");
      }
      *numbers[i] = v;
    }
    users.push_back(std::move(u));
  }
  if (!header) return InvalidArgument("not a repquota CSV report (no \"User,...\" header)");
  return users;
}

json StorageUsageJson(const std::vector<StorageInfo>& storage) {
  json out = json::array();
  for (const StorageInfo& s : storage) {
    if (!s.error.empty()) {
      out.push_back({{"path", s.path}, {"error", s.error}});
    } else {
      out.push_back({{"path", s.path},
                     {"mount", s.mount},
                     {"size_bytes", s.size},
                     {"used_bytes", s.used},
                     {"free_bytes", s.free}});
    }
  }
  return out;
}

json QuotaJson(const QuotaReport& quota) {
  json filesystems = json::array();
  for (const QuotaFilesystem& f : quota.filesystems) {
    json users = json::array();
    for (const QuotaUsage& u : f.users) {
      users.push_back({{"user", u.user},
                       {"used_bytes", u.used_kib * 1024},
                       {"soft_limit_bytes", u.soft_kib * 1024},
                       {"hard_limit_bytes", u.hard_kib * 1024},
                       {"status", u.status}});
    }
    filesystems.push_back({{"mount", f.mount}, {"paths", f.paths}, {"error", f.error}, {"users", users}});
  }
  return {{"available", quota.unavailable.empty()}, {"reason", quota.unavailable}, {"filesystems", filesystems}};
}

std::string FormatInventory(const json& inventory, const std::vector<StorageInfo>& storage, const QuotaReport& quota,
                            bool markdown) {
  const std::string host = Str(inventory, "hostname", "?");
  const long long time = Int(inventory, "time", 0);
  const std::string driver = Str(inventory, "driver_version", "?");
  const std::string source = Str(inventory, "source", "?");
  std::string out;
  if (markdown) {
    out += "# GPU server " + host + " (" + FormatTime(time, "%Y-%m-%d", "?") + ")\n\n";
    out += "Written by `rota inventory --markdown` at " + FormatTime(time, "%Y-%m-%d %H:%M", "?") + ".\n\n";
    out += GpuSection(inventory, true) + "\n";
    out += "Driver version: " + driver + ". GPU source: " + source + ".\n\n";
    out += StorageSection(storage, true) + "\n";
    out += QuotaSection(quota, true);
    return out;
  }
  out += host + "  " + FormatTime(time, "%Y-%m-%d %H:%M", "?") + "  driver " + driver + "  " + source + "\n\n";
  out += GpuSection(inventory, false) + "\n";
  out += StorageSection(storage, false) + "\n";
  out += QuotaSection(quota, false);
  return out;
}

}  // namespace rota::cli
