// Tested by open_as_test.cc (as root: another user's rights) and the attack catalogue
// (tests/daemon/test_attacks_jobs.py, FilesTest).
//
// Design: a child of rotad's, forked for one open, and a socketpair back. After fork only system
// calls run in the child (rotad has threads: no allocation, no locks): the path and the groups
// are prepared before it. The child tells the outcome as one byte (0: the descriptor is attached;
// else an errno, or kNotOwned/kNotRegular) and exits; the parent waits for it.
#include "exec/open_as.h"

#include <fcntl.h>
#include <grp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "exec/files.h"
#include "unixio/fd_passing.h"

namespace rota::exec {

namespace {

constexpr unsigned char kNotRegular = 250;
constexpr unsigned char kNotOwned = 251;
constexpr unsigned char kNoDrop = 252;

[[noreturn]] void Answer(int sock, unsigned char code, int fd) {
  const char byte = static_cast<char>(code);
  (void)unixio::SendWithFd(sock, &byte, 1, fd);
  ::_exit(0);
}

[[noreturn]] void Child(int sock, const char* path, uid_t uid, gid_t gid, const gid_t* groups, size_t ngroups) {
  if (::geteuid() != 0) {
    if (uid != ::getuid()) Answer(sock, kNoDrop, -1);  // a user-mode rotad opens only its own user's files
  } else if (::setgroups(ngroups, groups) != 0 || ::setgid(gid) != 0 || ::setuid(uid) != 0 ||
             (uid != 0 && ::setuid(0) == 0)) {
    Answer(sock, kNoDrop, -1);
  }
  int fd = ::open(path, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) Answer(sock, static_cast<unsigned char>(errno < 250 ? errno : EIO), -1);
  struct stat st {};
  if (::fstat(fd, &st) != 0) Answer(sock, static_cast<unsigned char>(errno < 250 ? errno : EIO), -1);
  if (!S_ISREG(st.st_mode)) Answer(sock, kNotRegular, -1);
  if (st.st_uid != uid) Answer(sock, kNotOwned, -1);
  Answer(sock, 0, fd);
}

}  // namespace

StatusOr<OpenedFile> OpenAsUser(const std::string& path, uid_t uid, gid_t gid, const std::vector<gid_t>& groups) {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    return Internal(ErrnoMessage("socketpair", errno));
  }
  const pid_t child = ::fork();
  if (child < 0) {
    const int err = errno;
    ::close(pair[0]);
    ::close(pair[1]);
    return Unavailable(ErrnoMessage("cannot fork to open " + path, err));
  }
  if (child == 0) {
    ::close(pair[0]);
    Child(pair[1], path.c_str(), uid, gid, groups.data(), groups.size());
  }
  ::close(pair[1]);
  char byte = 0;
  int fds[unixio::kMaxFds];
  std::size_t nfds = 0;
  const ssize_t n = unixio::ReceiveWithFds(pair[0], &byte, 1, fds, &nfds);
  ::close(pair[0]);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  int fd = nfds > 0 ? fds[0] : -1;
  for (std::size_t i = 1; i < nfds; ++i) ::close(fds[i]);
  const auto code = static_cast<unsigned char>(byte);
  if (n != 1 || (code == 0 && fd < 0)) return Internal("opening " + path + " as uid " + std::to_string(uid) + " failed");
  if (code != 0) {
    if (fd >= 0) ::close(fd);
    if (code == ENOENT) return NotFound(path + " does not exist");
    if (code == kNotRegular) return PermissionDenied(path + " is not a regular file; not serving it");
    if (code == kNotOwned) return PermissionDenied(path + " does not belong to uid " + std::to_string(uid) +
                                                   "; not serving it");
    if (code == kNoDrop) return Internal("cannot take uid " + std::to_string(uid) + "'s rights to open " + path);
    if (code == ELOOP) return PermissionDenied(path + " is a symbolic link; not following it");
    return PermissionDenied(ErrnoMessage("cannot open " + path + " as uid " + std::to_string(uid), code));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return Internal(ErrnoMessage("fstat " + path, errno));
  }
  return OpenedFile{fd, st.st_size};
}

}  // namespace rota::exec
