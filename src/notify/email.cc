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
#include "notify/curl_util.h"

namespace rota::notify {

namespace {

bool StartsWith(const std::string& s, std::string_view prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

std::string UrlHost(const std::string& url) {
  size_t start = url.find("://");
  start = start == std::string::npos ? 0 : start + 3;
  size_t end = url.find_first_of("/?#", start);
  std::string host = url.substr(start, end == std::string::npos ? std::string::npos : end - start);
  if (size_t at = host.rfind('@'); at != std::string::npos) host = host.substr(at + 1);
  if (!host.empty() && host[0] == '[') return host.substr(0, host.find(']') + 1);
  return host.substr(0, host.find(':'));
}

bool IsLoopback(const std::string& host) {
  return host == "localhost" || StartsWith(host, "127.") || host == "[::1]";
}

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
  bool smtps = StartsWith(options.url, "smtps://");
  if (!smtps && !StartsWith(options.url, "smtp://")) {
    return InvalidArgument("email url \"" + internal::RedactUrl(options.url) +
                           "\" must start with smtp:// (plain or STARTTLS) or smtps:// (implicit TLS)");
  }
  if (UrlHost(options.url).empty()) return InvalidArgument("email url \"" + options.url + "\" has no host");
  if (smtps && options.starttls) {
    return InvalidArgument("email starttls is for smtp:// URLs; " + options.url +
                           " is already TLS (drop starttls)");
  }
  auto from = ParseMailAddress(options.from);
  if (!from)
    return InvalidArgument("email from \"" + options.from +
                           "\" is not an address (use \"Rota <rota@lab.example.edu>\")");
  std::vector<MailAddress> to;
  for (const std::string& t : options.to) {
    auto a = ParseMailAddress(t);
    if (!a) return InvalidArgument("email to \"" + t + "\" is not an address");
    to.push_back(*a);
  }
  if (options.username.empty() && !options.password.empty()) {
    return InvalidArgument("email password is set but username is not");
  }
  if (!options.username.empty() && !smtps && !options.starttls && !IsLoopback(UrlHost(options.url))) {
    return InvalidArgument("email would send the password in clear text to " + UrlHost(options.url) +
                           " (use smtps:// or starttls = true)");
  }
  if (options.timeout.count() <= 0) return InvalidArgument("email timeout must be positive");
  if (!options.clock) options.clock = RealWallClockMs;
  return std::unique_ptr<Channel>(new EmailChannel(std::move(options), std::move(*from), std::move(to)));
}

}  // namespace rota::notify
