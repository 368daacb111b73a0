// Tested by tests/daemon/test_simulate_store.py.
#include "cli/store_history.h"

namespace rota::cli {

StatusOr<StoreTrace> LoadStoreTrace(const ClientOptions& options, const std::string& since) {
  auto conn = Connect(options);
  if (!conn.ok()) return conn.status();
  StatusOr<nlohmann::json> gpus = conn->Call({{"op", "gpus"}});
  if (!gpus.ok()) return gpus.status();
  std::vector<nlohmann::json> jobs;
  nlohmann::json request = {{"op", "history"}, {"since", since}, {"all", true}};
  while (true) {
    StatusOr<nlohmann::json> reply = conn->Call(request);
    if (!reply.ok()) {
      if (reply.status().code() == StatusCode::kInvalidArgument)
        return InvalidArgument("--since: " + reply.status().message());
      return reply.status();
    }
    for (auto& j : (*reply)["jobs"]) jobs.push_back(std::move(j));
    auto next = reply->find("next");
    if (next == reply->end() || !next->is_string()) break;
    request["after"] = *next;
  }
  return StoreTraceFromJson(*gpus, jobs);
}

}  // namespace rota::cli
