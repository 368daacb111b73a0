// What rotad keeps in a launch's spec (exec::LaunchSpec::note): the start it is about to record,
// and when. A daemon that died between launching a job and recording its start finds the note
// again through Executor::FindLaunch and records the start from it (JobRunner::RecoverLaunch).
#pragma once

#include <string>

#include "core/status.h"
#include "core/types.h"
#include "store/job_record.h"

namespace rota::daemon {

struct StartNote {
  store::StartInfo start;  // placement, preemptible, from_pool, reason (pid and cgroup not kept)
  Time time = 0;           // the launch's `now`: the start time to record
};

// {"time":T,"gpus":[0],"gpu_uuids":["GPU-..."],"mig":-1,"mig_uuid":"","memory":0,
//  "preemptible":false,"from_pool":false,"reason":"Started on GPU 0"}
std::string StartNoteToJson(const StartNote& note);
// InvalidArgument on malformed JSON, missing or mistyped fields, or gpus and gpu_uuids of
// different lengths.
StatusOr<StartNote> StartNoteFromJson(const std::string& text);

}  // namespace rota::daemon
