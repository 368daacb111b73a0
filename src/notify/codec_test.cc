#include "notify/codec.h"

#include <gtest/gtest.h>

namespace rota::notify {
namespace codec_test {
namespace {

TEST(NotifyCodec, Base64MatchesRfc4648Vectors) {
  const std::pair<const char*, const char*> kVectors[] = {{"", ""},
                                                          {"f", "Zg=="},
                                                          {"fo", "Zm8="},
                                                          {"foo", "Zm9v"},
                                                          {"foob", "Zm9vYg=="},
                                                          {"fooba", "Zm9vYmE="},
                                                          {"foobar", "Zm9vYmFy"}};
  for (auto [plain, encoded] : kVectors) {
    EXPECT_EQ(Base64Encode(plain), encoded);
    auto decoded = Base64Decode(encoded);
    ASSERT_TRUE(decoded.has_value()) << encoded;
    EXPECT_EQ(*decoded, plain);
  }
}

TEST(NotifyCodec, Base64DecodeRefusesWhatIsNotBase64) {
  EXPECT_FALSE(Base64Decode("Zm9").has_value());
  EXPECT_FALSE(Base64Decode("Zm9v!!==").has_value());
}

TEST(NotifyCodec, Base64KeepsBinaryAndUtf8) {
  std::string bytes("\0\xff\xfe\x80 \xe4\xbd\xa0", 8);
  EXPECT_EQ(*Base64Decode(Base64Encode(bytes)), bytes);
}

TEST(NotifyCodec, HmacSha256MatchesTheKnownVector) {
  // The Wikipedia HMAC example, also what Python's hmac module gives.
  EXPECT_EQ(HexEncode(HmacSha256("key", "The quick brown fox jumps over the lazy dog")),
            "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8");
  EXPECT_EQ(HmacSha256("k", "").size(), 32u);  // an empty message is valid (Feishu signs one)
}

TEST(NotifyCodec, UrlEncodeEscapesAllButUnreserved) {
  EXPECT_EQ(UrlEncode("aZ09-._~"), "aZ09-._~");
  EXPECT_EQ(UrlEncode("a+b/c=d e"), "a%2Bb%2Fc%3Dd%20e");
  EXPECT_EQ(UrlEncode("\xe4\xbd\xa0"), "%E4%BD%A0");
}

TEST(NotifyCodec, RandomHexHasTheAskedLength) {
  std::string a = RandomHex(8), b = RandomHex(8);
  EXPECT_EQ(a.size(), 16u);
  EXPECT_NE(a, b);
}

}  // namespace
}  // namespace codec_test
}  // namespace rota::notify
