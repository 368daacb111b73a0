// Tested by api_map_test.cc.
#include "web/api_map.h"

#include <array>

#include "json/bounded.h"

namespace rota::web {

bool ReadOnlyOp(std::string_view op) {
  static constexpr std::array<std::string_view, 12> kOps = {"hello",    "status", "queue",  "show",
                                                            "gpus",     "bookings", "history", "events",
                                                            "logs",     "inventory", "usage", "token_list"};
  for (std::string_view o : kOps) {
    if (o == op) return true;
  }
  return false;
}

bool PublicOp(std::string_view op) {
  static constexpr std::array<std::string_view, 7> kOps = {"hello", "status", "queue", "gpus",
                                                           "bookings", "inventory", "usage"};
  for (std::string_view o : kOps) {
    if (o == op) return true;
  }
  return false;
}

std::string RefusedOverHttp(std::string_view op) {
  if (op == "run" || op == "session_end") {
    return "\"" + std::string(op) + "\" needs a live connection to rotad; use `rota run` on the server";
  }
  if (op == "web_login" || op == "token_create") {
    return "\"" + std::string(op) + "\" mints a credential and is only answered on the Unix socket "
           "(`rota web`, `rota token create`)";
  }
  return "";
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
    StatusOr<nlohmann::json> v = ParseBoundedJson(value, kMaxJsonDepth - 1);
    out[key] = v.ok() ? std::move(*v) : nlohmann::json(value);
  }
  return out;
}

}  // namespace rota::web
