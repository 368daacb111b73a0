// Opening a file as one of the users, from root (`rota logs`: a job's output at the path its
// owner chose). A path a user chose is opened with that user's rights, never root's: root would
// pass a directory the user may not enter, and follow links the user laid in the middle of it.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "core/status.h"

namespace rota::exec {

struct OpenedFile {
  int fd = -1;  // the caller owns it
  off_t size = 0;
};

// Opens `path` for reading as `uid`/`gid` with `groups`, in a child process that has dropped to
// them (setgroups, setgid, setuid), and hands the descriptor back. O_NOFOLLOW | O_NOCTTY |
// O_NONBLOCK: a link at the end is refused, a terminal never becomes anyone's controlling one, a
// FIFO does not block. Only a regular file owned by `uid` comes back: NotFound when there is
// none, PermissionDenied (with why) otherwise. REQUIRES: root, or `uid` is the caller's own.
StatusOr<OpenedFile> OpenAsUser(const std::string& path, uid_t uid, gid_t gid, const std::vector<gid_t>& groups);

}  // namespace rota::exec
