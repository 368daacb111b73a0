// Descriptors passed over Unix sockets (SCM_RIGHTS): `rota run` hands rotad a pidfd on itself,
// rotad's file opener hands back what it opened as a user. Async-signal-safe (no allocation):
// also used in a child between fork and exit.
#pragma once

#include <sys/types.h>

#include <cstddef>

namespace rota::unixio {

inline constexpr std::size_t kMaxFds = 4;  // descriptors in one message, at most

// send(2) of `data` with `fd` attached to its first byte (MSG_NOSIGNAL); `fd` < 0: none.
ssize_t SendWithFd(int sock, const void* data, std::size_t size, int fd);
// The same with `nfds` descriptors (at most kMaxFds: EINVAL beyond), in that order.
ssize_t SendWithFds(int sock, const void* data, std::size_t size, const int* fds, std::size_t nfds);

// recv(2) into `buf` that also takes the descriptors sent with the bytes (MSG_CMSG_CLOEXEC): up
// to kMaxFds go into `fds` (the caller owns them), their count into `*nfds`; more are closed by
// the kernel. Retries EINTR.
ssize_t ReceiveWithFds(int sock, void* buf, std::size_t size, int (&fds)[kMaxFds], std::size_t* nfds);

}  // namespace rota::unixio
