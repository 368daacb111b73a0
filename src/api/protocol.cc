// Tested by protocol_test.cc.
#include "api/protocol.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

namespace rota::api {

namespace {

struct CodeName {
  StatusCode code;
  const char* name;
  int exit_code;
};

constexpr CodeName kCodes[] = {
    {StatusCode::kInvalidArgument, "invalid_argument", kExitUsage},
    {StatusCode::kNotFound, "not_found", kExitFailed},
    {StatusCode::kPermissionDenied, "permission_denied", kExitFailed},
    {StatusCode::kAlreadyExists, "already_exists", kExitFailed},
    {StatusCode::kFailedPrecondition, "failed_precondition", kExitFailed},
    {StatusCode::kResourceExhausted, "resource_exhausted", kExitFailed},
    {StatusCode::kUnavailable, "unavailable", kExitUnreachable},
    {StatusCode::kInternal, "internal", kExitFailed},
};

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

}  // namespace

const char* ErrorCode(StatusCode code) {
  for (const CodeName& c : kCodes) {
    if (c.code == code) return c.name;
  }
  return "internal";
}

StatusCode ParseErrorCode(std::string_view code) {
  for (const CodeName& c : kCodes) {
    if (code == c.name) return c.code;
  }
  if (code == "unsupported_version") return StatusCode::kInvalidArgument;
  return StatusCode::kInternal;
}

int ExitCodeForError(std::string_view code) {
  if (code == "unsupported_version") return kExitUsage;
  for (const CodeName& c : kCodes) {
    if (code == c.name) return c.exit_code;
  }
  return kExitFailed;
}

nlohmann::json ErrorReply(std::string_view code, std::string_view message) {
  return {{"v", kVersion}, {"ok", false}, {"error", {{"code", code}, {"message", message}}}};
}

nlohmann::json ErrorReply(const Status& status) { return ErrorReply(ErrorCode(status.code()), status.message()); }

nlohmann::json OkReply() { return {{"v", kVersion}, {"ok", true}}; }

nlohmann::json OkReply(const nlohmann::json& fields) {
  nlohmann::json out = OkReply();
  if (fields.is_object()) {
    for (auto it = fields.begin(); it != fields.end(); ++it) out[it.key()] = it.value();
  }
  return out;
}

Status CheckTag(const nlohmann::json& request) {
  auto tag = request.find("tag");
  if (tag == request.end() || tag->is_null() || tag->is_boolean() || tag->is_number()) return Status();
  if (tag->is_string() && tag->get_ref<const std::string&>().size() <= kMaxTagBytes) return Status();
  return InvalidArgument("\"tag\" must be a number or a string of at most " + std::to_string(kMaxTagBytes) +
                         " bytes (it is echoed in the reply)");
}

StatusOr<Time> TimeField(const nlohmann::json& request, const char* field, Time absent) {
  auto it = request.find(field);
  if (it == request.end()) return absent;
  if (!it->is_number_integer()) return InvalidArgument("\"" + std::string(field) + "\" must be a time (Unix seconds)");
  return it->get<Time>();
}

Status StatusOfReply(const nlohmann::json& reply) {
  if (!reply.is_object()) return Internal("the daemon sent a reply that is not a JSON object");
  auto ok = reply.find("ok");
  if (ok != reply.end() && ok->is_boolean() && ok->get<bool>()) return Status();
  auto err = reply.find("error");
  if (err == reply.end() || !err->is_object()) return Internal("the daemon sent an error without a reason");
  // Read without `value`, which throws on a member of another type: a reply is outside input.
  auto text = [&](const char* key, const char* absent) {
    auto it = err->find(key);
    return it != err->end() && it->is_string() ? it->get<std::string>() : std::string(absent);
  };
  return Status(ParseErrorCode(text("code", "internal")), text("message", ""));
}

std::string UserSocketPath() {
  std::string runtime = Env("XDG_RUNTIME_DIR");
  if (!runtime.empty()) return runtime + "/rota/rota.sock";
  return "/tmp/rota-" + std::to_string(getuid()) + "/rota.sock";
}

std::string UserStateDir() {
  std::string state = Env("XDG_STATE_HOME");
  if (!state.empty()) return state + "/rota";
  std::string home = Env("HOME");
  if (home.empty()) home = "/tmp/rota-" + std::to_string(getuid());
  return home + "/.local/state/rota";
}

std::string ClientSocketPath(std::string_view flag) {
  if (!flag.empty()) return std::string(flag);
  if (std::string env = Env("ROTA_SOCKET"); !env.empty()) return env;
  std::string user = UserSocketPath();
  struct stat st {};
  if (::stat(user.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) return user;
  return kSystemSocket;
}

}  // namespace rota::api
