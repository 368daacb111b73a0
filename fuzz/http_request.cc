// Fuzz target: a call to the HTTP API, /api/<op> (docs/http.md), from its mapping onto the socket
// API (web/api_map.h MapApiCall: the query parameters of a GET, the body of a POST) to the
// daemon's handling of the request it makes, as over HTTP (socket-only operations refused), in a
// daemon in this process as in fuzz/request_line.cc. Sign-in is not fuzzed here (the caller is
// the credential's user: alice, bob or root). Input: one call a line; a line is
//   CHOICE OP \x1f QUERY \x1f BODY
// CHOICE's bits: who, GET or POST. QUERY is KEY=VALUE pairs joined by '&', already decoded as
// the HTTP server decodes them (any bytes: "%FF" arrives as the byte 0xFF).
//
// Properties: no crash; a refusal of the mapping has a 4xx status, a code and a message; a
// mapped request has the path's operation and this API's version; every request the mapping
// lets through gets one reply, an object with "ok", a refusal with a code and a message.
#include <map>
#include <nlohmann/json.hpp>

#include "api/protocol.h"
#include "fuzz/daemon_target.h"
#include "fuzz/fuzz.h"
#include "web/api_map.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  rota::fuzz::QuietLog();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace rota;
  using nlohmann::json;
  if (size > 64 * 1024) return 0;
  // Started only for calls the mapping lets through (most inputs never need one).
  static fuzz::ReusedDaemon daemon(testing::SimulatedCards(2));
  daemon.NextInput();
  static const char* const kUsers[] = {"alice", "bob", "root", "alice"};
  for (std::string_view line : fuzz::Split(fuzz::Text(data, size), '\n')) {
    const unsigned char choice = fuzz::TakeByte(line);
    const std::vector<std::string_view> parts = fuzz::Split(line, '\x1f');
    const std::string op(parts[0]);
    std::multimap<std::string, std::string> params;
    if (parts.size() > 1 && !parts[1].empty()) {
      for (std::string_view pair : fuzz::Split(parts[1], '&')) {
        const std::size_t eq = pair.find('=');
        params.emplace(std::string(pair.substr(0, eq)), eq == std::string_view::npos ? "" : std::string(pair.substr(eq + 1)));
      }
    }
    const std::string_view body = parts.size() > 2 ? parts[2] : std::string_view();
    const bool get = (choice & 4) != 0;
    const web::ApiCall call = web::MapApiCall(get, op, params, body);
    if (call.status != 200) {
      fuzz::Require(call.status >= 400 && call.status < 500 && !call.code.empty() && !call.message.empty(),
                    "a refused call has a 4xx status, a code and a message");
      continue;
    }
    fuzz::Require(call.request.is_object() && call.request.value("op", "") == op &&
                      call.request.value("v", 0) == api::kVersion,
                  "a mapped request has the path's operation and this API's version");
    const json reply = daemon.Get().CallHttp(kUsers[choice & 3], call.request);
    fuzz::Require(reply.is_object() && reply.contains("ok") && reply["ok"].is_boolean(), "a reply says ok");
    if (!reply["ok"].get<bool>()) {
      fuzz::Require(web::HttpStatusOfReply(reply) >= 400, "a refusal has an error status");
      fuzz::Require(reply.contains("error") && reply["error"].is_object() &&
                        !reply["error"].value("message", "").empty(),
                    "a refusal says why");
    }
  }
  return 0;
}
