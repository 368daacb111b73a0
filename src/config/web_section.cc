// [web]: the HTTP front end (config.h, WebConfig; docs/http.md). Tested by config_test.cc.
#include <charconv>

#include "config/sections.h"

namespace rota::config::internal {

namespace {

// "host:port" or "[v6]:port" with a port 0..65535 (0: any free port).
bool ValidListen(const std::string& listen) {
  size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == listen.size()) return false;
  if (listen.front() == '[' && listen[colon - 1] != ']') return false;
  int port = -1;
  const char* begin = listen.data() + colon + 1;
  const char* end = listen.data() + listen.size();
  auto [p, ec] = std::from_chars(begin, end, port);
  return ec == std::errc() && p == end && port >= 0 && port <= 65535;
}

}  // namespace

void ReadWeb(Section& root, Config& config) {
  const toml::table* t = root.Table("web");
  if (!t) return;
  Section s(*t, "[web]", root.errors());
  WebConfig& w = config.web;
  if (auto v = s.String("listen")) {
    if (!v->empty() && !ValidListen(*v)) {
      s.Fail(*s.Get("listen"), "listen", "is not \"host:port\" (e.g. \"127.0.0.1:8080\", \"[::1]:8080\"; \"\" = off)");
    } else {
      w.listen = *v;
    }
  }
  if (auto v = s.String("static_dir")) {
    if (!v->empty() && (*v)[0] != '/') {
      s.Fail(*s.Get("static_dir"), "static_dir", "is not an absolute path");
    } else {
      w.static_dir = *v;
    }
  }
  if (auto b = s.Bool("public_read")) w.public_read = *b;
  if (auto b = s.Bool("metrics_public")) w.metrics_public = *b;
  if (auto b = s.Bool("password_login")) w.password_login = *b;
  if (const toml::array* hosts = s.Array("allowed_hosts")) {
    for (const toml::node& n : *hosts) {
      const auto* h = n.as_string();
      if (h && !h->get().empty()) {
        w.allowed_hosts.push_back(h->get());
      } else {
        s.Fail(n, "allowed_hosts entry", "is not a host name (use [\"gpu1.lab.example.edu\"])");
      }
    }
  }
  if (auto d = s.DurationOf("login_ttl", 1)) w.login_ttl = *d;
  if (auto d = s.DurationOf("session_ttl", 60)) w.session_ttl = *d;
  if (auto n = s.Integer("max_body", 1024, std::int64_t{1} << 30)) w.max_body = *n;
  if (auto v = s.Number("rate", 0, "requests per second, e.g. 50 (0 = no limit)")) w.rate = *v;
  if (auto v = s.Number("burst", 1, "a number of requests, e.g. 200")) w.burst = *v;
  if (auto n = s.Integer("threads", 1, 256)) w.threads = static_cast<int>(*n);
  if (auto n = s.Integer("connections_per_address", 1, 4096)) w.connections_per_address = static_cast<int>(*n);
  if (auto d = s.DurationOf("request_timeout", 1)) w.request_timeout = *d;
  for (auto [key, field] : {std::pair{"tls_cert", &w.tls_cert}, std::pair{"tls_key", &w.tls_key},
                            std::pair{"pam_dir", &w.pam_dir}}) {
    if (auto v = s.String(key)) {
      if (!v->empty() && (*v)[0] != '/') {
        s.Fail(*s.Get(key), key, "is not an absolute path");
      } else {
        *field = *v;
      }
    }
  }
  if (w.tls_cert.empty() != w.tls_key.empty()) {
    s.Fail(*s.Get(w.tls_cert.empty() ? "tls_key" : "tls_cert"), w.tls_cert.empty() ? "tls_key" : "tls_cert",
           "needs the other of tls_cert and tls_key too");
  }
  if (auto b = s.Bool("insecure_http")) w.insecure_http = *b;
  if (auto v = s.String("pam_service")) {
    if (v->empty() || v->find('/') != std::string::npos) {
      s.Fail(*s.Get("pam_service"), "pam_service", "is not a PAM service name (such as \"rota\")");
    } else {
      w.pam_service = *v;
    }
  }
  s.Finish();
}

}  // namespace rota::config::internal
