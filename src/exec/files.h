// Small POSIX file helpers shared by the executor and rota-shepherd.
//
// All return errors as values; messages name the path and the system error, e.g.
// "cannot open /run/rota/5.spec: Permission denied". No function here throws or allocates after
// a fork (none is meant to be called between fork and exec).
#pragma once

#include <unistd.h>

#include <sys/types.h>

#include <string>

#include "core/status.h"

namespace rota::exec {

// "<what>: <strerror(err)>".
std::string ErrnoMessage(const std::string& what, int err);

// The whole content of a (small) file.
StatusOr<std::string> ReadFile(const std::string& path);
// The whole content of the file open at `fd`, from offset 0;
// `path` is for messages.
StatusOr<std::string> ReadFd(int fd, const std::string& path);

// Owns a file descriptor (a pidfd, a file) and closes it on scope exit unless released.
class UniqueFd {
 public:
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() {
    if (fd_ >= 0) close(fd_);
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
      if (fd_ >= 0) close(fd_);
      fd_ = other.release();
    }
    return *this;
  }
  int get() const { return fd_; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};

// Writes `content` to `path` atomically: a temporary file beside it (mode `mode`), then rename.
// Readers see the old file or the whole new one, also after rotad or the shepherd crash. It does
// not wait for the disk: both uses (a job's spec, a shepherd's result) sit on the path from one
// job's end to the next job's start, where a sync costs 3 ms here; after a power loss the jobs
// they describe are gone anyway, and recovery records them as vanished (docs/design.md).
Status WriteFileAtomic(const std::string& path, const std::string& content, mode_t mode);

// Writes `content` with a single write(2) to an existing file, without creating or truncating it:
// the way control files such as cgroup.procs are written.
Status WriteControlFile(const std::string& path, const std::string& content);

// Removes a file; a file that does not exist is not an error.
Status RemoveFile(const std::string& path);

}  // namespace rota::exec
