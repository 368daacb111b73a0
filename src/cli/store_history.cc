// Tested by tests/daemon/test_simulate_store.py.
#include "cli/store_history.h"

namespace rota::cli {

StatusOr<StoreTrace> LoadStoreTrace(const ClientOptions& options, const std::string& since) {
  auto conn = Connect(options);
  if (!conn.ok()) return conn.status();
  StatusOr<nlohmann::json> gpus = conn->Call({{"op", "gpus"}});
  if (!gpus.ok()) return gpus.status();
  std::vector<nlohmann::json> jobs;
  Time read_since = 0;
  nlohmann::json request = {{"op", "history"}, {"since", since}, {"all", true}};
  while (true) {
    StatusOr<nlohmann::json> reply = conn->Call(request);
    if (!reply.ok()) {
      if (reply.status().code() == StatusCode::kInvalidArgument)
        return InvalidArgument("--since: " + reply.status().message());
      return reply.status();
    }
    for (auto& j : (*reply)["jobs"]) jobs.push_back(std::move(j));
    if (auto s = reply->find("since"); s != reply->end() && s->is_number_integer())
      read_since = s->get<Time>();
    auto next = reply->find("next");
    if (next == reply->end() || !next->is_string()) break;
    request["after"] = *next;
  }
  StatusOr<StoreTrace> out = replay::StoreTraceFromJson(*gpus, jobs, read_since);
  if (!out.ok()) return out;
  // The bookings of the same days: from the first submission to the last end.
  Time from = kNever, to = 0;
  for (const sim::TraceJob& j : out->trace.jobs) from = std::min(from, j.submit);
  for (const sim::JobOutcome& o : out->recorded) to = std::max(to, o.end);
  StatusOr<nlohmann::json> bookings =
      conn->Call({{"op", "bookings"}, {"all", true}, {"from", from}, {"to", to + 1}});
  if (!bookings.ok()) return bookings.status();
  out->bookings = replay::StoreBookingsFromJson(*bookings, to + 1);
  return out;
}

}  // namespace rota::cli
