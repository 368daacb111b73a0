// Tested by open_as_test.cc (as root: another user's rights) and the attack catalogue
// (tests/daemon/test_attacks_files.py).
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
#include <cstring>

#include "exec/files.h"

namespace rota::exec {

namespace {

constexpr unsigned char kNotRegular = 250;
constexpr unsigned char kNotOwned = 251;
constexpr unsigned char kNoDrop = 252;

[[noreturn]] void Answer(int sock, unsigned char code, int fd) {
  char byte = static_cast<char>(code);
  iovec iov{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  if (fd >= 0) {
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    cmsghdr* h = CMSG_FIRSTHDR(&msg);
    h->cmsg_level = SOL_SOCKET;
    h->cmsg_type = SCM_RIGHTS;
    h->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(h), &fd, sizeof fd);
  }
  (void)::sendmsg(sock, &msg, MSG_NOSIGNAL);
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
  iovec iov{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n;
  do {
    n = ::recvmsg(pair[0], &msg, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  ::close(pair[0]);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  int fd = -1;
  for (cmsghdr* h = CMSG_FIRSTHDR(&msg); h != nullptr; h = CMSG_NXTHDR(&msg, h)) {
    if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS) std::memcpy(&fd, CMSG_DATA(h), sizeof fd);
  }
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
