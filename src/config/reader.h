// Internal to rota_config: reading TOML tables with every error collected, never thrown.
// A Section wraps one table; each accessor names a key the section knows, reads it if present and
// records an error (with the value's line and column) when it has the wrong type or value.
// Finish() then reports the keys nobody asked for, listing the known ones, so a typo is an
// error rather than a silently ignored setting.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/toml.h"

#include "core/types.h"

namespace rota::config::internal {

class Errors {
 public:
  void Add(const toml::source_region& at, std::string message);
  bool empty() const { return errors_.empty(); }
  // "name:line:column: message", one per line, in file order.
  std::string Join(std::string_view name) const;

 private:
  struct Error {
    std::uint32_t line, column;
    std::string message;
  };
  std::vector<Error> errors_;
};

// How a value looks in a message: strings quoted, numbers as written, else its kind.
std::string Show(const toml::node& node);
// A key as it would appear in a TOML header: bare when it can be, else quoted.
std::string KeyName(std::string_view key);

class Section {
 public:
  // `where` names the table in messages, e.g. "[gpus]" or "[users.alice]"; "" for the top level.
  Section(const toml::table& table, std::string where, Errors* errors)
      : table_(table), where_(std::move(where)), errors_(errors) {}

  // The raw node, or nullptr when absent. Every accessor marks its key as known.
  const toml::node* Get(std::string_view key);
  std::optional<std::string> String(std::string_view key);
  std::optional<bool> Bool(std::string_view key);
  std::optional<double> Number(std::string_view key, double min, std::string_view hint);
  std::optional<std::int64_t> Integer(std::string_view key, std::int64_t min, std::int64_t max);
  std::optional<Duration> DurationOf(std::string_view key, Duration min);
  std::optional<MiB> Memory(std::string_view key);
  // Weekly GPU-hours: a number >= 0, or "unlimited" (returned as -1).
  std::optional<double> Hours(std::string_view key);
  const toml::table* Table(std::string_view key);
  const toml::array* Array(std::string_view key);
  // An array of strings, each passed to `check`, which returns "" for a good entry or what is
  // wrong with it (recorded as "[where] KEY entry VALUE why"); nullopt when the key is absent.
  std::optional<std::vector<std::string>> Strings(std::string_view key,
                                                  const std::function<std::string(const std::string&)>& check);
  // One of `choices` (exact, lower case).
  template <typename E>
  std::optional<E> Choice(std::string_view key, const std::vector<std::pair<std::string, E>>& choices);

  // Records "[where] key VALUE text" at `at`.
  void Fail(const toml::node& at, std::string_view key, std::string_view text);
  // Records "[where] text" at `at`.
  void FailAt(const toml::source_region& at, std::string_view text);
  // Reports unknown keys. Call after every accessor.
  void Finish();

  const toml::table& table() const { return table_; }
  const std::string& where() const { return where_; }
  Errors* errors() const { return errors_; }

 private:
  const toml::table& table_;
  std::string where_;
  Errors* errors_;
  std::vector<std::string> known_;
};

template <typename E>
std::optional<E> Section::Choice(std::string_view key, const std::vector<std::pair<std::string, E>>& choices) {
  auto s = String(key);
  if (!s) return std::nullopt;
  std::string names;
  for (const auto& [name, value] : choices) {
    if (*s == name) return value;
    names += (names.empty() ? "" : ", ") + name;
  }
  Fail(*Get(key), key, "is not one of " + names);
  return std::nullopt;
}

}  // namespace rota::config::internal
