// Tested by config_test.cc.
//
// Design: simulated cards are written as groups ("2 x A100 80G, each split 3g.40gb + 3g.40gb")
// and expanded here into the same rota::Gpu values the NVML backend will produce, so the daemon
// and the core cannot tell a simulated card from a real one. Slice memory comes from the MIG
// profile name; NVLink pairs name device indices and are turned into positions in the list.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "config/sections.h"
#include "config/values.h"

namespace rota::config::internal {

namespace {

struct PendingLink {
  const toml::node* node;
  int a, b;
};

// Reads one [[gpus.card]] group, appending its cards. `taken` maps index -> line of its group.
void ReadCardGroup(const toml::table& t, Section& gpus, std::vector<Gpu>& cards,
                   std::map<int, std::uint32_t>& taken, std::vector<PendingLink>& links) {
  Section s(t, "[[gpus.card]]", gpus.errors());
  Gpu g;
  g.model = s.String("model").value_or("Simulated GPU");
  std::optional<MiB> given = s.Memory("memory");
  if (!given && !s.Get("memory")) s.FailAt(t.source(), "needs memory = a size such as \"80G\"");
  if (given && *given <= 0) s.Fail(*s.Get("memory"), "memory", "must be above zero (use 80G, 81920M)");
  const bool has_memory = given && *given > 0;
  const MiB memory = given.value_or(0);
  int count = static_cast<int>(s.Integer("count", 1, 1024).value_or(1));
  auto first = s.Integer("index", 0, 1 << 20);
  int start = first ? static_cast<int>(*first) : (taken.empty() ? 0 : taken.rbegin()->first + 1);

  int compute = 0;
  MiB sliced = 0;
  if (const toml::array* mig = s.Array("mig")) {
    for (const toml::node& n : *mig) {
      const auto* name = n.as_string();
      auto profile = name ? ParseMigProfile(name->get()) : std::nullopt;
      if (!profile) {
        s.Fail(n, "mig entry", "is not a MIG profile (use names such as \"1g.10gb\", \"3g.40gb\", \"7g.80gb\")");
        continue;
      }
      compute += profile->compute;
      sliced += profile->memory;
      g.mig.push_back({"", name->get(), profile->memory});
    }
    if (compute > 7) {
      s.FailAt(mig->source(), "mig slices use " + std::to_string(compute) + " compute slices; a card has 7");
    }
    if (has_memory && sliced > memory) {
      s.FailAt(mig->source(), "mig slices need " + FormatMemory(sliced) + " but the card has " + FormatMemory(memory));
    }
  }
  if (const toml::array* pairs = s.Array("nvlink")) {
    for (const toml::node& n : *pairs) {
      const toml::array* pair = n.as_array();
      bool ok = pair && pair->size() == 2 && (*pair)[0].is_integer() && (*pair)[1].is_integer();
      if (!ok) {
        s.Fail(n, "nvlink entry", "is not a pair of card indices (use [[0, 1], [2, 3]])");
        continue;
      }
      links.push_back({&n, static_cast<int>(*(*pair)[0].value<std::int64_t>()),
                       static_cast<int>(*(*pair)[1].value<std::int64_t>())});
    }
  }
  s.Finish();
  if (!has_memory) return;
  g.memory = memory;
  for (int i = start; i < start + count; ++i) {
    if (auto it = taken.find(i); it != taken.end()) {
      s.FailAt(first ? s.Get("index")->source() : t.source(),
               "card index " + std::to_string(i) + " is already taken by the group at line " +
                   std::to_string(it->second) + " (indices must be unique; leave index out to number cards in order)");
      return;
    }
  }
  for (int i = start; i < start + count; ++i) {
    taken[i] = t.source().begin.line;
    Gpu card = g;
    card.index = i;
    card.uuid = "GPU-sim-" + std::to_string(i);
    for (std::size_t k = 0; k < card.mig.size(); ++k) {
      card.mig[k].uuid = "MIG-sim-" + std::to_string(i) + "-" + std::to_string(k);
    }
    cards.push_back(std::move(card));
  }
}

}  // namespace

void ReadGpus(Section& root, Config& config) {
  const toml::table* t = root.Table("gpus");
  if (!t) return;
  Section s(*t, "[gpus]", root.errors());
  if (auto src = s.Choice<GpuSource>("source", {{"nvml", GpuSource::kNvml}, {"simulated", GpuSource::kSimulated}, {"slurm", GpuSource::kSlurm}})) {
    config.gpu_source = *src;
  }
  if (auto lib = s.String("nvml_library")) config.nvml_library = *lib;
  if (auto d = s.DurationOf("sample_interval", 1)) config.sample_interval = *d;
  if (auto d = s.DurationOf("nvml_timeout", 1)) config.nvml_timeout = *d;
  if (auto n = s.Integer("drain_after", 1, 1000)) config.drain_after = static_cast<int>(*n);
  const toml::array* groups = s.Array("card");
  std::vector<Gpu> cards;
  std::map<int, std::uint32_t> taken;
  std::vector<PendingLink> links;
  if (groups) {
    for (const toml::node& n : *groups) {
      if (const toml::table* g = n.as_table()) {
        ReadCardGroup(*g, s, cards, taken, links);
      } else {
        s.Fail(n, "card", "is not a table (use [[gpus.card]])");
      }
    }
  }
  s.Finish();
  bool simulated = config.gpu_source == GpuSource::kSimulated;
  if (groups && !groups->empty() && !simulated) {
    s.FailAt(groups->source(), "cards are only used with source = \"simulated\" (NVML and Slurm find the real ones)");
  }
  if (simulated && (!groups || groups->empty())) {
    s.FailAt(t->source(), "source = \"simulated\" needs at least one [[gpus.card]] with a memory size");
  }
  std::sort(cards.begin(), cards.end(), [](const Gpu& a, const Gpu& b) { return a.index < b.index; });
  std::map<int, int> position;
  for (std::size_t i = 0; i < cards.size(); ++i) position[cards[i].index] = static_cast<int>(i);
  for (const PendingLink& l : links) {
    auto a = position.find(l.a), b = position.find(l.b);
    if (a == position.end() || b == position.end() || l.a == l.b) {
      s.Fail(*l.node, "nvlink entry", "does not join two different cards of [[gpus.card]] (use their indices)");
      continue;
    }
    auto link = [&cards](int from, int to) {
      auto& peers = cards[from].nvlink;
      if (std::find(peers.begin(), peers.end(), to) == peers.end()) peers.push_back(to);
    };
    link(a->second, b->second);
    link(b->second, a->second);
  }
  if (simulated) config.simulated_gpus = std::move(cards);
}

void ReadInventory(Section& root, Config& config) {
  const toml::table* t = root.Table("inventory");
  if (!t) return;
  Section s(*t, "[inventory]", root.errors());
  if (const toml::array* paths = s.Array("storage")) {
    for (const toml::node& n : *paths) {
      const auto* path = n.as_string();
      if (path && !path->get().empty() && path->get()[0] == '/') {
        config.storage_paths.push_back(path->get());
      } else {
        s.Fail(n, "storage entry", "is not an absolute path (use [\"/home\", \"/data\"])");
      }
    }
  }
  s.Finish();
}

}  // namespace rota::config::internal
