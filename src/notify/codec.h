// Byte codecs the channels share: base64, HMAC-SHA256 (both from OpenSSL's libcrypto), percent
// encoding of URL query values, hex, and random tokens.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace rota::notify {

// Standard base64 (RFC 4648, with '=' padding, no line breaks).
std::string Base64Encode(std::string_view bytes);
// Decodes standard base64 (padding required, no whitespace); nullopt when `text` is not base64.
std::optional<std::string> Base64Decode(std::string_view text);

// The raw 32-byte HMAC-SHA256 of `message` under `key`.
std::string HmacSha256(std::string_view key, std::string_view message);

// Percent-encodes everything but RFC 3986's unreserved characters (A-Z a-z 0-9 - . _ ~), so
// '+', '/' and '=' of base64 become %2B, %2F, %3D: safe as a query value.
std::string UrlEncode(std::string_view text);

// Lower-case hex of `bytes`.
std::string HexEncode(std::string_view bytes);

// `n` random bytes from OpenSSL's generator as lower-case hex (2n characters).
std::string RandomHex(int n);

}  // namespace rota::notify
