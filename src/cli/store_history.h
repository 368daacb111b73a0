// The lab's history from rotad for `rota simulate --from-store` and `rota tune`: its cards (op
// `gpus`) and every job that ended since `since` (op `history`, as `rota history --since` reads
// it), a page at a time on one connection; replay/store_trace.h turns them into a trace. Tested by
// tests/daemon/test_simulate_store.py.
#pragma once

#include <string>

#include "cli/daemon_client.h"
#include "replay/store_trace.h"

namespace rota::cli {

using replay::StoreTrace;

StatusOr<StoreTrace> LoadStoreTrace(const ClientOptions& options, const std::string& since);

}  // namespace rota::cli
