#include "daemon/inventory.h"

#include <algorithm>
#include <map>

#include "core/quota.h"
#include "exec/device_filter.h"

namespace rota::daemon {

void Inventory::Load(const device::Snapshot* snap) {
  state_.gpus.clear();
  minors_.clear();
  cluster_names_.clear();
  cluster_shares_.clear();
  node_names_.clear();
  if (snap == nullptr) return;
  std::map<std::string, int> by_pci;
  for (size_t i = 0; i < snap->gpus.size(); ++i) by_pci[snap->gpus[i].pci_bus_id] = static_cast<int>(i);
  for (const device::GpuInfo& info : snap->gpus) {
    Gpu g;
    g.uuid = info.uuid;
    g.index = info.index;
    g.model = info.name;
    g.memory = info.memory_total;
    // Machines numbered in the order their first card comes: the core keeps a job on one.
    auto named = std::find(node_names_.begin(), node_names_.end(), info.node);
    g.node = static_cast<int>(named - node_names_.begin());
    if (named == node_names_.end()) node_names_.push_back(info.node);
    for (const device::MigInstance& m : info.mig)
      g.mig.push_back(MigSlice{m.uuid, m.profile, m.memory_total});
    for (const std::string& peer : info.nvlink_peers) {
      if (auto it = by_pci.find(peer); it != by_pci.end()) g.nvlink.push_back(it->second);
    }
    state_.gpus.push_back(std::move(g));
    minors_.push_back(info.minor);
    cluster_names_.push_back(info.cluster_name);
    cluster_shares_.push_back(info.cluster_shares);
  }
}

const std::string& Inventory::NodeOf(const Allocation& alloc) const {
  static const std::string kHere;
  if (alloc.gpus.empty()) return kHere;
  const size_t g = static_cast<size_t>(alloc.gpus[0]);
  if (g >= state_.gpus.size()) return kHere;
  const size_t n = static_cast<size_t>(state_.gpus[g].node);
  return n < node_names_.size() ? node_names_[n] : kHere;
}

std::vector<std::string> Inventory::WholeNodesOf(const Allocation& alloc) const {
  std::vector<std::string> whole;
  if (alloc.memory > 0 || alloc.mig >= 0) return whole;
  std::map<int, int> held, total;  // by node
  for (int g : alloc.gpus) {
    if (g >= 0 && static_cast<size_t>(g) < state_.gpus.size()) ++held[state_.gpus[static_cast<size_t>(g)].node];
  }
  for (const Gpu& card : state_.gpus) ++total[card.node];
  for (const auto& [node, n] : held) {
    const size_t at = static_cast<size_t>(node);
    if (n == total[node] && at < node_names_.size() && !node_names_[at].empty()) whole.push_back(node_names_[at]);
  }
  return whole;
}

StatusOr<size_t> Inventory::Find(const std::string& name) const {
  const std::vector<Gpu>& cards = state_.gpus;
  for (size_t i = 0; i < cards.size(); ++i) {
    const Gpu& g = cards[i];
    if (g.uuid == name || std::to_string(g.index) == name) return i;
    for (const MigSlice& m : g.mig) {
      if (m.uuid == name) return i;
    }
  }
  std::string known;
  for (const Gpu& g : cards) known += (known.empty() ? "" : ", ") + std::to_string(g.index);
  return NotFound("no GPU '" + name + "' on this server (GPUs: " + (known.empty() ? "none" : known) +
                  "; use an index or a UUID)");
}

std::string Inventory::IndexList(const Allocation& alloc) const {
  std::vector<int> indices;
  for (int g : alloc.gpus) {
    if (g >= 0 && static_cast<size_t>(g) < state_.gpus.size())
      indices.push_back(state_.gpus[static_cast<size_t>(g)].index);
  }
  return JoinInts(indices, ",");
}

store::Placement Inventory::PlacementOf(const Allocation& alloc) const {
  store::Placement p;
  p.alloc = alloc;
  for (int g : alloc.gpus) p.gpu_uuids.push_back(state_.gpus[static_cast<size_t>(g)].uuid);
  if (alloc.mig >= 0 && !alloc.gpus.empty()) {
    p.mig_uuid = state_.gpus[static_cast<size_t>(alloc.gpus[0])].mig[static_cast<size_t>(alloc.mig)].uuid;
  }
  return p;
}

void Inventory::Remap(store::JobRecord& rec) const {
  // Indices are per inventory; UUIDs are durable. A card that disappeared keeps index -1 out of
  // the state (the job still runs; it just no longer blocks that card's capacity).
  std::vector<int> gpus;
  for (const std::string& uuid : rec.placement.gpu_uuids) {
    for (size_t i = 0; i < state_.gpus.size(); ++i) {
      if (state_.gpus[i].uuid == uuid) {
        gpus.push_back(static_cast<int>(i));
        break;
      }
    }
  }
  rec.placement.alloc.gpus = gpus;
  if (!rec.placement.mig_uuid.empty() && !gpus.empty()) {
    const Gpu& g = state_.gpus[static_cast<size_t>(gpus[0])];
    rec.placement.alloc.mig = -1;
    for (size_t i = 0; i < g.mig.size(); ++i) {
      if (g.mig[i].uuid == rec.placement.mig_uuid) rec.placement.alloc.mig = static_cast<int>(i);
    }
  }
}

std::map<std::string, std::string> Inventory::Env(const store::JobRecord& rec) const {
  std::map<std::string, std::string> env;
  const store::Placement& p = rec.placement;
  std::string visible;
  if (!p.mig_uuid.empty()) {
    visible = p.mig_uuid;
  } else {
    for (const std::string& u : p.gpu_uuids) visible += (visible.empty() ? "" : ",") + u;
  }
  env["CUDA_VISIBLE_DEVICES"] = visible;
  env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID";
  env["ROTA_JOB_ID"] = std::to_string(rec.job.id);
  env["ROTA_GPUS"] = IndexList(p.alloc);
  if (p.alloc.memory > 0) env["ROTA_GPU_MEM"] = std::to_string(p.alloc.memory) + "M";
  if (!p.mig_uuid.empty()) env["ROTA_MIG_PROFILE"] = rec.job.request.mig_profile;
  return env;
}

std::vector<std::pair<unsigned, unsigned>> Inventory::OtherCardsDevices(const Allocation& alloc) const {
  std::vector<std::pair<unsigned, unsigned>> out;
  for (size_t i = 0; i < minors_.size(); ++i) {
    const bool given =
        std::find(alloc.gpus.begin(), alloc.gpus.end(), static_cast<int>(i)) != alloc.gpus.end();
    if (!given && minors_[i] >= 0) out.emplace_back(exec::kNvidiaMajor, static_cast<unsigned>(minors_[i]));
  }
  return out;
}

std::vector<int> Inventory::OwnMinors(const Allocation& alloc) const {
  std::vector<int> out;
  for (int g : alloc.gpus) {
    if (g >= 0 && static_cast<size_t>(g) < minors_.size() && minors_[static_cast<size_t>(g)] >= 0) {
      out.push_back(minors_[static_cast<size_t>(g)]);
    }
  }
  return out;
}

std::vector<std::string> Inventory::ClusterNamesOf(const Allocation& alloc) const {
  std::vector<std::string> names;
  for (int g : alloc.gpus) {
    if (g < 0 || static_cast<size_t>(g) >= cluster_names_.size() || cluster_names_[static_cast<size_t>(g)].empty())
      return {};
    names.push_back(cluster_names_[static_cast<size_t>(g)]);
  }
  return names;
}

int Inventory::ClusterSharesOf(const Allocation& alloc) const {
  if (alloc.memory <= 0 || alloc.gpus.size() != 1) return 0;
  const size_t g = static_cast<size_t>(alloc.gpus[0]);
  if (g >= cluster_shares_.size() || cluster_shares_[g] <= 0 || state_.gpus[g].memory <= 0) return 0;
  const std::int64_t shares = cluster_shares_[g], card = state_.gpus[g].memory;
  return static_cast<int>(std::min<std::int64_t>(shares, (alloc.memory * shares + card - 1) / card));
}

double Inventory::ShardGpus(const std::string& node, const std::string& type, int count) const {
  if (node.empty() || count <= 0) return 0;
  for (size_t i = 0; i < state_.gpus.size(); ++i) {
    const size_t n = static_cast<size_t>(state_.gpus[i].node);
    if (n >= node_names_.size() || node_names_[n] != node || cluster_shares_[i] <= 0) continue;
    if (!type.empty() && cluster_names_[i] != type) continue;
    return std::min(1.0, static_cast<double>(count) / cluster_shares_[i]);
  }
  return 0;
}

double Inventory::SliceGpus(const std::string& node, const std::string& type, int count) const {
  if (node.empty() || type.empty() || count <= 0) return 0;
  for (size_t i = 0; i < state_.gpus.size(); ++i) {
    const size_t n = static_cast<size_t>(state_.gpus[i].node);
    if (n >= node_names_.size() || node_names_[n] != node || state_.gpus[i].mig.empty()) continue;
    if (cluster_names_[i] != type) continue;
    Allocation one;
    one.gpus = {static_cast<int>(i)};
    one.mig = 0;
    return count * AllocationGpus(state_, one);
  }
  return 0;
}

std::string Inventory::WhyNoShares() const {
  for (size_t i = 0; i < state_.gpus.size(); ++i) {
    if (cluster_shares_[i] != 0 || !state_.gpus[i].mig.empty()) continue;
    const std::string& node = node_names_[static_cast<size_t>(state_.gpus[i].node)];
    return "memory shares (--gpu-mem) need Slurm to share every GPU: each its own gres type with shards "
           "(gres/shard), and GPU " + std::to_string(state_.gpus[i].index) + (node.empty() ? "" : " on " + node) +
           (cluster_names_[i].empty() ? " is not its own type" : " has no shards") +
           "; ask for whole GPUs (--gpus N)";
  }
  return "";
}

MiB Inventory::ShareGiven(MiB memory) const {
  // The card whose shares are largest: a share made of its whole shares takes no more of any
  // other card's than it counts there (with cards alike, exactly as many).
  std::int64_t card = 0, shares = 0;
  for (size_t i = 0; i < state_.gpus.size(); ++i) {
    const std::int64_t n = cluster_shares_[i], m = state_.gpus[i].memory;
    if (n > 0 && m > 0 && (shares == 0 || m * shares > card * n)) {
      card = m;
      shares = n;
    }
  }
  if (shares == 0 || memory <= 0 || memory > card) return memory;
  const std::int64_t k = (memory * shares + card - 1) / card;
  return static_cast<MiB>(k * card / shares);
}

std::int64_t HostMemoryLimit(const store::JobRecord& rec, const Allocation& alloc, MiB default_per_gpu) {
  const MiB per_gpu = rec.job.host_mem_per_gpu > 0 ? rec.job.host_mem_per_gpu : default_per_gpu;
  return per_gpu * static_cast<std::int64_t>(std::max<size_t>(1, alloc.gpus.size())) * 1024 * 1024;
}

}  // namespace rota::daemon
