#include "slurm/parsable.h"

#include <charconv>

namespace rota::slurm {

namespace {

// A non-negative decimal number that is all of `text`.
bool Number(std::string_view text, int& out) {
  if (text.empty()) return false;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc() && p == end && out >= 0;
}

std::vector<std::string_view> Split(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    const size_t at = text.find(sep, start);
    out.push_back(text.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return out;
    start = at + 1;
  }
}

std::string_view Trim(std::string_view s) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

// The commas of a gres list that separate its items: not those inside parentheses
// ("shard:a100:8(0/8,0/8)").
std::vector<std::string_view> SplitItems(std::string_view text) {
  std::vector<std::string_view> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '(') ++depth;
    if (text[i] == ')' && depth > 0) --depth;
    if (text[i] == ',' && depth == 0) {
      out.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  out.push_back(text.substr(start));
  return out;
}

StatusOr<Gres> ParseGres(std::string_view item) {
  Gres g;
  std::string_view spec = item, extra;
  if (const size_t open = item.find('('); open != std::string_view::npos) {
    if (item.back() != ')')
      return InvalidArgument("Slurm gres \"" + std::string(item) + "\": unclosed parenthesis");
    spec = item.substr(0, open);
    extra = item.substr(open + 1, item.size() - open - 2);
  }
  std::vector<std::string_view> parts = Split(spec, ':');
  if (parts.size() > 1 && parts[0] == "gres") parts.erase(parts.begin());  // tres-per-node's "gres:gpu:2"
  if (parts.empty() || parts[0].empty() || parts.size() > 3) {
    return InvalidArgument("Slurm gres \"" + std::string(item) + "\": not NAME[:TYPE][:COUNT]");
  }
  g.name = std::string(parts[0]);
  g.count = 1;  // "gpu" alone is one
  if (parts.size() >= 2) {
    int n = 0;
    if (Number(parts.back(), n)) {
      g.count = n;
      if (parts.size() == 3) g.type = std::string(parts[1]);
    } else if (parts.size() == 2) {
      g.type = std::string(parts[1]);  // "gpu:a100": one of that type
    } else {
      return InvalidArgument("Slurm gres \"" + std::string(item) + "\": \"" + std::string(parts.back()) +
                             "\" is not a count");
    }
  }
  // "gpu:a100:0(IDX:N/A)": a type of which nothing is used (GresUsed, 22.05.8).
  if (extra.starts_with("IDX:") && extra != "IDX:N/A") {
    StatusOr<std::vector<int>> indices = ParseIndexRanges(extra.substr(4));
    if (!indices.ok())
      return InvalidArgument("Slurm gres \"" + std::string(item) + "\": " + indices.status().message());
    g.indices = std::move(*indices);
  }
  return g;
}

}  // namespace

std::string Version::ToString() const {
  return std::to_string(major) + "." + (minor < 10 ? "0" : "") + std::to_string(minor) + "." +
         std::to_string(micro);
}

StatusOr<Version> ParseVersion(std::string_view text) {
  text = Trim(text);
  const size_t space = text.rfind(' ');
  const std::string_view name = space == std::string_view::npos ? std::string_view() : text.substr(0, space);
  const std::vector<std::string_view> parts =
      Split(space == std::string_view::npos ? text : text.substr(space + 1), '.');
  Version v;
  if ((name != "slurm" && name != "slurm-wlm") || parts.size() < 2 || parts.size() > 3 ||
      !Number(parts[0], v.major) || !Number(parts[1], v.minor) ||
      (parts.size() == 3 && !Number(parts[2], v.micro))) {
    return InvalidArgument("not a Slurm version (sinfo -V): \"" + std::string(text) + "\"");
  }
  return v;
}

StatusOr<std::vector<std::vector<std::string>>> SplitRecords(std::string_view text, char delim,
                                                             size_t fields) {
  std::vector<std::vector<std::string>> out;
  for (std::string_view line : Split(text, '\n')) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    std::vector<std::string_view> values = Split(line, delim);
    if (values.size() == fields + 1 && values.back().empty()) values.pop_back();  // the final delimiter
    if (values.size() != fields) {
      const size_t printed = values.size() - (line.back() == delim ? 1 : 0);
      return InvalidArgument("Slurm printed " + std::to_string(printed) + " values where " +
                             std::to_string(fields) + " were asked for: \"" + std::string(line) + "\"");
    }
    std::vector<std::string> record;
    record.reserve(fields);
    for (std::string_view v : values) record.emplace_back(v);
    out.push_back(std::move(record));
  }
  return out;
}

std::string FieldsFormat(std::span<const char* const> fields, char delim) {
  std::string out;
  for (const char* f : fields) {
    if (!out.empty()) out += ',';
    out += f;
    out += ":0";
    out += delim;
  }
  return out;
}

StatusOr<std::vector<int>> ParseIndexRanges(std::string_view text) {
  std::vector<int> out;
  if (text.empty()) return out;
  for (std::string_view part : Split(text, ',')) {
    const size_t dash = part.find('-');
    int first = 0, last = 0;
    const bool ok = dash == std::string_view::npos ? Number(part, first) && (last = first, true)
                                                   : Number(part.substr(0, dash), first) &&
                                                         Number(part.substr(dash + 1), last) && first <= last;
    if (!ok) return InvalidArgument("\"" + std::string(text) + "\" is not a list of indices such as 0-1,3");
    if (last - first > 4096)
      return InvalidArgument("\"" + std::string(text) + "\": a range of more than 4096 indices");
    for (int i = first; i <= last; ++i) out.push_back(i);
  }
  return out;
}

StatusOr<std::vector<Gres>> ParseGresList(std::string_view text) {
  text = Trim(text);
  std::vector<Gres> out;
  if (text.empty() || text == "(null)" || text == "N/A") return out;
  for (std::string_view item : SplitItems(text)) {
    StatusOr<Gres> g = ParseGres(Trim(item));
    if (!g.ok()) return g.status();
    out.push_back(std::move(*g));
  }
  return out;
}

StatusOr<std::vector<NodeGres>> ParseJobNodeGres(std::string_view detail) {
  std::vector<NodeGres> out;
  for (std::string_view line : Split(detail, '\n')) {
    line = Trim(line);
    // "Nodes=vm CPU_IDs=0 Mem=1024 GRES=gpu:2(IDX:0-1)"; "NumNodes=1 ..." and "ReqNodeList=" are
    // other lines.
    if (!line.starts_with("Nodes=")) continue;
    NodeGres n;
    for (std::string_view word : Split(line, ' ')) {
      if (word.starts_with("Nodes=")) n.nodes = std::string(word.substr(6));
      if (!word.starts_with("GRES=")) continue;
      StatusOr<std::vector<Gres>> gres = ParseGresList(word.substr(5));
      if (!gres.ok()) return gres.status();
      for (const Gres& g : *gres) {
        if (g.name == "gpu") n.gpu_indices.insert(n.gpu_indices.end(), g.indices.begin(), g.indices.end());
        if (g.name == "shard") n.shard_indices.insert(n.shard_indices.end(), g.indices.begin(), g.indices.end());
      }
    }
    if (n.nodes.empty())
      return InvalidArgument("scontrol: a node line without its nodes: \"" + std::string(line) + "\"");
    out.push_back(std::move(n));
  }
  return out;
}

std::string ConfigValue(std::string_view show_config, std::string_view key) {
  for (std::string_view line : Split(show_config, '\n')) {
    if (line.substr(0, key.size()) != key) continue;
    std::string_view rest = line.substr(key.size());
    const size_t eq = rest.find_first_not_of(' ');
    if (eq == std::string_view::npos || rest[eq] != '=') continue;  // a longer key that begins alike
    rest = rest.substr(eq + 1);
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\r')) rest.remove_suffix(1);
    return std::string(rest);
  }
  return "";
}

StatusOr<long> ConfigSeconds(std::string_view value) {
  std::string_view digits = value;
  if (digits.size() > 4 && digits.substr(digits.size() - 4) == " sec") digits.remove_suffix(4);
  long n = 0;
  const char* end = digits.data() + digits.size();
  auto [p, ec] = std::from_chars(digits.data(), end, n);
  if (digits.empty() || ec != std::errc() || p != end || n < 0)
    return InvalidArgument("\"" + std::string(value) + "\" is not a number of seconds");
  return n;
}

}  // namespace rota::slurm
