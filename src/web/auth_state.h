// Who an HTTP request acts as: one-time sign-in links, cookie sessions and API tokens.
//
// Links and sessions live in memory only: they are short-lived, a browser signs in again with a
// new `rota web` link, and keeping them out of the store keeps every HTTP request off the
// daemon's database (a restart of rotad signs browsers out). API tokens are durable: the daemon
// stores their hashes in the store and mirrors them here (SetTokens/AddToken/RemoveToken) so that
// checking one needs no trip to the event loop. Only SHA-256 hashes of secrets are kept.
//
// Thread-safety: every method may be called from any thread (one mutex). Time is passed in
// (seconds since the epoch), so tests drive it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace rota::web {

// What an API token may do (docs/http.md): the calendar feed only, reading, or everything its
// owner may. Sessions and links are kFull.
enum class Scope : std::uint8_t { kCalendar, kRead, kFull };
const char* ScopeName(Scope s);
std::optional<Scope> ParseScope(std::string_view name);

// The identity a credential carries: the Unix account it was minted for.
struct Principal {
  uid_t uid = 0;
  std::string user;
  std::string csrf;  // cookie sessions: the token state-changing requests must echo; else ""
  bool token = false;  // authenticated by an API token (Authorization: Bearer)
  Scope scope = Scope::kFull;
};

struct NewSession {
  std::string id;    // the rota_session cookie
  std::string csrf;  // the rota_csrf cookie and X-Rota-CSRF header value
  Principal who;
};

struct TokenEntry {
  std::int64_t id = 0;
  std::string hash;  // HashToken of the secret
  uid_t uid = 0;
  std::string user;
  std::int64_t expires = 0;  // 0: never
  Scope scope = Scope::kFull;
};

class AuthState {
 public:
  // A new one-time link token for `uid`/`user`, valid until now + ttl.
  std::string MintLink(uid_t uid, const std::string& user, std::int64_t now, std::int64_t ttl);
  // Redeems a link once: a new session valid for `session_ttl`, or nullopt when the token is
  // unknown, used or expired.
  std::optional<NewSession> RedeemLink(const std::string& token, std::int64_t now, std::int64_t session_ttl);
  // Whom a link would sign in, without using it; nullopt as RedeemLink.
  std::optional<Principal> PeekLink(const std::string& token, std::int64_t now);
  // Starts a session directly (password sign-in).
  NewSession StartSession(uid_t uid, const std::string& user, std::int64_t now, std::int64_t session_ttl);
  std::optional<Principal> FindSession(const std::string& session_id, std::int64_t now);
  void EndSession(const std::string& session_id);

  void SetTokens(std::vector<TokenEntry> tokens);
  void AddToken(TokenEntry token);
  void RemoveToken(std::int64_t id);
  std::optional<Principal> FindToken(const std::string& secret, std::int64_t now);

  size_t sessions() const;

 private:
  struct Link {
    uid_t uid;
    std::string user;
    std::int64_t expires;
  };
  struct Session {
    Principal who;
    std::int64_t expires;
  };
  void PruneLocked(std::int64_t now);  // REQUIRES: mu_ held

  mutable std::mutex mu_;
  std::unordered_map<std::string, Link> links_;        // by hash of the token; GUARDED_BY(mu_)
  std::unordered_map<std::string, Session> sessions_;  // by hash of the id; GUARDED_BY(mu_)
  std::unordered_map<std::string, TokenEntry> tokens_;  // by hash; GUARDED_BY(mu_)
};

}  // namespace rota::web
