// Programs that rotad runs and reads the output of (Slurm's commands: sbatch as the job's owner,
// squeue and scancel as rotad), each with a deadline, watched on the daemon's loop: a command that
// hangs (a slurmctld that does not answer) never holds the loop up. Its end is the pidfd's; its
// output comes through two pipes read as it arrives; at its deadline it is killed.
//
// Design: fork, and in the child only system calls (rotad has threads: no allocation, no locks;
// the argument and environment arrays are made before the fork), as exec/open_as.cc does: the
// signal mask rotad blocks for its signalfd is cleared, SIGPIPE set back to its default, the
// groups, gid and uid dropped to the user's (a user's command never runs as root), descriptors
// above 2 closed, then execve. posix_spawn cannot change the user.
//
// Thread-safety: the loop's thread only. Tested by child_command_test.cc (real processes).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "daemon/event_loop.h"

namespace rota::daemon {

struct ChildCommand {
  std::vector<std::string> argv;  // argv[0]: an absolute path (no PATH search)
  std::vector<std::string> env;   // "NAME=value": the whole environment
  // Whom it runs as. With `as_user`, rotad (root) drops to uid/gid/groups; otherwise it runs as
  // rotad does.
  bool as_user = false;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
  std::string cwd = "/";
  std::chrono::milliseconds deadline{10'000};
  // A job's output path that the child, as the user and before it execs, refuses where it is
  // already there and is not a file of the user's that others may not write, nor a device (the
  // shepherd's rule for the local engine's jobs, security.md, Outputs): a link, a named pipe or
  // socket, another user's file or one everyone may write. Refused, the child says why on stderr
  // and exits kOutputRefused without running argv. Empty: nothing checked.
  std::string refuse_output;
  static constexpr int kOutputRefused = 125;
};

struct ChildResult {
  enum class How { kExited, kSignalled, kTimedOut, kNotStarted };
  How how = How::kNotStarted;
  int code = 0;  // the exit status (kExited) or the signal (kSignalled)
  std::string out, err;
  std::string why;  // kNotStarted: what failed ("cannot fork: ...")
  bool ok() const { return how == How::kExited && code == 0; }
  // One line for messages: the command's own words on stderr when it printed some (its last
  // non-empty line), else how it ended ("exited with 1", "killed by signal 9", "did not answer
  // within 10 s", "cannot fork: ...").
  std::string Describe() const;
};

class ChildCommands {
 public:
  // Output kept of each stream; more is read and dropped (a runaway command cannot fill rotad).
  static constexpr std::size_t kMaxOutput = 64u << 20;

  // `loop` must outlive the object.
  static StatusOr<std::unique_ptr<ChildCommands>> Create(EventLoop& loop);
  // Kills what still runs and reaps it; their callbacks are not called.
  ~ChildCommands();
  ChildCommands(const ChildCommands&) = delete;
  ChildCommands& operator=(const ChildCommands&) = delete;

  using Done = std::function<void(ChildResult)>;
  // Starts `cmd`; `done` is called on the loop when it has ended (or was killed at its deadline,
  // or could not be started), never from inside Start.
  void Start(const ChildCommand& cmd, Done done);
  std::size_t running() const { return children_.size(); }

  // Runs `cmd` and waits for it, at most its deadline: for rotad's start, before its loop runs.
  static ChildResult RunNow(const ChildCommand& cmd);

 private:
  struct Child;  // a command that runs (child_command.cc)
  explicit ChildCommands(EventLoop& loop);
  void OnPipe(std::uint64_t key, bool err_pipe);
  void OnExit(std::uint64_t key);
  void OnDeadline(std::uint64_t key);
  void RunDeferred();

  EventLoop& loop_;
  std::uint64_t next_key_ = 1;
  std::map<std::uint64_t, std::unique_ptr<Child>> children_;
  // Results of commands that could not start, handed to their callbacks at the loop's next turn.
  std::unique_ptr<OneShotTimer> deferred_timer_;
  std::vector<std::pair<Done, ChildResult>> deferred_;
};

}  // namespace rota::daemon
