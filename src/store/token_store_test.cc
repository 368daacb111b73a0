#include <gtest/gtest.h>

#include "store/job_store.h"
#include "testing/temp_dir.h"

namespace rota::store {
namespace token_store_test {
namespace {

TEST(TokenStore, AddListRevoke) {
  testing::TempDir dir;
  auto store = JobStore::Open(dir.File("rota.db"));
  ASSERT_TRUE(store.ok()) << store.status().message();
  ApiToken t;
  t.hash = std::string(64, 'a');
  t.user = "alice";
  t.uid = 1001;
  t.name = "grafana";
  t.created = 100;
  auto id = (*store)->AddToken(t);
  ASSERT_TRUE(id.ok()) << id.status().message();
  t.hash = std::string(64, 'b');
  t.user = "bob";
  ASSERT_TRUE((*store)->AddToken(t).ok());
  // The same hash twice is refused by the UNIQUE constraint.
  EXPECT_FALSE((*store)->AddToken(t).ok());

  t.hash = std::string(64, 'c');
  t.user = "carol";
  t.scope = "calendar";
  ASSERT_TRUE((*store)->AddToken(t).ok());
  EXPECT_EQ((*(*store)->Tokens("carol"))[0].scope, "calendar");
  auto alice = (*store)->Tokens("alice");
  ASSERT_TRUE(alice.ok());
  ASSERT_EQ(alice->size(), 1u);
  EXPECT_EQ((*alice)[0].name, "grafana");
  EXPECT_EQ((*alice)[0].scope, "full");
  EXPECT_EQ((*alice)[0].uid, 1001);
  EXPECT_EQ((*store)->Tokens("")->size(), 3u);

  ASSERT_TRUE((*store)->RevokeToken(*id, "root", 200).ok());
  EXPECT_EQ((*store)->RevokeToken(*id, "root", 300).code(), StatusCode::kNotFound);  // already revoked
  EXPECT_EQ((*store)->RevokeToken(999, "root", 300).code(), StatusCode::kNotFound);
  auto after = (*store)->Tokens("alice");
  EXPECT_EQ((*after)[0].revoked_at, 200);
  EXPECT_EQ((*after)[0].revoked_by, "root");
}

}  // namespace
}  // namespace token_store_test
}  // namespace rota::store
