// Tested by guard_test.cc.
#include "web/guard.h"

#include <algorithm>
#include <cctype>

namespace rota::web {

std::string HostOf(std::string_view authority) {
  std::string host;
  if (authority.empty()) return host;
  if (authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return "";
    std::string_view rest = authority.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') return "";
    host = std::string(authority.substr(0, close + 1));
  } else {
    size_t colon = authority.find(':');
    if (colon != std::string_view::npos && authority.find(':', colon + 1) != std::string_view::npos) return "";
    host = std::string(authority.substr(0, colon));
  }
  for (char& c : host) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (std::isspace(static_cast<unsigned char>(c)) || c == '/' || c == '@') return "";
  }
  return host;
}

bool HostAllowed(std::string_view host_header, std::string_view listen, const std::vector<std::string>& allowed) {
  const std::string host = HostOf(host_header);
  if (host.empty()) return false;
  if (host == "localhost" || host == "127.0.0.1" || host == "[::1]") return true;
  const std::string listen_host = HostOf(listen);
  if (!listen_host.empty() && listen_host != "0.0.0.0" && listen_host != "[::]" && host == listen_host) return true;
  return std::any_of(allowed.begin(), allowed.end(), [&](const std::string& a) { return HostOf(a) == host; });
}

bool SecretEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

bool SameOrigin(std::string_view origin, std::string_view host_header) {
  if (origin.empty()) return true;
  // "scheme://authority", compared on the authority's host and port with the Host header.
  size_t scheme = origin.find("://");
  if (scheme == std::string_view::npos) return false;
  std::string_view authority = origin.substr(scheme + 3);
  if (authority.find('/') != std::string_view::npos) return false;
  auto lower = [](std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
  };
  return !HostOf(authority).empty() && lower(authority) == lower(host_header);
}

bool CsrfAllowed(std::string_view header_csrf, std::string_view session_csrf, std::string_view origin,
                 std::string_view host_header) {
  if (session_csrf.empty() || header_csrf.empty() || !SecretEquals(header_csrf, session_csrf)) return false;
  return SameOrigin(origin, host_header);
}

}  // namespace rota::web
