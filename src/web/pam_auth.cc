// Tested by tests/daemon/test_http.py and test_attacks_http.py (password sign-in, as root), and
// pam_auth_test.cc (FirstUserUid, PamServiceReady).
#include "web/pam_auth.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#ifdef ROTA_HAVE_PAM
#include <security/pam_appl.h>
#endif

namespace rota::web {

#ifdef ROTA_HAVE_PAM

namespace {

// Answers every password prompt with the password; other prompts get nothing.
int Converse(int n, const struct pam_message** msgs, struct pam_response** out, void* data) {
  if (n <= 0) return PAM_CONV_ERR;
  auto* replies = static_cast<pam_response*>(std::calloc(static_cast<size_t>(n), sizeof(pam_response)));
  if (!replies) return PAM_BUF_ERR;
  for (int i = 0; i < n; ++i) {
    if (msgs[i]->msg_style == PAM_PROMPT_ECHO_OFF) {
      replies[i].resp = ::strdup(static_cast<const char*>(data));
    }
  }
  *out = replies;
  return PAM_SUCCESS;
}

}  // namespace

bool PamAvailable() { return true; }

Status PamCheck(const std::string& service, const std::string& dir, const std::string& user,
                const std::string& password) {
  pam_conv conv{Converse, const_cast<char*>(password.c_str())};
  pam_handle_t* pamh = nullptr;
  int rc = dir.empty() ? pam_start(service.c_str(), user.c_str(), &conv, &pamh)
                       : pam_start_confdir(service.c_str(), user.c_str(), &conv, dir.c_str(), &pamh);
  if (rc == PAM_SUCCESS) rc = pam_authenticate(pamh, PAM_SILENT | PAM_DISALLOW_NULL_AUTHTOK);
  if (rc == PAM_SUCCESS) rc = pam_acct_mgmt(pamh, PAM_SILENT);
  if (pamh) pam_end(pamh, rc);
  if (rc != PAM_SUCCESS) return PermissionDenied("wrong user name or password");
  return Status();
}

#else

bool PamAvailable() { return false; }

Status PamCheck(const std::string&, const std::string&, const std::string&, const std::string&) {
  return PermissionDenied("this rotad was built without PAM");
}

#endif

Status PamServiceReady(const std::string& service, const std::string& dir) {
  const std::string file = (dir.empty() ? std::string("/etc/pam.d") : dir) + "/" + service;
  if (::access(file.c_str(), R_OK) != 0) {
    return FailedPrecondition("password sign-in needs " + file + " (install packaging/pam.d/rota there); without it "
                              "rotad uses no other program's PAM stack");
  }
  return Status();
}

uid_t FirstUserUid(const std::string& login_defs) {
  std::ifstream in(login_defs);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string key;
    long value = 0;
    if (words >> key && key == "UID_MIN" && words >> value && value > 0) return static_cast<uid_t>(value);
  }
  return 1000;
}

}  // namespace rota::web
