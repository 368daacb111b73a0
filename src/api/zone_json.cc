// Tested by zone_json_test.cc.
#include "api/zone_json.h"

#include <string>
#include <utility>
#include <vector>

namespace rota::api {

using nlohmann::json;

json ZoneJson(const Zone& zone, Time from, Time to) {
  json transitions = json::array();
  for (const Zone::Transition& t : zone.TransitionsIn(from + 1, to + 1)) transitions.push_back({t.at, t.offset});
  return {{"name", zone.name()}, {"offset", zone.OffsetAt(from)}, {"transitions", std::move(transitions)}};
}

std::optional<Zone> ZoneFromJson(const json& value) {
  constexpr int kMaxOffset = 26 * 3600;
  auto offset_ok = [](const json& o) {
    return o.is_number_integer() && o.get<std::int64_t>() >= -kMaxOffset && o.get<std::int64_t>() <= kMaxOffset;
  };
  if (!value.is_object()) return std::nullopt;
  auto name = value.find("name");
  auto offset = value.find("offset");
  auto list = value.find("transitions");
  if (name == value.end() || !name->is_string() || offset == value.end() || !offset_ok(*offset) ||
      list == value.end() || !list->is_array() || list->size() > kMaxZoneTransitions) {
    return std::nullopt;
  }
  std::vector<Zone::Transition> transitions;
  for (const json& t : *list) {
    if (!t.is_array() || t.size() != 2 || !t[0].is_number_integer() || !offset_ok(t[1])) return std::nullopt;
    const Time at = t[0].get<Time>();
    if (!transitions.empty() && at <= transitions.back().at) return std::nullopt;
    transitions.push_back({at, t[1].get<int>()});
  }
  const int initial = offset->get<int>();
  if (transitions.empty()) {
    if (name->get<std::string>().empty()) return Zone(initial);
  }
  return Zone(name->get<std::string>(), initial, std::move(transitions));
}

}  // namespace rota::api
