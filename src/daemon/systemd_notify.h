// sd_notify(3) without linking libsystemd: one datagram to $NOTIFY_SOCKET. Twenty lines are not
// worth a library dependency that every non-systemd build would also need.
#pragma once

#include <string_view>

namespace rota::daemon {

// Sends `state` (e.g. "READY=1", "RELOADING=1", "STOPPING=1", "STATUS=...") when rotad runs
// under systemd with Type=notify; does nothing otherwise. Returns whether it was sent.
bool NotifySystemd(std::string_view state);

}  // namespace rota::daemon
