#include "daemon/identity.h"

#include <unistd.h>

#include <gtest/gtest.h>

namespace rota::daemon {
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

TEST(CallerCacheTest, RootIsAnAdminThroughTheRealLookup) {
  CallerCache cache(5s, [](uid_t uid, gid_t gid) { return Identify(uid, gid, 0, ""); });
  Caller root = cache.Get(0, 0, 1, CallerCache::Clock::now());
  EXPECT_TRUE(root.admin);
  EXPECT_EQ(root.name, "root");
  EXPECT_EQ(root.pid, 1);
}

}  // namespace
}  // namespace rota::daemon
