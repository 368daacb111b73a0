// Real servers for the notifier's tests (header-only: every .cc in src/notify goes into
// rota_notify): a self-signed certificate made with OpenSSL's API, a small SMTP server (plain,
// STARTTLS, implicit TLS, AUTH PLAIN) and a small HTTP server, each on 127.0.0.1 and a port the
// kernel picks, on its own thread, recording what it received. libcurl talks to them exactly as
// it talks to a real mail server or chat platform: nothing of libcurl is mocked.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "notify/codec.h"
#include "testing/temp_dir.h"

namespace rota::notify::testing {

using rota::testing::TempDir;

// A self-signed certificate for CN=localhost, IP 127.0.0.1, with its key; the PEM file is what a
// client trusts (ca_file), the SSL_CTX what the servers use.
class TestCert {
 public:
  TestCert() {
    key_ = EVP_EC_gen("P-256");
    X509* x = X509_new();
    X509_set_version(x, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
    X509_gmtime_adj(X509_getm_notBefore(x), -3600);
    X509_gmtime_adj(X509_getm_notAfter(x), 86400);
    X509_set_pubkey(x, key_);
    X509_NAME* name = X509_get_subject_name(x);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("localhost"),
                               -1, -1, 0);
    X509_set_issuer_name(x, name);
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, x, x, nullptr, nullptr, 0);
    for (auto [nid, value] : {std::pair{NID_subject_alt_name, "DNS:localhost,IP:127.0.0.1"},
                              std::pair{NID_basic_constraints, "critical,CA:TRUE"},
                              std::pair{NID_subject_key_identifier, "hash"}}) {
      X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
      X509_add_ext(x, ext, -1);
      X509_EXTENSION_free(ext);
    }
    X509_sign(x, key_, EVP_sha256());
    cert_ = x;
    pem_path_ = dir_.path() + "/ca.pem";
    if (FILE* f = std::fopen(pem_path_.c_str(), "w")) {
      PEM_write_X509(f, cert_);
      std::fclose(f);
    }
    ctx_ = SSL_CTX_new(TLS_server_method());
    SSL_CTX_use_certificate(ctx_, cert_);
    SSL_CTX_use_PrivateKey(ctx_, key_);
  }
  ~TestCert() {
    SSL_CTX_free(ctx_);
    X509_free(cert_);
    EVP_PKEY_free(key_);
  }
  TestCert(const TestCert&) = delete;
  TestCert& operator=(const TestCert&) = delete;

  bool ok() const { return key_ && cert_ && ctx_ && std::filesystem::exists(pem_path_); }
  const std::string& pem_path() const { return pem_path_; }
  SSL_CTX* ctx() const { return ctx_; }

 private:
  TempDir dir_;
  EVP_PKEY* key_ = nullptr;
  X509* cert_ = nullptr;
  SSL_CTX* ctx_ = nullptr;
  std::string pem_path_;
};

// A listening socket on 127.0.0.1 and a thread that serves one connection at a time with
// `handle` until destruction. Accepted sockets time out after 10 s, so a broken test fails
// instead of hanging.
class TestServer {
 public:
  explicit TestServer(std::function<void(int fd)> handle) : handle_(std::move(handle)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    ::listen(fd_, 16);
    socklen_t len = sizeof addr;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Loop(); });
  }
  ~TestServer() {
    ::shutdown(fd_, SHUT_RDWR);  // wakes accept()
    thread_.join();
    ::close(fd_);
  }
  TestServer(const TestServer&) = delete;
  TestServer& operator=(const TestServer&) = delete;

  int port() const { return port_; }

  // A port on 127.0.0.1 where nothing listens (bound, then closed).
  static int ClosedPort() {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    socklen_t len = sizeof addr;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    ::close(fd);
    return ntohs(addr.sin_port);
  }

 private:
  void Loop() {
    // A write to a peer that went away is EPIPE for this thread, not the death of the test
    // binary (blocked here only: changing the process's disposition would reach the children
    // other tests start).
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
    while (true) {
      int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) {
        if (errno == EINTR) continue;
        return;
      }
      timeval tv{10, 0};
      ::setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      ::setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
      handle_(c);
      ::close(c);
    }
  }

  std::function<void(int)> handle_;
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

// A connection read line by line, in plain text or (after StartTls) TLS.
class Conn {
 public:
  explicit Conn(int fd) : fd_(fd) {}
  ~Conn() {
    if (ssl_) {
      SSL_shutdown(ssl_);
      SSL_free(ssl_);
    }
  }
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;

  bool StartTls(SSL_CTX* ctx) {
    buf_.clear();
    ssl_ = SSL_new(ctx);
    SSL_set_fd(ssl_, fd_);
    return SSL_accept(ssl_) == 1;
  }
  bool tls() const { return ssl_ != nullptr; }

  // The next line without its CRLF; false at the end of the connection.
  bool ReadLine(std::string* line) {
    while (true) {
      size_t nl = buf_.find("\r\n");
      if (nl != std::string::npos) {
        *line = buf_.substr(0, nl);
        buf_.erase(0, nl + 2);
        return true;
      }
      if (!Fill()) return false;
    }
  }
  // Exactly `n` more bytes.
  bool ReadBytes(size_t n, std::string* out) {
    while (buf_.size() < n) {
      if (!Fill()) return false;
    }
    *out = buf_.substr(0, n);
    buf_.erase(0, n);
    return true;
  }
  // Waits until the peer closes the connection (or 10 s pass).
  void WaitForClose() {
    while (Fill()) {
    }
  }
  void Write(const std::string& s) {
    if (ssl_) {
      SSL_write(ssl_, s.data(), static_cast<int>(s.size()));
    } else {
      ::send(fd_, s.data(), s.size(), MSG_NOSIGNAL);
    }
  }

 private:
  bool Fill() {
    char tmp[4096];
    long n = ssl_ ? SSL_read(ssl_, tmp, sizeof tmp) : ::recv(fd_, tmp, sizeof tmp, 0);
    if (n <= 0) return false;
    buf_.append(tmp, static_cast<size_t>(n));
    return true;
  }

  int fd_;
  SSL* ssl_ = nullptr;
  std::string buf_;
};

// What the SMTP server received in one session.
struct SmtpSession {
  std::string ehlo;
  bool tls = false;               // the mail was sent over TLS (implicit or after STARTTLS)
  bool starttls = false;          // STARTTLS was used
  std::string auth_user;          // from AUTH PLAIN, when it succeeded
  std::string mail_from;          // the MAIL FROM argument: "<rota@lab>"
  std::vector<std::string> rcpt;  // the RCPT TO arguments
  std::vector<std::string> raw;   // the DATA lines as sent (dot-stuffed), without the final "."
  std::string message;            // the DATA un-stuffed, lines joined with CRLF
  bool complete = false;          // DATA ended with "." and was accepted
};

// An SMTP server: 220 greeting, EHLO (advertising STARTTLS and AUTH PLAIN as configured), AUTH
// PLAIN, MAIL, RCPT, DATA, RSET, NOOP, QUIT.
class SmtpServer {
 public:
  struct Options {
    SSL_CTX* tls = nullptr;     // with implicit_tls or offer_starttls
    bool implicit_tls = false;  // TLS from the first byte (smtps://)
    bool offer_starttls = false;
    std::string user, password;    // non-empty: advertise and require AUTH PLAIN
    std::set<std::string> refuse;  // RCPT addresses answered 550
    bool silent = false;           // accept the connection, never say anything
  };

  explicit SmtpServer(Options options)
      : options_(std::move(options)), server_([this](int fd) { Serve(fd); }) {}

  int port() const { return server_.port(); }
  // Sessions that delivered a message (recorded before the server's reply to DATA, so complete
  // once Send() returned) and sessions that ended without one (recorded when they end).
  std::vector<SmtpSession> sessions() {
    std::lock_guard<std::mutex> lock(mu_);
    return sessions_;
  }

 private:
  void Serve(int fd) {
    Conn c(fd);
    if (options_.silent) {
      c.WaitForClose();
      return;
    }
    SmtpSession s;
    if (options_.implicit_tls) {
      if (!c.StartTls(options_.tls)) return;
      s.tls = true;
    }
    c.Write("220 rota-test ESMTP\r\n");
    bool authed = options_.user.empty();
    std::string line;
    while (c.ReadLine(&line)) {
      std::string verb = line.substr(0, line.find(' '));
      std::transform(verb.begin(), verb.end(), verb.begin(), ::toupper);
      std::string arg = line.size() > verb.size() ? line.substr(verb.size() + 1) : "";
      if (verb == "EHLO" || verb == "HELO") {
        s.ehlo = arg;
        std::string r = "250-rota-test\r\n";
        if (options_.offer_starttls && !c.tls()) r += "250-STARTTLS\r\n";
        if (!options_.user.empty()) r += "250-AUTH PLAIN\r\n";
        c.Write(r + "250 8BITMIME\r\n");
      } else if (verb == "STARTTLS" && options_.offer_starttls && !c.tls()) {
        c.Write("220 2.0.0 go ahead\r\n");
        if (!c.StartTls(options_.tls)) break;
        s.tls = s.starttls = true;
      } else if (verb == "AUTH") {
        std::string initial = arg.size() > 6 ? arg.substr(6) : "";  // "PLAIN <base64>"
        if (initial.empty()) {
          c.Write("334 \r\n");
          if (!c.ReadLine(&initial)) break;
        }
        auto decoded = Base64Decode(initial);
        if (decoded &&
            *decoded == std::string("\0", 1) + options_.user + std::string("\0", 1) + options_.password) {
          authed = true;
          s.auth_user = options_.user;
          c.Write("235 2.7.0 authenticated\r\n");
        } else {
          c.Write("535 5.7.8 authentication failed\r\n");
        }
      } else if (verb == "MAIL") {
        if (!authed) {
          c.Write("530 5.7.0 authentication required\r\n");
          continue;
        }
        s.mail_from = arg.substr(arg.find(':') + 1);
        s.mail_from = s.mail_from.substr(0, s.mail_from.find(' '));  // drop SIZE=... parameters
        c.Write("250 2.1.0 ok\r\n");
      } else if (verb == "RCPT") {
        std::string to = arg.substr(arg.find(':') + 1);
        std::string addr = to.substr(1, to.find('>') - 1);
        if (options_.refuse.count(addr)) {
          c.Write("550 5.1.1 no such user here\r\n");
        } else {
          s.rcpt.push_back(to);
          c.Write("250 2.1.5 ok\r\n");
        }
      } else if (verb == "DATA") {
        c.Write("354 end with <CRLF>.<CRLF>\r\n");
        std::string data_line;
        bool ended = false;
        while (c.ReadLine(&data_line)) {
          if (data_line == ".") {
            ended = true;
            break;
          }
          s.raw.push_back(data_line);
          if (s.raw.size() > 1) s.message += "\r\n";
          s.message += data_line.rfind(".", 0) == 0 ? data_line.substr(1) : data_line;
        }
        if (!ended) break;
        s.message += "\r\n";
        s.complete = true;
        Record(s);  // before the reply: the client's Send() returns once it reads it
        c.Write("250 2.0.0 queued\r\n");
      } else if (verb == "RSET" || verb == "NOOP") {
        c.Write("250 ok\r\n");
      } else if (verb == "QUIT") {
        c.Write("221 bye\r\n");
        break;
      } else {
        c.Write("502 5.5.2 not implemented\r\n");
      }
    }
    if (!s.complete) Record(s);  // a failed session, recorded when it ends
  }

  void Record(const SmtpSession& s) {
    std::lock_guard<std::mutex> lock(mu_);
    sessions_.push_back(s);
  }

  Options options_;
  std::mutex mu_;
  std::vector<SmtpSession> sessions_;  // GUARDED_BY(mu_)
  TestServer server_;                  // last: its thread uses the members above
};

// One HTTP request as the server read it.
struct HttpRequest {
  std::string method;
  std::string path;                            // without the query
  std::string query;                           // after '?', still percent-encoded
  std::map<std::string, std::string> headers;  // names in lower case
  std::string body;
};

// An HTTP/1.1 server that records each request and answers what the test set (200 {} by
// default), or never answers (holds the connection until the client gives up).
class HttpServer {
 public:
  struct Reply {
    int status = 200;
    std::string body = "{}";
    std::string content_type = "application/json";
    bool never = false;  // read the request, then say nothing
  };

  HttpServer() : server_([this](int fd) { Serve(fd); }) {}

  int port() const { return server_.port(); }
  std::string url(const std::string& path = "/") const {
    return "http://127.0.0.1:" + std::to_string(port()) + path;
  }
  void Answer(int status, std::string body, std::string content_type = "application/json") {
    std::lock_guard<std::mutex> lock(mu_);
    reply_ = {status, std::move(body), std::move(content_type), false};
  }
  void NeverAnswer() {
    std::lock_guard<std::mutex> lock(mu_);
    reply_.never = true;
  }
  std::vector<HttpRequest> requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }

 private:
  void Serve(int fd) {
    Conn c(fd);
    HttpRequest r;
    std::string line;
    if (!c.ReadLine(&line)) return;
    size_t sp1 = line.find(' '), sp2 = line.rfind(' ');
    r.method = line.substr(0, sp1);
    std::string target = line.substr(sp1 + 1, sp2 - sp1 - 1);
    size_t q = target.find('?');
    r.path = target.substr(0, q);
    if (q != std::string::npos) r.query = target.substr(q + 1);
    while (c.ReadLine(&line) && !line.empty()) {
      size_t colon = line.find(':');
      std::string name = line.substr(0, colon);
      std::transform(name.begin(), name.end(), name.begin(), ::tolower);
      std::string value = line.substr(colon + 1);
      value.erase(0, value.find_first_not_of(' '));
      r.headers[name] = value;
    }
    if (auto it = r.headers.find("content-length"); it != r.headers.end()) {
      if (!c.ReadBytes(std::stoul(it->second), &r.body)) return;
    }
    Reply a;
    {
      std::lock_guard<std::mutex> lock(mu_);
      requests_.push_back(r);
      a = reply_;
    }
    if (a.never) {
      c.WaitForClose();
      return;
    }
    c.Write("HTTP/1.1 " + std::to_string(a.status) + " X\r\nContent-Type: " + a.content_type +
            "\r\nContent-Length: " + std::to_string(a.body.size()) + "\r\nConnection: close\r\n\r\n" +
            a.body);
  }

  std::mutex mu_;
  Reply reply_;                        // GUARDED_BY(mu_)
  std::vector<HttpRequest> requests_;  // GUARDED_BY(mu_)
  TestServer server_;                  // last: its thread uses the members above
};

// Decodes a header value made of RFC 2047 "=?UTF-8?B?...?=" words separated by folding
// whitespace; `words` receives each word's decoded bytes, `ok` false when anything else is
// between or around the words or a word is not base64.
inline std::string DecodeEncodedWords(const std::string& value, std::vector<std::string>* words = nullptr,
                                      std::vector<size_t>* lengths = nullptr, bool* ok = nullptr) {
  static const std::string kOpen = "=?UTF-8?B?";
  std::string out;
  bool fine = true;
  size_t pos = 0;
  while (pos < value.size()) {
    size_t open = value.find(kOpen, pos);
    std::string between = value.substr(pos, open == std::string::npos ? std::string::npos : open - pos);
    if (between.find_first_not_of("\r\n ") != std::string::npos) fine = false;
    if (open == std::string::npos) break;
    size_t close = value.find("?=", open + kOpen.size());
    if (close == std::string::npos) {
      fine = false;
      break;
    }
    auto decoded = Base64Decode(value.substr(open + kOpen.size(), close - open - kOpen.size()));
    if (!decoded) fine = false;
    if (words) words->push_back(decoded.value_or(""));
    if (lengths) lengths->push_back(close + 2 - open);
    out += decoded.value_or("");
    pos = close + 2;
  }
  if (ok) *ok = fine;
  return out;
}

// Decodes "%XX" escapes (and '+' as space) of a query value.
inline std::string UrlDecode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i] == '+' ? ' ' : s[i];
    }
  }
  return out;
}

// The query's parameters, decoded.
inline std::map<std::string, std::string> QueryParams(const std::string& query) {
  std::map<std::string, std::string> out;
  size_t start = 0;
  while (start < query.size()) {
    size_t amp = query.find('&', start);
    std::string kv = query.substr(start, amp == std::string::npos ? std::string::npos : amp - start);
    size_t eq = kv.find('=');
    out[kv.substr(0, eq)] = eq == std::string::npos ? "" : UrlDecode(kv.substr(eq + 1));
    if (amp == std::string::npos) break;
    start = amp + 1;
  }
  return out;
}

}  // namespace rota::notify::testing
