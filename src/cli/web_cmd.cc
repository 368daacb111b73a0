// `rota web`: prints a one-time link that signs this user in to the web page (docs/http.md).
// The link is minted over the Unix socket, so the identity is the operating system's.
// Tested by tests/daemon/test_http.py.
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>

#include "cli/daemon_client.h"
#include "cli/job_format.h"

namespace rota::cli {

namespace {

int RunWeb(const ClientOptions& options, bool json) {
  auto reply = CallDaemon(options, {{"op", "web_login"}});
  if (!reply.ok()) return Fail(reply.status());
  if (json) {
    PrintJson({{"url", reply->value("url", "")}, {"expires", reply->value("expires", 0LL)}});
    return 0;
  }
  std::printf("Open this link in your browser to sign in as %s (once, until %s):\n\n  %s\n\n",
              reply->value("user", "?").c_str(), FormatLocalTime(reply->value("expires", 0LL)).c_str(),
              reply->value("url", "").c_str());
  char host[256] = "this-server";
  if (::gethostname(host, sizeof host) != 0) std::snprintf(host, sizeof host, "this-server");
  host[sizeof host - 1] = '\0';
  // The port of the link, for the ssh hint: "http://host:PORT/auth/...".
  const std::string url = reply->value("url", "");
  std::string port = "8080";
  if (size_t slash = url.find('/', url.find("://") + 3); slash != std::string::npos) {
    if (size_t colon = url.rfind(':', slash); colon != std::string::npos && colon > url.find("://")) {
      port = url.substr(colon + 1, slash - colon - 1);
    }
  }
  std::printf("From another computer: run `ssh -L %s:localhost:%s %s` there first, or ask the admin to\n"
              "open the page on the lab network ([web] listen and allowed_hosts).\n",
              port.c_str(), port.c_str(), host);
  return 0;
}

}  // namespace

void AddWebCommand(CLI::App& app, ClientOptions* options, int* exit_code) {
  auto json = std::make_shared<bool>(false);
  CLI::App* web = app.add_subcommand("web", "Print a one-time link that signs you in to the web page");
  web->footer("The link works once and for a few minutes ([web] login_ttl); the session then lasts\n"
              "[web] session_ttl. Anyone who has the link before you use it can sign in as you.");
  AddSocketFlag(web, options);
  web->add_flag("--json", *json, "print {\"url\", \"expires\"} as JSON");
  web->callback([options, json, exit_code] { *exit_code = RunWeb(*options, *json); });
}

}  // namespace rota::cli
