// Tested by fd_passing_test.cc, and through rota run, rotad's socket and exec::OpenAsUser.
#include "unixio/fd_passing.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace rota::unixio {

ssize_t SendWithFds(int sock, const void* data, std::size_t size, const int* fds, std::size_t nfds) {
  if (nfds > kMaxFds) {
    errno = EINVAL;
    return -1;
  }
  iovec iov{const_cast<void*>(data), size};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  if (nfds > 0) {
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
    cmsghdr* h = CMSG_FIRSTHDR(&msg);
    h->cmsg_level = SOL_SOCKET;
    h->cmsg_type = SCM_RIGHTS;
    h->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
    std::memcpy(CMSG_DATA(h), fds, sizeof(int) * nfds);
  }
  return ::sendmsg(sock, &msg, MSG_NOSIGNAL);
}

ssize_t SendWithFd(int sock, const void* data, std::size_t size, int fd) {
  return SendWithFds(sock, data, size, &fd, fd >= 0 ? 1 : 0);
}

ssize_t ReceiveWithFds(int sock, void* buf, std::size_t size, int (&fds)[kMaxFds], std::size_t* nfds) {
  *nfds = 0;
  iovec iov{buf, size};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n;
  do {
    n = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return n;
  for (cmsghdr* h = CMSG_FIRSTHDR(&msg); h != nullptr; h = CMSG_NXTHDR(&msg, h)) {
    if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS) continue;
    const std::size_t count = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t i = 0; i < count && *nfds < kMaxFds; ++i) {
      std::memcpy(&fds[*nfds], CMSG_DATA(h) + i * sizeof(int), sizeof(int));
      ++*nfds;
    }
  }
  return n;
}

}  // namespace rota::unixio
