// What `rota rules` prints: the daemon's `rules` reply (docs/api.md, op "rules") as text for a
// terminal, wrapped by display width, or as Markdown for the lab's wiki. Pure.
// Tested by rules_format_test.cc.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace rota::cli {

// Text lines of at most `width` columns (Chinese counted two per character).
std::string FormatRulesText(const nlohmann::json& reply, int width);
std::string FormatRulesMarkdown(const nlohmann::json& reply);

}  // namespace rota::cli
