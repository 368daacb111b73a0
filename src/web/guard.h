// The checks every HTTP request passes before it reaches the API: is the Host header one this
// server answers to (no DNS rebinding), and does a state-changing request with a cookie session
// carry the session's CSRF token and, if the browser sent one, a same-origin Origin.
// Pure functions of their arguments; tested by guard_test.cc.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace rota::web {

// The host part of a Host header or an authority: "[::1]:8080" -> "[::1]", "a.b:80" -> "a.b",
// lower-cased. Empty for an empty or malformed value.
std::string HostOf(std::string_view authority);

// True when `host_header` names localhost, 127.0.0.1, [::1], the host of `listen` (e.g.
// "10.0.0.5:8080"), or one of `allowed` (host names, compared without the port). An empty or
// missing Host header is refused.
bool HostAllowed(std::string_view host_header, std::string_view listen, const std::vector<std::string>& allowed);

// Constant-time equality of two secrets (no early exit on the first differing byte).
bool SecretEquals(std::string_view a, std::string_view b);

// True when `origin` ("scheme://host:port", as browsers send it) names the same host and port
// as `host_header`, or is empty (not sent). "null" and malformed origins are refused.
bool SameOrigin(std::string_view origin, std::string_view host_header);

// REQUIRES: the request is authenticated by a cookie session whose CSRF token is `session_csrf`.
// True when the request may change state: `header_csrf` (X-Rota-CSRF) equals the session's token
// and `origin` is empty or has the same host as `host_header` ("null" is refused).
bool CsrfAllowed(std::string_view header_csrf, std::string_view session_csrf, std::string_view origin,
                 std::string_view host_header);

}  // namespace rota::web
