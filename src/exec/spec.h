// The two files through which the executor and rota-shepherd talk: the job's spec, written by
// the executor before it starts the shepherd, and the job's result, written by the shepherd when
// the job has ended. Both are JSON in the run directory:
//   <run_dir>/<job>.spec    {"job_id":5,"uid":1000,"gid":1000,"groups":[...],"user":"ana",
//                            "argv":[...],"cwd":"/home/ana","env":{...},"output":"/home/ana/x.out",
//                            "memory_limit_bytes":0,"note":"...",
//                            "cgroup":"/sys/fs/cgroup/rota/job-5","token":"9f0c..."}
//   <run_dir>/<job>.result  {"kind":"exited"|"signalled"|"start_failed","exit_code":0,
//                            "signal":0,"reason":"","end_time":1700000000}
// Both are written atomically (WriteFileAtomic), mode 0600, so one spec file (one inode) has one
// content for its whole life.
//
// The spec file is also the launch's lock (docs/design.md, "Recovery on start"): the shepherd
// that runs the launch holds a POSIX write lock on it for its whole life, and starts the job
// only if the spec's token is the one in its own arguments, it got the lock, and the file was
// not unlinked meanwhile. A daemon that died between Launch and recording the start finds out
// from the lock what became of the launch (Executor::FindLaunch).
#pragma once

#include <string>

#include "core/status.h"
#include "exec/executor.h"

namespace rota::exec {

struct JobSpec {
  LaunchSpec launch;
  std::string cgroup;  // "" = no cgroup: track the job by its process group
  std::string token;   // this launch's token; the shepherd is started with the same one
};

std::string SpecPath(const std::string& run_dir, JobId job);
std::string ResultPath(const std::string& run_dir, JobId job);

// What a standby-started shepherd sends back on its socket once the job's result is written.
inline constexpr char kEndedNote[] = "ended\n";

std::string SpecToJson(const JobSpec& spec);
// InvalidArgument on malformed JSON or missing/mistyped fields.
StatusOr<JobSpec> SpecFromJson(const std::string& text);

std::string ResultToJson(const ExitInfo& info);
// InvalidArgument on malformed JSON; "vanished" is not a valid kind in a result file.
StatusOr<ExitInfo> ResultFromJson(const std::string& text);

}  // namespace rota::exec
