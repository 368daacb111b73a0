// `rota usage` as text: the reply of the "usage" op (docs/api.md) as tables. Pure; tested by
// usage_format_test.cc.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace rota::cli {

// `days_shown`: how many of the most recent days get a line of their own.
std::string FormatUsage(const nlohmann::json& reply, int days_shown);

}  // namespace rota::cli
