// Signing in to the web page (docs/http.md, "Signing in"): a `rota web` link (asked first,
// used by the same-origin POST of its button), the password through PAM (limited before PAM is
// asked, every failure answered kPasswordFailureTime after it came), signing out, and the session
// cookies. Tested by tests/daemon/test_http.py and test_attacks_http.py.
#include <httplib.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <string>
#include <thread>

#include "daemon/http_front.h"
#include "daemon/http_replies.h"
#include "daemon/identity.h"
#include "json/bounded.h"
#include "web/guard.h"
#include "web/pam_auth.h"

namespace rota::daemon {

using nlohmann::json;

namespace {

// What an unknown, used or expired `rota web` link gets.
constexpr const char* kLinkGone =
    "this sign-in link is unknown, already used or expired; run `rota web` again for a new one";

// A failed password sign-in is answered this long after it came, whatever failed.
constexpr auto kPasswordFailureTime = std::chrono::milliseconds(3000);

}  // namespace

void HttpFront::SetSessionCookies(httplib::Response& res, const web::NewSession& s) const {
  // Secure wherever the page is HTTPS: the browser never sends them over plain HTTP.
  const std::string age = "; Max-Age=" + std::to_string(options_.web.session_ttl) + (tls_ ? "; Secure" : "");
  res.set_header("Set-Cookie", "rota_session=" + s.id + "; HttpOnly; SameSite=Strict; Path=/" + age);
  res.set_header("Set-Cookie", "rota_csrf=" + s.csrf + "; SameSite=Strict; Path=/" + age);
}

std::string HtmlEscape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

// GET of a `rota web` link: a page that names whom the link signs in as and asks to confirm
// (login CSRF: a link someone else minted would otherwise sign the victim in as them, and what
// the victim then did would be theirs). The link is used only by the POST of that page.
void HttpFront::Login(const httplib::Request& req, httplib::Response& res) {
  const std::string token = req.get_param_value("token");
  std::optional<web::Principal> who = token.empty() ? std::nullopt : auth_.PeekLink(token, options_.clock->Now());
  if (!who) {
    SendError(res, 401, "unauthenticated", kLinkGone);
    return;
  }
  if (RefusedAsExposed(req, res)) return;
  const std::string user = HtmlEscape(who->user);
  res.status = 200;
  res.set_header("Cache-Control", "no-store");
  res.set_header("X-Frame-Options", "DENY");  // no page of another site may frame the button
  res.set_header("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; "
                                            "frame-ancestors 'none'");
  // Not no-referrer: under it a browser sends `Origin: null` with the form, which the same-origin
  // check must refuse. The link's token goes to this server alone.
  res.set_header("Referrer-Policy", "same-origin");
  res.set_content("<!doctype html><html><head><meta charset=\"utf-8\"><meta name=\"viewport\" "
                  "content=\"width=device-width\"><title>Rota: sign in</title>"
                  "<style>body{font:16px system-ui,sans-serif;max-width:34em;margin:4em auto;padding:0 1em}"
                  "button{font:inherit;padding:.5em 1.2em}small{color:#555}</style></head><body>"
                  "<h1>Sign in to Rota</h1><p>This link signs you in as <b>" + user + "</b>.</p>"
                  "<form method=\"post\" action=\"/auth/login\"><input type=\"hidden\" name=\"token\" value=\"" +
                      HtmlEscape(token) + "\"><button type=\"submit\">Sign in as " + user + " / 以 " + user +
                      " 身份登录</button></form>"
                  "<p><small>If you did not run <code>rota web</code> yourself just now, close this page: a link "
                  "someone else made signs you in as them. 如果这个链接不是你刚才自己运行 <code>rota web</code> "
                  "得到的，请关闭本页。</small></p></body></html>",
                  "text/html; charset=utf-8");
}

// POST of the confirmation page: same-origin only, then the link is used (once).
void HttpFront::ConfirmLogin(const httplib::Request& req, httplib::Response& res) {
  if (!web::SameOrigin(req.get_header_value("Origin"), req.get_header_value("Host"))) {
    NoteRefusal(req.remote_addr, PermissionDenied("a sign-in link sent from another site (login CSRF)"));
    SendError(res, 403, "permission_denied", "cross-site request refused");
    return;
  }
  if (RefusedAsExposed(req, res)) return;
  const std::string token = req.get_param_value("token");
  std::optional<web::NewSession> s =
      token.empty() ? std::nullopt : auth_.RedeemLink(token, options_.clock->Now(), options_.web.session_ttl);
  if (!s) {
    SendError(res, 401, "unauthenticated", kLinkGone);
    return;
  }
  spdlog::info("HTTP: {} signed in with a one-time link from {}", s->who.user, req.remote_addr);
  SetSessionCookies(res, *s);
  res.set_header("Cache-Control", "no-store");
  res.set_redirect("/", 303);
}

void HttpFront::Logout(const httplib::Request& req, httplib::Response& res) {
  if (!web::SameOrigin(req.get_header_value("Origin"), req.get_header_value("Host"))) {
    SendError(res, 403, "permission_denied", "cross-site request refused");
    return;
  }
  const std::string session = CookieValue(req, "rota_session");
  if (!session.empty()) auth_.EndSession(session);
  res.set_header("Set-Cookie", "rota_session=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0");
  res.set_header("Set-Cookie", "rota_csrf=; SameSite=Strict; Path=/; Max-Age=0");
  SendJson(res, 200, api::OkReply());
}

void HttpFront::Password(const httplib::Request& req, httplib::Response& res) {
  const auto started = std::chrono::steady_clock::now();
  if (!web::SameOrigin(req.get_header_value("Origin"), req.get_header_value("Host"))) {
    SendError(res, 403, "permission_denied", "cross-site request refused");
    return;
  }
  if (!options_.password_login || !web::PamAvailable() || !pam_ready_.ok()) {
    SendError(res, 404, "not_found",
              (pam_ready_.ok() ? std::string("password sign-in is off on this server (rotad is not running as root, or "
                                             "[web] password_login = false)")
                               : pam_ready_.message()) +
                  "; run `rota web` on the server for a sign-in link");
    return;
  }
  if (RefusedAsExposed(req, res)) return;
  StatusOr<json> parsed = ParseBoundedJson(req.body, kMaxJsonDepth, JsonFloats::kWithinInt32);
  const json body = parsed.ok() ? std::move(*parsed) : json();
  if (!body.is_object() || !body.contains("user") || !body["user"].is_string() ||
      !body.contains("password") || !body["password"].is_string()) {
    SendError(res, 400, "invalid_argument", "send {\"user\": ..., \"password\": ...}");
    return;
  }
  const std::string user = body["user"].get<std::string>();
  const std::string user_key = "user " + user;
  // The limit comes before PAM: each attempt takes its token first (attempts made at once cannot
  // all pass), and gets it back when it succeeds. Once an address or a user name has failed too
  // often, nothing is checked at all, so a right guess among many wrong ones is not told apart.
  const bool by_address = password_failures_.Allow(req.remote_addr, Seconds());
  const bool by_user = by_address && password_failures_.Allow(user_key, Seconds());
  if (by_address && !by_user) password_failures_.Refund(req.remote_addr);
  if (!by_user) {
    NoteRefusal(req.remote_addr, ResourceExhausted("too many failed password sign-ins (for \"" + user + "\")"));
    SendError(res, 429, "resource_exhausted", "too many failed sign-ins from this address or for this user; wait a minute");
    return;
  }
  // Root and system accounts never sign in on the web; like an unknown name, they are not asked
  // of PAM at all, and get the same answer as a wrong password, in the same time.
  std::optional<uid_t> uid = UserId(user);
  const bool ordinary = uid && *uid != 0 && *uid >= first_user_uid_;
  Status checked = ordinary ? web::PamCheck(options_.web.pam_service, options_.web.pam_dir, user,
                                            body["password"].get<std::string>())
                            : PermissionDenied("wrong user name or password");
  if (!checked.ok()) {
    spdlog::warn("HTTP: failed password sign-in for \"{}\" from {}{}", user, req.remote_addr,
                 !uid ? " (no such user)" : ordinary ? "" : " (root and system accounts do not sign in on the web)");
    // Every failure takes as long as PAM's slowest (pam_unix delays a failure 2 s, +-25%).
    std::this_thread::sleep_until(started + kPasswordFailureTime);
    SendError(res, 401, "unauthenticated", "wrong user name or password");
    return;
  }
  password_failures_.Refund(req.remote_addr);
  password_failures_.Refund(user_key);
  web::NewSession s = auth_.StartSession(*uid, user, options_.clock->Now(), options_.web.session_ttl);
  spdlog::info("HTTP: {} signed in with a password from {}", user, req.remote_addr);
  SetSessionCookies(res, s);
  json reply = api::OkReply();
  reply["user"] = user;
  reply["csrf"] = s.csrf;
  SendJson(res, 200, reply);
}

// The bookings as an iCalendar feed for the calendar apps people already use: one's own, or the
// whole lab's with `lab=1`. Calendar apps cannot send headers, so an API token may come in the
// query (`?token=`: make one for the purpose, `rota token create --name calendar`); a browser
// session works too, and with [web] public_read the lab's feed needs no credential.
}  // namespace rota::daemon
