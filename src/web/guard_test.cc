#include "web/guard.h"

#include <gtest/gtest.h>

namespace rota::web {
namespace guard_test {
namespace {

TEST(Guard, HostOf) {
  EXPECT_EQ(HostOf("LocalHost:8080"), "localhost");
  EXPECT_EQ(HostOf("[::1]:8080"), "[::1]");
  EXPECT_EQ(HostOf("[::1]"), "[::1]");
  EXPECT_EQ(HostOf("gpu1.lab"), "gpu1.lab");
  EXPECT_EQ(HostOf(""), "");
  EXPECT_EQ(HostOf("[::1"), "");
  EXPECT_EQ(HostOf("a:b:c"), "");
  EXPECT_EQ(HostOf("evil.com/x"), "");
}

TEST(Guard, HostAllowed) {
  const std::vector<std::string> none;
  EXPECT_TRUE(HostAllowed("localhost:8080", "127.0.0.1:8080", none));
  EXPECT_TRUE(HostAllowed("127.0.0.1:41234", "127.0.0.1:0", none));
  EXPECT_TRUE(HostAllowed("[::1]:8080", "127.0.0.1:8080", none));
  EXPECT_TRUE(HostAllowed("10.0.0.5:8080", "10.0.0.5:8080", none));
  // DNS rebinding: a name that resolves to us but is not ours.
  EXPECT_FALSE(HostAllowed("attacker.example:8080", "127.0.0.1:8080", none));
  EXPECT_FALSE(HostAllowed("", "127.0.0.1:8080", none));
  // A wildcard listen address names no host.
  EXPECT_FALSE(HostAllowed("0.0.0.0:8080", "0.0.0.0:8080", none));
  EXPECT_TRUE(HostAllowed("gpu1.lab:8080", "0.0.0.0:8080", {"GPU1.lab"}));
  EXPECT_FALSE(HostAllowed("gpu2.lab:8080", "0.0.0.0:8080", {"gpu1.lab"}));
}

TEST(Guard, SecretEquals) {
  EXPECT_TRUE(SecretEquals("abc", "abc"));
  EXPECT_FALSE(SecretEquals("abc", "abd"));
  EXPECT_FALSE(SecretEquals("abc", "abcd"));
}

TEST(Guard, SameOrigin) {
  EXPECT_TRUE(SameOrigin("", "localhost:8080"));
  EXPECT_TRUE(SameOrigin("http://LOCALHOST:8080", "localhost:8080"));
  EXPECT_FALSE(SameOrigin("http://localhost:8081", "localhost:8080"));
  EXPECT_FALSE(SameOrigin("http://evil.example", "localhost:8080"));
  EXPECT_FALSE(SameOrigin("null", "localhost:8080"));
  EXPECT_FALSE(SameOrigin("http://localhost:8080/x", "localhost:8080"));
}

TEST(Guard, CsrfAllowed) {
  EXPECT_TRUE(CsrfAllowed("t0k", "t0k", "", "localhost:8080"));
  EXPECT_TRUE(CsrfAllowed("t0k", "t0k", "http://localhost:8080", "localhost:8080"));
  EXPECT_FALSE(CsrfAllowed("", "t0k", "", "localhost:8080"));
  EXPECT_FALSE(CsrfAllowed("t0x", "t0k", "", "localhost:8080"));
  EXPECT_FALSE(CsrfAllowed("", "", "", "localhost:8080"));
  EXPECT_FALSE(CsrfAllowed("t0k", "t0k", "http://evil.example", "localhost:8080"));
  EXPECT_FALSE(CsrfAllowed("t0k", "t0k", "http://localhost:9999", "localhost:8080"));
  EXPECT_FALSE(CsrfAllowed("t0k", "t0k", "null", "localhost:8080"));
}

}  // namespace
}  // namespace guard_test
}  // namespace rota::web
