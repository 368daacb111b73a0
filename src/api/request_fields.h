// Reading the members of a request in rotad: the server's twin of cli/json_fields.h, but strict
// where that one is lenient. A member that is missing (or null) takes its default; one of another
// type is the caller's mistake, an InvalidArgument that names the member and says what it must
// be, never an exception and never a silent default. Tested by request_fields_test.cc.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/status.h"
#include "core/types.h"

namespace rota::api::fields {

// true or false.
StatusOr<bool> Bool(const nlohmann::json& request, const char* name, bool absent = false);
// A string.
StatusOr<std::string> Text(const nlohmann::json& request, const char* name, std::string_view absent = "");
// A whole number in [lo, hi].
StatusOr<std::int64_t> Int(const nlohmann::json& request, const char* name, std::int64_t absent, std::int64_t lo,
                           std::int64_t hi);
// A required positive whole number: "\"job_id\" must be a job id (a positive whole number)".
StatusOr<std::int64_t> Id(const nlohmann::json& request, const char* name, std::string_view what);

}  // namespace rota::api::fields
