// Tested by auth_state_test.cc.
#include "web/auth_state.h"

#include "web/credentials.h"

namespace rota::web {

std::string AuthState::MintLink(uid_t uid, const std::string& user, std::int64_t now, std::int64_t ttl) {
  std::string token = RandomToken();
  std::lock_guard<std::mutex> lock(mu_);
  PruneLocked(now);
  links_[HashToken(token)] = Link{uid, user, now + ttl};
  return token;
}

std::optional<NewSession> AuthState::RedeemLink(const std::string& token, std::int64_t now,
                                                std::int64_t session_ttl) {
  Link link;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = links_.find(HashToken(token));
    if (it == links_.end()) return std::nullopt;
    link = it->second;
    links_.erase(it);  // single use, even when it expired
    if (link.expires <= now) return std::nullopt;
  }
  return StartSession(link.uid, link.user, now, session_ttl);
}

std::optional<Principal> AuthState::PeekLink(const std::string& token, std::int64_t now) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = links_.find(HashToken(token));
  if (it == links_.end() || it->second.expires <= now) return std::nullopt;
  return Principal{it->second.uid, it->second.user, "", false};
}

NewSession AuthState::StartSession(uid_t uid, const std::string& user, std::int64_t now, std::int64_t session_ttl) {
  NewSession s;
  s.id = RandomToken();
  s.csrf = RandomToken(16);
  s.who = Principal{uid, user, s.csrf, false};
  std::lock_guard<std::mutex> lock(mu_);
  PruneLocked(now);
  sessions_[HashToken(s.id)] = Session{s.who, now + session_ttl};
  return s;
}

std::optional<Principal> AuthState::FindSession(const std::string& session_id, std::int64_t now) {
  const std::string hash = HashToken(session_id);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = sessions_.find(hash);
  if (it == sessions_.end()) return std::nullopt;
  if (it->second.expires <= now) {
    sessions_.erase(it);
    return std::nullopt;
  }
  return it->second.who;
}

void AuthState::EndSession(const std::string& session_id) {
  const std::string hash = HashToken(session_id);
  std::lock_guard<std::mutex> lock(mu_);
  sessions_.erase(hash);
}

void AuthState::SetTokens(std::vector<TokenEntry> tokens) {
  std::lock_guard<std::mutex> lock(mu_);
  tokens_.clear();
  for (TokenEntry& t : tokens) tokens_[t.hash] = std::move(t);
}

void AuthState::AddToken(TokenEntry token) {
  std::lock_guard<std::mutex> lock(mu_);
  tokens_[token.hash] = std::move(token);
}

void AuthState::RemoveToken(std::int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  std::erase_if(tokens_, [id](const auto& kv) { return kv.second.id == id; });
}

std::optional<Principal> AuthState::FindToken(const std::string& secret, std::int64_t now) {
  const std::string hash = HashToken(secret);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = tokens_.find(hash);
  if (it == tokens_.end()) return std::nullopt;
  if (it->second.expires != 0 && it->second.expires <= now) return std::nullopt;
  return Principal{it->second.uid, it->second.user, "", true, it->second.scope};
}

const char* ScopeName(Scope s) {
  switch (s) {
    case Scope::kCalendar: return "calendar";
    case Scope::kRead: return "read";
    case Scope::kFull: return "full";
  }
  return "full";
}

std::optional<Scope> ParseScope(std::string_view name) {
  for (Scope s : {Scope::kCalendar, Scope::kRead, Scope::kFull}) {
    if (name == ScopeName(s)) return s;
  }
  return std::nullopt;
}

size_t AuthState::sessions() const {
  std::lock_guard<std::mutex> lock(mu_);
  return sessions_.size();
}

void AuthState::PruneLocked(std::int64_t now) {
  // Bounded work: only when the tables have grown (a burst of links nobody used).
  if (links_.size() > 256) std::erase_if(links_, [now](const auto& kv) { return kv.second.expires <= now; });
  if (sessions_.size() > 4096) std::erase_if(sessions_, [now](const auto& kv) { return kv.second.expires <= now; });
}

}  // namespace rota::web
