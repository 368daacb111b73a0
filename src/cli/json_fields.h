// Reading the daemon's replies in the formatters: every accessor tolerates a missing field or one
// of the wrong type (the fallback), so an older or newer daemon never crashes `rota`, and text
// fields come back safe to print on a terminal (TerminalSafe: user text must not move the cursor).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/text.h"

namespace rota::cli::fields {

inline long long Int(const nlohmann::json& j, const char* key, long long fallback = 0) {
  if (!j.is_object()) return fallback;
  auto it = j.find(key);
  return it == j.end() || !it->is_number() ? fallback : it->get<long long>();
}

inline double Num(const nlohmann::json& j, const char* key, double fallback = 0) {
  if (!j.is_object()) return fallback;
  auto it = j.find(key);
  return it == j.end() || !it->is_number() ? fallback : it->get<double>();
}

inline bool Bool(const nlohmann::json& j, const char* key, bool fallback = false) {
  if (!j.is_object()) return fallback;
  auto it = j.find(key);
  return it == j.end() || !it->is_boolean() ? fallback : it->get<bool>();
}

inline std::string Str(const nlohmann::json& j, const char* key, const std::string& fallback = "") {
  if (!j.is_object()) return fallback;
  auto it = j.find(key);
  return it == j.end() || !it->is_string() ? fallback : TerminalSafe(it->get_ref<const std::string&>());
}

inline const nlohmann::json& Arr(const nlohmann::json& j, const char* key) {
  static const nlohmann::json kEmpty = nlohmann::json::array();
  if (!j.is_object()) return kEmpty;
  auto it = j.find(key);
  return it == j.end() || !it->is_array() ? kEmpty : *it;
}

// The numbers of the array `key` (other elements skipped).
inline std::vector<long long> Ints(const nlohmann::json& j, const char* key) {
  std::vector<long long> out;
  for (const nlohmann::json& v : Arr(j, key)) {
    if (v.is_number()) out.push_back(v.get<long long>());
  }
  return out;
}

inline const nlohmann::json& Obj(const nlohmann::json& j, const char* key) {
  static const nlohmann::json kEmpty = nlohmann::json::object();
  if (!j.is_object()) return kEmpty;
  auto it = j.find(key);
  return it == j.end() || !it->is_object() ? kEmpty : *it;
}

}  // namespace rota::cli::fields
