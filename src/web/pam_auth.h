// Password sign-in through PAM (service "rota" when /etc/pam.d/rota exists, else "login"). Only
// a daemon running as root can check other users' passwords; rotad offers it only then.
#pragma once

#include <string>

#include "core/status.h"

namespace rota::web {

// Whether this build has PAM (libpam0g-dev was present).
bool PamAvailable();

// Checks `user`'s password and that the account may log in now (pam_acct_mgmt). OK, or
// PermissionDenied with a message that does not say which of the two was wrong. Blocks for as
// long as PAM takes (pam_unix delays failures by about two seconds).
Status PamCheck(const std::string& user, const std::string& password);

}  // namespace rota::web
