// Tested by tests/daemon/test_simulate_store.py.
#include "cli/store_history.h"

#include "replay/lab_history.h"

namespace rota::cli {

StatusOr<StoreTrace> LoadStoreTrace(const ClientOptions& options, const std::string& since) {
  auto conn = Connect(options);
  if (!conn.ok()) return conn.status();
  StatusOr<StoreTrace> out =
      replay::LoadHistory([&conn](const nlohmann::json& request) { return conn->Call(request); }, since);
  if (!out.ok() && out.status().code() == StatusCode::kInvalidArgument)
    return InvalidArgument("--since: " + out.status().message());
  return out;
}

}  // namespace rota::cli
