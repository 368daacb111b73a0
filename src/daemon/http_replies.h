// What the HTTP front end's handlers share (http_front.cc, http_signin.cc): JSON replies with
// their status, errors in the API's shape, cookies read from the request, the time for the
// request log. For those files only.
#pragma once

#include <httplib.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "api/protocol.h"

namespace rota::daemon {

inline double Seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

inline void SendJson(httplib::Response& res, int status, const nlohmann::json& body) {
  res.status = status;
  res.set_header("Cache-Control", "no-store");
  res.set_content(body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), "application/json");
}

inline void SendError(httplib::Response& res, int status, const char* code, const std::string& message) {
  SendJson(res, status, api::ErrorReply(code, message));
}

// The value of cookie `name` in the Cookie header, or "".
inline std::string CookieValue(const httplib::Request& req, const std::string& name) {
  const std::string header = req.get_header_value("Cookie");
  size_t pos = 0;
  while (pos < header.size()) {
    size_t end = header.find(';', pos);
    if (end == std::string::npos) end = header.size();
    std::string part = header.substr(pos, end - pos);
    size_t first = part.find_first_not_of(' ');
    if (first != std::string::npos) part = part.substr(first);
    if (part.size() > name.size() && part.compare(0, name.size(), name) == 0 && part[name.size()] == '=') {
      return part.substr(name.size() + 1);
    }
    pos = end + 1;
  }
  return "";
}

}  // namespace rota::daemon
