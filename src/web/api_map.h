// How the socket API (docs/api.md) maps onto HTTP (docs/http.md): which operations a GET may
// run, which are refused over HTTP, the HTTP status of a reply, and query strings as JSON.
// Tested by api_map_test.cc.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace rota::web {

// From the API's table of operations (api/ops.h). Operations that only read: allowed with GET
// and with read-scoped tokens.
bool ReadOnlyOp(std::string_view op);
// Operations public_read opens to anonymous callers (a subset of ReadOnlyOp: nothing that shows
// one user's logs or history).
bool PublicOp(std::string_view op);
// Why `op` is refused over HTTP ("" when it is not): it needs a live connection or mints a
// credential, which must come from the operating system's identity over the socket.
std::string RefusedOverHttp(std::string_view op);

// The HTTP status of a socket reply: 200 for ok, else by its error code.
int HttpStatusOfReply(const nlohmann::json& reply);

// A GET's query parameters as a request object: each value as JSON when it parses as JSON,
// else as a string ("job_id=12" -> 12, "user=alice" -> "alice").
nlohmann::json QueryToRequest(const std::multimap<std::string, std::string>& params);

// What an HTTP call to /api/<op> asks of the socket API, before who asks is checked: the request
// object (a GET's query parameters, QueryToRequest, or a POST's body, a JSON object; "op" from
// the path and "v" this API's, whatever the call said), or why it is refused here: an operation
// refused over HTTP (400), a GET of one that changes state (405), a body that is not a JSON
// object or nests too deep (400).
struct ApiCall {
  int status = 200;  // 200: `request` holds the request; else refused with `code` and `message`
  std::string code;
  std::string message;
  nlohmann::json request;
};
ApiCall MapApiCall(bool get, const std::string& op, const std::multimap<std::string, std::string>& params,
                   std::string_view body);

}  // namespace rota::web
