// The job's side of the fork in rota-shepherd: from the forked child to the job's execve.
//
// Everything the child needs is prepared before the fork (PreparedJob), so the child only makes
// system calls. The shepherd is single-threaded, which also makes the few string operations in
// error reporting safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "exec/spec.h"

namespace rota::shepherd {

// The spec turned into what execve and friends take. Borrows nothing from the spec.
class PreparedJob {
 public:
  explicit PreparedJob(const exec::JobSpec& spec);
  PreparedJob(const PreparedJob&) = delete;
  PreparedJob& operator=(const PreparedJob&) = delete;

  const exec::JobSpec& spec() const { return spec_; }
  char* const* argv() const { return argv_.data(); }
  char* const* envp() const { return envp_.data(); }
  // Where argv[0] is looked for, in order: argv[0] itself when it contains '/', else each entry
  // of the job's PATH (from its env; "/bin:/usr/bin" without one; an empty entry is the cwd).
  const std::vector<std::string>& candidates() const { return candidates_; }

 private:
  exec::JobSpec spec_;
  std::vector<std::string> env_strings_;
  std::vector<std::string> candidates_;
  std::vector<char*> argv_;
  std::vector<char*> envp_;
};

// In the forked child: joins the cgroup, starts a new session, drops to the job's user, enters
// its cwd, opens its log, resets signals and execs the command. Never returns: on any failure it
// writes one line (e.g. "cannot chdir to /x: No such file or directory") to error_fd, a
// close-on-exec pipe, and exits with status 127.
// `join_cgroup`: write itself into the spec's cgroup (false when it was created inside it).
// `nice`: the job's nice value, set first, where the shepherd runs at a higher priority.
[[noreturn]] void RunJobChild(const PreparedJob& job, int error_fd, bool join_cgroup,
                              std::optional<int> nice);

// For the child's helpers (container.h): writes `message` to error_fd and exits 127.
[[noreturn]] void FailStart(int error_fd, const std::string& message);
[[noreturn]] void FailStartErrno(int error_fd, const std::string& what, int err);

}  // namespace rota::shepherd
