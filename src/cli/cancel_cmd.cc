// `rota cancel ID...`: cancels pending jobs and stops running ones, one result line per id.
// Tested against a daemon by tests/daemon/test_jobs.py and test_permissions.py.
#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <memory>

#include "api/protocol.h"
#include "cli/daemon_client.h"

namespace rota::cli {

namespace {

constexpr size_t kIdsPerRequest = 100;

int RunCancel(const ClientOptions& options, const std::vector<long long>& ids) {
  for (long long id : ids) {
    if (id <= 0) return Fail(InvalidArgument("job ids are whole numbers from 1, got " + std::to_string(id)));
  }
  // In parts of kIdsPerRequest: rotad takes at most [limits] ids_per_request ids (100 or more) in one.
  auto conn = Connect(options);
  if (!conn.ok()) return Fail(conn.status());
  nlohmann::json results = nlohmann::json::array();
  for (size_t from = 0; from < ids.size(); from += kIdsPerRequest) {
    const std::vector<long long> part(ids.begin() + static_cast<std::ptrdiff_t>(from),
                                      ids.begin() + static_cast<std::ptrdiff_t>(std::min(ids.size(), from + kIdsPerRequest)));
    auto reply = conn->Call({{"op", "cancel"}, {"job_ids", part}});
    if (!reply.ok()) return Fail(reply.status());
    for (auto& r : reply->value("results", nlohmann::json::array())) results.push_back(std::move(r));
  }
  int rc = 0;
  for (const nlohmann::json& r : results) {
    long long id = r.value("job_id", 0LL);
    if (r.value("ok", false)) {
      bool stopping = r.value("state", "") == "cancelling";
      std::printf("%s job %lld\n", stopping ? "Stopping" : "Cancelled", id);
    } else {
      Status st = api::StatusOfReply(r);
      std::fflush(stdout);
      // The daemon's messages usually name the job already ("job 7 has already ended").
      const std::string prefix = "job " + std::to_string(id) + " ";
      if (st.message().rfind(prefix, 0) == 0) {
        std::fprintf(stderr, "rota: %s\n", st.message().c_str());
      } else {
        std::fprintf(stderr, "rota: job %lld: %s\n", id, st.message().c_str());
      }
      rc = api::kExitFailed;
    }
  }
  return rc;
}

}  // namespace

void AddCancelCommand(CLI::App& app, ClientOptions* options, int* exit_code) {
  auto ids = std::make_shared<std::vector<long long>>();
  CLI::App* c = app.add_subcommand("cancel", "Cancel jobs: pending ones at once, running ones with SIGTERM");
  c->footer(
      "Prints \"Cancelled job N\" (pending), \"Stopping job N\" (running: SIGTERM now, SIGKILL after the\n"
      "kill wait) or \"rota: job N: <why not>\" on stderr. Exit code 1 if any id failed.");
  AddSocketFlag(c, options);
  AddJobIdOption(c, ids.get(), "job ids");
  c->callback([options, ids, exit_code] { *exit_code = RunCancel(*options, *ids); });
}

}  // namespace rota::cli
