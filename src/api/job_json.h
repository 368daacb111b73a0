// Jobs and their audit trail as the API's JSON (docs/api.md, "Objects"), and a submitted job
// object parsed into a JobRecord. Shared by the daemon (both transports) and the client.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "core/decisions.h"
#include "core/status.h"
#include "store/job_record.h"

namespace rota::api {

// The wire name of a wait reason: "resources", "priority", "quota", "dependency", "booking",
// "peak_hours", "impossible", "start_retry".
const char* WaitReasonWire(WaitReason reason);

// The Job object. `pending` (may be null) adds the "pending" member; `with_private` adds
// command, cwd and output (the owner's and admins' view).
nlohmann::json JobToJson(const store::JobRecord& job, const PendingInfo* pending, bool with_private);
nlohmann::json EventToJson(const store::JobEvent& event);
// {"kind": "gpus", "gpus": 2}, {"kind": "gpu_mem", "memory": MiB}, {"kind": "mig", "profile": "3g.40gb"}.
nlohmann::json RequestToJson(const Request& request);

// The output path of a job with "%j" replaced by its id.
std::string ExpandOutput(const std::string& output, JobId id);

// Parses the "job" member of a submit or run request into a record: command, cwd, env, request,
// time limit, tier, project, name, memory per GPU, signal, grace, requeue, after, output (see
// docs/api.md for defaults). Checks everything that needs no daemon state; errors are
// InvalidArgument naming the field. The caller sets user, uid and checks projects, `after` ids
// and whether the request can ever fit.
StatusOr<store::JobRecord> JobFromRequest(const nlohmann::json& job, bool interactive);

}  // namespace rota::api
