// Request builders for tests: N whole GPUs, a memory share, a MIG slice.
#pragma once

#include <string>
#include <utility>

#include "core/cluster.h"

namespace rota::testing {

inline Request Whole(int n) {
  Request r;
  r.kind = RequestKind::kWholeGpus;
  r.gpus = n;
  return r;
}

inline Request Share(MiB memory) {
  Request r;
  r.kind = RequestKind::kMemShare;
  r.memory = memory;
  return r;
}

inline Request Mig(std::string profile) {
  Request r;
  r.kind = RequestKind::kMig;
  r.mig_profile = std::move(profile);
  return r;
}

}  // namespace rota::testing
