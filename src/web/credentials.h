// Secrets handed to browsers and scripts: random tokens and their SHA-256 hashes (OpenSSL). Only
// hashes are stored; a token is shown once, when it is made. Tested by credentials_test.cc.
#pragma once

#include <string>
#include <string_view>

namespace rota::web {

// `bytes` random bytes from OpenSSL's CSPRNG as lower-case hex (2 * bytes characters). Aborts
// the process if the generator fails (it never does on Linux once seeded).
std::string RandomToken(int bytes = 32);

// SHA-256 of `token` as lower-case hex (64 characters).
std::string HashToken(std::string_view token);

}  // namespace rota::web
