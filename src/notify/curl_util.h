// What the network channels share around libcurl: one easy handle per send with the common
// settings (deadline, no signals, protocols), JSON POSTs, and libcurl's errors as Status values
// an admin can act on. Internal to src/notify.
#pragma once

#include <curl/curl.h>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "notify/channel_check.h"  // internal::RedactUrl

namespace rota::notify::internal {

// An easy handle with an error buffer, closed on destruction. curl_global_init runs once per
// process before the first handle. handle() is null when libcurl could not make one.
class Easy {
 public:
  Easy();
  ~Easy();
  Easy(const Easy&) = delete;
  Easy& operator=(const Easy&) = delete;

  CURL* handle() const { return curl_; }
  const char* error() const { return error_; }
  // Sets the settings every send uses: `timeout` for the whole transfer and the connection
  // (CURLOPT_TIMEOUT_MS, CURLOPT_CONNECTTIMEOUT_MS), no signals (CURLOPT_NOSIGNAL: the daemon is
  // threaded), only `protocols` ("http,https", "smtp,smtps"), no redirects, the CA file if given.
  void Common(std::chrono::milliseconds timeout, const char* protocols, const std::string& ca_file);
  // A libcurl string list of `items` that lives as long as the handle (freed after it).
  struct curl_slist* List(const std::vector<std::string>& items);

 private:
  CURL* curl_ = nullptr;
  std::vector<struct curl_slist*> lists_;
  char error_[CURL_ERROR_SIZE] = {};
};

// A libcurl failure as a Status: "WHAT: timed out after 500 ms (...)", "WHAT: could not connect
// (...)"; the code tells whether retrying may help (channel.h).
Status CurlFailure(CURLcode code, const Easy& easy, std::string_view what, std::chrono::milliseconds timeout);

struct HttpResponse {
  long status = 0;
  std::string content_type;
  std::string body;  // at most the first 64 KiB
};

// POSTs `json` with Content-Type application/json to `url`, within `timeout`. A transport
// failure is a Status; any HTTP answer (even 500) is a response for the caller to judge.
struct PostOptions {
  std::chrono::milliseconds timeout;
  std::string ca_file;  // empty = the system's CAs
  std::string proxy;    // empty = from the environment, "none" = direct, else the proxy URL
};
StatusOr<HttpResponse> PostJson(const std::string& url, const std::string& json,
                                const std::vector<std::string>& extra_headers, const PostOptions& options,
                                std::string_view what);

// "HTTP 404: no_service" and the like, for an answer that is not 2xx; the body is cut to 200
// bytes and kept on one line. 5xx and 429 are retryable (kUnavailable, kResourceExhausted).
Status HttpFailure(const HttpResponse& response, std::string_view what, std::string_view hint = {});

}  // namespace rota::notify::internal
