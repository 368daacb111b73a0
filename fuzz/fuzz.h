// What the fuzz targets share (fuzz/README.md): reading an input as parts, and stopping on a
// broken property. A target's LLVMFuzzerTestOneInput returns 0 for every input; a crash, a
// sanitizer's report or Require's abort is a finding, which libFuzzer saves as the input that
// caused it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace rota::fuzz {

// The input as text (any bytes, NULs included).
inline std::string_view Text(const std::uint8_t* data, std::size_t size) {
  return std::string_view(reinterpret_cast<const char*>(data), size);
}

// `text` cut at every `sep` (n separators: n + 1 parts, empty ones kept).
inline std::vector<std::string_view> Split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  for (;;) {
    const std::size_t at = text.find(sep);
    parts.push_back(text.substr(0, at));
    if (at == std::string_view::npos) return parts;
    text.remove_prefix(at + 1);
  }
}

// The first byte of `text` (0 when empty), removed from it: a choice the input makes.
inline unsigned char TakeByte(std::string_view& text) {
  if (text.empty()) return 0;
  const unsigned char c = static_cast<unsigned char>(text.front());
  text.remove_prefix(1);
  return c;
}

// `s` with every line break (CRLF, CR, LF) as "\n": the booking targets' model of what their
// formats keep of a text. Written here from the formats' documentation, apart from the product's
// own version (api/booking_io.cc), so that a target checks the product against its contract.
inline std::string OneBreakStyle(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\r') {
      out += '\n';
      if (i + 1 < s.size() && s[i + 1] == '\n') ++i;
    } else {
      out += s[i];
    }
  }
  return out;
}

// A property every input must keep: when it does not hold, the input is a finding.
[[noreturn]] inline void Broken(const std::string& what) {
  std::fprintf(stderr, "property broken: %s\n", what.c_str());
  std::abort();
}
inline void Require(bool holds, const std::string& what) {
  if (!holds) Broken(what);
}

}  // namespace rota::fuzz
