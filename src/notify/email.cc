// Tested by email_test.cc against a real SMTP server on 127.0.0.1 (plain, STARTTLS, implicit
// TLS, AUTH PLAIN, refused recipients, a server that never answers, a closed port).
//
// Design: libcurl speaks SMTP (EHLO, STARTTLS, AUTH, MAIL/RCPT/DATA, dot-stuffing and the final
// "." line); mime.cc builds the message. Errors after a server reply are judged by the last SMTP
// code: 5xx is permanent (the admin must act), 4xx temporary (retry).
#include "notify/email.h"

#include <algorithm>
#include <cstring>

#include "notify/codec.h"
#include "notify/channel_check.h"
#include "notify/curl_util.h"

namespace rota::notify {

using internal::IsLoopback;
using internal::StartsWith;
using internal::UrlHost;

namespace {


struct Upload {
  const std::string* data;
  size_t offset = 0;
};

size_t ReadUpload(char* buf, size_t size, size_t n, void* user) {
  auto* up = static_cast<Upload*>(user);
  size_t len = std::min(size * n, up->data->size() - up->offset);
  std::memcpy(buf, up->data->data() + up->offset, len);
  up->offset += len;
  return len;
}

class EmailChannel final : public Channel {
 public:
  EmailChannel(EmailOptions options, MailAddress from, std::vector<MailAddress> to)
      : options_(std::move(options)), from_(std::move(from)), to_(std::move(to)) {}

  std::string Describe() const override {
    std::string tls = StartsWith(options_.url, "smtps://") ? "implicit TLS"
                      : options_.starttls                  ? "STARTTLS"
                                                           : "no TLS";
    std::string d = "email " + internal::RedactUrl(options_.url) + " (" + tls;
    if (!options_.username.empty()) d += ", login " + options_.username;
    return d + ") from " + from_.addr;
  }

  Status Send(const Message& message) override {
    std::vector<MailAddress> to = to_;
    for (const std::string& m : message.mentions) {
      auto a = ParseMailAddress(m);
      if (!a) {
        return InvalidArgument(Describe() + ": \"" + m +
                               "\" is not an email address (check the user's email)");
      }
      to.push_back(*a);
    }
    std::vector<MailAddress> unique;
    for (const MailAddress& a : to) {
      bool seen =
          std::any_of(unique.begin(), unique.end(), [&](const MailAddress& u) { return u.addr == a.addr; });
      if (!seen) unique.push_back(a);
    }
    if (unique.empty()) {
      return InvalidArgument(Describe() +
                             ": no recipient (the user has no email, and the channel no fixed `to`)");
    }

    std::int64_t now_ms = options_.clock();
    MailFields f;
    f.from = from_;
    f.to = unique;
    f.subject = message.subject;
    f.text = message.text;
    f.event = message.event;
    f.date = now_ms / 1000;
    f.message_id =
        "rota." + std::to_string(now_ms) + "." + RandomHex(8) + from_.addr.substr(from_.addr.find('@'));
    f.encoding = options_.encoding;
    std::string mail = BuildMail(f);

    internal::Easy easy;
    if (!easy.handle()) return Internal(Describe() + ": libcurl could not start a transfer");
    CURL* c = easy.handle();
    easy.Common(options_.timeout, "smtp,smtps", options_.ca_file);
    curl_easy_setopt(c, CURLOPT_URL, options_.url.c_str());
    if (options_.starttls) curl_easy_setopt(c, CURLOPT_USE_SSL, static_cast<long>(CURLUSESSL_ALL));
    if (!options_.username.empty()) {
      curl_easy_setopt(c, CURLOPT_USERNAME, options_.username.c_str());
      curl_easy_setopt(c, CURLOPT_PASSWORD, options_.password.c_str());
    }
    std::string mail_from = "<" + from_.addr + ">";
    curl_easy_setopt(c, CURLOPT_MAIL_FROM, mail_from.c_str());
    std::vector<std::string> rcpt;
    for (const MailAddress& a : unique) rcpt.push_back("<" + a.addr + ">");
    curl_easy_setopt(c, CURLOPT_MAIL_RCPT, easy.List(rcpt));
    Upload up{&mail};
    curl_easy_setopt(c, CURLOPT_READFUNCTION, ReadUpload);
    curl_easy_setopt(c, CURLOPT_READDATA, &up);
    curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(mail.size()));
    CURLcode rc = curl_easy_perform(c);
    if (rc == CURLE_OK) return Status::Ok();

    long smtp_code = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &smtp_code);
    if ((rc == CURLE_SEND_ERROR || rc == CURLE_RECV_ERROR) && smtp_code >= 400) {
      std::string m =
          Describe() + ": the server refused: " + easy.error() + " (SMTP " + std::to_string(smtp_code) + ")";
      if (smtp_code >= 500) {
        return FailedPrecondition(
            m + "; check the From address, the recipients and whether the server relays for us");
      }
      return Unavailable(m + "; a temporary refusal: try again later");
    }
    return internal::CurlFailure(rc, easy, Describe(), options_.timeout);
  }

 private:
  EmailOptions options_;
  MailAddress from_;
  std::vector<MailAddress> to_;
};

}  // namespace

StatusOr<std::unique_ptr<Channel>> MakeEmailChannel(EmailOptions options) {
  if (Status s = CheckEmailOptions(options); !s.ok()) return s;
  std::optional<MailAddress> from = ParseMailAddress(options.from);
  std::vector<MailAddress> to;
  for (const std::string& t : options.to) to.push_back(*ParseMailAddress(t));
  if (!options.clock) options.clock = RealWallClockMs;
  return std::unique_ptr<Channel>(new EmailChannel(std::move(options), std::move(*from), std::move(to)));
}

}  // namespace rota::notify
