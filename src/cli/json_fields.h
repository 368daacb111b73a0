// Reading the daemon's replies in the formatters: every accessor tolerates a missing field or one
// of the wrong type (the fallback), so an older or newer daemon never crashes `rota`, and text
// fields come back safe to print on a terminal (TerminalSafe: user text must not move the cursor).
// The accessors are json/fields.h's; only Str is the command line's own.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "cli/text.h"
#include "json/fields.h"

namespace rota::cli::fields {

using json_fields::Arr;
using json_fields::Bool;
using json_fields::Int;
using json_fields::Ints;
using json_fields::Num;
using json_fields::Obj;

inline std::string Str(const nlohmann::json& j, const char* key, const std::string& fallback = "") {
  if (!j.is_object()) return fallback;
  auto it = j.find(key);
  return it == j.end() || !it->is_string() ? fallback : TerminalSafe(it->get_ref<const std::string&>());
}

}  // namespace rota::cli::fields
