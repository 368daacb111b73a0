// Lenient reads of a JSON reply: a missing field, or one of the wrong type, reads as its fallback,
// so an older or newer daemon never makes a reader throw. Shared by the command line's formatters
// (cli/json_fields.h, which adds terminal-safe strings) and the replay of the lab's history
// (replay/store_trace.cc, whose strings are data, not terminal text).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace rota::json_fields {

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

// The string as it is (the command line's Str makes it safe to print).
inline std::string RawStr(const nlohmann::json& j, const char* key, const std::string& fallback = "") {
  if (!j.is_object()) return fallback;
  auto it = j.find(key);
  return it == j.end() || !it->is_string() ? fallback : it->get<std::string>();
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

}  // namespace rota::json_fields
