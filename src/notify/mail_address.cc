// ParseMailAddress (mime.h) on its own: the configuration checks (channel_check.cc) need it, and
// the rest of mime.cc needs OpenSSL (base64), which the rota command line should not load.
// Tested by mime_test.cc.
#include <optional>
#include <string>
#include <string_view>

#include "notify/mime.h"

namespace rota::notify {

std::optional<MailAddress> ParseMailAddress(std::string_view text) {
  auto trim = [](std::string_view s) {
    while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
    while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
    return s;
  };
  MailAddress a;
  text = trim(text);
  size_t lt = text.find('<');
  if (lt != std::string_view::npos) {
    if (text.back() != '>') return std::nullopt;
    std::string_view name = trim(text.substr(0, lt));
    if (name.size() >= 2 && name.front() == '"' && name.back() == '"') name = name.substr(1, name.size() - 2);
    a.name = std::string(name);
    a.addr = std::string(text.substr(lt + 1, text.size() - lt - 2));
  } else {
    a.addr = std::string(text);
  }
  size_t at = a.addr.find('@');
  if (at == std::string::npos || at == 0 || at + 1 == a.addr.size() ||
      a.addr.find('@', at + 1) != std::string::npos) {
    return std::nullopt;
  }
  for (unsigned char c : a.addr) {
    if (c <= 0x20 || c >= 0x7f || c == '<' || c == '>' || c == '"' || c == ',' || c == '(' || c == ')') {
      return std::nullopt;
    }
  }
  for (unsigned char c : a.name) {
    if (c < 0x20 || c == 0x7f) return std::nullopt;
  }
  return a;
}

}  // namespace rota::notify
