// API tokens in the store (schema version 6; scopes: version 10). Tested by token_store_test.cc.
#include "store/job_store.h"

namespace rota::store {

StatusOr<std::int64_t> JobStore::AddToken(const ApiToken& t) {
  StatusOr<Statement> st = db_->Prepare(
      "INSERT INTO api_tokens (hash, user, uid, name, created, expires, scope) VALUES (?, ?, ?, ?, ?, ?, ?)");
  if (!st.ok()) return st.status();
  st->Bind(1, t.hash).Bind(2, t.user).Bind(3, t.uid).Bind(4, t.name).Bind(5, t.created).Bind(6, t.expires).Bind(7, t.scope);
  if (Status s = st->Run(); !s.ok()) return s;
  return db_->LastInsertRowId();
}

StatusOr<std::vector<ApiToken>> JobStore::Tokens(std::string_view user) {
  StatusOr<Statement> st = db_->Prepare(
      "SELECT id, hash, user, uid, name, created, expires, revoked_at, revoked_by, scope FROM api_tokens "
      "WHERE ?1 = '' OR user = ?1 ORDER BY id");
  if (!st.ok()) return st.status();
  st->Bind(1, user);
  std::vector<ApiToken> out;
  while (true) {
    StatusOr<bool> row = st->Step();
    if (!row.ok()) return row.status();
    if (!*row) return out;
    out.push_back(ApiToken{st->Int(0), st->Text(1), st->Text(2), st->Int(3), st->Text(4), st->Int(5), st->Int(6),
                           st->Int(7), st->Text(8), st->Text(9)});
  }
}

Status JobStore::RevokeToken(std::int64_t id, std::string_view actor, Time now) {
  StatusOr<Statement> st =
      db_->Prepare("UPDATE api_tokens SET revoked_at = ?, revoked_by = ? WHERE id = ? AND revoked_at = 0");
  if (!st.ok()) return st.status();
  st->Bind(1, now).Bind(2, actor).Bind(3, id);
  if (Status s = st->Run(); !s.ok()) return s;
  if (sqlite3_changes(db_->handle()) == 0) return NotFound("no token " + std::to_string(id) + " in force");
  return Status();
}

}  // namespace rota::store
