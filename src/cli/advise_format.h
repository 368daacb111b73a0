// What `rota advise` prints: the daemon's `advise` reply (docs/api.md) in sentences, one block
// per job: when it is expected to start, the backlog ahead of it, and what renting would cost.
// Pure; times in the display zone. Tested by advise_format_test.cc.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace rota::cli {

std::string FormatAdvice(const nlohmann::json& reply);

}  // namespace rota::cli
