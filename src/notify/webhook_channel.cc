// Tested by webhooks_test.cc against a real HTTP server on 127.0.0.1.
//
// Design: the channel is the glue of three pure steps (BuildWebhookRequest, the POST,
// ReadWebhookAnswer); it keeps no state between sends, so it is safe to call from any thread.
#include <utility>

#include "notify/channel_check.h"
#include "notify/curl_util.h"
#include "notify/webhooks.h"

namespace rota::notify {

namespace {

class WebhookChannel final : public Channel {
 public:
  WebhookChannel(WebhookKind kind, WebhookOptions options) : kind_(kind), options_(std::move(options)) {}

  std::string Describe() const override {
    return std::string(WebhookKindName(kind_)) + " " + internal::RedactUrl(options_.url) +
           (options_.secret.empty() ? "" : " (signed)");
  }

  Status Send(const Message& message) override {
    WebhookRequest request = BuildWebhookRequest(kind_, options_, message, options_.clock());
    std::string what = Describe();
    auto response = internal::PostJson(request.url, request.body, request.headers,
                                       {options_.timeout, options_.ca_file, options_.proxy}, what);
    if (!response.ok()) return response.status();
    return ReadWebhookAnswer(kind_, response->status, response->body, what);
  }

 private:
  WebhookKind kind_;
  WebhookOptions options_;
};

}  // namespace


StatusOr<std::unique_ptr<Channel>> MakeWebhookChannel(WebhookKind kind, WebhookOptions options) {
  if (Status s = CheckWebhookOptions(kind, options); !s.ok()) return s;
  if (!options.clock) options.clock = RealWallClockMs;
  return std::unique_ptr<Channel>(new WebhookChannel(kind, std::move(options)));
}

}  // namespace rota::notify
