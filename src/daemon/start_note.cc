// Tested by start_note_test.cc. nlohmann::json throws; every exception is caught here.
#include "daemon/start_note.h"

#include <nlohmann/json.hpp>

#include "json/bounded.h"

namespace rota::daemon {

using nlohmann::json;

std::string StartNoteToJson(const StartNote& note) {
  const store::StartInfo& s = note.start;
  const store::Placement& p = s.placement;
  json j = {{"time", note.time},           {"gpus", p.alloc.gpus},       {"gpu_uuids", p.gpu_uuids},
            {"mig", p.alloc.mig},          {"mig_uuid", p.mig_uuid},     {"memory", p.alloc.memory},
            {"preemptible", s.preemptible}, {"from_pool", s.from_pool}, {"reason", s.reason}};
  return j.dump();
}

StatusOr<StartNote> StartNoteFromJson(const std::string& text) {
  StatusOr<json> parsed = ParseBoundedJson(text);
  if (!parsed.ok()) return InvalidArgument("bad start note: " + parsed.status().message());
  try {
    const json& j = *parsed;
    StartNote note;
    store::StartInfo& s = note.start;
    store::Placement& p = s.placement;
    note.time = j.at("time").get<Time>();
    p.alloc.gpus = j.at("gpus").get<std::vector<int>>();
    p.gpu_uuids = j.at("gpu_uuids").get<std::vector<std::string>>();
    p.alloc.mig = j.at("mig").get<int>();
    p.mig_uuid = j.at("mig_uuid").get<std::string>();
    p.alloc.memory = j.at("memory").get<MiB>();
    s.preemptible = j.at("preemptible").get<bool>();
    s.from_pool = j.at("from_pool").get<bool>();
    s.reason = j.at("reason").get<std::string>();
    if (p.alloc.gpus.size() != p.gpu_uuids.size()) return InvalidArgument("bad start note: gpus and gpu_uuids differ in length");
    return note;
  } catch (const json::exception& e) {
    return InvalidArgument(std::string("bad start note: ") + e.what());
  }
}

}  // namespace rota::daemon
