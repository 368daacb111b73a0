// Tested by tests/daemon/test_attacks_http.py (slow clients, per-address limit, TLS) and every
// HTTP test through it.
#include "daemon/http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <nlohmann/json.hpp>

#include "api/protocol.h"

namespace rota::daemon {

namespace {

using Steady = std::chrono::steady_clock;

int MsUntil(Steady::time_point t) {
  return static_cast<int>(std::max<long long>(
      0, std::chrono::duration_cast<std::chrono::milliseconds>(t - Steady::now()).count()));
}

// SO_RCVTIMEO / SO_SNDTIMEO of `ms` (at least 1 ms: 0 would mean none).
void SetTimeout(int sock, int option, int ms) {
  ms = std::max(ms, 1);
  timeval tv{ms / 1000, (ms % 1000) * 1000};
  (void)::setsockopt(sock, SOL_SOCKET, option, &tv, sizeof tv);
}

bool WaitFor(int sock, short events, int ms) {
  pollfd p{sock, events, 0};
  int n;
  do {
    n = ::poll(&p, 1, ms);
  } while (n < 0 && errno == EINTR);
  return n > 0;
}

void Address(int sock, bool peer, std::string& ip, int& port) {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  ip.clear();
  port = 0;
  if ((peer ? ::getpeername(sock, reinterpret_cast<sockaddr*>(&a), &len)
            : ::getsockname(sock, reinterpret_cast<sockaddr*>(&a), &len)) != 0) {
    return;
  }
  char text[INET6_ADDRSTRLEN] = {};
  if (a.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&a);
    ::inet_ntop(AF_INET, &v4->sin_addr, text, sizeof text);
    port = ntohs(v4->sin_port);
  } else if (a.ss_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&a);
    ::inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof text);
    port = ntohs(v6->sin6_port);
  }
  ip = text;
}

// A connection's stream for httplib: reads end at the request's deadline, writes at their own.
class DeadlineStream final : public httplib::Stream {
 public:
  DeadlineStream(int sock, SSL* ssl) : sock_(sock), ssl_(ssl) {}

  // A new request begins: its head and body must arrive by `read_by`, its reply go out by `write_by`.
  void Begin(Steady::time_point read_by, Steady::time_point write_by) {
    read_by_ = read_by;
    write_by_ = write_by;
  }

  bool is_readable() const override {
    if (ssl_ && ::SSL_pending(ssl_) > 0) return true;
    return WaitFor(sock_, POLLIN, MsUntil(read_by_));
  }
  bool is_writable() const override { return WaitFor(sock_, POLLOUT, MsUntil(write_by_)); }

  ssize_t read(char* ptr, size_t size) override {
    if (!is_readable()) return -1;
    // Bounded below the poll too: a TLS record that arrives in pieces blocks SSL_read until whole.
    SetTimeout(sock_, SO_RCVTIMEO, MsUntil(read_by_));
    if (ssl_) {
      const int n = ::SSL_read(ssl_, ptr, static_cast<int>(std::min<size_t>(size, 1 << 30)));
      return n > 0 ? n : -1;
    }
    ssize_t n;
    do {
      n = ::recv(sock_, ptr, size, 0);
    } while (n < 0 && errno == EINTR);
    return n;
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (!is_writable()) return -1;
    SetTimeout(sock_, SO_SNDTIMEO, MsUntil(write_by_));
    if (ssl_) {
      const int n = ::SSL_write(ssl_, ptr, static_cast<int>(std::min<size_t>(size, 1 << 30)));
      return n > 0 ? n : -1;
    }
    ssize_t n;
    do {
      n = ::send(sock_, ptr, size, MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    return n;
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override { Address(sock_, true, ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { Address(sock_, false, ip, port); }
  socket_t socket() const override { return sock_; }

 private:
  const int sock_;
  SSL* const ssl_;
  Steady::time_point read_by_{};
  Steady::time_point write_by_{};
};

void Refuse(int sock, const std::string& why) {
  const std::string body = api::ErrorReply(ResourceExhausted(why)).dump();
  const std::string reply = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\n"
                            "Connection: close\r\nContent-Length: " +
                            std::to_string(body.size()) + "\r\n\r\n" + body;
  (void)::send(sock, reply.data(), reply.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

}  // namespace

HttpServer::HttpServer(HttpServerLimits limits, SSL_CTX* tls) : limits_(limits), tls_(tls) {}

HttpServer::~HttpServer() {
  if (tls_) ::SSL_CTX_free(tls_);
}

StatusOr<SSL_CTX*> HttpServer::LoadTls(const std::string& cert_path, const std::string& key_path) {
  SSL_CTX* ctx = ::SSL_CTX_new(::TLS_server_method());
  if (!ctx) return Internal("cannot make a TLS context (OpenSSL)");
  ::SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  ::SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
  auto fail = [ctx](const std::string& what) -> Status {
    char detail[256] = {};
    ::ERR_error_string_n(::ERR_get_error(), detail, sizeof detail);
    ::SSL_CTX_free(ctx);
    return InvalidArgument(what + " (" + detail + ")");
  };
  if (::SSL_CTX_use_certificate_chain_file(ctx, cert_path.c_str()) != 1) {
    return fail("[web] tls_cert = \"" + cert_path + "\": cannot read it as a PEM certificate chain");
  }
  if (::SSL_CTX_use_PrivateKey_file(ctx, key_path.c_str(), SSL_FILETYPE_PEM) != 1) {
    return fail("[web] tls_key = \"" + key_path + "\": cannot read it as a PEM private key");
  }
  if (::SSL_CTX_check_private_key(ctx) != 1) return fail("[web] tls_key does not belong to tls_cert");
  return ctx;
}

bool HttpServer::Enter(const std::string& address) {
  std::lock_guard<std::mutex> lock(mu_);
  int& n = open_[address];
  if (n >= limits_.per_address) return false;
  ++n;
  return true;
}

void HttpServer::Leave(const std::string& address) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = open_.find(address);
  if (it != open_.end() && --it->second <= 0) open_.erase(it);
}

namespace {
thread_local bool close_after_reply = false;  // set by CloseAfterReply during process_request
}  // namespace

void HttpServer::CloseAfterReply() { close_after_reply = true; }

bool HttpServer::process_and_close_socket(socket_t sock) {
  std::string address;
  int port = 0;
  Address(sock, true, address, port);
  if (!Enter(address)) {
    const std::string why = "too many connections from " + address + " at once (at most " +
                            std::to_string(limits_.per_address) + "); try again in a moment";
    Refuse(sock, why);
    if (refused_) refused_(address, why);
    ::shutdown(sock, SHUT_RDWR);
    ::close(sock);
    return true;
  }
  SSL* ssl = nullptr;
  bool ok = true;
  if (tls_) {
    ssl = ::SSL_new(tls_);
    ok = ssl != nullptr && ::SSL_set_fd(ssl, sock) == 1;
    if (ok) {
      SetTimeout(sock, SO_RCVTIMEO, limits_.request_ms);
      SetTimeout(sock, SO_SNDTIMEO, limits_.request_ms);
      ok = ::SSL_accept(ssl) == 1;
    }
  }
  DeadlineStream stream(sock, ssl);
  for (int left = limits_.keep_alive_max; ok && left > 0 && is_running(); --left) {
    // The first request may take a moment to come; the next ones come at once or not at all.
    const bool first = left == limits_.keep_alive_max;
    const bool waiting = ssl && ::SSL_pending(ssl) > 0;
    if (!waiting && !WaitFor(sock, POLLIN, first ? limits_.request_ms : limits_.keep_alive_ms)) break;
    const Steady::time_point now = Steady::now();
    stream.Begin(now + std::chrono::milliseconds(limits_.request_ms), now + std::chrono::milliseconds(limits_.write_ms));
    bool closed = false;
    close_after_reply = false;
    if (!process_request(stream, left == 1, closed, nullptr) || closed || close_after_reply) break;
  }
  if (ssl) {
    if (ok) (void)::SSL_shutdown(ssl);
    ::SSL_free(ssl);
  }
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  Leave(address);
  return true;
}

}  // namespace rota::daemon
