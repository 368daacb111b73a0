#include "daemon/identity.h"

#include <unistd.h>

#include <gtest/gtest.h>

namespace rota::daemon {
namespace identity_test {
namespace {

using namespace std::chrono_literals;

TEST(CallerCacheTest, LooksUpOncePerTtlAndKeepsThePidOfEachCall) {
  int lookups = 0;
  bool admin = true;
  CallerCache cache(5s, [&](uid_t uid, gid_t gid) {
    ++lookups;
    Caller c;
    c.uid = uid;
    c.gid = gid;
    c.name = "alice";
    c.admin = admin;
    return c;
  });
  const CallerCache::Clock::time_point t0{};
  Caller a = cache.Get(1000, 100, 42, t0);
  EXPECT_EQ(a.name, "alice");
  EXPECT_TRUE(a.admin);
  EXPECT_EQ(a.pid, 42);
  admin = false;  // removed from the admin group meanwhile
  Caller b = cache.Get(1000, 100, 43, t0 + 4s);
  EXPECT_EQ(lookups, 1);
  EXPECT_EQ(b.pid, 43);
  EXPECT_TRUE(b.admin);  // still cached
  Caller c = cache.Get(1000, 100, 44, t0 + 5s);
  EXPECT_EQ(lookups, 2);
  EXPECT_FALSE(c.admin);  // looked up again once the entry expired
  // Another gid is another identity (admin by primary group).
  cache.Get(1000, 200, 45, t0 + 5s);
  EXPECT_EQ(lookups, 3);
  cache.Clear();
  cache.Get(1000, 100, 46, t0 + 5s);
  EXPECT_EQ(lookups, 4);
}

TEST(ExpiringCacheTest, KeepsEachValueForItsTtlAndStartsOverWhenFull) {
  ExpiringCache<int, std::string> cache(5s);
  int lookups = 0;
  auto look = [&](const char* v) {
    return [&lookups, v] {
      ++lookups;
      return std::string(v);
    };
  };
  const ExpiringCache<int, std::string>::Clock::time_point t0{};
  EXPECT_EQ(cache.Get(1, t0, look("a")), "a");
  EXPECT_EQ(cache.Get(1, t0 + 4s, look("b")), "a");  // cached
  EXPECT_EQ(lookups, 1);
  EXPECT_EQ(cache.Get(1, t0 + 5s, look("b")), "b");  // expired: looked up again
  EXPECT_EQ(cache.Get(2, t0 + 5s, look("c")), "c");  // another key
  EXPECT_EQ(lookups, 3);
  cache.Clear();
  EXPECT_EQ(cache.Get(1, t0 + 5s, look("d")), "d");
  for (int k = 0; k < static_cast<int>(ExpiringCache<int, std::string>::kMaxEntries) + 10; ++k) {
    cache.Get(100 + k, t0 + 6s, look("x"));
  }
  const int before = lookups;
  EXPECT_EQ(cache.Get(1, t0 + 6s, look("e")), "e");  // started over when it reached the bound
  EXPECT_EQ(lookups, before + 1);
}

TEST(ExpiringCacheTest, AccountsOfTheRealDatabaseAndFailuresAreCachedAlike) {
  ExpiringCache<uid_t, StatusOr<UnixAccount>> accounts(5s);
  const auto now = ExpiringCache<uid_t, StatusOr<UnixAccount>>::Clock::now();
  const StatusOr<UnixAccount>& root = accounts.Get(0, now, [] { return LookUpAccount(0); });
  ASSERT_TRUE(root.ok()) << root.status().message();
  EXPECT_EQ(root->name, "root");
  const uid_t nobody_home = 4'000'000'000u;  // no such account
  const StatusOr<UnixAccount>& none = accounts.Get(nobody_home, now, [&] { return LookUpAccount(nobody_home); });
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound);
  // Within the ttl neither is looked up again.
  bool looked = false;
  auto never = [&] {
    looked = true;
    return StatusOr<UnixAccount>(UnixAccount{});
  };
  EXPECT_EQ(accounts.Get(0, now + 4s, never)->name, "root");
  EXPECT_EQ(accounts.Get(nobody_home, now + 4s, never).status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(looked);
}

TEST(CallerCacheTest, RootIsAnAdminThroughTheRealLookup) {
  CallerCache cache(5s, [](uid_t uid, gid_t gid) { return Identify(uid, gid, 0, ""); });
  Caller root = cache.Get(0, 0, 1, CallerCache::Clock::now());
  EXPECT_TRUE(root.admin);
  EXPECT_EQ(root.name, "root");
  EXPECT_EQ(root.pid, 1);
}

}  // namespace
}  // namespace identity_test
}  // namespace rota::daemon
