// The server's zone as data in replies (docs/api.md, "zone"), so that a client draws a calendar
// in the zone its times were read in, daylight saving included, without a tz database of its
// own: {"name": "Europe/Berlin", "offset": 3600, "transitions": [[1774746000, 7200], ...]},
// "offset" being the offset before the first listed transition. A fixed offset has no name and
// no transitions.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

#include "core/types.h"
#include "core/zone.h"

namespace rota::api {

// `zone` over [from, to]: the offset at `from` and the transitions after it up to `to`.
nlohmann::json ZoneJson(const Zone& zone, Time from, Time to);

// A zone from ZoneJson's shape; nullopt for anything else (wrong types, transitions out of
// order, more than kMaxZoneTransitions, offsets beyond 26 hours).
std::optional<Zone> ZoneFromJson(const nlohmann::json& value);
inline constexpr std::size_t kMaxZoneTransitions = 1000;

}  // namespace rota::api
