// The launch lock on a job's spec file (spec.h): a POSIX record lock (fcntl F_SETLK) for writing
// over the whole file. rota-shepherd takes it before it starts the job and keeps it until it
// exits; the executor asks who holds it (F_GETLK names the holder's pid) or takes it itself to
// withdraw a launch nobody took.
//
// A POSIX record lock belongs to the process, and closing ANY descriptor of the file in that
// process releases it: the holder reads the spec through the descriptor it locked (ReadFd) and
// opens the file no other way. A fork does not inherit the lock.
#pragma once

#include <sys/types.h>

#include <string>

#include "core/status.h"

namespace rota::exec {

// Non-blocking: true when this process now holds the lock, false when another process does.
// `path` is for messages.
StatusOr<bool> TryLockSpec(int fd, const std::string& path);

// The pid of a process that holds the lock, 0 when none does (F_GETLK; this process's own lock
// does not count).
StatusOr<pid_t> SpecLockHolder(int fd, const std::string& path);

}  // namespace rota::exec
