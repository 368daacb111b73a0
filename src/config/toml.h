// toml++ as rota_config includes it: every other file of the library includes this one, never
// <toml++/toml.h> itself. toml++ states the preconditions of its parser's steps as assertions
// (TOML_ASSERT_ASSUME), and Debian 12's 3.3.0 breaks some of them on invalid input
// (fuzz/config_toml found "[[[x]]]" and "[2,}" in an array): a debug build aborts there, and a
// release build goes on past the broken precondition (gcc) or assumes it holds (clang), which is
// undefined behaviour. Here each assertion is checked in every build and throws TomlCheckFailed
// instead, which ParseConfig answers as invalid TOML: a parse never goes on past one.
#pragma once

#include <stdexcept>

namespace rota::config {

struct TomlCheckFailed : std::logic_error {
  using std::logic_error::logic_error;
};

}  // namespace rota::config

// toml++ drops TOML_ASSERT under NDEBUG: it is kept for its own header only. Some of its
// assertions are in noexcept functions (node accessors, not the parser's steps): a broken one
// there ends the process, as in toml++'s debug builds, instead of going on (gcc's -Wterminate
// says so for each; silenced here).
#pragma push_macro("NDEBUG")
#undef NDEBUG
#define TOML_ASSERT(expr) ((expr) ? static_cast<void>(0) : throw ::rota::config::TomlCheckFailed(#expr))
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wterminate"
#endif
#include <toml++/toml.h>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#pragma pop_macro("NDEBUG")
