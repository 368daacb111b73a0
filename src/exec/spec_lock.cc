// Tested by executor_test.cc and shepherd_test.cc (a real shepherd holding the lock).
#include "exec/spec_lock.h"

#include <fcntl.h>

#include <cerrno>

#include "exec/files.h"

namespace rota::exec {
namespace {

struct flock WholeFile(short type) {
  struct flock lock {};
  lock.l_type = type;
  lock.l_whence = SEEK_SET;
  lock.l_start = 0;
  lock.l_len = 0;  // to the end, however long the file grows
  return lock;
}

}  // namespace

StatusOr<bool> TryLockSpec(int fd, const std::string& path) {
  struct flock lock = WholeFile(F_WRLCK);
  int r;
  do {
    r = fcntl(fd, F_SETLK, &lock);
  } while (r < 0 && errno == EINTR);
  if (r == 0) return true;
  if (errno == EACCES || errno == EAGAIN) return false;
  return Internal(ErrnoMessage("cannot lock " + path, errno));
}

StatusOr<pid_t> SpecLockHolder(int fd, const std::string& path) {
  struct flock lock = WholeFile(F_WRLCK);
  if (fcntl(fd, F_GETLK, &lock) != 0) return Internal(ErrnoMessage("cannot test the lock on " + path, errno));
  return lock.l_type == F_UNLCK ? 0 : lock.l_pid;
}

}  // namespace rota::exec
