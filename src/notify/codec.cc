// Tested by codec_test.cc.
//
// Design: the cryptography is OpenSSL's (libcrypto is already linked through libcurl's OpenSSL
// build); only percent encoding and hex, a few lines each, are written here.
#include "notify/codec.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <vector>

namespace rota::notify {

std::string Base64Encode(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3), '\0');
  int n =
      EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                      reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
  out.resize(n < 0 ? 0 : static_cast<size_t>(n));
  return out;
}

std::optional<std::string> Base64Decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::string out(3 * (text.size() / 4), '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
  if (n < 0) return std::nullopt;
  // EVP_DecodeBlock counts the padding as zero bytes: drop one per '='.
  size_t pad = 0;
  for (size_t i = text.size(); i > 0 && text[i - 1] == '=' && pad < 2; --i) ++pad;
  out.resize(static_cast<size_t>(n) - pad);
  return out;
}

std::string HmacSha256(std::string_view key, std::string_view message) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  // An empty message must still be a valid pointer for OpenSSL.
  static const unsigned char kEmpty = 0;
  const unsigned char* data =
      message.empty() ? &kEmpty : reinterpret_cast<const unsigned char*>(message.data());
  if (!HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), data, message.size(), md, &len))
    return {};
  return std::string(reinterpret_cast<const char*>(md), len);
}

std::string UrlEncode(std::string_view text) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '.' || c == '_' || c == '~';
    if (unreserved) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::string HexEncode(std::string_view bytes) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

std::string RandomHex(int n) {
  std::vector<unsigned char> buf(static_cast<size_t>(n > 0 ? n : 0));
  if (!buf.empty() && RAND_bytes(buf.data(), static_cast<int>(buf.size())) != 1) return {};
  return HexEncode(std::string_view(reinterpret_cast<const char*>(buf.data()), buf.size()));
}

}  // namespace rota::notify
