// Tested by api_map_test.cc.
#include "web/api_map.h"

#include "api/ops.h"
#include "api/protocol.h"
#include "json/bounded.h"

namespace rota::web {

bool ReadOnlyOp(std::string_view op) {
  const api::OpInfo* info = api::FindOp(op);
  return info != nullptr && info->read_only;
}

bool PublicOp(std::string_view op) {
  const api::OpInfo* info = api::FindOp(op);
  return info != nullptr && info->public_read;
}

std::string RefusedOverHttp(std::string_view op) {
  const api::OpInfo* info = api::FindOp(op);
  if (info == nullptr || info->socket_only.empty()) return "";
  return "\"" + std::string(op) + "\" " + std::string(info->socket_only);
}

int HttpStatusOfReply(const nlohmann::json& reply) {
  if (reply.value("ok", false)) return 200;
  std::string code;
  if (auto e = reply.find("error"); e != reply.end() && e->is_object()) code = e->value("code", "");
  if (code == "invalid_argument" || code == "unsupported_version") return 400;
  if (code == "unauthenticated") return 401;
  if (code == "permission_denied") return 403;
  if (code == "not_found") return 404;
  if (code == "already_exists" || code == "failed_precondition") return 409;
  if (code == "resource_exhausted") return 429;
  if (code == "unavailable") return 503;
  return 500;
}

nlohmann::json QueryToRequest(const std::multimap<std::string, std::string>& params) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [key, value] : params) {
    // A value that is not JSON (or nests too deep to be read as such) is taken as a string. The
    // request object adds one level above its values.
    StatusOr<nlohmann::json> v = ParseBoundedJson(value, kMaxJsonDepth - 1, JsonFloats::kWithinInt32);
    out[key] = v.ok() ? std::move(*v) : nlohmann::json(value);
  }
  return out;
}

ApiCall MapApiCall(bool get, const std::string& op, const std::multimap<std::string, std::string>& params,
                   std::string_view body) {
  ApiCall call;
  if (std::string why = RefusedOverHttp(op); !why.empty()) {
    call.status = 400;
    call.code = "invalid_argument";
    call.message = why;
    return call;
  }
  if (get && !ReadOnlyOp(op)) {
    call.status = 405;
    call.code = "invalid_argument";
    call.message = "\"" + op + "\" changes state: use POST";
    return call;
  }
  if (get) {
    call.request = QueryToRequest(params);
  } else if (body.empty()) {
    call.request = nlohmann::json::object();
  } else {
    // Depth-bounded (json/bounded.h): a deep body is refused before anything copies it.
    StatusOr<nlohmann::json> parsed = ParseBoundedJson(body, kMaxJsonDepth, JsonFloats::kWithinInt32);
    if (!parsed.ok() || !parsed->is_object()) {
      call.status = 400;
      call.code = "invalid_argument";
      call.message = "the request body is not a JSON object" +
                     (parsed.ok() ? "" : ": " + parsed.status().message()) + " (see docs/http.md)";
      return call;
    }
    call.request = std::move(*parsed);
  }
  call.request.erase("v");
  call.request["op"] = op;
  call.request["v"] = api::kVersion;
  return call;
}

}  // namespace rota::web
