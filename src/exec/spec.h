// The two files through which the executor and rota-shepherd talk: the job's spec, written by
// the executor before it starts the shepherd, and the job's result, written by the shepherd when
// the job has ended. Both are JSON in the run directory:
//   <run_dir>/<job>.spec    {"job_id":5,"uid":1000,"gid":1000,"groups":[...],"user":"ana",
//                            "argv":[...],"cwd":"/home/ana","env":{...},"output":"/home/ana/x.out",
//                            "memory_limit_bytes":0,"cgroup":"/sys/fs/cgroup/rota/job-5"}
//   <run_dir>/<job>.result  {"kind":"exited"|"signalled"|"start_failed","exit_code":0,
//                            "signal":0,"reason":"","end_time":1700000000}
// Both are written atomically (WriteFileAtomic), mode 0600.
#pragma once

#include <string>

#include "core/status.h"
#include "exec/executor.h"

namespace rota::exec {

struct JobSpec {
  LaunchSpec launch;
  std::string cgroup;  // "" = no cgroup: track the job by its process group
};

std::string SpecPath(const std::string& run_dir, JobId job);
std::string ResultPath(const std::string& run_dir, JobId job);

std::string SpecToJson(const JobSpec& spec);
// InvalidArgument on malformed JSON or missing/mistyped fields.
StatusOr<JobSpec> SpecFromJson(const std::string& text);

std::string ResultToJson(const ExitInfo& info);
// InvalidArgument on malformed JSON; "vanished" is not a valid kind in a result file.
StatusOr<ExitInfo> ResultFromJson(const std::string& text);

}  // namespace rota::exec
