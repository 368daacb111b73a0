#include "web/auth_state.h"

#include <gtest/gtest.h>

#include "web/credentials.h"

namespace rota::web {
namespace auth_state_test {
namespace {

TEST(AuthState, LinkIsSingleUseAndExpires) {
  AuthState auth;
  std::string link = auth.MintLink(1001, "alice", 100, 300);
  auto s = auth.RedeemLink(link, 150, 3600);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->who.user, "alice");
  EXPECT_EQ(s->who.uid, 1001u);
  EXPECT_FALSE(s->csrf.empty());
  EXPECT_FALSE(auth.RedeemLink(link, 151, 3600).has_value());  // used

  std::string late = auth.MintLink(1001, "alice", 100, 300);
  EXPECT_FALSE(auth.RedeemLink(late, 400, 3600).has_value());  // expired
  EXPECT_FALSE(auth.RedeemLink("nonsense", 100, 3600).has_value());

  auto who = auth.FindSession(s->id, 200);
  ASSERT_TRUE(who.has_value());
  EXPECT_EQ(who->csrf, s->csrf);
  EXPECT_FALSE(auth.FindSession(s->id, 150 + 3600).has_value());  // session expired
}

TEST(AuthState, PeekingAtALinkDoesNotUseIt) {
  AuthState auth;
  std::string link = auth.MintLink(1001, "alice", 100, 300);
  auto who = auth.PeekLink(link, 120);
  ASSERT_TRUE(who.has_value());
  EXPECT_EQ(who->user, "alice");
  EXPECT_TRUE(auth.PeekLink(link, 130).has_value());   // still there
  EXPECT_FALSE(auth.PeekLink(link, 400).has_value());  // expired
  EXPECT_FALSE(auth.PeekLink("nonsense", 120).has_value());
  EXPECT_TRUE(auth.RedeemLink(link, 140, 3600).has_value());
  EXPECT_FALSE(auth.PeekLink(link, 150).has_value());  // used
}

TEST(AuthState, Logout) {
  AuthState auth;
  NewSession s = auth.StartSession(0, "root", 0, 100);
  EXPECT_TRUE(auth.FindSession(s.id, 1).has_value());
  auth.EndSession(s.id);
  EXPECT_FALSE(auth.FindSession(s.id, 1).has_value());
}

TEST(AuthState, Tokens) {
  AuthState auth;
  auth.SetTokens({TokenEntry{1, HashToken("secret1"), 1001, "alice", 0},
                  TokenEntry{2, HashToken("secret2"), 1002, "bob", 500}});
  auto a = auth.FindToken("secret1", 10);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->user, "alice");
  EXPECT_TRUE(a->token);
  EXPECT_TRUE(a->csrf.empty());
  EXPECT_TRUE(auth.FindToken("secret2", 499).has_value());
  EXPECT_FALSE(auth.FindToken("secret2", 500).has_value());  // expired
  auth.RemoveToken(1);
  EXPECT_FALSE(auth.FindToken("secret1", 10).has_value());
  auth.AddToken(TokenEntry{3, HashToken("secret3"), 1001, "alice", 0});
  EXPECT_TRUE(auth.FindToken("secret3", 10).has_value());
}

}  // namespace
}  // namespace auth_state_test
}  // namespace rota::web
