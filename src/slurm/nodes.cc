#include "slurm/nodes.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace rota::slurm {

namespace {

constexpr std::array<const char*, 5> kNodeFields = {"NodeList", "StateLong", "Reason", "Gres", "GresUsed"};

bool Digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

}  // namespace

bool IsWholeGpu(const Gres& g) { return g.name == "gpu" && MigProfile(g.type).empty(); }
bool IsGpuSlice(const Gres& g) { return g.name == "gpu" && !MigProfile(g.type).empty(); }

std::string MigProfile(std::string_view type) {
  const size_t under = type.rfind('_');
  std::string_view p = under == std::string_view::npos ? type : type.substr(under + 1);
  std::string_view core = p.ends_with("+me") ? p.substr(0, p.size() - 3) : p;
  const size_t g = core.find("g.");
  if (g == std::string_view::npos || !Digits(core.substr(0, g)) || !core.ends_with("gb")) return "";
  if (!Digits(core.substr(g + 2, core.size() - g - 4))) return "";
  return std::string(p);
}

int Node::Gpus() const {
  int n = 0;
  for (const Gres& g : gres) {
    if (IsWholeGpu(g)) n += g.count;
  }
  return n;
}

std::vector<std::string> Node::CardTypes() const {
  std::vector<std::string> types;
  for (const Gres& g : gres) {
    if (!IsWholeGpu(g)) continue;
    if (g.type.empty() || g.count != 1 || std::find(types.begin(), types.end(), g.type) != types.end()) return {};
    types.push_back(g.type);
  }
  return types;
}

int Node::Shards(const std::string& type) const {
  int n = 0;
  for (const Gres& g : gres) {
    if (g.name == "shard" && g.type == type) n += g.count;
  }
  return n;
}

std::string NodesFormat() { return FieldsFormat(kNodeFields, kNodesDelimiter); }

bool UsableState(std::string_view state) {
  if (state.empty()) return false;
  // A suffix of flags: '*' not responding, '~' powered off, '#' powering up, '%' powering down,
  // '!' to be powered down, '@' to be rebooted, '^' rebooting, '$' in a maintenance
  // reservation, '-' planned by the backfill scheduler (usable).
  std::string_view base = state;
  while (!base.empty() && !(std::isalpha(static_cast<unsigned char>(base.back())))) {
    const char flag = base.back();
    if (flag != '-' && flag != '$') return false;
    base.remove_suffix(1);
  }
  for (std::string_view ok : {"idle", "mixed", "allocated", "completing", "planned", "reserved"}) {
    if (base == ok) return true;
  }
  return false;
}

StatusOr<std::vector<Node>> ParseNodes(std::string_view text) {
  StatusOr<std::vector<std::vector<std::string>>> records =
      SplitRecords(text, kNodesDelimiter, kNodeFields.size());
  if (!records.ok()) return records.status();
  std::vector<Node> out;
  for (std::vector<std::string>& r : *records) {
    if (r[0].empty()) return InvalidArgument("Slurm listed a node without a name");
    if (std::any_of(out.begin(), out.end(), [&](const Node& n) { return n.name == r[0]; })) continue;
    Node n;
    n.name = std::move(r[0]);
    n.state = std::move(r[1]);
    n.reason = r[2] == "none" || r[2] == "(null)" ? "" : std::move(r[2]);
    StatusOr<std::vector<Gres>> gres = ParseGresList(r[3]);
    if (!gres.ok()) return Status(gres.status().code(), "node " + n.name + ": " + gres.status().message());
    n.gres = std::move(*gres);
    StatusOr<std::vector<Gres>> used = ParseGresList(r[4]);
    if (!used.ok()) return Status(used.status().code(), "node " + n.name + ": " + used.status().message());
    for (const Gres& g : *used) {
      if (IsWholeGpu(g)) n.gpus_used += g.count;
    }
    n.usable = UsableState(n.state);
    out.push_back(std::move(n));
  }
  return out;
}

}  // namespace rota::slurm
