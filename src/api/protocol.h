// The wire protocol shared by rotad and its clients (docs/api.md): version, framing limits,
// error codes, where the socket is, and where state lives in system and user mode.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "core/status.h"
#include "core/types.h"

namespace rota::api {

inline constexpr int kVersion = 1;
inline constexpr std::size_t kMaxLineBytes = 1 << 20;  // one request, newline included
// One reply: listings of thousands of jobs are larger than any request. The daemon also bounds
// what it buffers for one client (Server::kMaxBufferedReply).
inline constexpr std::size_t kMaxReplyBytes = 64u << 20;
inline constexpr const char* kDaemonVersion = ROTA_VERSION;  // CMakeLists.txt: project(VERSION)
inline constexpr const char* kSystemSocket = "/run/rota/rota.sock";
inline constexpr const char* kSystemStateDir = "/var/lib/rota";
inline constexpr const char* kSystemConfig = "/etc/rota/rota.toml";

// Exit codes of `rota` (docs/api.md).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitUnreachable = 3;

// The wire name of a status code ("invalid_argument", ...); "unsupported_version" is separate.
const char* ErrorCode(StatusCode code);
// The StatusCode of a wire name; kInternal for names this client does not know.
StatusCode ParseErrorCode(std::string_view code);
// The exit code `rota` uses for an error reply with this wire code.
int ExitCodeForError(std::string_view code);

// {"v":1,"ok":false,"error":{"code":...,"message":...}} (tag added by the caller).
nlohmann::json ErrorReply(const Status& status);
nlohmann::json ErrorReply(std::string_view code, std::string_view message);
// {"v":1,"ok":true}
nlohmann::json OkReply();
// {"v":1,"ok":true} with the members of `fields` (an object) added.
nlohmann::json OkReply(const nlohmann::json& fields);
// A request's "tag" is echoed in its reply: it may be absent, null, a boolean, a number or a string of
// at most kMaxTagBytes bytes. Anything else is InvalidArgument (a structure is never echoed back).
inline constexpr std::size_t kMaxTagBytes = 256;
Status CheckTag(const nlohmann::json& request);
// The Status an error reply carries (OK for an ok reply).
Status StatusOfReply(const nlohmann::json& reply);
// A request's time member (Unix seconds, e.g. "since"): `absent` when it is missing,
// InvalidArgument naming it when it is not an integer.
StatusOr<Time> TimeField(const nlohmann::json& request, const char* field, Time absent);

// User mode paths for `uid`: $XDG_RUNTIME_DIR/rota/rota.sock when XDG_RUNTIME_DIR is set (and
// belongs to... whoever set it), else /tmp/rota-<uid>/rota.sock.
std::string UserSocketPath();
// $XDG_STATE_HOME/rota, else $HOME/.local/state/rota.
std::string UserStateDir();

// The socket a client should use: `flag` if non-empty, else $ROTA_SOCKET, else the user-mode
// socket if one exists there, else the system socket.
std::string ClientSocketPath(std::string_view flag);

}  // namespace rota::api
