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

}  // namespace rota::web
