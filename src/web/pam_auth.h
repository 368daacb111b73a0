// Password sign-in through PAM, with a service file of Rota's own (packaging/pam.d/rota, installed
// as /etc/pam.d/rota): never another program's stack such as `login`. Only a daemon running as
// root can check other users' passwords; rotad offers it only then.
#pragma once

#include <sys/types.h>

#include <string>

#include "core/status.h"

namespace rota::web {

// Whether this build has PAM (libpam0g-dev was present).
bool PamAvailable();

// Whether `service`'s file is in `dir` ("" = the system's, /etc/pam.d): FailedPrecondition naming
// the file to install when it is not.
Status PamServiceReady(const std::string& service, const std::string& dir);

// Checks `user`'s password and that the account may log in now (pam_acct_mgmt) with `service`
// (its file in `dir`, "" = the system's). OK, or PermissionDenied with a message that does not say
// which of the two was wrong. Blocks for as long as PAM takes (pam_unix delays failures by about
// two seconds).
Status PamCheck(const std::string& service, const std::string& dir, const std::string& user,
                const std::string& password);

// The lowest uid of an ordinary account (UID_MIN of /etc/login.defs, else 1000): root and the
// system accounts below it never sign in on the web.
uid_t FirstUserUid(const std::string& login_defs = "/etc/login.defs");

}  // namespace rota::web
