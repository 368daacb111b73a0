// Tested by tests/daemon/test_http.py (test_password_sign_in, as root).
#include "web/pam_auth.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

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

Status PamCheck(const std::string& user, const std::string& password) {
  const char* service = ::access("/etc/pam.d/rota", R_OK) == 0 ? "rota" : "login";
  pam_conv conv{Converse, const_cast<char*>(password.c_str())};
  pam_handle_t* pamh = nullptr;
  int rc = pam_start(service, user.c_str(), &conv, &pamh);
  if (rc == PAM_SUCCESS) rc = pam_authenticate(pamh, PAM_SILENT | PAM_DISALLOW_NULL_AUTHTOK);
  if (rc == PAM_SUCCESS) rc = pam_acct_mgmt(pamh, PAM_SILENT);
  if (pamh) pam_end(pamh, rc);
  if (rc != PAM_SUCCESS) return PermissionDenied("wrong user name or password");
  return Status();
}

#else

bool PamAvailable() { return false; }

Status PamCheck(const std::string&, const std::string&) {
  return PermissionDenied("this rotad was built without PAM");
}

#endif

}  // namespace rota::web
