#include "testing/builders.h"

#include <utility>

namespace rota::testing {

Gpu Card(int index, MiB memory, int node) {
  Gpu g;
  g.uuid = "GPU-" + std::to_string(index);
  g.index = index;
  g.model = "A100";
  g.memory = memory;
  g.node = node;
  return g;
}

std::vector<Gpu> Cards(int n, MiB memory) {
  std::vector<Gpu> gpus;
  for (int i = 0; i < n; ++i) gpus.push_back(Card(i, memory));
  return gpus;
}

Job MakeJob(JobId id, std::string user, int gpus, Duration limit, Time submit, Tier tier) {
  Job j;
  j.id = id;
  j.user = std::move(user);
  j.project = "p";
  j.tier = tier;
  j.request.gpus = gpus;
  j.time_limit = limit;
  j.submit_time = submit;
  return j;
}

RunningJob Running(JobId id, std::string user, std::vector<int> cards, Time start, Duration limit, Tier tier) {
  RunningJob r;
  r.job = MakeJob(id, std::move(user), static_cast<int>(cards.size()), limit, start, tier);
  r.alloc.gpus = std::move(cards);
  r.start_time = start;
  return r;
}

}  // namespace rota::testing
