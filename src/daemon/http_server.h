// cpp-httplib's request handling under Rota's own connection handling (docs/security.md, "The
// HTTP server"): httplib gives each connection a worker thread for as long as it lasts and has
// neither a bound on how long a request may take to arrive nor a limit per client, so 20 slow
// connections left a normal request unanswered for 35 s. This server keeps httplib's parsing,
// routing and writing (Server::process_request) and replaces what happens to a connection:
//
// - At most `per_address` connections of one client address at once; the next gets a 503 at
//   once and is closed, so one client holds at most that many workers.
// - A request must arrive whole (head and body) within `request_ms` of its first byte, and a
//   connection waits at most `keep_alive_ms` for its next request (the first: `request_ms`):
//   a slowloris holds a worker for seconds, not for as long as it likes. Replies have `write_ms`
//   to go out.
// - TLS (when a certificate is given): OpenSSL on the same socket, with the same deadlines on
//   the handshake.
//
// Thread-safe as httplib::Server is: process_and_close_socket runs on the pool's workers.
#pragma once

#include <httplib.h>
#include <openssl/ssl.h>

#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>

#include "core/status.h"

namespace rota::daemon {

struct HttpServerLimits {
  int per_address = 24;  // a browser opens up to 6; a lab behind one NAT address, several browsers
  int request_ms = 10'000;
  int keep_alive_ms = 2'000;
  int keep_alive_max = 100;  // requests on one connection
  int write_ms = 30'000;
};

class HttpServer : public httplib::Server {
 public:
  // `tls` (owned; nullptr: plain HTTP) from LoadTls.
  HttpServer(HttpServerLimits limits, SSL_CTX* tls);
  ~HttpServer() override;

  // An OpenSSL server context from PEM files; a message an admin can act on when they do not load.
  static StatusOr<SSL_CTX*> LoadTls(const std::string& cert_path, const std::string& key_path);

  // For a handler that answers before the request's body was read (a pre-routing refusal): the
  // connection closes after this reply, since the unread body would be taken for the next
  // request on it (cpp-httplib keeps the connection). Only on the worker thread of the request.
  static void CloseAfterReply();

  // Told of each connection refused for a limit (its address, why), for the log.
  void SetRefusedHook(std::function<void(const std::string& address, const std::string& why)> hook) {
    refused_ = std::move(hook);
  }

 private:
  bool process_and_close_socket(socket_t sock) override;
  // Counts a connection of `address` in; false when it has its `per_address` already.
  bool Enter(const std::string& address);
  void Leave(const std::string& address);

  const HttpServerLimits limits_;
  SSL_CTX* tls_;
  std::function<void(const std::string&, const std::string&)> refused_;
  std::mutex mu_;
  std::unordered_map<std::string, int> open_;  // GUARDED_BY(mu_): connections by address
};

}  // namespace rota::daemon
