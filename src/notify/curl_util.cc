// Tested by webhooks_test.cc and email_test.cc against real local servers.
//
// Design: one easy handle per send rather than a shared handle or a multi handle: the outbox
// sends a few messages a minute, and a fresh handle keeps Send() free of shared state (so
// thread-safe) and of connections left half-open by an earlier failure.
#include "notify/curl_util.h"

#include <algorithm>
#include <mutex>

namespace rota::notify::internal {

namespace {

constexpr size_t kMaxBody = 64 * 1024;

size_t AppendBody(char* data, size_t size, size_t n, void* user) {
  auto* body = static_cast<std::string*>(user);
  size_t len = size * n;
  if (body->size() < kMaxBody) body->append(data, std::min(len, kMaxBody - body->size()));
  return len;  // the rest is read and dropped, not an error
}

std::string Ms(std::chrono::milliseconds t) { return std::to_string(t.count()) + " ms"; }

}  // namespace


Easy::Easy() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  curl_ = curl_easy_init();
  if (curl_) curl_easy_setopt(curl_, CURLOPT_ERRORBUFFER, error_);
}

Easy::~Easy() {
  if (curl_) curl_easy_cleanup(curl_);
  for (struct curl_slist* l : lists_) curl_slist_free_all(l);
}

struct curl_slist* Easy::List(const std::vector<std::string>& items) {
  struct curl_slist* list = nullptr;
  for (const std::string& item : items) {
    struct curl_slist* longer = curl_slist_append(list, item.c_str());
    if (!longer) break;  // out of memory: send what fits, libcurl will report the rest
    list = longer;
  }
  lists_.push_back(list);
  return list;
}

void Easy::Common(std::chrono::milliseconds timeout, const char* protocols, const std::string& ca_file) {
  long ms = static_cast<long>(timeout.count() > 0 ? timeout.count() : 1);
  curl_easy_setopt(curl_, CURLOPT_TIMEOUT_MS, ms);
  curl_easy_setopt(curl_, CURLOPT_CONNECTTIMEOUT_MS, ms);
  curl_easy_setopt(curl_, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl_, CURLOPT_PROTOCOLS_STR, protocols);
  curl_easy_setopt(curl_, CURLOPT_FOLLOWLOCATION, 0L);
  if (!ca_file.empty()) curl_easy_setopt(curl_, CURLOPT_CAINFO, ca_file.c_str());
}

Status CurlFailure(CURLcode code, const Easy& easy, std::string_view what,
                   std::chrono::milliseconds timeout) {
  std::string detail = easy.error()[0] ? easy.error() : curl_easy_strerror(code);
  std::string w(what);
  switch (code) {
    case CURLE_OPERATION_TIMEDOUT:
      return Unavailable(w + ": timed out after " + Ms(timeout) + " (" + detail +
                         "; is the server reachable from this machine, or does it need a longer timeout?)");
    case CURLE_COULDNT_CONNECT:
      return Unavailable(
          w + ": could not connect (" + detail +
          "; is the server running, are the host and port right, is a firewall or proxy in the way?)");
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
      return Unavailable(w + ": cannot resolve the host name (" + detail + "; check the URL and DNS)");
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
      return FailedPrecondition(w + ": the server's TLS certificate is not trusted (" + detail +
                                "; set ca_file to the CA that signed it, or fix the host name)");
    case CURLE_SSL_CONNECT_ERROR:
      return FailedPrecondition(
          w + ": the TLS handshake failed (" + detail +
          "; does the server speak TLS on this port? implicit TLS is smtps:// or https://, "
          "STARTTLS is smtp:// with starttls)");
    case CURLE_USE_SSL_FAILED:
      return FailedPrecondition(w + ": the server does not offer STARTTLS (" + detail +
                                "; use smtps:// if it speaks TLS from the start, or turn starttls off)");
    case CURLE_LOGIN_DENIED:
    case CURLE_AUTH_ERROR:
      return PermissionDenied(w + ": login denied (" + detail + "; check the username and password)");
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_URL_MALFORMAT:
      return InvalidArgument(w + ": unusable URL (" + detail + ")");
    case CURLE_WEIRD_SERVER_REPLY:
      return FailedPrecondition(w + ": the server's answer is not the expected protocol (" + detail +
                                "; is this the right port and scheme?)");
    default:
      return Unavailable(w + ": " + detail + " (" + curl_easy_strerror(code) + ")");
  }
}

StatusOr<HttpResponse> PostJson(const std::string& url, const std::string& json,
                                const std::vector<std::string>& extra_headers, const PostOptions& options,
                                std::string_view what) {
  Easy easy;
  if (!easy.handle()) return Internal(std::string(what) + ": libcurl could not start a transfer");
  CURL* c = easy.handle();
  easy.Common(options.timeout, "http,https", options.ca_file);
  if (options.proxy == "none") {
    curl_easy_setopt(c, CURLOPT_PROXY, "");  // "" turns proxies off, the environment's included
  } else if (!options.proxy.empty()) {
    curl_easy_setopt(c, CURLOPT_PROXY, options.proxy.c_str());
  }
  std::vector<std::string> header_lines = {"Content-Type: application/json; charset=utf-8",
                                           "Accept: application/json",
                                           "Expect:"};  // no 100-continue round trip
  header_lines.insert(header_lines.end(), extra_headers.begin(), extra_headers.end());
  struct curl_slist* headers = easy.List(header_lines);
  HttpResponse response;
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(c, CURLOPT_POST, 1L);
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, json.data());
  curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(json.size()));
  curl_easy_setopt(c, CURLOPT_USERAGENT, "rota-notify/1");
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, AppendBody);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &response.body);
  CURLcode rc = curl_easy_perform(c);
  if (rc != CURLE_OK) return CurlFailure(rc, easy, what, options.timeout);
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &response.status);
  const char* type = nullptr;
  if (curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &type) == CURLE_OK && type) response.content_type = type;
  return response;
}

Status HttpFailure(const HttpResponse& response, std::string_view what, std::string_view hint) {
  std::string body = response.body.substr(0, 200);
  for (char& ch : body) {
    if (ch == '\r' || ch == '\n' || ch == '\t') ch = ' ';
  }
  std::string m = std::string(what) + ": HTTP " + std::to_string(response.status);
  if (!body.empty()) m += ": " + body;
  if (!hint.empty()) m += " (" + std::string(hint) + ")";
  long s = response.status;
  if (s >= 500 || s == 408) return Unavailable(m);
  if (s == 429) return ResourceExhausted(m);
  if (s == 401 || s == 403) return PermissionDenied(m);
  return FailedPrecondition(m);
}

}  // namespace rota::notify::internal
